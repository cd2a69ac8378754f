package policy

import (
	"errors"
	"fmt"
	"testing"
)

// k8sDefaults is the HPA's default behaviour (kubernetes/website
// horizontal-pod-autoscale.md, "Default Behavior"): tolerance 0.1, no
// scale-up window, 300 s scale-down window, 4 pods or 100% per 15 s.
func k8sDefaults(target float64, lo, hi int) AutoscalerConfig {
	return AutoscalerConfig{Target: target, Tolerance: 0.1, MinReplicas: lo, MaxReplicas: hi,
		DownWindow: 300 * sec, UpPods: 4, UpPercent: 100, UpPeriod: 15 * sec}
}

func TestRecommend(t *testing.T) {
	tests := []struct {
		name    string
		current int
		s       Sample
		want    int
	}{
		// overload-control.md §7.9 and the tolerance blog: 50 replicas,
		// 90% against a 75% target → ratio 1.2 → 60.
		{"k8s blog 50 at 90% of 75%", 50, Sample{Ready: 50, Metric: 0.90, Valid: true}, 60},
		{"ratio 1.08 within tolerance", 10, Sample{Ready: 10, Metric: 0.75 * 1.08, Valid: true}, 10},
		{"ratio 0.92 within tolerance", 10, Sample{Ready: 10, Metric: 0.75 * 0.92, Valid: true}, 10},
		{"ratio 0.5 halves", 10, Sample{Ready: 10, Metric: 0.375, Valid: true}, 5},
		{"idle recommends 0 (min applies in Decide)", 4, Sample{Ready: 4, Metric: 0, Valid: true}, 0},
		{"no metric keeps current", 7, Sample{Ready: 0, Valid: false}, 7},
		// Pending replicas count as 0 on a scale-up: 2 ready at 1.5×
		// with 2 pending is 0.75× over 4, the other side of 1 → keep.
		{"pending flips direction", 4, Sample{Ready: 2, Pending: 2, Metric: 1.5 * 0.75, Valid: true}, 4},
		// 2 ready at 2× with 1 pending: 2·2/3 = 1.33 → ceil(1.33·3) = 4.
		{"pending diluted scale-up", 3, Sample{Ready: 2, Pending: 1, Metric: 2 * 0.75, Valid: true}, 4},
		// 2 ready at 1.05× over 3: 0.7 → keep (opposite direction).
		{"pending within", 3, Sample{Ready: 2, Pending: 1, Metric: 1.5 * 0.75 * 1.0, Valid: true}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAutoscaler(k8sDefaults(0.75, 1, 100))
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Recommend(tt.current, tt.s); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// step is one controller period of a step table: at time at (s), with
// the replicas the previous step left, ready replicas at metric m × the
// target, the decision is want.
type step struct {
	at    int64
	ready int
	m     float64
	want  int
}

func runSteps(t *testing.T, cfg AutoscalerConfig, current int, steps []step) {
	t.Helper()
	a, err := NewAutoscaler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		ready := s.ready
		if ready == 0 {
			ready = current
		}
		got := a.Decide(s.at*sec, current, Sample{Ready: ready, Metric: s.m * cfg.Target, Valid: true})
		if got != s.want {
			t.Fatalf("step %d (t=%ds, %d replicas, metric %.2f× target): got %d, want %d", i, s.at, current, s.m, got, s.want)
		}
		current = got
	}
}

func TestDecideScaleUpRate(t *testing.T) {
	// §7.9: default scale-up from 2 pods with ratio 10: limit
	// max(2 + 4, ceil(2·2)) = 6 per 15 s; then max(6+4, 12) = 12; then
	// the recommendation of 12 replicas at 10× (120, capped at 100 by max
	// replicas, and 24 by the rate).
	runSteps(t, k8sDefaults(0.5, 1, 100), 2, []step{
		{at: 0, m: 10, want: 6},
		{at: 5, ready: 2, m: 10, want: 6}, // same period: start = 6 − 4 = 2, limit 6
		{at: 15, m: 10, want: 12},
		{at: 30, m: 10, want: 24},
		{at: 45, m: 10, want: 48},
		{at: 60, m: 10, want: 96},
		{at: 75, m: 10, want: 100}, // max replicas
	})
}

func TestDecideStabilisation(t *testing.T) {
	noRate := k8sDefaults(0.5, 2, 100)
	noRate.UpPeriod = 0
	t.Run("scale-down waits for the window's max", func(t *testing.T) {
		runSteps(t, noRate, 10, []step{
			{at: 0, m: 1, want: 10},             // rec 10
			{at: 15, m: 0.4, want: 10},          // rec 4, but 10 within 300 s
			{at: 299, m: 0.4, want: 10},         // rec at 0 still inside (299−300 < 0)
			{at: 300, m: 0.4, want: 4},          // rec at 0 is at the cutoff: out
			{at: 315, m: 0.1, want: 4},          // rec 1 → max over window is 4
			{at: 615, m: 0.1, want: 2},          // window holds only 1s → min replicas 2
			{at: 630, ready: 2, m: 5, want: 10}, // scale-up at once (no up window)
		})
	})
	t.Run("scale-up waits for the window's min", func(t *testing.T) {
		cfg := noRate
		cfg.UpWindow = 60 * sec
		runSteps(t, cfg, 4, []step{
			{at: 0, m: 1, want: 4},    // rec 4
			{at: 15, m: 2, want: 4},   // rec 8, min over window 4
			{at: 59, m: 2, want: 4},   // rec at 0 still inside
			{at: 60, m: 2, want: 8},   // out: min(8, 8)
			{at: 75, m: 0.5, want: 8}, // rec 4: a scale-down, held by the 300 s window
		})
	})
	t.Run("tolerance holds in both directions", func(t *testing.T) {
		runSteps(t, noRate, 10, []step{
			{at: 0, m: 1.09, want: 10},
			{at: 15, m: 1.11, want: 12},
			{at: 30, m: 0.91, want: 12},
		})
	})
}

// Start makes the count at the start a recommendation: the scale-down
// window holds it (here 300 s), where a fresh autoscaler would follow
// the first low recommendation at once.
func TestStartHoldsTheInitialCount(t *testing.T) {
	a, _ := NewAutoscaler(k8sDefaults(0.5, 1, 100))
	a.Start(0, 10)
	for _, c := range []struct {
		at   int64
		want int
	}{{15, 10}, {299, 10}, {300, 2}} {
		if got := a.Decide(c.at*sec, 10, Sample{Ready: 10, Metric: 0.1, Valid: true}); got != c.want {
			t.Errorf("t=%ds: got %d, want %d", c.at, got, c.want)
		}
	}
	fresh, _ := NewAutoscaler(k8sDefaults(0.5, 1, 100))
	if got := fresh.Decide(15*sec, 10, Sample{Ready: 10, Metric: 0.1, Valid: true}); got != 2 {
		t.Errorf("without Start: got %d, want 2", got)
	}
}

func TestNewAutoscalerErrors(t *testing.T) {
	good := k8sDefaults(0.5, 1, 10)
	for _, tt := range []struct {
		name string
		mod  func(*AutoscalerConfig)
	}{
		{"zero target", func(c *AutoscalerConfig) { c.Target = 0 }},
		{"tolerance 1", func(c *AutoscalerConfig) { c.Tolerance = 1 }},
		{"min 0", func(c *AutoscalerConfig) { c.MinReplicas = 0 }},
		{"max < min", func(c *AutoscalerConfig) { c.MaxReplicas = 0 }},
		{"negative window", func(c *AutoscalerConfig) { c.DownWindow = -1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.mod(&c)
			if _, err := NewAutoscaler(c); !errors.Is(err, ErrAutoscalerConfig) {
				t.Errorf("got %v, want ErrAutoscalerConfig", err)
			}
		})
	}
	if _, err := NewAutoscaler(good); err != nil {
		t.Errorf("defaults: got %v, want nil", err)
	}
}

// The HPA's default behaviour facing a tenfold overload on 2 replicas:
// the scale-up rate (4 pods or 100% per 15 s) lets it double per period.
func ExampleAutoscaler_Decide() {
	a, _ := NewAutoscaler(AutoscalerConfig{Target: 0.7, Tolerance: 0.1, MinReplicas: 1, MaxReplicas: 30,
		DownWindow: 300e9, UpPods: 4, UpPercent: 100, UpPeriod: 15e9})
	n := 2
	for t := int64(0); t <= 60; t += 15 {
		busy := min(1, 14.0/float64(n)) // 14 replicas' worth of work; at most 100% busy each
		n = a.Decide(t*1e9, n, Sample{Ready: n, Metric: busy, Valid: true})
		fmt.Printf("t=%2ds busy %.2f → %d replicas\n", t, busy, n)
	}
	// Output:
	// t= 0s busy 1.00 → 3 replicas
	// t=15s busy 1.00 → 5 replicas
	// t=30s busy 1.00 → 8 replicas
	// t=45s busy 1.00 → 12 replicas
	// t=60s busy 1.00 → 18 replicas
}
