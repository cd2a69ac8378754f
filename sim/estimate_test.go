package sim

import (
	"testing"
)

// The estimate that decides whether a run needs --force must not
// understate a run's events by much: it counts every allowed attempt, so
// it may overstate them (retries that never happen), but within reason.
// Checked on shipped scenarios of every shape: open-loop with an outage,
// a retry storm, a network with the occ backend, reconnects.
func TestEstimateIsAnUpperBoundWithinReason(t *testing.T) {
	for _, name := range []string{"outage.yaml", "metastable.yaml", "contention.yaml", "reconnect-brooker.yaml", "overload.yaml", "reconnect-storm-jitter.yaml"} {
		sc := loadScenario(t, name)
		est := EstimateCost(sc).Events
		res := mustRun(t, sc)
		ratio := est / float64(res.Events)
		t.Logf("%s: estimated %.3g events, ran %d (ratio %.2f)", name, est, res.Events, ratio)
		if ratio < 0.8 || ratio > 40 {
			t.Errorf("%s: estimated %.3g events for a run of %d (ratio %.2f, want 0.8..40)", name, est, res.Events, ratio)
		}
	}
}

// The adaptive breakers' windows count: a window of 65536 intervals per
// client is 512 KiB a client, so 100,000 clients (about 49 GiB) are over
// the limit that makes the CLI ask for --force, while the default window
// (10 intervals) adds 80 bytes a client.
func TestEstimateCountsAdaptiveBreakerWindows(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		big  bool
	}{
		{"default window", []string{"clients.adaptive_breaker={}"}, false},
		{"65536 intervals", []string{"clients.adaptive_breaker={window: 65536s, interval: 1s}"}, true},
		{"65536 intervals, groups of 1000", []string{"clients.adaptive_breaker={window: 65536s, interval: 1s, group_size: 1000}"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := parseGraph(t, "name: e\nduration: 1m\nclients: {count: 100000, arrival: {total_rate: 100/s}}\nbackend: {workers: 10}\n", tc.sets...)
			e := EstimateCost(sc)
			if got := e.TooBig() != ""; got != tc.big {
				t.Errorf("got too big %v (%.3g bytes), want %v", got, e.Bytes, tc.big)
			}
		})
	}
}
