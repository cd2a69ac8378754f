package sim

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// BenchmarkR1 runs the reference model R1 (scenarios/bench-r1.yaml: 1.5x
// overload, SRE throttle, 600 simulated seconds, ~1.5 M events) at several
// fleet sizes. It reports events/s, ns/event and the bytes allocated per
// client over the whole run (an upper bound of the live memory, since the
// run frees almost nothing until it ends).
func BenchmarkR1(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			sc := loadScenario(b, "bench-r1.yaml")
			sc.Clients.Count = n
			benchScenario(b, sc)
		})
	}
}

// BenchmarkR1Network is R1 at N = 1,000 with an exponential 5 ms network
// delay each way: every attempt becomes two more events (arrive, answer).
func BenchmarkR1Network(b *testing.B) {
	sc := loadScenario(b, "bench-r1.yaml")
	sc.Clients.Count = 1_000
	sc.Network = &scenario.Network{Delay: scenario.Delay{Dist: "exponential", Mean: scenario.Duration(5 * time.Millisecond)}}
	benchScenario(b, sc)
}

// BenchmarkScenario runs each shipped scenario with its own settings.
func BenchmarkScenario(b *testing.B) {
	for _, name := range []string{"outage.yaml", "overload.yaml", "sparse-clients.yaml", "contention.yaml"} {
		b.Run(name, func(b *testing.B) { benchScenario(b, loadScenario(b, name)) })
	}
}

func benchScenario(b *testing.B, sc *scenario.Scenario) {
	b.ReportAllocs()
	var events uint64
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), sc, Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += res.Events
	}
	el := time.Since(start)
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(events)/el.Seconds(), "events/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/float64(sc.Clients.Count), "B/client")
}
