package explore

import (
	"context"
	"math"
	"os"
	"testing"
)

func source(t *testing.T, file string, sets ...string) Source {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return Source{File: file, Data: data, Sets: sets}
}

// TestTuneFindsThrottleK: under sustained overload (demand D = 1,000/s,
// capacity C = 200/s, local rejects counted) the SRE throttle sends
// K·C attempts/s and drops 1 − K·C/D, so "minimise backend load subject
// to local drop ≤ 60%" is K = 2.
func TestTuneFindsThrottleK(t *testing.T) {
	if testing.Short() {
		t.Skip("70 simulations; the synthetic tests cover the search under -short")
	}
	src := source(t, "../../scenarios/tune-overload.yaml", "duration=60s")
	c := TuneConfig{
		Params:      []Range{{Path: "clients.throttle.k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
		Budget:      90, Final: 2, FinalSeeds: 5, Jobs: 2,
	}
	res, err := Tune(context.Background(), SimEval([]Source{src}), c)
	if err != nil {
		t.Fatal(err)
	}
	k := res.Best.Values[0]
	t.Logf("K = %g, load %+v, drop %.4f, %d runs", k, res.Best.Objective(), res.Best.ConstraintMean(0, c.Constraints[0]), res.Runs)
	// Tolerance: the closed form gives K = 2 exactly; the simulated
	// throttle runs slightly below K·C (its +1 padding, the partly filled
	// newest bucket, the first window's transient: at K = 2 the drop is
	// 0.606, docs/experiments/tuning.md), which moves the crossing of 60%
	// to about K = 2.04; the search's last grid step is 3/2^5/4 ≈ 0.02 and
	// the one-sided 95% feasibility bound over 5 seeds admits about 0.02
	// more on either side.
	if res.Infeasible || k < 1.95 || k > 2.1 {
		t.Errorf("got K = %g (infeasible %v), want 2 (within [1.95, 2.1])", k, res.Infeasible)
	}
	// Backend load ≈ K·C: within 3% (the same shortfall).
	if load := res.Best.Objective().Mean; math.Abs(load-200*k)/(200*k) > 0.03 {
		t.Errorf("backend load %g, want K·C = %g within 3%%", load, 200*k)
	}
}

// TestTuneFindsRetryAttempts: independent failures with x = 10%: n
// attempts succeed with 1 − x^n, so "minimise amplification subject to
// success ≥ 99.9%" is n = 3.
func TestTuneFindsRetryAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("28 simulations; the synthetic tests cover the search under -short")
	}
	src := source(t, "../../scenarios/tune-retries.yaml")
	c := TuneConfig{
		Params:      []Range{{Path: "clients.retry.max_attempts", Lo: 1, Hi: 8, Integer: true}},
		Objective:   "amplification",
		Constraints: []Constraint{{Metric: "success_ratio", AtMost: false, Bound: 0.999}},
		Budget:      120, Final: 3, FinalSeeds: 6, Jobs: 2,
	}
	res, err := Tune(context.Background(), SimEval([]Source{src}), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("n = %g, amplification %+v, success %.5f; runner-up %v, diff %+v significant %v; %d runs", res.Best.Values[0], res.Best.Objective(),
		res.Best.ConstraintMean(0, c.Constraints[0]), res.RunnerUp.Values, res.Diff, res.Significant, res.Runs)
	if res.Infeasible || res.Best.Values[0] != 3 {
		t.Errorf("got n = %g (infeasible %v), want 3", res.Best.Values[0], res.Infeasible)
	}
	// Amplification (1 − x^n)/(1 − x) = 1.11 at n = 3; 2% covers the
	// sampling error of ~20,000 requests per seed many times over.
	if a := res.Best.Objective().Mean; math.Abs(a-1.11) > 0.02 {
		t.Errorf("amplification %g, want 1.11", a)
	}
}
