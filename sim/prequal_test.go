package sim

import (
	"fmt"
	"testing"
)

// slowReplicaScenario is ten replicas of 10 workers, exponential service
// with a 50 ms mean (200/s each), offered 1,400/s for 60 s without
// retries; replica 0 is 10× slower for the whole run (20/s).
func slowReplicaScenario(lb string) string {
	return fmt.Sprintf(`name: prequal-slow
duration: 60s
clients:
  count: 1000
  arrival: {process: poisson, total_rate: 1400/s}
  timeout: 1s
services:
  - name: server
    replicas: 10
    lb: %s
    workers: 10
    service: {dist: exponential, mean: 50ms}
    queue: {limit: 100}
faults:
  - {kind: slowdown, start: 0s, duration: 60s, factor: 10, replica: 0}
`, lb)
}

// Prequal sends a 10× slower replica much less than its 1/10 share. The
// bound is the replica's own capacity: a balancer that does not overload
// it sends it no more than it completes (10 workers at a 500 ms mean:
// 20/s, 1,200 in 60 s, give or take √1200 ≈ 35 of Poisson noise, so
// 1,300) plus what it can hold when the run ends (10 in service and 100
// queued): 1,410 attempts, 1.7% of the 84,000 offered, against round
// robin's 8,400. A balancer that sent it more would be filling its queue
// faster than it drains. Round robin runs too, to show the bound
// separates a load-blind balancer from one that avoids the slow replica.
func TestPrequalAvoidsASlowReplica(t *testing.T) {
	const bound = 1300 + 10 + 100
	for _, tc := range []struct {
		lb    string
		above bool // round robin must exceed the bound
	}{{"prequal", false}, {"round_robin", true}} {
		t.Run(tc.lb, func(t *testing.T) {
			res := mustRun(t, parseGraph(t, slowReplicaScenario(tc.lb)))
			picks := res.Services[0].ReplicaAttempts
			var total int64
			for _, p := range picks {
				total += p
			}
			t.Logf("%s: slow replica got %d of %d attempts (%.2f%%); success %.4f", tc.lb, picks[0], total,
				100*float64(picks[0])/float64(total), float64(res.Summary.Succeeded)/float64(res.Summary.Offered))
			if got := picks[0] > bound; got != tc.above {
				t.Errorf("%s: got %d attempts to the slow replica, want %s %d", tc.lb, picks[0], map[bool]string{true: ">", false: "≤"}[tc.above], bound)
			}
		})
	}
}
