package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
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

// dist: mixture and dist: empirical in a run (issue 16 item 3). Ample
// workers, so nothing queues or is rejected: the workers' busy time is the
// sum of the service times drawn. With constant components 10 ms (weight
// 9) and 100 ms (weight 1) it is N·10 ms + n₁₀₀·90 ms, n₁₀₀ ~ Binomial(N,
// 0.1): expected utilisation λ·19 ms / workers; tolerance 5 SD of the
// binomial part, 5·sqrt(N·0.09)·90 ms, over the busy time (derived). The
// empirical samples 10 ms and 30 ms, each equally likely: λ·20 ms /
// workers, SD sqrt(N/4)·20 ms.
func TestFidelityServiceMixtureAndEmpirical(t *testing.T) {
	for _, tt := range []struct {
		name    string
		service string
		mean    float64 // s
		sd      func(n float64) float64
	}{
		{"mixture 90% 10 ms, 10% 100 ms", "{dist: mixture, components: [{weight: 9, dist: constant, mean: 10ms}, {weight: 1, dist: constant, mean: 100ms}]}",
			0.019, func(n float64) float64 { return math.Sqrt(n*0.09) * 0.09 }},
		{"empirical samples 10 ms, 30 ms", "{dist: empirical, file: svc-samples.txt}",
			0.020, func(n float64) float64 { return math.Sqrt(n/4) * 0.02 }},
		// Half the observations in (0, 10 ms], half in (10, 30 ms],
		// uniform within each: mean 12.5 ms; E[X²] = (100/3 + 1300/3)/2
		// ms², SD sqrt(233.33 − 156.25) = 8.780 ms per draw (issue 23).
		{"histogram buckets 10 ms, 30 ms", "{dist: histogram, buckets: [{le: 0.01, count: 1}, {le: 0.03, count: 2}, {le: +Inf, count: 2}]}",
			0.0125, func(n float64) float64 { return math.Sqrt(n) * 0.008780 }},
	} {
		sc, err := scenario.Parse([]byte(`name: svc
duration: 600s
clients: {count: 100, arrival: {process: poisson, total_rate: 100/s}, timeout: 0s}
backend: {workers: 50, queue: {limit: 1000}, service: `+tt.service+`}
`), "testdata/svc.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := mustRun(t, sc).Summary
		if s.Rejected != 0 {
			t.Fatalf("%s: %d rejected; the test needs no overload", tt.name, s.Rejected)
		}
		n := float64(s.Received)
		want := n * tt.mean / (600 * 50) // busy worker-seconds over capacity
		tol := 5 * tt.sd(n) / (600 * 50)
		got := *s.Utilisation
		ok := math.Abs(got-want) <= tol
		record(fmt.Sprintf("service %s: utilisation of 50 workers at 100 req/s", tt.name), fmt.Sprintf("%.5f (received × mean / capacity)", want), fmt.Sprintf("%.5f", got), fmt.Sprintf("5 SD (%.5f)", tol), ok)
		if !ok {
			t.Errorf("%s: utilisation %.5f, want %.5f ± %.5f", tt.name, got, want, tol)
		}
		if c, want := sc.Capacity(), 50/tt.mean; math.Abs(c-want) > 1e-9*want {
			t.Errorf("%s: capacity %v req/s, want %v", tt.name, c, want)
		}
	}
}

// A fault may start at time 0 (issue 16 item 5): a backend that starts
// degraded. Ten clients each send one request at exactly 0 into an outage
// [0, 10 s) that refuses: all ten are refused, none is served (the fault
// holds for every event at 0, arrivals included), and recovery is not
// measured (no baseline before the fault).
func TestFidelityFaultAtTimeZero(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: zero
duration: 20s
clients: {count: 10, arrival: {process: once}}
backend: {workers: 10}
faults: [{kind: outage, start: 0s, duration: 10s}]
`), "zero.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, sc)
	s := res.Summary
	ok := s.Offered == 10 && s.Succeeded == 0 && s.FailedOutage == 10 && s.Served == 0
	record("outage from 0 s, 10 requests at exactly 0 s: refused", "10 of 10", fmt.Sprintf("%d of %d (served %d)", s.FailedOutage, s.Offered, s.Served), "exact", ok)
	if !ok {
		t.Errorf("offered %d, succeeded %d, refused in the outage %d, served %d; want 10, 0, 10, 0", s.Offered, s.Succeeded, s.FailedOutage, s.Served)
	}
	if s.Recovery.Applicable && s.Recovery.BaselineGoodput != nil {
		t.Errorf("recovery took a baseline before a fault at 0 s: %+v", s.Recovery)
	}
	// A fault between 0 and the first metrics interval is still refused.
	_, err = scenario.Parse([]byte("name: z\nduration: 20s\nclients: {arrival: {total_rate: 1/s}}\nfaults: [{kind: outage, start: 500ms, duration: 1s}]\n"), "z.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "or start it at 0s") {
		t.Errorf("a fault at 500 ms: %v", err)
	}
}

// gobreaker ignores a result from a call admitted before the breaker's
// latest state change (issue 16 item 7; v2/gobreaker.go afterRequest).
// One client sends a request every 100 ms, each served in 2.95 s. A
// capacity fault leaves no worker in [0.5 s, 0.6 s) (work in service goes
// on) and, with no queue, the request sent then is rejected: the breaker
// (trip on 1 failure, open 1 s) opens; the first request after it admits is a
// half-open probe, answered 2.95 s later. Meanwhile the answers of the
// requests sent before the trip come back. Counted in the current state
// (late_results: count, resilience4j), the first of them, 2.95 s after
// the first request, closes the breaker; ignored (gobreaker), the breaker
// waits for the probe's own answer, 1.6 s later. So the ignoring breaker
// refuses exactly 16 more requests (one per 100 ms of those 1.6 s).
func TestFidelityGobreakerIgnoresLateResults(t *testing.T) {
	drops := map[string]int64{}
	for _, late := range []string{"ignore", "count"} {
		sc, err := scenario.Parse([]byte(`name: late
duration: 10s
metrics: {interval: 100ms}
clients:
  count: 1
  arrival: {process: constant, rate: 10/s}
  timeout: 0s
  breaker: {style: gobreaker, consecutive_failures: 1, open_duration: 1s, late_results: `+late+`}
backend: {workers: 100, queue: {limit: 0}, service: {dist: constant, mean: 2950ms}}
faults: [{kind: capacity, start: 500ms, duration: 100ms, fraction: 0}]
`), "late.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		drops[late] = mustRun(t, sc).Summary.DropBreaker
	}
	got := drops["ignore"] - drops["count"]
	record("gobreaker late results: extra requests refused while ignoring a late success (100 ms apart, 1.6 s)", "16", fmt.Sprint(got), "exact", got == 16)
	if got != 16 {
		t.Errorf("dropped by the breaker: ignore %d, count %d; want 16 more when ignoring", drops["ignore"], drops["count"])
	}
}

// The AWS 2026 retry mode in a run (issue 16 item 7; aws-sdk-go-v2
// retry2026_test.go): after a throttle the backoff starts from 1 s, and
// x-amz-retry-after is followed within [backoff, backoff + 5 s]. One
// request at 0 s meets a backend with no worker (a capacity fault from 0
// s to 1 s, no queue) and is rejected with a 10 s Retry-After; the retry
// (no jitter, base 50 ms, throttle base 1 s) comes at 6 s when clamped
// (1 s + 5 s), 10 s with at_least, 1 s when the hint is not honoured, and
// at 50 ms (second 0) without the throttle base.
func TestFidelityAWS2026ThrottleBaseAndClamp(t *testing.T) {
	for _, tt := range []struct {
		retry string
		at    int // second of the retry
	}{
		{"honor_retry_after: true, retry_after_mode: clamped, backoff: {base: 50ms, cap: 20s, jitter: none, throttle_base: 1s}", 6},
		{"honor_retry_after: true, retry_after_mode: at_least, backoff: {base: 50ms, cap: 20s, jitter: none, throttle_base: 1s}", 10},
		{"honor_retry_after: false, backoff: {base: 50ms, cap: 20s, jitter: none, throttle_base: 1s}", 1},
		{"honor_retry_after: false, backoff: {base: 50ms, cap: 20s, jitter: none}", 0},
	} {
		sc, err := scenario.Parse([]byte(`name: aws2026
duration: 20s
clients:
  count: 1
  arrival: {process: once}
  retry: {max_attempts: 2, retry_on: [rejected], `+tt.retry+`}
backend: {workers: 1, queue: {limit: 0}, retry_after: 10s}
faults: [{kind: capacity, start: 0s, duration: 1s, fraction: 0}]
`), "aws2026.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, sc)
		at := -1
		for i, r := range res.Series.Rows {
			if r.Retries > 0 {
				at = i
			}
		}
		if at != tt.at {
			t.Errorf("%s: retry in second %d, want %d", tt.retry, at, tt.at)
		}
	}
}

// arrival.first_at_start (issue 16 item 2): each client calls once when it
// starts, then continues as its Poisson stream. 1,000 clients at 1/s for
// 1 s: the expected count is N·(1 + λT) = 2,000, half of them at time 0;
// the Poisson part has variance N·λT, so the tolerance is 5·sqrt(1000)
// (derived). Without the option the expectation is N·λT = 1,000.
func TestFidelityFirstCallAtStart(t *testing.T) {
	for _, at := range []bool{true, false} {
		sc, err := scenario.Parse([]byte(fmt.Sprintf(`name: first
duration: 1s
metrics: {interval: 100ms}
clients: {count: 1000, arrival: {process: poisson, rate: 1/s, first_at_start: %v}}
backend: {workers: 1000}
`, at)), "first.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, sc)
		want := 1000.0
		if at {
			want = 2000
		}
		tol := 5 * math.Sqrt(1000)
		got := float64(res.Summary.Offered)
		ok := math.Abs(got-want) <= tol
		record(fmt.Sprintf("arrival first_at_start=%v, 1,000 clients at 1/s for 1 s: requests", at), fmt.Sprintf("%.0f (N·(1+λT) or N·λT)", want), fmt.Sprint(res.Summary.Offered), fmt.Sprintf("5 SD (%.0f)", tol), ok)
		if !ok {
			t.Errorf("first_at_start %v: %d requests, want %.0f ± %.0f", at, res.Summary.Offered, want, tol)
		}
		// The first 100 ms holds the 1,000 calls at the start plus about
		// 100 of the streams (5 SD: 50).
		if r0 := res.Series.Rows[0].Offered; at && (r0 < 1000 || r0 > 1150) || !at && r0 > 150 {
			t.Errorf("first_at_start %v: %d requests in the first 100 ms", at, r0)
		}
	}
	if _, err := scenario.Parse([]byte("name: f\nclients: {arrival: {process: constant, rate: 1/s, first_at_start: true}}\n"), "f.yaml", nil); err == nil || !strings.Contains(err.Error(), "applies to process: poisson only") {
		t.Errorf("first_at_start with constant arrivals: %v", err)
	}
}

// The slowdown fault (issue 16 item 4). One worker, a request every
// 100 ms (constant arrivals: exactly 10 in any 1 s), 50 ms of service; a
// slowdown ×4 during [1 s, 2 s). applies_to: arrival slows the 10 requests
// that arrive in the window, wherever they start: 10 × 150 ms = 1.5 s more
// work. applies_to: start slows those that start service in the window;
// at 200 ms each a queue builds and only 5 start before 2 s (t₀ + 0.2k < 2
// with the first arrival t₀ in [1, 1.1)): 750 ms more (derived). A
// replacement distribution (constant 250 ms instead of 50 ms) for the 10
// arrivals adds 10 × 200 ms = 2 s. At half load the backlog drains by
// about 7 s, before the end of the run.
func TestFidelitySlowdown(t *testing.T) {
	busy := func(fault string) float64 {
		t.Helper()
		sc, err := scenario.Parse([]byte(`name: slow
duration: 10s
metrics: {interval: 100ms}
clients: {count: 1, arrival: {process: constant, rate: 10/s}, timeout: 0s}
backend: {workers: 1, queue: {limit: 100}, service: {dist: constant, mean: 50ms}}
faults: [`+fault+`]
`), "slow.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := mustRun(t, sc).Summary
		if s.Rejected != 0 {
			t.Fatalf("%s: %d rejected", fault, s.Rejected)
		}
		// Busy worker-seconds of 1 worker over 10 s. A request still in
		// service at the end (from 9.9 s on) is the same in every run, so
		// it cancels in the differences.
		return *s.Utilisation * 10
	}
	base := busy("")
	arrival := busy("{kind: slowdown, start: 1s, duration: 1s, factor: 4, applies_to: arrival}") - base
	start := busy("{kind: slowdown, start: 1s, duration: 1s, factor: 4, applies_to: start}") - base
	repl := busy("{kind: slowdown, start: 1s, duration: 1s, service_time: {dist: constant, mean: 250ms}, applies_to: arrival}") - base
	near := func(x, want float64) bool { return math.Abs(x-want) < 1e-6 }
	ok := near(arrival, 1.5) && near(start, 0.75) && near(repl, 2)
	record("slowdown ×4 for 1 s, 1 worker, 100 ms arrivals, 50 ms service: extra work, s (applies_to arrival / start / replaced by 250 ms)",
		"1.5 / 0.75 / 2", fmt.Sprintf("%.3f / %.3f / %.3f", arrival, start, repl), "1 µs", ok)
	if !ok {
		t.Errorf("extra busy time: arrival %.4f s (want 1.5), start %.4f s (want 0.75), replacement %.4f s (want 2)", arrival, start, repl)
	}
}
