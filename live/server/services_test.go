package server

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/live/internal/decide"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Every field of a service of a service graph, of its calls and of its
// forwarding routes has a decision of the live server.
func TestEveryServiceFieldIsDecided(t *testing.T) {
	for _, c := range []struct {
		section string
		typ     reflect.Type
		table   decide.Table
	}{
		// A service's backend fields (its inline Backend) are decided by
		// the backend's table, as graphFields reads them.
		{"services[]", reflect.TypeFor[scenario.Node](), merged(serviceFields, backendFields)},
		{"services[].calls[]", reflect.TypeFor[scenario.Call](), callFields},
		{"services[].forward[]", reflect.TypeFor[scenario.Route](), routeFields},
	} {
		missing, extra := c.table.Undecided(c.typ)
		for _, name := range missing {
			t.Errorf("%s.%s: the live server has no decision for it (live, inert or refused) in live/server/server.go", c.section, name)
		}
		for _, name := range extra {
			t.Errorf("%s.%s: in the table but not a field of the scenario", c.section, name)
		}
	}
}

// merged is the union of the tables.
func merged(ts ...decide.Table) decide.Table {
	out := decide.Table{}
	for _, t := range ts {
		maps.Copy(out, t)
	}
	return out
}

// yamlFields lists the YAML names of struct type typ's fields, leaving out
// inline ones.
func yamlFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// Each field of a service (its own, its backend's, its calls' and its
// routes'), set alone in a one- or two-service graph, is refused by serve and
// live with an error that names the services section and, for a
// service's, call's or route's own field, the field's path. Before,
// the error named only "services: service graphs". A field added to
// scenario.Node, Call, Route or Backend without a case here fails.
func TestServiceFieldsAreRefused(t *testing.T) {
	const head = "name: t\nduration: 10s\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\nservices:\n" +
		"  - name: front\n    workers: 2\n    service: {dist: constant, mean: 1ms}\n"
	const back = "  - name: back\n    workers: 2\n    service: {dist: constant, mean: 1ms}\n"
	const call = "    calls:\n      - to: back\n"
	const calls2 = "    calls:\n      - to: back\n      - to: back\n"
	// By field: the lines added to the front service (indented 4) and the
	// path the error must name ("" for a backend field: the section).
	cases := map[string]struct{ front, path string }{
		// the service's own fields
		"services[].name":               {"", "services[0].name"},
		"services[].blocking":           {"    blocking: false\n" + call, "services[0].blocking"},
		"services[].calls":              {call, "services[0].calls"},
		"services[].call_mode":          {"    call_mode: parallel\n" + call, "services[0].call_mode"},
		"services[].join":               {"    call_mode: parallel\n    join: any\n" + call, "services[0].join"},
		"services[].join_k":             {"    call_mode: parallel\n    join: first\n    join_k: 2\n" + calls2, "services[0].join_k"},
		"services[].propagate_deadline": {"    propagate_deadline: true\n" + call, "services[0].propagate_deadline"},
		"services[].deadline_margin":    {"    propagate_deadline: true\n    deadline_margin: 1ms\n" + call, "services[0].deadline_margin"},
		"services[].forward":            {"    forward: [{to: back, probability: 0.5}]\n", "services[0].forward"},
		// a call's
		"services[].calls[].to":               {call, "services[0].calls[0].to"},
		"services[].calls[].probability":      {call + "        probability: 0.5\n", "services[0].calls[0].probability"},
		"services[].calls[].timeout":          {call + "        timeout: 2s\n", "services[0].calls[0].timeout"},
		"services[].calls[].deadline":         {call + "        deadline: 2s\n", "services[0].calls[0].deadline"},
		"services[].calls[].throttle":         {call + "        throttle: {}\n", "services[0].calls[0].throttle"},
		"services[].calls[].retry":            {call + "        retry: {max_attempts: 2}\n", "services[0].calls[0].retry"},
		"services[].calls[].breaker":          {call + "        breaker: {}\n", "services[0].calls[0].breaker"},
		"services[].calls[].rate_limiter":     {call + "        rate_limiter: {}\n", "services[0].calls[0].rate_limiter"},
		"services[].calls[].hedge":            {call + "        timeout: 1s\n        hedge: {delay: 10ms}\n", "services[0].calls[0].hedge"},
		"services[].calls[].adaptive_breaker": {call + "        adaptive_breaker: {}\n", "services[0].calls[0].adaptive_breaker"},
		// a route's
		"services[].forward[].to":          {"    forward: [{to: back, probability: 0.5}]\n", "services[0].forward[0].to"},
		"services[].forward[].probability": {"    forward: [{to: back, probability: 0.5}]\n", "services[0].forward[0].probability"},
		// the service's backend fields: refused with the section
		"services[].kind":              {"    kind: pool\n", ""},
		"services[].workers":           {"", ""},
		"services[].service":           {"", ""},
		"services[].queue":             {"    queue: {limit: 3, discipline: lifo}\n", ""},
		"services[].reject_cost":       {"    reject_cost: 1ms\n", ""},
		"services[].accept_backlog":    {"    accept_backlog: 5\n", ""},
		"services[].retry_after":       {"    retry_after: 2s\n", ""},
		"services[].dont_retry":        {"    dont_retry: true\n", ""},
		"services[].error_rate":        {"    error_rate: 0.1\n", ""},
		"services[].cancel_timed_out":  {"    cancel_timed_out: true\n", ""},
		"services[].replicas":          {"    replicas: 2\n", ""},
		"services[].lb":                {"    replicas: 2\n    lb: p2c\n", ""},
		"services[].ewma_decay":        {"    replicas: 2\n    lb: peak_ewma\n    ewma_decay: 1s\n", ""},
		"services[].subset":            {"    replicas: 2\n    subset: 1\n", ""},
		"services[].prequal":           {"    replicas: 2\n    lb: prequal\n    prequal: {pool_size: 4}\n", ""},
		"services[].connections":       {"    connections: {limit: 10}\n", ""},
		"services[].rate_limit":        {"    rate_limit: {rate: 10/s}\n", ""},
		"services[].concurrency_limit": {"    concurrency_limit: {kind: aimd}\n", ""},
		"services[].priority_shedding": {"    priority_shedding: {}\n", ""},
		"services[].outlier_detection": {"    replicas: 2\n    outlier_detection: {}\n", ""},
		"services[].health_check":      {"    replicas: 2\n    health_check: {}\n", ""},
		"services[].autoscale":         {"    autoscale: {max_replicas: 4, target: 0.7}\n", ""},
		"services[].pid_shedding":      {"    pid_shedding: {}\n", ""},
		"services[].degrade":           {"    degrade: {when_queue_above: 3}\n", ""},
	}
	for _, f := range [][2]any{
		{"services[].", reflect.TypeFor[scenario.Node]()}, {"services[].", reflect.TypeFor[scenario.Backend]()},
		{"services[].calls[].", reflect.TypeFor[scenario.Call]()}, {"services[].forward[].", reflect.TypeFor[scenario.Route]()},
	} {
		for _, name := range yamlFields(f[1].(reflect.Type)) {
			if _, ok := cases[f[0].(string)+name]; !ok {
				t.Errorf("%s%s: no case sets it; add one to TestServiceFieldsAreRefused", f[0], name)
			}
		}
	}
	for field, c := range cases {
		src := head + c.front
		if strings.Contains(c.front, "to: back") {
			src += back // reachable only through a call or a route
		}
		sc, err := scenario.Parse([]byte(src), "t.yaml", nil)
		if err != nil {
			t.Errorf("%s: the case does not parse: %v", field, err)
			continue
		}
		_, err = New(sc, Options{})
		switch {
		case err == nil:
			t.Errorf("%s: got no error, want the live server to refuse it", field)
		case !strings.Contains(err.Error(), "services: service graphs"):
			t.Errorf("%s: got %v, want an error naming the services section", field, err)
		case c.path != "" && !strings.Contains(err.Error(), c.path):
			t.Errorf("%s: got %v, want an error naming %s", field, err, c.path)
		}
	}
}
