package sim

import (
	"fmt"
	"testing"
	"time"
)

// dist: concurrency adds per_concurrent for every OTHER busy worker when a
// request starts service, not counting the request itself (issue 16 item
// 6; docs/model.md). Three clients send one request each at time 0 to
// three idle workers: they start service with 0, 1 and 2 other workers
// busy, so with mean 100 ms and per_concurrent 50 ms they finish at 100,
// 150 and 200 ms (a model counting the request itself would give 150, 200,
// 250 ms).
func TestFidelityConcurrencyCountsOtherWorkers(t *testing.T) {
	sc := small()
	sc.Faults = nil
	sc.Duration = dur(time.Second)
	sc.Metrics.Interval = dur(10 * time.Millisecond)
	sc.Clients.Count = 3
	sc.Clients.Arrival.Process = "once"
	sc.Clients.Arrival.TotalRate = 0
	sc.Backend.Workers = 3
	sc.Backend.Service.Dist = "concurrency"
	sc.Backend.Service.Mean = dur(100 * time.Millisecond)
	sc.Backend.Service.PerConcurrent = dur(50 * time.Millisecond)
	res := mustRun(t, sc)
	var at []int
	for i, r := range res.Series.Rows {
		for k := int64(0); k < r.Succeeded; k++ {
			at = append(at, i*10) // ms: the row's start
		}
	}
	want := []int{100, 150, 200}
	ok := len(at) == 3 && at[0] == want[0] && at[1] == want[1] && at[2] == want[2]
	record("dist: concurrency, 3 requests at once on 3 idle workers, mean 100 ms + 50 ms per other busy worker: completions, ms", "100, 150, 200 (k = 0, 1, 2 others)", fmt.Sprint(at), "exact", ok)
	if !ok {
		t.Errorf("successes in the rows starting at %v ms, want %v", at, want)
	}
}
