package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHistogramBucketsRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, 31, 32, 33, 63, 64, 65, 1000, 123456789, 1 << 40, math.MaxInt64} {
		lo, w := bucketRange(bucketOf(v))
		if v < lo || v >= lo+w && !(v == math.MaxInt64 && v-lo < w) {
			t.Errorf("value %d in bucket [%d, %d)", v, lo, lo+w)
		}
		// Relative width at most 1/32.
		if v >= 32 && float64(w)/float64(lo) > 1.0/32+1e-12 {
			t.Errorf("bucket of %d is %d wide at %d", v, w, lo)
		}
	}
}

// Quantiles of a known sample are within half a sub-bucket (1/64 ≈ 1.6%)
// of the exact order statistic.
func TestHistogramQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var h Histogram
	xs := make([]int64, 100_000)
	for i := range xs {
		xs[i] = int64(r.ExpFloat64() * 1e8) // ~100 ms in ns
		h.Add(xs[i])
	}
	slices.Sort(xs)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := float64(xs[int(math.Ceil(q*float64(len(xs))))-1])
		got, ok := h.Quantile(q)
		if !ok || math.Abs(got-exact)/exact > 1.0/64 {
			t.Errorf("q=%v: got %v, exact %v", q, got, exact)
		}
	}
	var empty Histogram
	if _, ok := empty.Quantile(0.5); ok {
		t.Error("empty histogram reported a quantile")
	}
}

// recoverySeries builds a 1-s series from goodput values per second.
func recoverySeries(g []int64) *Series {
	s := NewSeries(1e9, len(g))
	for i, x := range g {
		s.Rows[i].Succeeded = x
	}
	return s
}

func repeat(x int64, n int) []int64 { return slices.Repeat([]int64{x}, n) }

// Step tables for the recovery rule: baseline from [first−B, first), a
// 3-s window, recovered at the end of the first window after the fault
// that is >= 95% of baseline when every later window stays >= 90%.
func TestRecoveryRule(t *testing.T) {
	p := Params{RecoveryWindow: 3e9, Baseline: 5e9, RecoverFraction: 0.95, StayFraction: 0.9,
		Faults: []Window{{Start: 5e9, End: 8e9}}}
	cat := func(parts ...[]int64) []int64 { return slices.Concat(parts...) }
	tests := []struct {
		name      string
		goodput   []int64
		recovered bool
		at        float64 // recovered_at_s
	}{
		{"instant recovery: the first full window after the fault",
			cat(repeat(100, 5), repeat(0, 3), repeat(100, 10)), true, 11},
		{"slow ramp", cat(repeat(100, 5), repeat(0, 3), []int64{50, 80, 90, 95, 100, 100}, repeat(100, 6)), true, 13}, // window 90,95,100 ends at 13 s
		{"relapse below 90% later: recovery is after the relapse",
			cat(repeat(100, 5), repeat(0, 3), repeat(100, 4), repeat(50, 3), repeat(100, 6)), true, 18},
		{"never back", cat(repeat(100, 5), repeat(0, 3), repeat(80, 10)), false, 0},
		{"dip between 90 and 95 does not undo a recovery",
			cat(repeat(100, 5), repeat(0, 3), repeat(100, 3), repeat(92, 4), repeat(100, 3)), true, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recovery(recoverySeries(tt.goodput), p)
			if !r.Applicable || *r.BaselineGoodput != 100 {
				t.Fatalf("baseline: %+v", r)
			}
			if r.Recovered != tt.recovered {
				t.Fatalf("recovered = %v, want %v (%+v)", r.Recovered, tt.recovered, r)
			}
			if tt.recovered {
				if *r.RecoveredAtS != tt.at || *r.RecoveryTimeS != tt.at-8 {
					t.Errorf("recovered at %v (+%v), want %v (+%v)", *r.RecoveredAtS, *r.RecoveryTimeS, tt.at, tt.at-8)
				}
			} else if r.RecoveryTimeS != nil || r.Reason == "" {
				t.Errorf("not recovered but time %v, reason %q", r.RecoveryTimeS, r.Reason)
			}
		})
	}
	if r := recovery(recoverySeries(repeat(100, 10)), Params{RecoveryWindow: 3e9, Baseline: 5e9}); r.Applicable {
		t.Error("recovery applies to a run without faults")
	}
	if r := recovery(recoverySeries(cat(repeat(0, 5), repeat(100, 10))), p); r.Recovered || r.Reason == "" {
		t.Errorf("zero baseline: %+v", r)
	}
	// An interrupted run's series ends where it stopped, possibly before
	// the fault: no baseline, no recovery, no panic (found by
	// TestSignalStopsARun, which interrupts a run at a random point).
	for _, rows := range []int{0, 1, 3, 4, 6} {
		if r := recovery(recoverySeries(repeat(100, rows)), p); r.Recovered || r.Reason == "" {
			t.Errorf("series of %d rows, fault at row 5: %+v", rows, r)
		}
	}
}

func TestSummariseRatios(t *testing.T) {
	s := NewSeries(1e9, 2)
	s.Rows[0] = Row{Offered: 100, Attempts: 150, Succeeded: 80, DropThrottle: 10, Failed: 5, Received: 150, UsefulNS: 3e9, WastedNS: 1e9, CapacityNS: 10e9}
	var h Histogram
	sum := Summarise(s, Params{CapacityRPS: 100, RecoveryWindow: 1e9, Baseline: 1e9}, &h, 0, 0)
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"success ratio", sum.SuccessRatio, 0.8},
		{"local drop rate", sum.LocalDropRate, 0.1},
		{"amplification", sum.Amplification, 1.5},
		{"peak received / capacity", sum.PeakReceivedOverCapacity, 1.5},
		{"wasted fraction", sum.WastedWorkFraction, 0.25},
		{"utilisation", sum.Utilisation, 0.4},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if sum.InFlight != 5 {
		t.Errorf("in flight %d, want 5", sum.InFlight)
	}
	if sum.LatencyP50MS != nil || sum.MeanQueueWaitMS != nil {
		t.Error("figures without data must be nil (JSON null), not 0")
	}
}

// MSER-5 cuts an initial transient and nothing from a stationary series.
func TestMSER5(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	flat := make([]float64, 1000)
	for i := range flat {
		flat[i] = 10 + r.NormFloat64()
	}
	if cut := MSER5(flat); cut > 100 {
		t.Errorf("stationary series: cut %d, want near 0", cut)
	}
	// A transient from 0 up to the level 10 over the first 200 points.
	ramp := append([]float64(nil), flat...)
	for i := 0; i < 200; i++ {
		ramp[i] = 10 * float64(i) / 200
	}
	if cut := MSER5(ramp); cut < 100 || cut > 300 {
		t.Errorf("200-point transient: cut %d, want about 150..250", cut)
	}
	if MSER5([]float64{1, 2, 3}) != 0 {
		t.Error("a series too short to batch must not be cut")
	}
}

// The overload figures against a hand-built run: 10 workers of 100 req/s
// capacity (10/s each) cut to 5 workers for rows 2–3 (the fault), 1 s
// rows, goodput back to baseline from row 6.
func TestOverloadFigures(t *testing.T) {
	s := NewSeries(1e9, 10)
	for i := range s.Rows {
		r := &s.Rows[i]
		r.CapacityNS = 10 * 1e9
		r.Received, r.Succeeded, r.UsefulNS = 60, 60, 6e9
		r.Offered = 60
	}
	for _, i := range []int{2, 3} { // the fault: half the workers, 120 received
		s.Rows[i].CapacityNS = 5 * 1e9
		s.Rows[i].Received, s.Rows[i].Succeeded = 120, 10
	}
	s.Rows[2].Succeeded = 20        // 30 of the fault's 120 offered succeed
	for _, i := range []int{4, 5} { // after it: 110 received (> 100), mostly wasted
		s.Rows[i].Received, s.Rows[i].Succeeded, s.Rows[i].UsefulNS, s.Rows[i].WastedNS = 110, 10, 1e9, 9e9
	}
	var h Histogram
	p := Params{Workers: 10, CapacityRPS: 100, Faults: []Window{{Start: 2e9, End: 4e9}}, RecoveryWindow: 1e9, Baseline: 2e9,
		RecoverFraction: 0.9, StayFraction: 0.8}
	sum := Summarise(s, p, &h, 0, 0)
	if got := EffectiveCapacity(&s.Rows[2], s.Interval, p); got != 50 {
		t.Errorf("effective capacity in the fault: got %g, want 50", got)
	}
	// Fault rows: 240 received against 2 × 50 = 100 that could be served.
	// Above capacity: rows 2, 3 (120 > 50) and 4, 5 (110 > 100): 4 s.
	// Recovery: the fault ends at 4 s, goodput is back in row 6 (window
	// ends at 7 s); rows 4–6 wasted 18 of 18 + 2 + 6 worker-seconds.
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"fault load / effective capacity", sum.FaultLoadOverCapacity, 2.4},
		{"success during the fault", sum.FaultSuccessRatio, 0.25},
		{"time above capacity", sum.TimeAboveCapacityS, 4},
		{"recovery wasted worker-s", sum.RecoveryWastedWorkerS, 18},
		{"recovery wasted fraction", sum.RecoveryWastedFraction, 18.0 / 26},
	}
	if !sum.Recovery.Recovered || *sum.Recovery.RecoveredAtS != 7 {
		t.Fatalf("recovery %+v, want recovered at 7 s", sum.Recovery)
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// An outage leaves no capacity: the fault-load ratio is null.
	for _, i := range []int{2, 3} {
		s.Rows[i].CapacityNS, s.Rows[i].Received = 0, 0
	}
	if sum := Summarise(s, p, &h, 0, 0); sum.FaultLoadOverCapacity != nil {
		t.Errorf("fault load with no capacity left: got %v, want null", *sum.FaultLoadOverCapacity)
	}
	// Without a fault there is no success during one.
	p.Faults = nil
	if sum := Summarise(s, p, &h, 0, 0); sum.FaultSuccessRatio != nil {
		t.Errorf("success during the fault without one: got %v, want null", *sum.FaultSuccessRatio)
	}
}

func TestSlidingMean(t *testing.T) {
	tests := []struct {
		g    []float64
		w    int
		want []float64
	}{
		{[]float64{2, 4, 6, 8}, 2, []float64{1, 3, 5, 7}},
		{[]float64{3, 3, 3}, 3, []float64{1, 2, 3}},
		{[]float64{5}, 1, []float64{5}},
		{nil, 2, []float64{}},
	}
	for _, tt := range tests {
		got := SlidingMean(tt.g, tt.w)
		if len(got) != len(tt.want) {
			t.Fatalf("SlidingMean(%v, %d): got %v, want %v", tt.g, tt.w, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("SlidingMean(%v, %d): got %v, want %v", tt.g, tt.w, got, tt.want)
				break
			}
		}
	}
}
