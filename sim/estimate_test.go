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
