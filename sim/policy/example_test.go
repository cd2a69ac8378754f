package policy_test

import (
	"fmt"
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

func ExampleSREProbability() {
	// A client that sent 300 requests in the window, 100 of them accepted.
	for _, k := range []float64{1.1, 2, 3} {
		fmt.Printf("K=%.1f: p=%.3f\n", k, policy.SREProbability(300, 100, k, 1))
	}
	// Output:
	// K=1.1: p=0.631
	// K=2.0: p=0.332
	// K=3.0: p=0.000
}

func ExampleBackoff_Delay() {
	b := policy.Backoff{Base: int64(100 * time.Millisecond), Cap: int64(2 * time.Second), Multiplier: 2, Jitter: policy.Equal}
	for n := 1; n <= 6; n++ {
		// u is the uniform draw in [0, 1): the caller owns the randomness.
		fmt.Print(time.Duration(b.Delay(n, 0, 0.5)), " ")
	}
	fmt.Println()
	// Output:
	// 75ms 150ms 300ms 600ms 1.2s 1.5s
}

func ExampleEnvoy() {
	ms := int64(time.Millisecond)
	e, _ := policy.NewEnvoy(policy.DefaultEnvoySettings(100*ms, 60_000*ms))
	fmt.Println("probe limit:", e.Limit(0))
	for i := range 50 { // the minRTT window: 50 requests of 10 ms
		e.Sample(int64(10+i)*ms, 10*ms, 3, false, 0.5)
	}
	for at := 159 * ms; at < 500*ms; at += 100 * ms {
		e.Sample(at-ms, 10*ms, 3, false, 0) // latency at minRTT: g = 1.25
		fmt.Print(e.Limit(at), " ")
	}
	fmt.Println()
	// Output:
	// probe limit: 3
	// 5 8 13 20
}
