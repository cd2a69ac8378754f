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
		r.LatencyP50, r.LatencyP99 = math.NaN(), math.NaN()
		if i >= 20 && i < 30 {
			r.Succeeded, r.FailedOutage, r.Received, r.Accepted, r.DropThrottle, r.Connected = 0, 120, 0, 0, 30, 0
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
		want := 3
		if in.Clients > 0 {
			want = 4
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
		{0, 2709, []string{"0", "500", "1000", "1500", "2000", "2500"}},
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
