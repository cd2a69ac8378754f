package scenario_test

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Every problem of a scenario is reported at once, with its line, column
// and field path.
func ExampleParse() {
	_, err := scenario.Parse([]byte(`name: demo
clients:
  count: -5
  arrival: {total_rate: 100}
  throtle: {k: 2}
`), "demo.yaml", nil)
	fmt.Println(err)
	// Output:
	// demo.yaml:3:10: clients.count: must be >= 1, got -5
	// demo.yaml:4:25: clients.arrival.total_rate: rate "100" has no unit of time: write e.g. 100/s or 100/m
	// demo.yaml:5:3: clients.throtle: unknown field "throtle" (did you mean "throttle"?); valid fields here: count, arrival, timeout, deadline, throttle, retry, breaker, rate_limiter, hedge, adaptive_breaker, startup, connection, groups, target, propagate_deadline, priority
}

// --set overrides any field by its YAML path before validation.
func ExampleParse_overrides() {
	sc, err := scenario.Parse([]byte("name: demo\nclients: {arrival: {total_rate: 100/s}}\n"), "demo.yaml",
		[]string{"clients.throttle.k=3", "faults.0={kind: outage, start: 1m, duration: 30s}"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sc.Clients.Throttle.K, sc.Clients.Throttle.Window, sc.Faults[0].Kind, sc.Faults[0].Mode, sc.Faults[0].End())
	// Output:
	// 3 2m outage refuse 90s
}
