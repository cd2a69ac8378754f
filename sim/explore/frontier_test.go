package explore

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// memo is a shared store of made runs, as the kept-runs folder is.
type memo struct {
	mu   sync.Mutex
	runs map[string]Figures
}

func variantKey(v Variant) string { return fmt.Sprintf("%d %q %d", v.Scenario, v.Sets, v.Seed) }

func (m *memo) known(v Variant) (Figures, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.runs[variantKey(v)]
	return f, ok, nil
}

// keeping is eval with every run it makes kept in m.
func (m *memo) keeping(eval Eval) Eval {
	return func(ctx context.Context, v Variant) (Figures, error) {
		f, err := eval(ctx, v)
		if err == nil {
			m.mu.Lock()
			m.runs[variantKey(v)] = f
			m.mu.Unlock()
		}
		return f, err
	}
}

// inRounds runs search as a chain of rounds of `shards` shards each, as
// batch jobs would: one step replays the search on the runs made so far
// and writes the frontier down, then every shard runs its share of it. It
// checks that a second replay finds the same frontier (a replay is a pure
// function of the runs made) and that every round makes progress, and
// returns the number of rounds, the runs made and the frontier sizes.
func inRounds(t *testing.T, eval Eval, shards int, search func(ctx context.Context, e Eval) error) (rounds, runs int, sizes []int) {
	t.Helper()
	m := &memo{runs: map[string]Figures{}}
	ctx := context.Background()
	replay := func(ctx context.Context) error {
		return search(ctx, func(context.Context, Variant) (Figures, error) {
			t.Error("a replay ran a run: the runner must look known runs up instead")
			return nil, nil
		})
	}
	for rounds = 0; ; rounds++ {
		if rounds > 500 {
			t.Fatal("more than 500 rounds: no progress")
		}
		plan, err := NextRuns(ctx, m.known, replay)
		if err != nil {
			t.Fatal(err)
		}
		again, err := NextRuns(ctx, m.known, replay)
		if err != nil || !reflect.DeepEqual(again, plan) {
			t.Fatalf("round %d: a second replay found another frontier (%v):\n%v\n%v", rounds, err, again, plan)
		}
		for s := range shards {
			if _, err := RunShare(ctx, m.keeping(eval), plan, s, shards, 2); err != nil {
				t.Fatal(err)
			}
		}
		if len(plan) == 0 {
			return rounds, len(m.runs), sizes
		}
		for _, v := range plan {
			if _, ok, _ := m.known(v); !ok {
				t.Fatalf("round %d: %v was in the frontier and no shard ran it", rounds, v)
			}
		}
		sizes = append(sizes, len(plan))
	}
}

// A map run in rounds of sharded batches, then replayed on the made runs
// alone, is the map run in one go: the same levels, probes and runs.
func TestMapInRoundsIsTheMapInOneGo(t *testing.T) {
	thr := func(l float64) float64 { return 10 - l }
	eval := logisticMap(t, thr, 0.2)
	c := MapConfig{Load: Range{Path: "load", Lo: 1, Hi: 8, Steps: 4}, Trigger: Range{Path: "trigger", Lo: 0, Hi: 12, Unit: "s"}, Jobs: 3}
	whole, err := Map(context.Background(), eval, c)
	if err != nil {
		t.Fatal(err)
	}
	var final *MapResult
	rounds, runs, sizes := inRounds(t, eval, 3, func(ctx context.Context, e Eval) error {
		res, err := Map(ctx, e, c)
		final = res
		return err
	})
	if !reflect.DeepEqual(final, whole) {
		t.Errorf("the map in rounds differs from the map in one go:\n%+v\n%+v", final, whole)
	}
	total := 0
	for _, l := range whole.Levels {
		total += l.Runs
	}
	if runs != total {
		t.Errorf("rounds made %d runs, the map in one go %d", runs, total)
	}
	// The first round is every level's grid probes' first seeds at once:
	// the sequential test cannot stop before ⌈ln(19)/ln(3)⌉ = 3 seeds
	// (α = 0.05, δ = 0.25).
	if want := 4 * 6 * 3; len(sizes) == 0 || sizes[0] != want {
		t.Errorf("first frontier: %v, want %d runs (4 levels x 6 grid probes x 3 first seeds)", sizes, want)
	}
	t.Logf("%d rounds, %d runs; frontier sizes %v", rounds, runs, sizes)
}

// The same for a tune: its halving rungs and final comparison, in rounds.
func TestTuneInRoundsIsTheTuneInOneGo(t *testing.T) {
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
		Budget:      150, Sensitivity: 5, Jobs: 3,
	}
	whole, err := Tune(context.Background(), linearTune, c)
	if err != nil {
		t.Fatal(err)
	}
	var final *TuneResult
	rounds, runs, sizes := inRounds(t, linearTune, 4, func(ctx context.Context, e Eval) error {
		res, err := Tune(ctx, e, c)
		final = res
		return err
	})
	if !reflect.DeepEqual(final, whole) {
		t.Errorf("the tune in rounds differs from the tune in one go:\nbest %v (%d runs)\nbest %v (%d runs)", final.Best.Values, final.Runs, whole.Best.Values, whole.Runs)
	}
	if runs != whole.Runs+whole.SensitivityRuns {
		t.Errorf("rounds made %d runs, the tune in one go %d + %d for the sensitivity", runs, whole.Runs, whole.SensitivityRuns)
	}
	t.Logf("%d rounds, %d runs; frontier sizes %v", rounds, runs, sizes)
}
