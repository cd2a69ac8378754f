package policy

import (
	"errors"
	"math"
	"testing"
)

// The step tables of overload-control.md §7.9, RTTs injected.
func TestAIMDSteps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        AIMDSettings
		rtt      int64
		inflight int
		drop     bool
		want     int
	}{
		{"grows when half used", AIMDSettings{}, 10 * ms, 10, false, 21},
		{"holds when under half used", AIMDSettings{}, 10 * ms, 9, false, 20},
		{"drop clamped to the default min 20", AIMDSettings{}, 10 * ms, 10, true, 20},
		{"drop with min 1", AIMDSettings{Min: 1}, 10 * ms, 10, true, 18},
		{"rtt above the timeout is a drop", AIMDSettings{Min: 1}, 6e9, 10, false, 18},
		{"capped at max", AIMDSettings{Initial: 20, Max: 20}, 10 * ms, 20, false, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAIMD(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			a.Sample(0, tc.rtt, tc.inflight, tc.drop, 0)
			if got := a.Limit(0); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestVegasSteps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rtt      int64
		inflight int
		drop     bool
		want     int
	}{
		{"no queue: fast growth +6f", 10 * ms, 20, false, 26},
		{"queue 10 > 6f: -f", 20 * ms, 20, false, 19},
		// queue = ⌈20·(1 − 10/11)⌉ = 2 < 3f: +f
		{"small queue: +f", 11 * ms, 20, false, 21},
		// queue = ⌈20·(1 − 10/12.5)⌉ = 4, between 3f and 6f: hold
		{"queue between alpha and beta: hold", 12_500_000, 20, false, 20},
		{"app-limited: hold", 10 * ms, 9, false, 20},
		{"drop: -f", 10 * ms, 20, true, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewVegas(VegasSettings{})
			if err != nil {
				t.Fatal(err)
			}
			v.Sample(0, 10*ms, 20, false, 0.99) // sets rttNoLoad only
			if got := v.Limit(0); got != 20 {
				t.Fatalf("first sample changed the limit to %d", got)
			}
			v.Sample(0, tc.rtt, tc.inflight, tc.drop, 0.99)
			if got := v.Limit(0); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// Vegas re-measures rttNoLoad every jitter·30·L samples: with the draw
// 0.99 (jitter 0.995) and L = 20 the probe is sample ⌈0.995·30·20⌉ = 597.
func TestVegasProbe(t *testing.T) {
	v, _ := NewVegas(VegasSettings{Max: 20}) // capped so that L stays 20
	v.Sample(0, 10*ms, 20, false, 0.99)
	for i := 2; i < 597; i++ {
		// Just above rttNoLoad: queue 1 ≤ f, L + 6 capped at 20; no reset
		// unless a probe.
		v.Sample(0, 10*ms+1, 20, false, 0.99)
		if v.rttNoLoad != 10*ms {
			t.Fatalf("sample %d reset rttNoLoad to %d", i, v.rttNoLoad)
		}
	}
	v.Sample(0, 30*ms, 20, false, 0.99)
	if v.rttNoLoad != 30*ms {
		t.Errorf("after sample 597 rttNoLoad = %d ms, want 30 ms (the probe)", v.rttNoLoad/ms)
	}
}

func TestGradient2Steps(t *testing.T) {
	g, err := NewGradient2(Gradient2Settings{Initial: 50})
	if err != nil {
		t.Fatal(err)
	}
	// A constant RTT: long = short, g = 1, each sample adds
	// smoothing·queue = 0.2·4 = 0.8.
	for i := 1; i <= 10; i++ {
		g.Sample(0, 10*ms, 50, false, 0)
		if want := 50 + 0.8*float64(i); math.Abs(g.l-want) > 1e-9 {
			t.Fatalf("after %d samples L = %g, want %g", i, g.l, want)
		}
	}
	// Under half used: no change.
	before := g.l
	g.Sample(0, 10*ms, 20, false, 0)
	if g.l != before {
		t.Errorf("app-limited sample moved L from %g to %g", before, g.l)
	}
	// g held at 0.8 converges to queue/(1 − g) = 20 (from 100, min 1).
	h, _ := NewGradient2(Gradient2Settings{Initial: 100, Min: 1})
	for range 2000 {
		h.l = h.step(0.8)
	}
	if math.Abs(h.l-20) > 1e-6 {
		t.Errorf("g = 0.8 fixed point %g, want 20", h.l)
	}
	// The fix of NCL PR #134: with the queue only at g = 1, g = 0.8
	// decays to the floor instead.
	f, _ := NewGradient2(Gradient2Settings{Initial: 100, Min: 1, QueueOnlyAtOne: true})
	for range 2000 {
		f.l = f.step(0.8)
	}
	if f.l != 1 {
		t.Errorf("queue-only-at-1 with g = 0.8 settles at %g, want the floor 1", f.l)
	}
}

// The long RTT follows a sustained RTT, so the gradient returns to 1 and
// the limit climbs again (the mechanism of §6.1): after a step from 10 ms
// to 20 ms, the limit first falls, then rises past where it started.
func TestGradient2LongRTTCatchesUp(t *testing.T) {
	g, _ := NewGradient2(Gradient2Settings{Initial: 100, Min: 1, Max: 1000})
	for range 1000 {
		g.Sample(0, 10*ms, 1000, false, 0)
	}
	start := g.l
	low := start
	for range 4000 {
		g.Sample(0, 20*ms, 1000, false, 0)
		low = math.Min(low, g.l)
	}
	if !(low < start && g.l > start) {
		t.Errorf("limit %g → min %g → %g: want a dip and then above the start", start, low, g.l)
	}
}

func TestWindowed(t *testing.T) {
	a, _ := NewAIMD(AIMDSettings{Min: 1})
	w, err := NewWindowed(a, WindowSettings{})
	if err != nil {
		t.Fatal(err)
	}
	// The first sample closes the empty first window (too few samples to
	// count); then a window of 1 s.
	w.Sample(1*ms, 10*ms, 20, false, 0)
	for i := range 19 { // 100 ms … 1000 ms: the window ends after 1.001 s
		w.Sample(int64(i+2)*50*ms, 10*ms, 20, false, 0)
		if a.Limit(0) != 20 {
			t.Fatalf("the limit moved before the window closed (sample at %d ms)", (i+2)*50)
		}
	}
	w.Sample(1002*ms, 10*ms, 20, false, 0) // the first after 1.001 s: 20 samples, a window
	if got := a.Limit(0); got != 21 {
		t.Errorf("after one window got %d, want 21", got)
	}
	w.Sample(1100*ms, 50*1000, 20, true, 0) // under 100 µs: ignored, drop and all
	w.Sample(2010*ms, 10*ms, 20, true, 0)   // closes a window of one sample: too few
	if got := a.Limit(0); got != 21 {
		t.Errorf("a short window counted: got %d, want 21", got)
	}
}

func TestEnvoySteps(t *testing.T) {
	e, err := NewEnvoy(DefaultEnvoySettings(100*ms, 60e9))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Limit(0); got != 3 || !e.InWindow() {
		t.Fatalf("at start: limit %d, in window %v; want 3 and a window", got, e.InWindow())
	}
	// The minRTT window: 50 samples at 10 ms.
	for i := range 50 {
		e.Sample(10*ms+int64(i)*ms, 10*ms, 3, false, 0.5)
	}
	if e.InWindow() || e.MinRTT() != 10*ms || e.Limit(59*ms) != 3 {
		t.Fatalf("after the window: in %v, minRTT %d, limit %d", e.InWindow(), e.MinRTT(), e.Limit(59*ms))
	}
	// The window ended at 59 ms; updates every 100 ms from there.
	at := 59 * ms
	for _, want := range []int{5, 8, 13} {
		at += 100 * ms
		e.Sample(at-ms, 10*ms, 3, false, 0)
		if got := e.Limit(at); got != want {
			t.Fatalf("update at %d ms: got %d, want %d", at/ms, got, want)
		}
	}
	// sampleRTT = 2 × 1.25·minRTT: g = 0.5, ⌊6.5 + √6.5⌋ = 9.
	at += 100 * ms
	e.Sample(at-ms, 25*ms, 3, false, 0)
	if got := e.Limit(at); got != 9 {
		t.Errorf("g = 0.5 update: got %d, want 9", got)
	}
	// An update interval with no samples changes nothing.
	if got := e.Limit(at + 100*ms); got != 9 {
		t.Errorf("update with no samples: got %d, want 9", got)
	}
	// The next window: at 59 ms + 60 s + ⌊0.5·⌈60000·0.15⌉⌋ ms = 64.559 s.
	if e.Limit(64558*ms) != 9 || e.InWindow() {
		t.Error("the next window started early")
	}
	if e.Limit(64559*ms) != 3 || !e.InWindow() {
		t.Error("the next window did not start at 64.559 s")
	}
	// Samples of requests sent before the window are ignored.
	for range 60 {
		e.Sample(64600*ms, 100*ms, 3, false, 0)
	}
	if !e.InWindow() {
		t.Error("samples sent before the window ended it")
	}
	for range 50 {
		e.Sample(64700*ms, 20*ms, 3, false, 0)
	}
	if e.InWindow() || e.MinRTT() != 20*ms || e.Limit(64700*ms) != 9 {
		t.Errorf("second window: in %v, minRTT %d ms, limit %d; want out, 20 ms, 9", e.InWindow(), e.MinRTT()/ms, e.Limit(64700*ms))
	}
}

// Five updates in a row at min_concurrency start a minRTT window at once.
func TestEnvoyFloorStartsWindow(t *testing.T) {
	e, _ := NewEnvoy(DefaultEnvoySettings(100*ms, 600e9))
	e.Limit(0) // the controller starts (and its first window) at 0
	for range 50 {
		e.Sample(10*ms, 10*ms, 3, false, 0) // the first window: minRTT 10 ms, limit back to 3
	}
	at := 10 * ms
	for i := 1; i <= 5; i++ {
		at += 100 * ms
		e.Sample(at-ms, 100*ms, 3, false, 0) // g = 0.5: ⌊1.5 + 1.22⌋ = 2 → the floor 3
		if got := e.Limit(at); got != 3 {
			t.Fatalf("update %d: got %d, want the floor 3", i, got)
		}
		if want := i == 5; e.InWindow() != want {
			t.Fatalf("after %d updates at the floor: in window %v, want %v", i, e.InWindow(), want)
		}
	}
}

func TestLimiterSettingsErrors(t *testing.T) {
	for _, f := range []func() error{
		func() error { _, err := NewAIMD(AIMDSettings{Backoff: 1}); return err },
		func() error { _, err := NewAIMD(AIMDSettings{Min: 30, Initial: 20}); return err },
		func() error { _, err := NewVegas(VegasSettings{Smoothing: 2}); return err },
		func() error { _, err := NewGradient2(Gradient2Settings{Tolerance: 0.5}); return err },
		func() error { _, err := NewEnvoy(EnvoySettings{Interval: 60e9}); return err },
		func() error { _, err := NewWindowed(nil, WindowSettings{MinWindow: 2e9, MaxWindow: 1e9}); return err },
	} {
		if err := f(); !errors.Is(err, ErrLimitAlgorithmSettings) {
			t.Errorf("got %v, want ErrLimitAlgorithmSettings", err)
		}
	}
}
