package explore_test

import (
	"context"
	"fmt"

	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// A range of a duration field, stepped: the values and their overrides.
func ExampleParseRange() {
	r, err := explore.ParseRange("--load", "faults.0.duration=10s..40s/4")
	if err != nil {
		panic(err)
	}
	for _, x := range r.Values(r.Steps) {
		fmt.Println(r.Set(x))
	}
	// Output:
	// faults.0.duration=10s
	// faults.0.duration=20s
	// faults.0.duration=30s
	// faults.0.duration=40s
}

// Wald's test stops after three agreeing seeds; a split sample goes on.
func ExampleSPRT_Decide() {
	t := explore.SPRT{Delta: 0.25, Alpha: 0.05, MaxN: 20}
	for _, c := range []struct{ k, n int }{{3, 3}, {0, 3}, {2, 4}, {10, 20}} {
		d, more := t.Decide(c.k, c.n)
		fmt.Printf("%d of %d did not recover: %v, more seeds: %v\n", c.k, c.n, d, more)
	}
	// Output:
	// 3 of 3 did not recover: metastable, more seeds: false
	// 0 of 3 did not recover: stable, more seeds: false
	// 2 of 4 did not recover: undecided, more seeds: true
	// 10 of 20 did not recover: undecided, more seeds: false
}

// A map of a made-up system that fails to recover once the trigger
// passes 10 − load: at each load level a grid of 6 triggers (0, 2, ..., 10)
// brackets the threshold, bisection narrows the bracket below 10/50, and
// every probe takes 3 seeds (the outcome never varies).
func ExampleMap() {
	eval := func(_ context.Context, v explore.Variant) (explore.Figures, error) {
		var load, trig float64
		fmt.Sscanf(v.Sets[0], "load=%g", &load)
		fmt.Sscanf(v.Sets[1], "trigger=%g", &trig)
		rec := 1.0
		if trig > 10-load {
			rec = 0
		}
		return explore.Figures{"recovery.applicable": 1, "recovery.recovered": rec}, nil
	}
	res, err := explore.Map(context.Background(), eval, explore.MapConfig{
		Load:    explore.Range{Path: "load", Lo: 2, Hi: 6, Steps: 3},
		Trigger: explore.Range{Path: "trigger", Lo: 0, Hi: 10},
	})
	if err != nil {
		panic(err)
	}
	for _, l := range res.Levels {
		fmt.Printf("load %g: threshold %.2f in [%.2f, %.2f], %d runs\n", l.Load, l.Boundary.Threshold, l.Boundary.Lo, l.Boundary.Hi, l.Runs)
	}
	// Output:
	// load 2: threshold 8.06 in [8.00, 8.12], 30 runs
	// load 4: threshold 6.06 in [6.00, 6.12], 30 runs
	// load 6: threshold 4.06 in [4.00, 4.12], 30 runs
}

// Importance sampling of a rare collapse: testdata/rare.yaml (a retry
// storm after a 2× spike from 30 s) with the spike ending at 31.3 s. The
// arrivals from 30 s to 32 s come at 1.12 times their rate, so collapses
// are common, and each counts with its likelihood ratio: P(no recovery)
// comes out near 10⁻⁶, which brute force would need ~10⁸ runs to pin
// down (200 runs here: more shrink the relative error as 1/√runs).
func ExampleTilt() {
	parse := func() (*scenario.Scenario, error) {
		return scenario.Load("testdata/rare.yaml", []string{"clients.arrival.profile.1.at=31.3s"})
	}
	res, err := explore.Tilt(context.Background(), parse, explore.TiltConfig{
		Measure: "in_system", FromS: 30, UntilS: 32, Factor: 1.12, Paths: 100, Seed: 1, Jobs: 2,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d of %d tilted runs collapsed; P(no recovery) %.1e, relative error %.0f%%\n",
		res.Collapsed, res.Paths, res.P, 100*res.RelErr)
	// Output:
	// 11 of 100 tilted runs collapsed; P(no recovery) 6.7e-07, relative error 62%
}
