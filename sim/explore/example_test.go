package explore_test

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/explore"
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
