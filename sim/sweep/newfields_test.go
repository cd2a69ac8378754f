package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// issue26 is a small scenario that every field of issue #26 can be set
// on: two replicas (prequal has more than one to choose), a retry budget
// whose charge time is a choice (finagle), priorities for the shedders.
const issue26 = `name: issue26
duration: 3s
clients:
  count: 50
  arrival: {total_rate: 200/s}
  timeout: 500ms
  retry: {max_attempts: 3, budget: {kind: finagle}}
backend: {workers: 4, replicas: 2, service: {dist: exponential, mean: 20ms}, queue: {limit: 20}}
`

// Every field issue #26 added takes a value by --set (scenario.Parse with
// the override) and by a sweep's --vary (NewPlan, then each point's
// resolved scenario), the value reaches the resolved scenario, and a
// short run of each point succeeds. base are the overrides the field
// needs to mean anything (its section's kind, a second field its
// validation requires); values are two --vary values and want their JSON
// in the resolved scenario ("" for a field left out when at its zero).
func TestIssue26FieldsSetAndVary(t *testing.T) {
	const (
		ab  = "clients.adaptive_breaker={}"
		pid = "backend.pid_shedding={}"
		deg = "backend.degrade={when_queue_above: 5}"
		fs  = "backend.concurrency_limit={kind: failsafe}"
		fsq = "backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 2, max_rejection_factor: 3}"
		fsl = "backend.concurrency_limit={kind: failsafe, rejection_threshold: 50ms, max_execution_time: 200ms}"
		pq  = "backend.lb=prequal"
	)
	for _, tt := range []struct {
		path   string
		base   []string
		values string // --vary's list
		want   [2]string
	}{
		{"clients.adaptive_breaker.defensiveness", []string{ab}, "2,8", [2]string{"2", "8"}},
		{"clients.adaptive_breaker.window", []string{ab}, "5s,20s", [2]string{`"5s"`, `"20s"`}},
		{"clients.adaptive_breaker.interval", []string{ab}, "500ms,1s", [2]string{`"500ms"`, `"1s"`}},
		{"clients.adaptive_breaker.initial_error_rate", []string{ab}, "0,0.05", [2]string{"0", "0.05"}},
		{"clients.adaptive_breaker.cap", []string{ab}, "0.2,0.5", [2]string{"0.2", "0.5"}},
		{"clients.adaptive_breaker.failure_outcomes", []string{ab}, "[timeout],[error, rejected]", [2]string{`["timeout"]`, `["error","rejected"]`}},
		{"clients.adaptive_breaker.group_size", []string{ab}, "5,10", [2]string{"5", "10"}},
		{"clients.retry.budget.charge", nil, "decision,send", [2]string{`"decision"`, `"send"`}},
		{"backend.pid_shedding.interval", []string{pid}, "100ms,500ms", [2]string{`"100ms"`, `"500ms"`}},
		{"backend.pid_shedding.queue_time", []string{pid}, "10ms,50ms", [2]string{`"10ms"`, `"50ms"`}},
		{"backend.pid_shedding.kp", []string{pid}, "0.5,1", [2]string{"0.5", "1"}},
		{"backend.pid_shedding.ki", []string{pid}, "0.1,0.3", [2]string{"0.1", "0.3"}},
		{"backend.pid_shedding.kd", []string{pid}, "0,0.05", [2]string{"0", "0.05"}},
		{"backend.pid_shedding.user_levels", []string{pid}, "1,16", [2]string{"1", "16"}},
		{"backend.degrade.when_queue_above", []string{deg}, "2,8", [2]string{"2", "8"}},
		{"backend.degrade.when_utilization_above", []string{"backend.degrade={when_utilization_above: 0.5}"}, "0.5,0.9", [2]string{"0.5", "0.9"}},
		{"backend.degrade.service_fraction", []string{deg}, "0.1,0.5", [2]string{"0.1", "0.5"}},
		{"backend.concurrency_limit.kind", nil, "failsafe,vegas", [2]string{`"failsafe"`, `"vegas"`}},
		{"backend.concurrency_limit.max_limit_factor", []string{fs}, "2,4", [2]string{"2", "4"}},
		{"backend.concurrency_limit.baseline_window", []string{fs}, "5,20", [2]string{"5", "20"}},
		{"backend.concurrency_limit.correlation_window", []string{fs}, "20,80", [2]string{"20", "80"}},
		{"backend.concurrency_limit.initial_rejection_factor", []string{fsq}, "1,2.5", [2]string{"1", "2.5"}},
		{"backend.concurrency_limit.max_rejection_factor", []string{fsq}, "3,4", [2]string{"3", "4"}},
		{"backend.concurrency_limit.rejection_threshold", []string{fsl}, "20ms,100ms", [2]string{`"20ms"`, `"100ms"`}},
		{"backend.concurrency_limit.max_execution_time", []string{fsl}, "150ms,300ms", [2]string{`"150ms"`, `"300ms"`}},
		{"backend.concurrency_limit.prioritized", []string{fsq}, "false,true", [2]string{"", "true"}},
		{"backend.concurrency_limit.calibration_interval", []string{fsq, "backend.concurrency_limit.prioritized=true"}, "500ms,2s", [2]string{`"500ms"`, `"2s"`}},
		{"backend.concurrency_limit.level_window", []string{fsq, "backend.concurrency_limit.prioritized=true"}, "100,500", [2]string{"100", "500"}},
		{"backend.lb", nil, "p2c,prequal", [2]string{`"p2c"`, `"prequal"`}},
		{"backend.prequal.probe_rate", []string{pq}, "1,3", [2]string{"1", "3"}},
		{"backend.prequal.pool_size", []string{pq}, "4,16", [2]string{"4", "16"}},
		{"backend.prequal.q_rif", []string{pq}, "0.5,0.9", [2]string{"0.5", "0.9"}},
		{"backend.prequal.max_age", []string{pq}, "500ms,2s", [2]string{`"500ms"`, `"2s"`}},
		{"backend.prequal.max_reuse", []string{pq}, "1,3", [2]string{"1", "3"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			vals := splitTop(tt.values)
			// --set: each value alone.
			for i, v := range vals {
				sc, err := scenario.Parse([]byte(issue26), "issue26.yaml", append(append([]string{}, tt.base...), tt.path+"="+v))
				if err != nil {
					t.Fatalf("--set %s=%s: %v", tt.path, v, err)
				}
				if got := jsonAt(t, sc, tt.path); got != tt.want[i] {
					t.Errorf("--set %s=%s: got %s, want %s", tt.path, v, got, tt.want[i])
				}
			}
			// --vary: a plan of two points, each resolved and run.
			p, err := NewPlan("issue26.yaml", []byte(issue26), PlanOptions{Sets: tt.base, Vary: []string{tt.path + "=" + tt.values}, Seeds: 1})
			if err != nil {
				t.Fatalf("--vary %s=%s: %v", tt.path, tt.values, err)
			}
			if len(p.Points) != 2 {
				t.Fatalf("--vary %s=%s: got %d points, want 2", tt.path, tt.values, len(p.Points))
			}
			for i := range p.Points {
				sc, err := p.Resolve(i, 1)
				if err != nil {
					t.Fatalf("point %d: %v", i, err)
				}
				if got := jsonAt(t, sc, tt.path); got != tt.want[i] {
					t.Errorf("point %d (%s): got %s, want %s", i, p.Points[i].Label, got, tt.want[i])
				}
				res, err := sim.Run(context.Background(), sc, sim.Options{})
				if err != nil {
					t.Fatalf("point %d: run: %v", i, err)
				}
				if res.Summary.Offered == 0 {
					t.Errorf("point %d: got no requests offered, want a run", i)
				}
			}
		})
	}
}

// jsonAt is the JSON of the field at a dotted path of sc's JSON form
// ("" when the path ends at a field left out).
func jsonAt(t *testing.T, sc *scenario.Scenario, path string) string {
	t.Helper()
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var node any
	if err := json.Unmarshal(b, &node); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not in an object", path, k)
		}
		if node, ok = m[k]; !ok {
			return ""
		}
	}
	out, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(string(out))
}

// sweep --title is kept in the plan written beside the runs (so that a
// merge or an aggregation titles the charts the same) and is absent from
// the JSON when not given (sweep.json of earlier sweeps is unchanged).
func TestPlanTitle(t *testing.T) {
	for _, title := range []string{"", "outage: who recovers"} {
		p := plan(t, PlanOptions{Title: title})
		dir := t.TempDir()
		if err := WritePlan(dir, p); err != nil {
			t.Fatal(err)
		}
		back, err := ReadPlan(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.Title != title {
			t.Errorf("title %q: read back %q", title, back.Title)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"title"`); got != (title != "") {
			t.Errorf("title %q: got \"title\" in the JSON %v, want %v", title, got, title != "")
		}
	}
}
