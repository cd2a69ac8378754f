package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func parseGraph(t testing.TB, yml string, sets ...string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(yml), "graph.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// chain is an L-deep chain of services under the clients: svc1 calls
// svc2 ... calls svcL, every hop (the clients' included) retrying with r
// retries at once, no timeouts; svcL is down (refusing) from 1 s on, and
// requests arrive from 2 s on.
func chain(levels, retries int) string {
	// levels services; the clients are the first retrying hop, so there are
	// levels retrying hops in all.
	var b strings.Builder
	fmt.Fprintf(&b, `name: chain
duration: 60s
clients:
  count: 10
  arrival: {process: poisson, total_rate: 5/s, profile: [{at: 0s, multiplier: 0}, {at: 2s, multiplier: 1}]}
  timeout: 0s
  retry: {max_attempts: %d, backoff: {base: 0s, cap: 0s, jitter: none}}
services:
`, retries+1)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  - name: svc%d\n    workers: 1000\n    service: {dist: constant, mean: 1ms}\n", i)
		if i < levels {
			fmt.Fprintf(&b, "    calls:\n      - to: svc%d\n        timeout: 0s\n        retry: {max_attempts: %d, backoff: {base: 0s, cap: 0s, jitter: none}}\n", i+1, retries+1)
		}
	}
	fmt.Fprintf(&b, "faults:\n  - {kind: outage, service: svc%d, start: 1s, duration: 59s}\n", levels)
	return b.String()
}

// The SRE book's retry amplification: with r retries at each of L hops and
// a bottom that fails every attempt at once, one external request makes
// exactly (r+1)^L attempts at the bottom (27 for r = 2 and 3 hops, 64 for
// r = 3). Exact: no randomness reaches the count.
func TestGraphRetryAmplificationIsExact(t *testing.T) {
	for _, tc := range []struct{ hops, retries int }{{1, 3}, {2, 2}, {3, 2}, {3, 3}} {
		t.Run(fmt.Sprintf("L=%d,r=%d", tc.hops, tc.retries), func(t *testing.T) {
			// hops counts the clients' hop: services svc1..svcL with svcL down.
			res := mustRun(t, parseGraph(t, chain(tc.hops, tc.retries)))
			bottom := res.Services[len(res.Services)-1].Summary
			// Requests still in flight at the end would spoil exactness:
			// with zero delays there are none.
			if res.Summary.InFlight != 0 || res.Summary.Offered == 0 {
				t.Fatalf("offered %d, in flight %d", res.Summary.Offered, res.Summary.InFlight)
			}
			got := float64(bottom.Attempts) / float64(res.Summary.Offered)
			want := math.Pow(float64(tc.retries+1), float64(tc.hops))
			record(fmt.Sprintf("service graph, %d retries at each of %d hops, bottom down: attempts at the bottom per request", tc.retries, tc.hops),
				fmt.Sprintf("%g ((r+1)^L)", want), fmt.Sprintf("%g", got), "exact", got == want)
			if got != want {
				t.Errorf("attempts at the bottom per request: got %v, want %v", got, want)
			}
			if bottom.FailedOutage != bottom.Attempts {
				t.Errorf("the bottom refused %d of %d attempts", bottom.FailedOutage, bottom.Attempts)
			}
			if res.Summary.Succeeded != 0 {
				t.Errorf("%d requests succeeded against a dead bottom", res.Summary.Succeeded)
			}
		})
	}
}

// jackson is the open Jackson network of overload-control.md §7.4:
// Poisson arrivals at 10/s into node 1; node 1 (1 server, μ 20) forwards
// to node 2 with 0.6 and node 3 with 0.3; node 2 (1 server, μ 15) to node
// 3 with 0.5; node 3 (2 servers, μ 10) back to node 1 with 0.2 (a feedback
// edge); every other share leaves. FIFO, exponential service, unbounded
// queues, no timeouts or retries.
const jackson = `name: jackson
duration: 4000s
metrics: {baseline: 60s}
clients:
  count: 10
  arrival: {process: poisson, total_rate: 10/s}
  timeout: 0s
services:
  - name: n1
    workers: 1
    service: {dist: exponential, mean: 50ms}
    queue: {limit: 100000000}
    forward: [{to: n2, probability: 0.6}, {to: n3, probability: 0.3}]
  - name: n2
    workers: 1
    service: {dist: exponential, mean: 66666667ns}
    queue: {limit: 100000000}
    forward: [{to: n3, probability: 0.5}]
  - name: n3
    workers: 2
    service: {dist: exponential, mean: 100ms}
    queue: {limit: 100000000}
    forward: [{to: n1, probability: 0.2}]
`

// The open Jackson network against its product-form solution: each node
// is an independent M/M/c at the rate the traffic equations give
// (λ = 11.3636, 6.8182, 6.8182), so the mean number in system is
// 1.315789, 0.833333 and 0.771479, and the end-to-end mean sojourn is
// ΣL/γ = 0.292060 s (overload-control.md §7.4). Each figure must lie
// within 4 standard errors of the mean over 8 independent replications of
// 4,000 s (the start from empty biases the mean by under 0.1%: the
// network empties in seconds).
func TestJacksonNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 8 runs of 4,000 s")
	}
	wantL := []float64{1.315789, 0.833333, 0.771479}
	const wantT = 0.292060
	const reps = 8
	var ls [3][]float64
	var ts []float64
	for seed := uint64(1); seed <= reps; seed++ {
		s := seed
		sc := parseGraph(t, jackson)
		res, err := Run(t.Context(), sc, Options{Seed: &s})
		if err != nil {
			t.Fatal(err)
		}
		for i, sv := range res.Services {
			ls[i] = append(ls[i], *sv.Summary.MeanInSystem)
		}
		ts = append(ts, res.MeanLatencyS)
	}
	check := func(name string, xs []float64, want float64) {
		mean, se := meanSE(xs)
		t.Logf("%s: %.4f ± %.4f (SE), theory %.6f", name, mean, se, want)
		record("open Jackson network (feedback edge): "+name, fmt.Sprintf("%.6f", want), fmt.Sprintf("%.4f ± %.4f (1 SE, %d runs)", mean, se, len(xs)), "4 SE", math.Abs(mean-want) <= 4*se)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%s: got %.4f ± %.4f, theory %.6f is %.1f SE away", name, mean, se, want, math.Abs(mean-want)/se)
		}
	}
	for i := range wantL {
		check(fmt.Sprintf("L at n%d", i+1), ls[i], wantL[i])
	}
	check("end-to-end sojourn (s)", ts, wantT)

	// The network applies per hop: with a constant 10 ms one-way delay,
	// every visit's request message and the final answer each add 10 ms,
	// and a request makes ΣV = 2.5 visits, so the sojourn grows by 3.5 ×
	// 10 ms to 0.327060 s. The service stations are unchanged.
	var tn []float64
	for seed := uint64(1); seed <= reps; seed++ {
		s := seed
		sc := parseGraph(t, jackson+"network: {delay: {dist: constant, mean: 10ms}}\n")
		res, err := Run(t.Context(), sc, Options{Seed: &s})
		if err != nil {
			t.Fatal(err)
		}
		tn = append(tn, res.MeanLatencyS)
	}
	check("end-to-end sojourn with 10 ms per hop (s)", tn, wantT+3.5*0.010)
}

func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// attempts_per_request counts the attempts that reached a service, the
// ones a dead service refused in an outage included (docs/reading-results.md):
// in the chain with its bottom down all the time requests arrive, every
// one of the (r+1)^L attempts per request reaches the bottom and is
// refused, so the bottom's figure is exactly (r+1)^L, not 0.
func TestAttemptsPerRequestCountsOutageRefusals(t *testing.T) {
	res := mustRun(t, parseGraph(t, chain(2, 2)))
	bottom := res.Services[len(res.Services)-1].Summary
	if bottom.Received != 0 {
		t.Fatalf("the bottom received %d attempts while down, want 0 (refusals count as failed_outage)", bottom.Received)
	}
	if bottom.AttemptsPerRequest == nil {
		t.Fatal("attempts_per_request: got null")
	}
	if got, want := *bottom.AttemptsPerRequest, 9.0; got != want {
		t.Errorf("attempts_per_request at the dead bottom: got %v, want %v ((r+1)^L = 3^2)", got, want)
	}
	top := res.Services[0].Summary
	if got, want := *top.AttemptsPerRequest, 3.0; got != want {
		t.Errorf("attempts_per_request at the top: got %v, want %v (r+1)", got, want)
	}
}
