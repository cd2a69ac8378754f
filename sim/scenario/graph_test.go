package scenario

import (
	"strings"
	"testing"
)

const graphBase = `name: g
clients: {count: 10, arrival: {total_rate: 10/s}}
services:
  - name: api
    calls: [{to: db}]
  - name: db
`

// Graph mistakes are refused with the file position, the field path and
// what to do, before anything runs.
func TestGraphValidation(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		sets      []string
		want      []string
	}{
		{"unknown service, with did-you-mean", graphBase, []string{"services.0.calls.0.to=dbb"},
			[]string{"services.0.calls.0.to", `"dbb" is not a service (did you mean "db"?)`}},
		{"a cycle of calls, named", graphBase, []string{"services.1.calls=[{to: api}]"},
			[]string{"services.0.calls", "the calls form a cycle: api → db → api"}},
		{"a forwarding loop that cannot be left", `name: g
clients: {count: 10, arrival: {total_rate: 10/s}}
services:
  - {name: a, forward: [{to: b, probability: 1}]}
  - {name: b, forward: [{to: a, probability: 1}]}
`, nil, []string{"services.0.forward", "a → b → a has probability 1 at every hop"}},
		{"unreachable service", graphBase + "  - name: cache\n", nil,
			[]string{"services.2.name", `service "cache" is not reachable from the entry service "api"`}},
		{"join larger than its calls", graphBase, []string{"services.0.call_mode=parallel", "services.0.join=first", "services.0.join_k=3"},
			[]string{"services.0.join_k", "must be in 1..1 (the number of calls), got 3"}},
		{"duplicate names", graphBase, []string{"services.1.name=api"},
			[]string{"services.1.name", `"api" is also the name of services.0`}},
		{"backend beside services", graphBase + "backend: {workers: 5}\n", nil,
			[]string{"backend", "does not apply when services are given"}},
		{"unknown fault service", graphBase + "faults: [{kind: outage, service: dbx, start: 10s, duration: 5s}]\n", nil,
			[]string{"faults.0.service", `"dbx" is not a service (did you mean "db"?)`}},
		{"a call's policy checked like the clients'", graphBase, []string{"services.0.calls.0.retry={max_attempts: 0}"},
			[]string{"services.0.calls.0.retry.max_attempts", "must be in 1..255"}},
		{"calls and forward together", graphBase, []string{"services.0.forward=[{to: db, probability: 0.5}]"},
			[]string{"services.0.forward", "either calls (and waits) or forwards"}},
		{"a typo in a service field", graphBase, []string{"services.db.wrokers=3"},
			[]string{"services.1.wrokers", `unknown field "wrokers" (did you mean "workers"?)`}},
		{"target only with services", "name: g\nclients: {count: 10, arrival: {total_rate: 10/s}, target: db}\n", nil,
			[]string{"clients.target", "applies to a service graph only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yml), "g.yaml", tc.sets)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "g.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	// --set reaches a service by name as well as by index.
	sc, err := Parse([]byte(graphBase), "g.yaml", []string{"services.db.workers=7", "services.0.calls.0.timeout=3s"})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Services[1].Workers != 7 || sc.Services[0].Calls[0].Timeout.Seconds() != 3 {
		t.Errorf("--set by name: db workers %d, api call timeout %s", sc.Services[1].Workers, sc.Services[0].Calls[0].Timeout)
	}
	if sc.Services[0].Calls[0].Probability != 1 || !sc.Services[0].Blocking || sc.Services[1].Workers != 7 {
		t.Errorf("defaults: %+v", sc.Services[0])
	}
}
