package sweep

import (
	"strings"
	"testing"
)

// A vary's labels name its values in the grid's point names; bad labels
// are refused at their path.
func TestVaryLabels(t *testing.T) {
	const head = `name: tiny
duration: 60s
clients: {count: 200, arrival: {total_rate: 60/s}, timeout: 1s, retry: {max_attempts: 3}}
backend: {workers: 10, queue: {limit: 20}}
sweep:
  seeds: 2
  vary:
    - path: clients.retry.budget
      values: [null, {kind: sre}]
`
	tests := []struct {
		name, tail string
		want       string // the point labels joined by |, or a part of the error
		err        bool
	}{
		{"no labels: path=value", "", "budget=null|budget={kind: sre}", false},
		{"labels", "      labels: [no budget, sre]\n", "no budget|sre", false},
		{"labels in a grid", "      labels: [no budget, sre]\n    - {path: clients.retry.max_attempts, values: [2, 4]}\n",
			"no budget, max_attempts=2|no budget, max_attempts=4|sre, max_attempts=2|sre, max_attempts=4", false},
		{"too few", "      labels: [sre]\n", "sweep.vary.0.labels: needs one label per value: 1 labels for 2 values", true},
		{"repeated", "      labels: [x, x]\n", `sweep.vary.0.labels.1: "x" labels two values`, true},
		{"empty", "      labels: [x, \" \"]\n", "sweep.vary.0.labels.1: is empty", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan("l.yaml", []byte(head+tc.tail), PlanOptions{})
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, pt := range p.Points {
				labels = append(labels, pt.Label)
			}
			if got := strings.Join(labels, "|"); got != tc.want {
				t.Errorf("got points %q, want %q", got, tc.want)
			}
		})
	}
}
