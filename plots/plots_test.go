package plots

import (
	"bytes"
	"image/png"
	"math"
	"slices"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

func series() *metrics.Series {
	s := metrics.NewSeries(1e9, 60)
	for i := range s.Rows {
		r := &s.Rows[i]
		r.Offered, r.Received, r.Accepted, r.Succeeded = 100, 110, 100, 95
		r.CapacityNS = 10 * 1e9
		r.LatencyP50, r.LatencyP90, r.LatencyP99, r.LatencyMax = 50e6, 100e6, 200e6, 300e6
		if i >= 20 && i < 30 {
			r.Succeeded, r.FailedOutage, r.Received, r.Accepted, r.DropThrottle, r.Connected = 0, 120, 0, 0, 30, 0
			// (not realistic with nothing succeeding: a step, so that every
			// chart draws its vertical edges at 20 and 30 s)
			r.LatencyP50, r.LatencyP90, r.LatencyP99, r.LatencyMax = 250e6, 500e6, 900e6, 1000e6
		}
	}
	return s
}

// Every chart renders to a decodable PNG of the documented size with real
// content (many colours), with and without connections and faults.
func TestChartsRender(t *testing.T) {
	base := Input{Name: "t", Series: series(), CapacityRPS: 100, Workers: 10, RecoveryWindow: 5e9, RecoverFraction: 0.95, StayFraction: 0.9,
		Faults: []Fault{{Start: 20e9, End: 30e9, Label: "outage", Outage: true}}}
	conn := base
	conn.Clients, conn.ConnectCapacityRPS = 1000, 500
	for name, in := range map[string]Input{"plain": base, "connections": conn, "no faults": {Name: "t", Series: series(), CapacityRPS: 100, Workers: 10}} {
		charts, err := All(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := 4 // server load, local drops, recovery, latency
		if in.Clients > 0 {
			want = 5
		}
		if len(charts) != want {
			t.Errorf("%s: %d charts, want %d", name, len(charts), want)
		}
		for _, c := range charts {
			img, err := png.Decode(bytes.NewReader(c.PNG))
			if err != nil {
				t.Fatalf("%s %s: %v", name, c.File, err)
			}
			colours := map[[4]uint32]bool{}
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y += 3 {
				for x := b.Min.X; x < b.Max.X; x += 3 {
					r, g, bl, a := img.At(x, y).RGBA()
					colours[[4]uint32{r, g, bl, a}] = true
				}
			}
			if b.Dx() < 800 || len(colours) < 10 {
				t.Errorf("%s %s: %dx%d, %d colours", name, c.File, b.Dx(), b.Dy(), len(colours))
			}
		}
	}
}

func TestCompareRenders(t *testing.T) {
	band := Band{Mean: []float64{1, 2, math.NaN()}, Lo: []float64{0, 1, math.NaN()}, Hi: []float64{2, 3, math.NaN()}}
	in := CompareInput{Name: "c", Varied: "k", Seeds: 3, Interval: 1e9, Capacity: 2,
		Points: []ComparePoint{{Label: "a", Received: band, Drops: band, Goodput: band}, {Label: "b", Received: band, Drops: band, Goodput: band}},
		Figures: []Figure{{File: "f.png", Title: "x", YLabel: "y", MissingText: "did not recover",
			Values: []Estimate{{Mean: 1, Lo: 0.5, Hi: 1.5, N: 3}, {Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Missing: 3}}}}}
	charts, err := Compare(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 4 {
		t.Fatalf("%d charts", len(charts))
	}
	for _, c := range charts {
		if _, err := png.Decode(bytes.NewReader(c.PNG)); err != nil {
			t.Errorf("%s: %v", c.File, err)
		}
	}
}

// A run that did not recover from a window the chart does not shade (a
// load spike before the CLI shades it) must still render.
func TestRecoveryChartWithoutFaultWindows(t *testing.T) {
	end := 30.0
	in := Input{Name: "t", Series: series(), CapacityRPS: 100, Workers: 10, RecoveryWindow: 5e9, RecoverFraction: 0.95, StayFraction: 0.9}
	in.Summary.Recovery.Applicable = true
	in.Summary.Recovery.FaultEndS = &end
	if _, err := All(in); err != nil {
		t.Fatal(err)
	}
}

func TestYTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string // the labelled ticks
	}{
		{0, 2709, []string{"0", "500", "1,000", "1,500", "2,000", "2,500"}},
		{0, 112000, []string{"0", "20,000", "40,000", "60,000", "80,000", "100,000"}},
		{0, 1.12, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0, 67.2, []string{"0", "20", "40", "60"}},
		{0, 112, []string{"0", "20", "40", "60", "80", "100"}},
		{0, 0.0034, []string{"0.000", "0.001", "0.002", "0.003"}},
		{0, 15, []string{"0.0", "2.5", "5.0", "7.5", "10.0", "12.5", "15.0"}},
	}
	for _, tc := range tests {
		var got []string
		minor := 0
		for _, tk := range (yTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("[%g, %g]: tick %g outside the axis", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label == "" {
				minor++
				continue
			}
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
		if minor < 3*(len(got)-1) {
			t.Errorf("[%g, %g]: %d minor ticks for %d labels", tc.lo, tc.hi, minor, len(got))
		}
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "100000": "100,000",
		"1234567.25": "1,234,567.25", "-4500": "-4,500", "12.5": "12.5"} {
		if got := SeparateThousands(in); got != want {
			t.Errorf("SeparateThousands(%q) = %q, want %q", in, got, want)
		}
	}
}

// Time axes are labelled every minute (fault starts and recoveries read
// off the axis), every few minutes on long runs, every few seconds on
// short ones.
func TestTimeTicks(t *testing.T) {
	tests := []struct {
		hi   float64
		upTo float64
		want []string
	}{
		{480, 0, []string{"0", "60", "120", "180", "240", "300", "360", "420", "480"}},
		{30, 0, []string{"0", "2", "4", "6", "8", "10", "12", "14", "16", "18", "20", "22", "24", "26", "28", "30"}},
		{3600, 0, []string{"0", "300", "600", "900", "1,200", "1,500", "1,800", "2,100", "2,400", "2,700", "3,000", "3,300", "3,600"}},
		{800, 720, []string{"0", "60", "120", "180", "240", "300", "360", "420", "480", "540", "600", "660", "720"}},
	}
	for _, tc := range tests {
		var got []string
		for _, tk := range (timeTicks{upTo: tc.upTo}).Ticks(0, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[0, %g]: labels %q, want %q", tc.hi, got, tc.want)
		}
	}
}

func TestReadableBin(t *testing.T) {
	tests := []struct {
		interval int64
		rows     int
		want     int
	}{
		{1e9, 30, 1},   // short: every interval
		{1e9, 600, 30}, // 10 min of 1 s: 30 s bins (20 steps)
		{1e9, 720, 30}, // 12 min: 30 s
		{5e8, 600, 20}, // 5 min of 0.5 s: 10 s bins
		{1e9, 7200, 300},
	}
	for _, tc := range tests {
		if got := readableBin(tc.interval, tc.rows).n; got != tc.want {
			t.Errorf("readableBin(%d ns, %d rows) = %d intervals, want %d", tc.interval, tc.rows, got, tc.want)
		}
	}
}

// A storm that spikes to 28,000 every third interval and is at 1,000
// otherwise bins to its mean, 10,000, with the swing as the band; the
// band, 2.8x the mean, is cut off rather than squash the means.
func TestBinnedStorm(t *testing.T) {
	s := metrics.NewSeries(1e9, 600)
	for i := range s.Rows {
		s.Rows[i].ConnectAttempts = 1000
		if i%3 == 2 {
			s.Rows[i].ConnectAttempts = 28000
		}
	}
	bs := binned(s, readableBin(s.Interval, len(s.Rows)), func(r *metrics.Row) float64 { return float64(r.ConnectAttempts) })
	if len(bs.mean) != 20 {
		t.Fatalf("%d bins, want 20", len(bs.mean))
	}
	for i := range bs.mean {
		if bs.mean[i] != 10000 || bs.lo[i] != 1000 || bs.hi[i] != 28000 {
			t.Fatalf("bin %d: mean %g [%g, %g], want 10000 [1000, 28000]", i, bs.mean[i], bs.lo[i], bs.hi[i])
		}
	}
	if m, cut := bs.axisMax(); !cut || m != 1.3*10000 {
		t.Errorf("axis max %g (cut %v): want the band cut off at 1.3x the mean", m, cut)
	}
}

// Failure and drop percentages are shares of the requests that ended in
// the interval: never above 100%, even when failures of earlier arrivals
// end in an interval with few arrivals.
func TestLocalDropsAtMost100(t *testing.T) {
	s := series()
	s.Rows[31].Offered, s.Rows[31].Failed, s.Rows[31].Succeeded = 5, 200, 5
	in := Input{Name: "t", Series: s, CapacityRPS: 100, Workers: 10}
	p, _, err := localDrops(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max > 105 {
		t.Errorf("y axis to %g%%", p.Y.Max)
	}
	for i := range s.Rows {
		if v := 100 * float64(s.Rows[i].Failed) / float64(max(ended(&s.Rows[i]), 1)); v > 100 {
			t.Errorf("row %d: %g%%", i, v)
		}
	}
}

func TestShortLabel(t *testing.T) {
	for in, want := range map[string]string{"clients.throttle.k=1.1": "k=1.1", "no throttle": "no throttle",
		"k=2, window=30s": "k=2, window=30s", "a very long label indeed, more than 24": "a very long label indee…", "reconnect-storm-backoff": "reconnect-storm-backoff"} {
		if got := shortLabel(in); got != want {
			t.Errorf("shortLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// One capacity line when the points share it; one per point otherwise; a
// capacity that changes over time is named the effective capacity.
func TestCompareCapacities(t *testing.T) {
	same := []float64{10, 5, 10}
	in := CompareInput{Points: []ComparePoint{{Label: "a", Capacity: same}, {Label: "b", Capacity: same}}}
	cs := capacities(in)
	if len(cs) != 1 || cs[0].name != "effective capacity" {
		t.Errorf("shared capacity: %+v", cs)
	}
	in.Points[1].Capacity = []float64{10, 10, 10}
	cs = capacities(in)
	if len(cs) != 2 || cs[1].name != "capacity: b" || cs[0].name != "effective capacity: a" {
		t.Errorf("different capacities: %+v", cs)
	}
}

// A comparison of runs with different faults and connections renders
// every chart, compare_connections.png included, at the documented size.
func TestCompareDifferentFaultsAndConnections(t *testing.T) {
	band := Band{Mean: make([]float64, 120), Lo: make([]float64, 120), Hi: make([]float64, 120)}
	for i := range band.Mean {
		band.Mean[i], band.Lo[i], band.Hi[i] = float64(i%7), 0, 10
	}
	pts := []ComparePoint{
		{Label: "storm", Received: band, Drops: band, Goodput: band, Handshakes: band, HandshakeWork: band,
			Faults: []Fault{{Start: 20e9, End: 30e9, Label: "outage", Outage: true}}},
		{Label: "jitter", Received: band, Drops: band, Goodput: band, Handshakes: band, HandshakeWork: band,
			Faults: []Fault{{Start: 40e9, End: 50e9, Label: "capacity 50%"}}},
	}
	charts, err := Compare(CompareInput{Name: "c", Seeds: 1, Interval: 1e9, Capacity: 8, Points: pts})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, c := range charts {
		files = append(files, c.File)
		img, err := png.Decode(bytes.NewReader(c.PNG))
		if err != nil {
			t.Fatalf("%s: %v", c.File, err)
		}
		if w := img.Bounds().Dx(); w < 1000 {
			t.Errorf("%s: %d px wide", c.File, w)
		}
	}
	if !slices.Contains(files, "compare_connections.png") {
		t.Errorf("charts %v: no compare_connections.png", files)
	}
}

// gridColumns are the pixel columns holding a vertical grid line (the
// grid's light grey in over a third of the column): where the time ticks
// are.
func gridColumns(t *testing.T, b []byte) []int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	var cols []int
	for x := r.Min.X; x < r.Max.X; x++ {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr == cg && cg == cb && cr >= 0xC000 && cr <= 0xE000 {
				n++
			}
		}
		if n > r.Dy()/3 {
			cols = append(cols, x)
		}
	}
	if len(cols) < 3 {
		t.Fatalf("%d grid columns found", len(cols))
	}
	return cols
}

// The three charts of a run draw their time axis at the same pixels,
// whatever the width of their tick labels (100,000 against 20) or
// legends, so that they stack on a page.
func TestRunChartsShareTheTimeAxis(t *testing.T) {
	s := series()
	for i := range s.Rows {
		s.Rows[i].Received *= 1000 // server load ticks up to 100,000s
	}
	in := Input{Name: "t", Series: s, CapacityRPS: 100, Workers: 10, RecoveryWindow: 5e9, RecoverFraction: 0.95, StayFraction: 0.9}
	charts, err := All(in)
	if err != nil {
		t.Fatal(err)
	}
	// Inside the data area every chart has the same grid columns; outside
	// it (left of the first shared one) only the y axis line's edge may
	// look like grid.
	cols := make([][]int, len(charts))
	shared := map[int]int{}
	for i, c := range charts {
		cols[i] = gridColumns(t, c.PNG)
		for _, x := range cols[i] {
			shared[x]++
		}
	}
	first, n := 1<<30, 0
	for x, k := range shared {
		if k == len(charts) {
			first, n = min(first, x), n+1
		}
	}
	if n < 8 {
		t.Fatalf("only %d grid columns shared by the three charts: %v", n, cols)
	}
	for i, c := range charts {
		for _, x := range cols[i] {
			if shared[x] != len(charts) && x > first {
				t.Errorf("%s: a time grid line at column %d that the others do not have (%v)", c.File, x, cols)
			}
		}
	}
}

// A run with an adaptive concurrency limit gets a panel of its own under
// the server load (twice the height), and only then; the panel draws the
// limit in its colour.
func TestServerLoadLimitPanel(t *testing.T) {
	height := func(s *metrics.Series) (int, bool) {
		t.Helper()
		b, err := serverLoadChart(Input{Name: "t", Series: s, CapacityRPS: 100, Workers: 10})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		bd := img.Bounds()
		for y := bd.Min.Y; y < bd.Max.Y && !found; y++ {
			for x := bd.Min.X; x < bd.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r>>8 == uint32(Vermillion.R) && g>>8 == uint32(Vermillion.G) && bl>>8 == uint32(Vermillion.B) {
					found = true
					break
				}
			}
		}
		return bd.Dy(), found
	}
	plain := series()
	for i := range plain.Rows {
		plain.Rows[i].Rejected = 0 // nothing else drawn in Vermillion
	}
	hPlain, vPlain := height(plain)
	limited := series()
	for i := range limited.Rows {
		limited.Rows[i].Rejected = 0
		limited.Rows[i].LimitNS = int64(20+i) * 1e9 // a limit climbing from 20 to 79
	}
	hLim, vLim := height(limited)
	if hLim < 2*hPlain-10 || hLim > 2*hPlain+10 {
		t.Errorf("height with a limiter %d, want about twice %d", hLim, hPlain)
	}
	if vPlain || !vLim {
		t.Errorf("limit colour drawn: without a limiter %v, with %v; want false, true", vPlain, vLim)
	}
}

// services_overload.png draws every service ÷ its own capacity: a
// readable image with the overloaded tier's colour in it.
func TestServicesOverload(t *testing.T) {
	s := &metrics.Series{Interval: 1e9}
	big := &metrics.Series{Interval: 1e9}
	for i := 0; i < 60; i++ {
		s.Rows = append(s.Rows, metrics.Row{Received: 100, CapacityNS: 10e9})
		big.Rows = append(big.Rows, metrics.Row{Received: 8000, CapacityNS: 10e9})
	}
	b, err := ServicesOverload("t", []ServiceInput{
		{Name: "front", Series: s, CapacityRPS: 1e5, Workers: 10, Calls: true},
		{Name: "db", Series: big, CapacityRPS: 1000, Workers: 10},
	}, []Fault{{Start: 10e9, End: 20e9, Label: "capacity 50% at db"}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w < 500 {
		t.Errorf("width: got %d px, want ≥ 500", w)
	}
}
