package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// loadIn writes files (name → content) to a temporary folder and loads
// scenario.yaml from it.
func loadIn(t testing.TB, files map[string]string, sets ...string) *scenario.Scenario {
	t.Helper()
	dir := t.TempDir()
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := scenario.Load(filepath.Join(dir, "scenario.yaml"), sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const traceScenario = `name: trace
duration: 40s
metrics: {interval: 10s, recovery_window: 10s, baseline: 10s}
clients:
  count: 50
  arrival:
    process: poisson
    trace: {file: rate.csv, format: csv, interpolate: %s}
backend:
  workers: 1000
  service: {dist: constant, mean: 1ms}
`

// The offered requests of each 10 s row follow the recorded rate: held
// between samples (step) or a line between them (linear), within 5
// standard deviations of the Poisson count.
func TestTraceArrivalsFollowTheRate(t *testing.T) {
	csv := "time,rate\n0,1000\n10,3000\n20,0\n30,2000\n"
	for _, tc := range []struct {
		interp, process string
		want            []float64
	}{
		{"step", "poisson", []float64{10000, 30000, 0, 20000}},
		{"linear", "poisson", []float64{20000, 15000, 10000, 20000}},
		{"step", "constant", []float64{10000, 30000, 0, 20000}},
	} {
		t.Run(tc.interp+" "+tc.process, func(t *testing.T) {
			sc := loadIn(t, map[string]string{"scenario.yaml": fmt.Sprintf(traceScenario, tc.interp), "rate.csv": csv}, "clients.arrival.process="+tc.process)
			res := mustRun(t, sc)
			for i, r := range res.Series.Rows {
				got, want := float64(r.Offered), tc.want[i]
				if math.Abs(got-want) > 5*math.Sqrt(want)+0.5 {
					t.Errorf("row %d: got %v requests, want %v ± %.0f", i, got, want, 5*math.Sqrt(want))
				}
			}
		})
	}
}

// A profile step multiplies a trace; --set scale and shift work.
func TestTraceScaleShiftAndSteps(t *testing.T) {
	csv := "time,rate\n0,1000\n10,3000\n20,500\n30,2000\n40,2000\n"
	y := strings.Replace(fmt.Sprintf(traceScenario, "step"), "duration: 40s", "duration: 30s", 1)
	y = strings.Replace(y, "    trace:", "    profile: [{at: 20s, multiplier: 2}]\n    trace:", 1)
	sc := loadIn(t, map[string]string{"scenario.yaml": y, "rate.csv": csv},
		"clients.arrival.trace.scale=1.5", "clients.arrival.trace.shift=10s", "clients.arrival.trace.window=30s")
	res := mustRun(t, sc)
	want := []float64{45000, 7500, 2 * 30000}
	for i, r := range res.Series.Rows {
		if got := float64(r.Offered); math.Abs(got-want[i]) > 5*math.Sqrt(want[i]) {
			t.Errorf("row %d: got %v requests, want %v", i, got, want[i])
		}
	}
}

// Replay sends every recorded request at its time (relative to the
// first), request i by client i mod clients.
func TestReplaySendsTheRecordedRequests(t *testing.T) {
	var b strings.Builder
	var want []int64
	for i := range 500 {
		ts := 1733450000 + float64(i*i)/5000 // 0 to 50 s, denser at first
		fmt.Fprintf(&b, "%.6f\n", ts)
		want = append(want, int64(math.Round((ts-1733450000)*1e6))*1e3)
	}
	y := `name: replay
duration: 40s
metrics: {interval: 10s, recovery_window: 10s, baseline: 10s}
clients:
  count: 7
  arrival:
    process: replay
    trace: {file: requests.txt, format: timestamps}
backend:
  workers: 100
  service: {dist: constant, mean: 1ms}
`
	sc := loadIn(t, map[string]string{"scenario.yaml": y, "requests.txt": b.String()})
	res := mustRun(t, sc)
	for i, r := range res.Series.Rows {
		lo, _ := slices.BinarySearch(want, int64(i)*10e9)
		hi, _ := slices.BinarySearch(want, int64(i+1)*10e9)
		if r.Offered != int64(hi-lo) {
			t.Errorf("row %d: got %d requests, want the %d recorded in it", i, r.Offered, hi-lo)
		}
	}
	a, err := NewArrivals(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	times := sc.Clients.Arrival.Trace.Times
	for c := range 7 {
		at, n := a.First(c)
		for k := 0; at < math.MaxInt64; k++ {
			if i := c + 7*k; times[i] != at || n != uint32(k) {
				t.Fatalf("client %d, its arrival %d: got %d (ordinal %d), want request %d at %d", c, k, at, n, i, times[i])
			}
			at, n = a.Next(c, n, at), n+1
		}
	}
}

// invert is Λ's inverse on sloped segments too: the first time where Λ
// reaches x.
func TestProfileInvertsRampsExactly(t *testing.T) {
	steps := []scenario.Step{{At: 0, Multiplier: 0}, {At: 10e9, Multiplier: 4, Ramp: true}, {At: 20e9, Multiplier: 4}, {At: 30e9, Multiplier: 0.5, Ramp: true}, {At: 35e9, Multiplier: 0}, {At: 40e9, Multiplier: 1, Ramp: true}}
	p := newProfile(steps)
	check := func(t0 int64, want float64) {
		if got := p.cum(t0); math.Abs(got-want) > 1e-9 {
			t.Errorf("Λ(%v s): got %v, want %v", float64(t0)/1e9, got, want)
		}
	}
	check(5e9, 0.4*25/2)         // a ramp from 0: rate 0.4·t
	check(10e9, 20)              // ∫ 0.4t over 10 s
	check(20e9, 60)              // + 4 × 10
	check(30e9, 60+10*(4+0.5)/2) // a ramp down to 0.5
	check(35e9, 82.5+5*0.5)      // held at 0.5
	check(40e9, 85+5*0.5)        // a ramp from 0 to 1
	for x := 0.01; x < 100; x += 0.37 {
		got := p.invert(x)
		if c := p.cum(got); math.Abs(c-x) > 1e-6 {
			t.Fatalf("invert(%v) = %d: Λ there is %v", x, got, c)
		}
		if got > 0 && p.cum(got-1000) >= x {
			t.Fatalf("invert(%v) = %d is not the first time Λ reaches it", x, got)
		}
	}
	if got := p.invert(1e9); got != math.MaxInt64 {
		// The last segment holds 1: Λ grows without bound.
		if c := p.cum(got); math.Abs(c-1e9)/1e9 > 1e-9 {
			t.Errorf("invert(1e9) = %d: Λ there is %v", got, c)
		}
	}
}

// The index of a long profile finds the segments a linear scan finds, and
// the same arrival times as a plain binary search, on uneven segments with
// zero-rate stretches and ramps.
func TestProfileSegmentSearch(t *testing.T) {
	var steps []scenario.Step
	at := int64(0)
	for i := range 1000 {
		at += int64(1+(i*7919)%13) * 1e8
		m := float64(i % 7)
		if i%50 < 5 {
			m = 0
		}
		steps = append(steps, scenario.Step{At: scenario.Duration(at), Multiplier: m, Ramp: i%3 == 0 && i%50 >= 6})
	}
	p := newProfile(steps)
	if p.tIdx == nil || p.xIdx == nil {
		t.Fatal("a profile of 1,000 steps has no index")
	}
	plain := p
	plain.tIdx, plain.xIdx = nil, nil
	for t0 := int64(0); t0 < at+2e9; t0 += 33_333_333 {
		k := 0
		for k+1 < len(p.at) && p.at[k+1] <= t0 {
			k++
		}
		if got := p.seg(t0); got != k {
			t.Fatalf("seg(%d): got %d, want %d", t0, got, k)
		}
	}
	cur := 0 // cumNear from a cursor: times mostly increasing, sometimes back
	for i, t0 := 0, int64(0); t0 < at+2e9; i++ {
		if got, want := p.cumNear(t0, &cur), p.cum(t0); got != want {
			t.Fatalf("cumNear(%d): got %v, want %v", t0, got, want)
		}
		t0 += int64(i%11)*1e8 - 1e8
	}
	total := p.cumS[len(p.cumS)-1]
	for x := 0.0; x < total*1.01; x += total / 7777 {
		if got, want := p.invert(x), plain.invert(x); got != want {
			t.Fatalf("invert(%v): got %d indexed, %d without the index", x, got, want)
		}
		if got, want := p.reach(x), plain.reach(x); got != want {
			t.Fatalf("reach(%v): got %d indexed, %d without the index", x, got, want)
		}
	}
	for _, x := range p.cumS { // the edges themselves
		if got, want := p.invert(x), plain.invert(x); got != want {
			t.Fatalf("invert(%v): got %d indexed, %d without the index", x, got, want)
		}
	}
}

// A daily cycle: the multiplier between its points is a straight line,
// wrapping from the last point to the first.
func TestCycle(t *testing.T) {
	c := &scenario.Cycle{Period: 24 * 3600e9, Start: 6 * 3600e9, Points: []scenario.CyclePoint{{At: 0, Multiplier: 0.2}, {At: 12 * 3600e9, Multiplier: 1.4}, {At: 18 * 3600e9, Multiplier: 1}}}
	p := cycleProfile(c, 48*3600e9)
	for _, tc := range []struct {
		hour float64 // run time
		want float64
	}{{0, 0.8}, {6, 1.4}, {9, 1.2}, {12, 1}, {15, 0.6}, {18, 0.2}, {24, 0.8}, {47, 0.8 - 0.1}} {
		if got := p.rate(int64(tc.hour * 3600e9)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("hour %v: got %v, want %v", tc.hour, got, tc.want)
		}
	}
}

// BenchmarkTraceDay is R1's backend with 10,000 clients over a day: the
// arrivals from a recorded rate of one-second samples (generated here: a
// daily shape from 30 to 270 requests/s around 150/s, with a ripple), and
// the same mean as a constant Poisson rate. `make bench-trace` runs the
// same pair through `throttlesim bench`.
func BenchmarkTraceDay(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("time,rate\n")
	sum := 0.0
	for t := range 86400 {
		r := 150*(1-0.8*math.Cos(2*math.Pi*float64(t)/86400)) + 10*math.Sin(float64(t)/37)
		fmt.Fprintf(&csv, "%d,%.3f\n", t, r)
		sum += math.Round(r*1000) / 1000
	}
	data, err := os.ReadFile("../scenarios/bench-r1.yaml")
	if err != nil {
		b.Fatal(err)
	}
	sets := []string{"clients.count=10000", "duration=86400s", "metrics.interval=60s", "metrics.recovery_window=60s", "metrics.baseline=60s"}
	for _, v := range []struct{ name, arrival string }{
		{"trace", "{process: poisson, trace: {file: day.csv, format: csv}}"},
		{"constant", fmt.Sprintf("{process: poisson, total_rate: %.6f/s}", sum/86400)},
	} {
		b.Run(v.name, func(b *testing.B) {
			sc := loadIn(b, map[string]string{"scenario.yaml": string(data), "day.csv": csv.String()}, append(sets, "clients.arrival="+v.arrival)...)
			benchScenario(b, sc)
		})
	}
}

// Profile steps multiply a cycle: the product is still straight lines.
func TestCycleTimesSteps(t *testing.T) {
	a := &scenario.Arrival{
		Cycle:   &scenario.Cycle{Period: 100e9, Points: []scenario.CyclePoint{{At: 0, Multiplier: 1}, {At: 50e9, Multiplier: 3}}},
		Profile: []scenario.Step{{At: 30e9, Multiplier: 2}, {At: 60e9, Multiplier: 1}},
	}
	p := arrivalProfile(a, 200e9, 1)
	for _, tc := range []struct {
		s    float64
		want float64
	}{{0, 1}, {25, 2}, {30, 2 * 2.2}, {40, 2 * 2.6}, {55, 2 * 2.8}, {60, 2.6}, {75, 2}, {150, 3}} {
		if got := p.rate(int64(tc.s * 1e9)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("at %v s: got %v, want %v", tc.s, got, tc.want)
		}
	}
}
