package occ

import (
	"context"
	"math"
	"testing"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

// measure runs c n times and describes the writes and completion times
// (ms): means with their Student-t 95% intervals.
func measure(t *testing.T, c Config, n int) (writes, ms sweep.Stat) {
	t.Helper()
	rs, err := Runs(context.Background(), c, n)
	if err != nil {
		t.Fatal(err)
	}
	return sweep.Describe(Writes(rs)), sweep.Describe(CompletionMS(rs))
}

// One client never conflicts: one write, and four hops of |N(10 ms, 2 ms)|
// (whose mean is 10 ms to within 1e-6: the folded part is 5 SD away), so
// 40 ms on average. 2,000 runs: SE of the mean 4 ms/√2000 ≈ 0.09 ms;
// tolerance 0.5 ms.
func TestSingleClientTakesFourHops(t *testing.T) {
	w, ms := measure(t, Brooker(1, "full", 1), 2000)
	if w.Mean != 1 || w.SD != 0 {
		t.Errorf("writes %.3f (SD %.3f), want exactly 1", w.Mean, w.SD)
	}
	if math.Abs(ms.Mean-40) > 0.5 {
		t.Errorf("completion %.3f ms, want 40 ± 0.5", ms.Mean)
	}
}

// Every client writes exactly once, whatever the strategy: successes = N,
// failures = writes − N; and the same seed gives the same run.
func TestEveryClientWritesOnceAndRunsRepeat(t *testing.T) {
	for _, s := range Strategies {
		for _, n := range []int{2, 10, 50} {
			c := Brooker(n, s, 7)
			a, err := Run(c)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Run(c)
			if a != b {
				t.Errorf("%s N=%d: runs differ: %+v vs %+v", s, n, a, b)
			}
			if a.Writes-a.Failures != int64(n) || a.Writes < int64(n) {
				t.Errorf("%s N=%d: %d writes, %d failures", s, n, a.Writes, a.Failures)
			}
		}
	}
}

// Without backoff every client competes in every round and one wins each
// round, so the work grows like N²: a round costs about one write per
// remaining client, N + (N−1) + … + 1 = N(N+1)/2 writes in all — an upper
// estimate, since the network's spread lets a client that read a fresh
// version win before the others' stale writes land. Check the growth is
// quadratic: writes(100)/writes(50) within 3.0–4.2 (4.0 for pure N², 3.96
// for N(N+1)/2) and writes(50) between N and N(N+1)/2.
func TestNoBackoffWorkGrowsQuadratically(t *testing.T) {
	w50, _ := measure(t, Brooker(50, "none", 1), 30)
	w100, _ := measure(t, Brooker(100, "none", 1), 30)
	ratio := w100.Mean / w50.Mean
	t.Logf("no backoff: %.0f writes at N=50, %.0f at N=100, ratio %.2f", w50.Mean, w100.Mean, ratio)
	if ratio < 3.0 || ratio > 4.2 {
		t.Errorf("writes(100)/writes(50) = %.2f, want about 4", ratio)
	}
	if w50.Mean < 50 || w50.Mean > 50*51/2 {
		t.Errorf("writes at N=50: %.0f, want between 50 and 1275", w50.Mean)
	}
}

// The blog's conclusions (as ../shared/reference/policies.md records
// them), checked at 100 clients over 100 runs each: exponential backoff
// without jitter is "the clear loser" (more work and more time than every
// jittered strategy); equal jitter loses among the jittered ones (more work
// and more time than full jitter); full jitter does less work than
// decorrelated jitter but takes slightly more time. Each ordering must hold
// beyond the two means' 95% intervals.
func TestBrookerConclusions(t *testing.T) {
	writes, ms := map[string]sweep.Stat{}, map[string]sweep.Stat{}
	for _, s := range Strategies {
		writes[s], ms[s] = measure(t, Brooker(100, s, 1), 100)
		t.Logf("%-12s writes %7.1f ± %5.1f  completion %8.1f ± %6.1f ms", s, writes[s].Mean, writes[s].Hi-writes[s].Mean, ms[s].Mean, ms[s].Hi-ms[s].Mean)
	}
	above := func(m map[string]sweep.Stat, a, b string) bool { return m[a].Lo > m[b].Hi }
	moreWork := func(a, b string) bool { return above(writes, a, b) }
	slower := func(a, b string) bool { return above(ms, a, b) }
	for _, j := range []string{"full", "equal", "decorrelated"} {
		if !moreWork("exponential", j) || !slower("exponential", j) {
			t.Errorf("exponential without jitter should do more work and take longer than %s", j)
		}
	}
	if !moreWork("equal", "full") || !slower("equal", "full") {
		t.Errorf("equal jitter should do more work than full jitter and take longer")
	}
	if !moreWork("decorrelated", "full") || !slower("full", "decorrelated") {
		t.Errorf("full jitter should do less work than decorrelated jitter but take longer")
	}
}

// One experiment at 100 clients per strategy; reports events per second.
func BenchmarkRun(b *testing.B) {
	for _, s := range Strategies {
		b.Run(s, func(b *testing.B) {
			var events uint64
			for i := 0; i < b.N; i++ {
				r, err := Run(Brooker(100, s, uint64(i)))
				if err != nil {
					b.Fatal(err)
				}
				events += r.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
