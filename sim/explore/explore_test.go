package explore

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
)

// uniform is a deterministic draw in [0, 1) from a seed and the variant's
// overrides, standing in for a simulation's randomness.
func uniform(v Variant, salt uint64) float64 {
	h := rng.Mix(v.Seed ^ salt)
	for _, s := range v.Sets {
		for _, b := range []byte(s) {
			h = rng.Mix(h ^ uint64(b))
		}
	}
	return float64(h>>11) / (1 << 53)
}

func setValue(t testing.TB, v Variant, path string) float64 {
	for _, s := range v.Sets {
		if p, val, _ := strings.Cut(s, "="); p == path {
			x, err := strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
			if err != nil {
				t.Fatalf("bad set %q", s)
			}
			return x
		}
	}
	t.Fatalf("no %s in %v", path, v.Sets)
	return 0
}

// logisticMap is a synthetic system: at load L a trigger T fails to
// recover with probability 1/(1+exp(−(T−thr(L))/slope)).
func logisticMap(t testing.TB, thr func(load float64) float64, slope float64) Eval {
	return func(_ context.Context, v Variant) (Figures, error) {
		load, trig := setValue(t, v, "load"), setValue(t, v, "trigger")
		p := 1 / (1 + math.Exp(-(trig-thr(load))/slope))
		rec := 1.0
		if uniform(v, 1) < p {
			rec = 0
		}
		return Figures{"recovery.applicable": 1, "recovery.recovered": rec, "recovery.recovery_time_s": 10}, nil
	}
}

func TestMapFindsLogisticBoundary(t *testing.T) {
	const slope = 0.2
	thr := func(l float64) float64 { return 10 - l }
	c := MapConfig{
		Load:    Range{Path: "load", Lo: 1, Hi: 8, Steps: 8},
		Trigger: Range{Path: "trigger", Lo: 0, Hi: 12, Unit: "s"},
		Jobs:    4,
	}
	res, err := Map(context.Background(), logisticMap(t, thr, slope), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Levels) != 8 || len(res.Notes) != 0 {
		t.Fatalf("got %d levels, notes %v; want 8 levels, no notes", len(res.Levels), res.Notes)
	}
	for _, l := range res.Levels {
		b := l.Boundary
		// Tolerance: the test's indifference zone P in [¼, ¾] is
		// thr ± slope·ln 3 for a logistic; the bisection stops within one
		// resolution (12/50) of a point in or next to it.
		tol := slope*math.Log(3) + 12.0/50
		if b.Kind != "bracketed" || math.Abs(b.Threshold-thr(l.Load)) > tol {
			t.Errorf("load %g: got %s threshold %g in [%g, %g], want %g ± %.2f", l.Load, b.Kind, b.Threshold, b.Lo, b.Hi, thr(l.Load), tol)
		}
		if l.NonMonotone != "" {
			t.Errorf("load %g: non-monotone reported for a monotone model: %s", l.Load, l.NonMonotone)
		}
	}
	// Same answer with one job: determinism.
	c.Jobs = 1
	res1, err := Map(context.Background(), logisticMap(t, thr, slope), c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Levels {
		if res.Levels[i].Boundary != res1.Levels[i].Boundary || res.Levels[i].Runs != res1.Levels[i].Runs {
			t.Errorf("level %d differs with 1 job: %+v vs %+v", i, res.Levels[i].Boundary, res1.Levels[i].Boundary)
		}
	}
}

func TestMapEdgesAndNonMonotone(t *testing.T) {
	band := func(_ context.Context, v Variant) (Figures, error) {
		trig := setValue(t, v, "trigger")
		load := setValue(t, v, "load")
		rec := 1.0
		switch {
		case load == 1 && trig >= 4 && trig <= 6: // collapses only in a band
			rec = 0
		case load == 2: // always collapses
			rec = 0
		case load == 3: // never collapses
		}
		return Figures{"recovery.applicable": 1, "recovery.recovered": rec, "recovery.recovery_time_s": 5}, nil
	}
	c := MapConfig{Load: Range{Path: "load", Lo: 1, Hi: 3, Steps: 3}, Trigger: Range{Path: "trigger", Lo: 0, Hi: 10}, Grid: 11}
	res, err := Map(context.Background(), band, c)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Levels[0]; l.NonMonotone == "" {
		t.Errorf("load 1: a collapse band only between 4 and 6: want a non-monotone report, got none")
	}
	if k := res.Levels[1].Boundary.Kind; k != "below" {
		t.Errorf("load 2: got %q, want below", k)
	}
	if k := res.Levels[2].Boundary.Kind; k != "above" {
		t.Errorf("load 3: got %q, want above", k)
	}
	for _, l := range res.Levels {
		for _, p := range l.Probes {
			if p.N != 3 {
				t.Errorf("load %g trigger %g: deterministic outcome took %d seeds, want 3 (SPRT with Δ=¼, α=5%%: ⌈log 19/log 3⌉)", l.Load, p.Trigger, p.N)
			}
		}
	}
}

func TestMapNoRecoveryRule(t *testing.T) {
	e := func(context.Context, Variant) (Figures, error) { return Figures{"recovery.applicable": 0}, nil }
	c := MapConfig{Load: Range{Path: "load", Lo: 1, Hi: 2, Steps: 2}, Trigger: Range{Path: "trigger", Lo: 0, Hi: 1}}
	if _, err := Map(context.Background(), e, c); err == nil || !strings.Contains(err.Error(), "recovery rule does not apply") {
		t.Fatalf("got %v, want the no-recovery-rule error", err)
	}
}

func TestMapHorizon(t *testing.T) {
	// Recovers after 100 s: with a 60 s horizon that is a failure.
	e := func(context.Context, Variant) (Figures, error) {
		return Figures{"recovery.applicable": 1, "recovery.recovered": 1, "recovery.recovery_time_s": 100}, nil
	}
	c := MapConfig{Load: Range{Path: "load", Lo: 1, Hi: 2, Steps: 1}, Trigger: Range{Path: "trigger", Lo: 0, Hi: 1}, HorizonS: 60}
	res, err := Map(context.Background(), e, c)
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Levels[0].Boundary.Kind; k != "below" {
		t.Errorf("got %q, want below (every run recovers too late)", k)
	}
}

func TestSPRTDecisions(t *testing.T) {
	s := SPRT{Delta: 0.25, Alpha: 0.05, MaxN: 20}
	for _, tc := range []struct {
		k, n int
		d    Decision
		more bool
	}{
		{0, 2, Undecided, true}, {0, 3, Stable, false}, {3, 3, Metastable, false},
		{1, 3, Undecided, true}, {1, 4, Undecided, true}, {1, 5, Stable, false},
		{10, 20, Undecided, false},
	} {
		d, more := s.Decide(tc.k, tc.n)
		if d != tc.d || more != tc.more {
			t.Errorf("Decide(%d, %d) = %v, %v; want %v, %v", tc.k, tc.n, d, more, tc.d, tc.more)
		}
	}
}

func TestClopperPearson(t *testing.T) {
	// Reference values: the exact interval for 0 of 3 is [0, 1 − 0.025^(1/3)]
	// and for 3 of 10 [0.0667, 0.6525] (Clopper–Pearson tables).
	lo, hi := ClopperPearson(0, 3, 0.05)
	if lo != 0 || math.Abs(hi-(1-math.Pow(0.025, 1.0/3))) > 1e-9 {
		t.Errorf("0 of 3: got [%g, %g]", lo, hi)
	}
	lo, hi = ClopperPearson(3, 10, 0.05)
	if math.Abs(lo-0.0667) > 1e-4 || math.Abs(hi-0.6525) > 1e-4 {
		t.Errorf("3 of 10: got [%.4f, %.4f], want [0.0667, 0.6525]", lo, hi)
	}
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Range
		err  string
	}{
		{in: "clients.throttle.k=1.1..4", want: Range{Path: "clients.throttle.k", Lo: 1.1, Hi: 4}},
		{in: "clients.arrival.total_rate=400/s..900/s/20", want: Range{Path: "clients.arrival.total_rate", Lo: 400, Hi: 900, Unit: "/s", Steps: 20}},
		{in: "faults.0.duration=1s..20s", want: Range{Path: "faults.0.duration", Lo: 1, Hi: 20, Unit: "s"}},
		{in: "x=3..3", err: "empty range"},
		{in: "x=5..1", err: "empty range"},
		{in: "x=1s..20ms", err: "different units"},
		{in: "x=1..2/0", err: "steps must be at least 1"},
		{in: "x=abc..2", err: "expected a number"},
		{in: "x=1,2", err: "expected a range a..b"},
		{in: "=1..2", err: "expected PATH=a..b"},
		{in: "k=1..4:0.1", want: Range{Path: "k", Lo: 1, Hi: 4, Step: 0.1}},
		{in: "clients.timeout=1s..2s:0.25s", want: Range{Path: "clients.timeout", Lo: 1, Hi: 2, Unit: "s", Step: 0.25}},
		{in: "clients.timeout=1s..2s:0.25", want: Range{Path: "clients.timeout", Lo: 1, Hi: 2, Unit: "s", Step: 0.25}},
		{in: "r=400/s..900/s:50/s", want: Range{Path: "r", Lo: 400, Hi: 900, Unit: "/s", Step: 50}},
		{in: "k=1..4:3", want: Range{Path: "k", Lo: 1, Hi: 4, Step: 3}},
		{in: "k=1..4:0", err: "the step must be above 0, got 0"},
		{in: "k=1..4:-0.5", err: "the step must be above 0, got -0.5"},
		{in: "k=1..4:3.5", err: "the step 3.5 is wider than the range (3)"},
		{in: "k=1..4:", err: "step: expected a number"},
		{in: "k=1..4:abc", err: "step: expected a number"},
		{in: "t=1s..2s:100ms", err: `the step's unit "ms" is not the bounds' "s"`},
		{in: "k=1..4/4:0.5", err: "not both"},
	} {
		got, err := ParseRange("--param", tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseConstraint(t *testing.T) {
	c, err := ParseConstraint("local_drop_rate<=60%")
	if err != nil || c != (Constraint{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}) {
		t.Errorf("got %+v, %v", c, err)
	}
	_, err = ParseConstraint("sucess_ratio>=0.999")
	if err == nil || !strings.Contains(err.Error(), `did you mean "success_ratio"`) {
		t.Errorf("got %v, want a did-you-mean", err)
	}
	if _, err := ParseConstraint("success_ratio=0.9"); err == nil {
		t.Error("a constraint without <= or >=: got no error")
	}
}

// linearTune is a synthetic tuning problem shaped like the SRE throttle
// under overload: load = 200·x, drop = 1 − 200·x/1000, each with ±2% noise.
func linearTune(_ context.Context, v Variant) (Figures, error) {
	var x float64
	for _, s := range v.Sets {
		_, val, _ := strings.Cut(s, "=")
		x, _ = strconv.ParseFloat(val, 64)
	}
	n1, n2 := uniform(v, 7)-0.5, uniform(v, 8)-0.5
	load := 200 * x * (1 + 0.04*n1)
	return Figures{"backend_load_rps": load, "local_drop_rate": 1 - load/1000 + 0.01*n2}, nil
}

func TestTuneLinearOptimum(t *testing.T) {
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
		Budget:      150, Sensitivity: 5, Jobs: 3,
	}
	res, err := Tune(context.Background(), linearTune, c)
	if err != nil {
		t.Fatal(err)
	}
	// Tolerance: the drop's noise is uniform ±2% of 200x plus ±0.5%, so
	// its sd over 10 seeds is about 0.0025; the one-sided 95% bound lets x
	// go about 2 such sd (0.005 in drop, 0.025 in x) below 2, plus the
	// last round's grid step (3/2^6/4 ≈ 0.012).
	if k := res.Best.Values[0]; res.Infeasible || math.Abs(k-2) > 0.05 {
		t.Errorf("got k = %g (infeasible %v), want 2 ± 0.05", k, res.Infeasible)
	}
	t.Logf("best k = %g over %d seeds, objective %+v; runner-up %v, diff %+v; %d runs", res.Best.Values[0], res.Best.Seeds, res.Best.Objective(), res.RunnerUp.Values, res.Diff, res.Runs)
	if res.Runs > c.Budget {
		t.Errorf("used %d runs, budget %d", res.Runs, c.Budget)
	}
	if len(res.Sensitivity) != 1 || len(res.Sensitivity[0]) != 5 {
		t.Errorf("sensitivity: got %v", res.Sensitivity)
	}
	c.Jobs = 1
	res1, err := Tune(context.Background(), linearTune, c)
	if err != nil {
		t.Fatal(err)
	}
	if res1.Best.key() != res.Best.key() || res1.Runs != res.Runs {
		t.Errorf("not deterministic across jobs: %s (%d runs) vs %s (%d runs)", res1.Best.key(), res1.Runs, res.Best.key(), res.Runs)
	}
}

func TestTuneInfeasibleAndBadInput(t *testing.T) {
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: -0.5}},
		Budget:      100,
	}
	res, err := Tune(context.Background(), linearTune, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Infeasible {
		t.Errorf("a drop rate below −0.5 cannot be met: got a feasible result %v", res.Best.Values)
	}
	for _, tc := range []struct {
		mod  func(*TuneConfig)
		want string
	}{
		{func(c *TuneConfig) { c.Objective = "backend_lod_rps" }, `did you mean "backend_load_rps"`},
		{func(c *TuneConfig) { c.Params = nil }, "nothing to tune"},
		{func(c *TuneConfig) { c.Params = []Range{{Path: "n", Lo: 1.2, Hi: 1.8, Integer: true}} }, "no whole number"},
		{func(c *TuneConfig) { c.Budget = 10 }, "too small"},
	} {
		cc := c
		tc.mod(&cc)
		if _, err := Tune(context.Background(), linearTune, cc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}

// A recovery figure is left out of a scenario without a fault, and a
// missing value where it applies (no recovery) is the worst.
func TestTuneRecoveryApplicability(t *testing.T) {
	eval := func(_ context.Context, v Variant) (Figures, error) {
		x := setValue(t, v, "k")
		if v.Scenario == 1 { // the overload: no fault, recovery n/a
			return Figures{"recovery.applicable": 0, "recovery.recovery_time_s": math.NaN(), "wasted_work_fraction": 0.01 * x}, nil
		}
		rt := 100 / x // faster with larger k ...
		if x < 2 {
			rt = math.NaN() // ... and none at all below 2
		}
		return Figures{"recovery.applicable": 1, "recovery.recovery_time_s": rt, "wasted_work_fraction": 0}, nil
	}
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 5}},
		Scenarios:   2,
		Objective:   "wasted_work_fraction",
		Constraints: []Constraint{{Metric: "recovery.recovery_time_s", AtMost: true, Bound: 40}},
		Worst:       true, Budget: 200, Final: 2, FinalSeeds: 4,
	}
	res, err := Tune(context.Background(), eval, c)
	if err != nil {
		t.Fatal(err)
	}
	// Least waste is the smallest k, but recovery within 40 s needs
	// 100/k <= 40: k >= 2.5 (deterministic, so within the final grid step
	// of 4/2^5/4 ≈ 0.03).
	if k := res.Best.Values[0]; res.Infeasible || k < 2.5 || k > 2.55 {
		t.Errorf("got k = %g (infeasible %v), want 2.5", k, res.Infeasible)
	}
	if res.RunnerUp == nil || !c.Feasible(res.RunnerUp) {
		t.Errorf("the runner-up of a feasible choice should be feasible when one exists: %+v", res.RunnerUp)
	}
	// An objective that applies nowhere is an error, not a silent NaN.
	c.Objective, c.Constraints = "recovery.recovery_time_s", nil
	one := func(ctx context.Context, v Variant) (Figures, error) {
		v.Scenario = 1
		return eval(ctx, v)
	}
	if _, err := Tune(context.Background(), one, c); err == nil || !strings.Contains(err.Error(), "does not apply to any") {
		t.Errorf("got %v, want a does-not-apply error", err)
	}
}

func TestFiguresHaveThresholdNames(t *testing.T) {
	x := 12.5
	s := metrics.Summary{Recovery: metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: &x}}
	f := NewFigures(&s, 10)
	if f["recovery_s"] != 12.5 || f["recovery.recovery_time_s"] != 12.5 || f["recovered"] != 1 {
		t.Errorf("got recovery_s %g, recovery.recovery_time_s %g, recovered %g; want 12.5, 12.5, 1", f["recovery_s"], f["recovery.recovery_time_s"], f["recovered"])
	}
	if err := CheckMetric("recovery_s"); err != nil {
		t.Error(err)
	}
	if _, ok := Value(Figures{"recovery.applicable": 0, "recovery_s": math.NaN()}, "recovery_s"); ok {
		t.Error("recovery_s of a run without a fault: want not applicable")
	}
}

// TestTuneIntegerTriesEveryValue: one integer parameter with at most 25
// whole values is evaluated at every value, so an optimum between the
// points of a rounded 9-point grid is found; with more values the search
// refines around the best of the grid (integer-only searches used to stop
// after the first round). The objective is |n − opt| with no noise, so the
// only way to pick opt is to have evaluated it.
func TestTuneIntegerTriesEveryValue(t *testing.T) {
	for _, tc := range []struct{ lo, hi, opt float64 }{
		{1, 10, 5},   // the 9-point grid over 1..10 runs 1,2,3,4,6,7,8,9,10
		{1, 25, 13},  // 25 values: still every one
		{0, 17, 11},  // grid 0,2,4,6,9,11,13,15,17 — and 10, 12 skipped
		{3, 7, 6},    // fewer values than grid points
		{1, 100, 37}, // more than 25: found by refining, not by the grid
	} {
		eval := func(_ context.Context, v Variant) (Figures, error) {
			_, val, _ := strings.Cut(v.Sets[0], "=")
			n, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, err
			}
			return Figures{"backend_load_rps": math.Abs(n - tc.opt)}, nil
		}
		c := TuneConfig{
			Params:    []Range{{Path: "clients.retry.max_attempts", Lo: tc.lo, Hi: tc.hi, Integer: true}},
			Objective: "backend_load_rps",
			Budget:    400, Jobs: 1,
		}
		res, err := Tune(context.Background(), eval, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Best.Values[0]; got != tc.opt {
			t.Errorf("%g..%g: got %g, want %g", tc.lo, tc.hi, got, tc.opt)
		}
		if n := tc.hi - tc.lo + 1; n <= 25 {
			seen := map[float64]bool{}
			for _, x := range res.Candidates {
				if x.Round == 0 {
					seen[x.Values[0]] = true
				}
			}
			if float64(len(seen)) != n {
				t.Errorf("%g..%g: round 0 tried %d values, want all %g", tc.lo, tc.hi, len(seen), n)
			}
		}
	}
}

// evalRecorder wraps an Eval and keeps every override it was run with.
type evalRecorder struct {
	mu   sync.Mutex
	sets map[string]bool
	eval Eval
}

func (r *evalRecorder) Eval(ctx context.Context, v Variant) (Figures, error) {
	r.mu.Lock()
	for _, s := range v.Sets {
		r.sets[s] = true
	}
	r.mu.Unlock()
	return r.eval(ctx, v)
}

// decimals is the number of digits after the point in x's shortest form.
func decimals(x float64) int {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if i := strings.Index(s, "."); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// onMultiple: x is a whole multiple of g, and written with no more
// decimals than g.
func onMultiple(x, g float64) bool {
	n := x / g
	return math.Abs(n-math.Round(n)) < 1e-9 && decimals(x) <= decimals(g)
}

// TestTuneValuesAreShortAndEvaluated: the chosen value is what was run
// (its override is among those the Eval saw) and is short: without a
// step, a multiple of the range/1024 rounded down to 1, 2 or 5 × 10^k (or
// a bound); with a step, every value evaluated is a multiple of the step.
// The search used to zoom by halving, so it chose values such as
// k=2.01953125 and wrote them to best.yaml as they were.
func TestTuneValuesAreShortAndEvaluated(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        Range
		grid     float64 // the spacing every candidate must be on
		maxChars int     // len of the chosen value's shortest form
	}{
		{"1..4", Range{Path: "k", Lo: 1, Hi: 4}, 0.002, 5},
		{"1.1..4", Range{Path: "k", Lo: 1.1, Hi: 4}, 0.002, 5},
		{"0.37..5.3", Range{Path: "k", Lo: 0.37, Hi: 5.3}, 0.002, 5},
		{"1.1..4:0.1", Range{Path: "k", Lo: 1.1, Hi: 4, Step: 0.1}, 0.1, 3},
		{"1.05..4:0.25", Range{Path: "k", Lo: 1.05, Hi: 4, Step: 0.25}, 0.25, 4},
		{"0..40:3", Range{Path: "k", Lo: 0, Hi: 40, Step: 3}, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := tc.p.Grid(); g != tc.grid {
				t.Fatalf("Grid() = %g, want %g", g, tc.grid)
			}
			rec := &evalRecorder{sets: map[string]bool{}, eval: linearTune}
			c := TuneConfig{
				Params:      []Range{tc.p},
				Objective:   "backend_load_rps",
				Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
				Budget:      150, Sensitivity: 5, Jobs: 2,
			}
			res, err := Tune(context.Background(), rec.Eval, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range res.Candidates {
				v := x.Values[0]
				bound := tc.p.Step == 0 && (v == tc.p.Lo || v == tc.p.Hi)
				if !bound && !onMultiple(v, tc.grid) {
					t.Errorf("candidate %s (round %d) is not a multiple of %g", tc.p.Format(v), x.Round, tc.grid)
				}
				if v < tc.p.Lo || v > tc.p.Hi {
					t.Errorf("candidate %g outside [%g, %g]", v, tc.p.Lo, tc.p.Hi)
				}
			}
			best := c.Sets(res.Best)
			if !rec.sets[best[0]] {
				t.Errorf("chosen %s was never evaluated", best[0])
			}
			if s := tc.p.Format(res.Best.Values[0]); len(s) > tc.maxChars {
				t.Errorf("chosen value %s: longer than %d characters", s, tc.maxChars)
			}
			// The optimum is k = 2 (see linearTune), within the last grid
			// step and the feasibility bound's slack.
			if k := res.Best.Values[0]; res.Infeasible || math.Abs(k-2) > max(0.05, tc.grid) {
				t.Errorf("got k = %g (infeasible %v), want 2 ± %g", k, res.Infeasible, max(0.05, tc.grid))
			}
		})
	}
}

// TestTuneStepValidation: a step the search cannot use is a ConfigError.
func TestTuneStepValidation(t *testing.T) {
	for _, tc := range []struct {
		p    Range
		want string
	}{
		{Range{Path: "k", Lo: 1, Hi: 4, Step: -1}, "the step must be above 0"},
		{Range{Path: "k", Lo: 1, Hi: 4, Step: math.NaN()}, "the step must be above 0"},
		{Range{Path: "k", Lo: 1, Hi: 4, Step: 5}, "wider than the range"},
		{Range{Path: "n", Lo: 1, Hi: 8, Step: 1.5, Integer: true}, "give a whole step"},
	} {
		c := TuneConfig{Params: []Range{tc.p}, Objective: "backend_load_rps"}
		_, err := Tune(context.Background(), linearTune, c)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want a ConfigError containing %q", tc.p, err, tc.want)
		}
	}
}

// spread is n values alternating mean+d and mean−d (mean exactly, sd
// about d).
func spread(mean, d float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mean + d
		if i%2 == 1 {
			xs[i] = mean - d
		}
	}
	return xs
}

// TestCandidateFeasibility: the default rule rejects a constraint only
// when it is violated with 95% confidence (so a breach within noise
// passes); Strict accepts it only when it is met with 95% confidence.
// The one-sided 95% t quantile over 10 seeds is 1.833, so with d = 0.02
// the bounds are the mean ± 0.0122.
func TestCandidateFeasibility(t *testing.T) {
	drop := Constraint{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}
	succ := Constraint{Metric: "success_ratio", AtMost: false, Bound: 0.999}
	for _, tc := range []struct {
		name     string
		k        Constraint
		scen     [][]float64 // per scenario, the constraint's value per seed
		want     Standing
		def, str bool // feasible by default, under Strict
	}{
		{"just over the limit, wide spread", drop, [][]float64{spread(0.601, 0.02, 10)}, BreachWithinNoise, true, false},
		{"under the limit, wide spread", drop, [][]float64{spread(0.59, 0.02, 10)}, MetWithinNoise, true, false},
		{"clearly under", drop, [][]float64{spread(0.5, 0.01, 10)}, Met, true, true},
		{"clearly over", drop, [][]float64{spread(0.7, 0.01, 10)}, Violated, false, false},
		{"at least: just under, wide spread", succ, [][]float64{spread(0.9985, 0.002, 10)}, BreachWithinNoise, true, false},
		{"at least: clearly over", succ, [][]float64{spread(0.9995, 0.0001, 10)}, Met, true, true},
		{"no spread, exactly at the limit", drop, [][]float64{spread(0.6, 0, 4)}, Met, true, true},
		{"a seed without a value", drop, [][]float64{{0.5, math.NaN(), 0.5}}, Violated, false, false},
		{"one seed under: the mean decides, strict shows nothing", drop, [][]float64{{0.5}}, MetWithinNoise, true, false},
		{"one seed over", drop, [][]float64{{0.61}}, Violated, false, false},
		{"worst scenario decides", drop, [][]float64{spread(0.5, 0.01, 10), spread(0.601, 0.02, 10)}, BreachWithinNoise, true, false},
		{"a scenario it does not apply to", drop, [][]float64{nil, spread(0.5, 0.01, 10)}, Met, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for _, xs := range tc.scen {
				n = max(n, len(xs))
			}
			c := &Candidate{Seeds: n, cons: [][][]float64{tc.scen}}
			ks := []Constraint{tc.k}
			if got := c.Standing(0, tc.k); got != tc.want {
				t.Errorf("standing %v, want %v", got, tc.want)
			}
			if got := c.Feasible(ks, false); got != tc.def {
				t.Errorf("default rule: feasible %v, want %v", got, tc.def)
			}
			if got := c.Feasible(ks, true); got != tc.str {
				t.Errorf("strict: feasible %v, want %v", got, tc.str)
			}
			for _, strict := range []bool{false, true} {
				if h := tc.want.Holds(strict); h != c.Feasible(ks, strict) {
					t.Errorf("strict %v: Standing.Holds %v disagrees with Feasible", strict, h)
				}
			}
		})
	}
	if (&Candidate{cons: [][][]float64{{nil}}}).Feasible([]Constraint{drop}, false) {
		t.Error("a candidate without seeds: want not feasible")
	}
}

// TestTuneStrict: with the drop at 0.601 ± 0.02 (alternating by seed,
// whatever k), every candidate breaches within noise: the default rule
// takes the least load, Strict finds nothing shown feasible.
func TestTuneStrict(t *testing.T) {
	eval := func(_ context.Context, v Variant) (Figures, error) {
		k := setValue(t, v, "k")
		d := 0.02
		if v.Seed%2 == 1 {
			d = -d
		}
		return Figures{"backend_load_rps": 200 * k, "local_drop_rate": 0.601 + d}, nil
	}
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
		Budget:      100, Jobs: 2,
	}
	res, err := Tune(context.Background(), eval, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Infeasible || res.Best.Values[0] != 1 || res.Best.Standing(0, c.Constraints[0]) != BreachWithinNoise {
		t.Errorf("default: got k = %g, infeasible %v, %v; want k = 1, feasible, breach within noise", res.Best.Values[0], res.Infeasible, res.Best.Standing(0, c.Constraints[0]))
	}
	c.Strict = true
	res, err = Tune(context.Background(), eval, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Infeasible {
		t.Errorf("strict: got a feasible k = %g, want infeasible", res.Best.Values[0])
	}
}
