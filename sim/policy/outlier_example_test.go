package policy_test

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// Envoy's defaults over ten hosts: host 2 fails five times in a row and is
// ejected for 30 s; it is back at the first sweep after that, and a second
// ejection lasts 60 s.
func ExampleOutlier() {
	o, err := policy.NewOutlier(policy.OutlierConfig{}, 10)
	if err != nil {
		panic(err)
	}
	const s = int64(1e9)
	for i := range 5 {
		if o.Result(0, 2, true) {
			fmt.Printf("ejected after %d failures\n", i+1)
		}
	}
	for _, at := range []int64{10, 20, 30} {
		if o.Sweep(at * s) {
			fmt.Printf("back at the %d s sweep\n", at)
		}
	}
	for range 5 {
		o.Result(31*s, 2, true)
	}
	for _, at := range []int64{40, 50, 60, 70, 80, 90, 100} {
		if o.Sweep(at * s) {
			fmt.Printf("back at the %d s sweep (ejected at 31 s)\n", at)
		}
	}
	// Output:
	// ejected after 5 failures
	// back at the 30 s sweep
	// back at the 100 s sweep (ejected at 31 s)
}

// Health checks with Kubernetes' defaults: three failed checks in a row
// take a host out, one passed check brings it back.
func ExampleHealth() {
	h, err := policy.NewHealth(policy.HealthConfig{}, 3)
	if err != nil {
		panic(err)
	}
	for i, pass := range []bool{false, false, false, true} {
		if h.Check(0, pass) {
			fmt.Printf("check %d: unhealthy %v\n", i+1, h.Unhealthy(0))
		}
	}
	// Output:
	// check 3: unhealthy true
	// check 4: unhealthy false
}
