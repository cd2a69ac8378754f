package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// TestBranchCopiesTheRun checks what splitting relies on: a run replayed
// with a branch is in exactly the state its parent had at the branch point
// (same events, same fingerprint up to there), continues differently from
// it, and is itself reproducible.
func TestBranchCopiesTheRun(t *testing.T) {
	sc := loadScenario(t, "metastable.yaml")
	ctx := context.Background()
	plain, err := Run(ctx, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// At interval ends (1 s), and at watch points every 250 ms: the
	// branch falls 70 s in, in the spike of metastable.yaml, where the
	// state is busy.
	for _, tt := range []struct {
		every int64
		k     int
	}{{0, 70}, {250e6, 280}} {
		t.Run(fmt.Sprintf("every=%d", tt.every), func(t *testing.T) { branchCopies(t, sc, plain, tt.every, tt.k) })
	}
	if _, err := Run(ctx, sc, Options{Branches: []Branch{{After: 9}, {After: 3}}}); err == nil {
		t.Fatal("branches out of order were accepted")
	}
}

// branchCopies checks a copy of the run made at the k-th watch point.
func branchCopies(t *testing.T, sc *scenario.Scenario, plain *Result, every int64, k int) {
	ctx := context.Background()
	type point struct {
		now         int64
		events      uint64
		inSystem    int
		outstanding int
	}
	// run returns the states seen at every watch point, stopping after the
	// stop-th one (0: never), and the result.
	run := func(br []Branch, stop int) ([]point, *Result) {
		var pts []point
		res, err := Run(ctx, sc, Options{Branches: br, WatchEvery: every, Watch: func(s WatchState) bool {
			pts = append(pts, point{s.Now, s.Events, s.InSystem, s.Outstanding})
			return stop > 0 && len(pts) == stop
		}})
		if err != nil {
			t.Fatal(err)
		}
		return pts, res
	}
	all, watched := run(nil, 0)
	if !watched.Complete || watched.Watched || watched.Arrivals != plain.Arrivals || watched.ArrivalHash != plain.ArrivalHash ||
		fmt.Sprintf("%+v", watched.Series.Totals()) != fmt.Sprintf("%+v", plain.Series.Totals()) {
		t.Fatalf("a watch that never stops changed the run: complete %v, totals %+v, want %+v", watched.Complete, watched.Series.Totals(), plain.Series.Totals())
	}
	if every == 0 && watched.Fingerprint != plain.Fingerprint {
		t.Fatalf("a watch at interval ends changed the trajectory: fingerprint %x, want %x", watched.Fingerprint, plain.Fingerprint)
	}
	if every > 0 {
		// Watch events are events (and enter the fingerprint): one per
		// watch point, at multiples of every.
		if got, want := watched.Events-plain.Events, uint64(len(all)); got != want {
			t.Fatalf("%d more events with watch points, want one per point (%d)", got, want)
		}
		for i, p := range all {
			if p.now != int64(i+1)*every {
				t.Fatalf("watch point %d at %d ns, want %d", i, p.now, int64(i+1)*every)
			}
		}
	}
	if len(all) <= k+10 {
		t.Fatalf("only %d watch points", len(all))
	}
	parent, pres := run(nil, k)
	br := []Branch{{After: all[k-1].events, Salt: 42}}
	child, cres := run(br, k)
	if pres.Fingerprint != cres.Fingerprint || pres.Complete || !pres.Watched {
		t.Fatalf("stopped at the branch point: parent %x (complete %v), copy %x: the copy is not in its parent's state", pres.Fingerprint, pres.Complete, cres.Fingerprint)
	}
	for i := range parent {
		if parent[i] != child[i] {
			t.Fatalf("point %d: parent %+v, copy %+v before the branch", i, parent[i], child[i])
		}
	}
	whole, wres := run(br, 0)
	if wres.Fingerprint == watched.Fingerprint {
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
}
