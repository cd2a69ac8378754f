package sim

import (
	"context"
	"testing"
)

// TestBranchCopiesTheRun checks what splitting relies on: a run replayed
// with a branch is in exactly the state its parent had at the branch point
// (same events, same fingerprint up to there), continues differently from
// it, and is itself reproducible.
func TestBranchCopiesTheRun(t *testing.T) {
	sc := loadScenario(t, "metastable.yaml")
	ctx := context.Background()
	type point struct {
		events      uint64
		inSystem    int
		outstanding int
	}
	// run returns the states seen at every interval, stopping after the
	// stop-th one (0: never), and the result.
	run := func(br []Branch, stop int) ([]point, *Result) {
		var pts []point
		res, err := Run(ctx, sc, Options{Branches: br, Watch: func(s WatchState) bool {
			pts = append(pts, point{s.Events, s.InSystem, s.Outstanding})
			return stop > 0 && len(pts) == stop
		}})
		if err != nil {
			t.Fatal(err)
		}
		return pts, res
	}
	plain, err := Run(ctx, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, watched := run(nil, 0)
	if watched.Fingerprint != plain.Fingerprint || !watched.Complete || watched.Watched {
		t.Fatalf("a watch that never stops changed the run: fingerprint %x, want %x", watched.Fingerprint, plain.Fingerprint)
	}
	const k = 70 // in the spike of metastable.yaml, where the state is busy
	if len(all) <= k+10 {
		t.Fatalf("only %d intervals", len(all))
	}
	parent, pres := run(nil, k)
	br := []Branch{{After: all[k-1].events, Salt: 42}}
	child, cres := run(br, k)
	if pres.Fingerprint != cres.Fingerprint || pres.Complete || !pres.Watched {
		t.Fatalf("stopped at the branch point: parent %x (complete %v), copy %x: the copy is not in its parent's state", pres.Fingerprint, pres.Complete, cres.Fingerprint)
	}
	for i := range parent {
		if parent[i] != child[i] {
			t.Fatalf("interval %d: parent %+v, copy %+v before the branch", i, parent[i], child[i])
		}
	}
	whole, wres := run(br, 0)
	if wres.Fingerprint == plain.Fingerprint {
		t.Fatal("the branch changed nothing after the branch point")
	}
	diverged := false
	for i := k; i < min(len(whole), len(all)); i++ {
		diverged = diverged || whole[i] != all[i]
	}
	if !diverged {
		t.Fatal("the copy's states after the branch equal its parent's")
	}
	_, again := run(br, 0)
	_, other := run([]Branch{{After: all[k-1].events, Salt: 43}}, 0)
	if again.Fingerprint != wres.Fingerprint {
		t.Fatal("the same branch gave two different runs")
	}
	if other.Fingerprint == wres.Fingerprint {
		t.Fatal("two salts gave the same run")
	}
	if _, err := Run(ctx, sc, Options{Branches: []Branch{{After: 9}, {After: 3}}}); err == nil {
		t.Fatal("branches out of order were accepted")
	}
}
