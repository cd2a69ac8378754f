package sim

import (
	"context"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func dur(d time.Duration) scenario.Duration { return scenario.Duration(d) }

// small is a quick scenario built in code: 200 clients at 60% of a
// 100 req/s backend for 60 s, with an outage from 20 s to 30 s.
func small() *scenario.Scenario {
	sc := scenario.Default()
	sc.Name = "small"
	sc.Duration = dur(60 * time.Second)
	sc.Clients.Count = 200
	sc.Clients.Arrival.TotalRate = 60
	sc.Clients.Timeout = dur(time.Second)
	sc.Backend.Workers = 10
	sc.Backend.Queue.Limit = 20
	sc.Backend.RejectCost = dur(5 * time.Millisecond)
	sc.Faults = []scenario.Fault{{Kind: "outage", Mode: "refuse", Start: dur(20 * time.Second), Duration: dur(10 * time.Second)}}
	return sc
}

func withThrottle(sc *scenario.Scenario, k float64) *scenario.Scenario {
	t := &scenario.Throttle{}
	scenario.SetDefaults(t)
	t.K = k
	sc.Clients.Throttle = t
	return sc
}

func withRetry(sc *scenario.Scenario, attempts int, jitter string) *scenario.Scenario {
	r := &scenario.Retry{}
	scenario.SetDefaults(r)
	r.MaxAttempts = attempts
	r.Backoff.Jitter = scenario.Jitter(jitter)
	sc.Clients.Retry = r
	return sc
}

func withNetwork(sc *scenario.Scenario, dist string, mean, sd time.Duration) *scenario.Scenario {
	sc.Network = &scenario.Network{Delay: scenario.Delay{Dist: scenario.DelayDist(dist), Mean: dur(mean), SD: dur(sd)}}
	return sc
}

func mustRun(t testing.TB, sc *scenario.Scenario) *Result {
	t.Helper()
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatalf("run %s: %v", sc.Name, err)
	}
	return res
}
