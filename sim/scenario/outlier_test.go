package scenario

import (
	"strings"
	"testing"
)

// Bad outlier detection, health check and subset values are refused with
// file:line:col, the field path and the range expected.
func TestLBGuardValidation(t *testing.T) {
	const base = `name: g
clients: {count: 10, arrival: {total_rate: 10/s}}
services:
  - name: api
    replicas: 4
`
	for _, tc := range []struct {
		name, section string
		want          []string
	}{
		{"subset above replicas", "    subset: 5\n", []string{"g.yaml:6:13", "services.0.subset", "must be in 0..4 (replicas; 0: every replica), got 5"}},
		{"negative subset", "    subset: -1\n", []string{"g.yaml:6:13", "services.0.subset", "got -1"}},
		{"zero consecutive errors", "    outlier_detection: {consecutive_errors: 0}\n",
			[]string{"g.yaml:6:45", "services.0.outlier_detection.consecutive_errors", "must be >= 1, got 0"}},
		{"percentage above 100", "    outlier_detection:\n      max_ejection_percent: 150\n",
			[]string{"g.yaml:7:29", "services.0.outlier_detection.max_ejection_percent", "must be in (0, 100], got 150"}},
		{"an unknown outcome", "    outlier_detection: {failure_outcomes: [timeout, eror]}\n",
			[]string{"g.yaml:6:53", "services.0.outlier_detection.failure_outcomes.1", `did you mean "error"`}},
		{"a duration without a unit", "    outlier_detection: {interval: 10}\n",
			[]string{"g.yaml:6:35", "services.0.outlier_detection.interval"}},
		{"zero health threshold", "    health_check: {unhealthy_threshold: 0}\n",
			[]string{"g.yaml:6:41", "services.0.health_check.unhealthy_threshold", "must be >= 1, got 0"}},
		{"a typo in the health check", "    health_check: {intreval: 5s}\n",
			[]string{"g.yaml:6:20", `unknown field "intreval" (did you mean "interval"?)`}},
		{"prequal without its lb", "    prequal: {pool_size: 4}\n", []string{"services.0.prequal", "applies to lb: prequal only, got lb: round_robin"}},
		{"q_rif above 1", "    lb: prequal\n    prequal: {q_rif: 1.5}\n", []string{"services.0.prequal.q_rif", "must be in [0, 1], got 1.5"}},
		{"zero probe rate", "    lb: prequal\n    prequal: {probe_rate: 0}\n", []string{"services.0.prequal.probe_rate", "must be in (0, 64] probes per pick, got 0"}},
		{"zero reuse", "    lb: prequal\n    prequal: {max_reuse: 0}\n", []string{"services.0.prequal.max_reuse", "must be >= 1, got 0"}},
		{"prequal with a subset", "    lb: prequal\n    subset: 2\n", []string{"services.0.subset", "is not modelled with lb: prequal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(base+tc.section), "g.yaml", nil)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// Defaults are Envoy's, reachable with --set.
	sc, err := Parse([]byte(base+"    outlier_detection: {}\n    health_check: {}\n"), "g.yaml", []string{"services.api.outlier_detection.base_ejection_time=10s"})
	if err != nil {
		t.Fatal(err)
	}
	od, hc := sc.Services[0].OutlierDetection, sc.Services[0].HealthCheck
	if od.ConsecutiveErrors != 5 || od.Interval.Seconds() != 10 || od.BaseEjectionTime.Seconds() != 10 || od.MaxEjectionTime.Seconds() != 300 ||
		od.MaxEjectionPercent != 10 || len(od.FailureOutcomes) != 4 || od.FailurePercentageThreshold != 0 {
		t.Errorf("outlier detection defaults: %+v", *od)
	}
	if hc.Interval.Seconds() != 10 || hc.UnhealthyThreshold != 3 || hc.HealthyThreshold != 1 || !hc.UnejectOnPass {
		t.Errorf("health check defaults: %+v", *hc)
	}
}
