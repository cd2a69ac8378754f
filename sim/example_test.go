package sim_test

import (
	"context"
	"fmt"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Run a scenario given as YAML and read its summary.
func ExampleRun() {
	sc, err := scenario.Parse([]byte(`
name: example
duration: 2m
clients:
  count: 1000
  arrival: {total_rate: 1500/s}   # 1.5x the backend's capacity
  throttle: {k: 2}
backend:
  workers: 100
  service: {dist: exponential, mean: 100ms}
`), "example.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Summary
	fmt.Printf("offered %d, success %.3f, amplification %.3f\n", s.Offered, *s.SuccessRatio, *s.Amplification)
	fmt.Printf("fingerprint %016x\n", res.Fingerprint)
	// Output:
	// offered 180010, success 0.669, amplification 0.989
	// fingerprint 33d4f57d799bd005
}
