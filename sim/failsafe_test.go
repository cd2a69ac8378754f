package sim

import "testing"

// failsafe-go's adaptive limiter behind a queue under modest overload
// (gradient2Queue's recipe, kind failsafe): with its defaults the limit
// climbs to its maximum as Gradient2's does (measured: ≈ 30 in the first
// minute, 200 in the last five), and with queueing (factors 2 and 3,
// docs/experiments/long-incident.md) it stays near twice the workers
// (measured ≈ 20–30). The bounds are far from the measured values.
func TestFailsafeLimitBehindQueue(t *testing.T) {
	plain := mustRun(t, parseGraph(t, gradient2Queue, "backend.concurrency_limit={kind: failsafe}"))
	queued := mustRun(t, parseGraph(t, gradient2Queue,
		"backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 2, max_rejection_factor: 3}"))
	s, q := plain.Series, queued.Series
	n := len(s.Rows)
	first, last := meanOver(s, 0, 6, limitOf(s)), meanOver(s, n-30, n, limitOf(s))
	qLast := meanOver(q, n-30, n, limitOf(q))
	t.Logf("failsafe: limit %.1f (first minute) → %.1f (last 5 min); with queueing 2-3: %.1f (last 5 min)", first, last, qLast)
	for _, c := range []struct {
		name, bound string
		ok          bool
		got         float64
	}{
		{"failsafe's limit, first minute (recorded)", "in (0, 100)", first > 0 && first < 100, first},
		{"failsafe's limit, last 5 min", "≥ 150 (its max 200)", last >= 150, last},
		{"failsafe with queueing 2-3, limit in the last 5 min", "< 60", qLast < 60, qLast},
	} {
		if !c.ok {
			t.Errorf("%s: got %.1f, want %s", c.name, c.got, c.bound)
		}
	}
}
