package sim

import (
	"fmt"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/throttlesim/throttlesim/sim/occ"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// A constant one-way delay d adds exactly 2d to every request's latency
// and shifts the backend's arrivals by d, so the backend is still M/M/1:
// the sojourn time of FCFS M/M/1 is Exp(μ − λ), whose q-quantile is
// −ln(1 − q)/(μ − λ). At λ = 8/s, μ = 10/s, d = 100 ms: p50 = 0.5466 s,
// p99 = 2.5026 s. Tolerance 3%: the histogram reports a quantile within
// 1.6% (half a sub-bucket), and over 100,000 s (~800,000 requests) the
// sampling error of these quantiles is under 1%.
func TestNetworkConstantDelayAddsRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("long-run queueing check")
	}
	const d = 100 * time.Millisecond
	base := func() *scenario.Scenario {
		sc := scenario.Default()
		sc.Name = "net-mm1"
		sc.Duration = dur(100_000 * time.Second)
		sc.Metrics.Interval = dur(10 * time.Second)
		sc.Clients.Count = 100
		sc.Clients.Arrival.TotalRate = 8
		sc.Clients.Timeout = 0
		sc.Backend.Workers = 1
		sc.Backend.Queue.Limit = 100_000_000
		return sc
	}
	plain := mustRun(t, base())
	net := mustRun(t, withNetwork(base(), "constant", d, 0))
	for _, q := range []struct {
		name       string
		p          float64
		got, local *float64
		tol        float64
	}{
		{"p50", 0.5, net.Summary.LatencyP50MS, plain.Summary.LatencyP50MS, 0.03},
		{"p99", 0.99, net.Summary.LatencyP99MS, plain.Summary.LatencyP99MS, 0.03},
	} {
		theory := 2*d.Seconds() - math.Log(1-q.p)/(10-8)
		got := *q.got / 1000
		t.Logf("%s: with the network %.4f s, without %.4f s, theory %.4f s", q.name, got, *q.local/1000, theory)
		ok := math.Abs(got-theory)/theory <= q.tol
		record(fmt.Sprintf("M/M/1 ρ=0.8 + 2×%v network: latency %s, s", d, q.name), fmt.Sprintf("%.4f", theory), fmt.Sprintf("%.4f", got), fmt.Sprintf("%.0f%%", q.tol*100), ok)
		if !ok {
			t.Errorf("latency %s %.4f s, theory 2d + sojourn = %.4f s (tolerance %.0f%%)", q.name, got, theory, q.tol*100)
		}
	}
	// The backend sees the same work: the same arrivals, shifted.
	if a, b := plain.Summary.Received, net.Summary.Received; math.Abs(float64(a-b)) > 5 {
		t.Errorf("backend received %d with the network, %d without: only the last 100 ms may differ", b, a)
	}
}

// Answers that arrive after the client's timeout are discarded, though the
// backend did the work: d = 300 ms each way plus 100 ms of service is
// 700 ms, so a 600 ms timeout loses every attempt and an 800 ms one none.
func TestNetworkLateAnswersTimeOut(t *testing.T) {
	for _, tc := range []struct {
		timeout  time.Duration
		wantOK   bool
		wantName string
	}{
		{600 * time.Millisecond, false, "every attempt times out"},
		{800 * time.Millisecond, true, "every attempt succeeds"},
	} {
		t.Run(tc.wantName, func(t *testing.T) {
			sc := scenario.Default()
			sc.Name = "late"
			sc.Duration = dur(60 * time.Second)
			sc.Clients.Count = 10
			sc.Clients.Arrival.TotalRate = 5
			sc.Clients.Timeout = dur(tc.timeout)
			sc.Backend.Workers = 10
			sc.Backend.Service = scenario.Service{Dist: "constant", Mean: dur(100 * time.Millisecond)}
			withNetwork(sc, "constant", 300*time.Millisecond, 0)
			s := mustRun(t, sc).Summary
			if s.Offered < 200 {
				t.Fatalf("only %d requests", s.Offered)
			}
			// Requests of the last 700 ms have no answer yet at the horizon.
			if tc.wantOK {
				if s.TimedOut != 0 || s.Succeeded < s.Offered-10 {
					t.Errorf("succeeded %d of %d, timed out %d; want all but the last few to succeed", s.Succeeded, s.Offered, s.TimedOut)
				}
			} else {
				if s.Succeeded != 0 || s.TimedOut < s.Offered-10 {
					t.Errorf("succeeded %d, timed out %d of %d; want every answer to arrive too late", s.Succeeded, s.TimedOut, s.Offered)
				}
				if s.Served < s.Offered-10 {
					t.Errorf("backend served %d of %d: it must still do the work of attempts their clients gave up", s.Served, s.Offered)
				}
			}
		})
	}
}

// The occ backend kind and the dedicated contention model (sim/occ) are
// two implementations of Brooker's experiment with different random
// streams: their means over 60 runs must agree within 4 standard errors of
// the difference, for every strategy, in write calls and completion time.
// scenarios/contention.yaml's settings: base 10 ms here is the blog's
// 5 ms × 2 before the first retry; decorrelated jitter starts from the
// blog's 5 ms.
func TestOCCBackendMatchesContentionModel(t *testing.T) {
	const clients, runs = 40, 60
	for _, tc := range []struct {
		strategy string
		backoff  scenario.Backoff
	}{
		{"none", scenario.Backoff{Base: 0, Cap: 0, Multiplier: 1, Jitter: "none"}},
		{"exponential", scenario.Backoff{Base: dur(10 * time.Millisecond), Cap: dur(2 * time.Second), Multiplier: 2, Jitter: "none"}},
		{"full", scenario.Backoff{Base: dur(10 * time.Millisecond), Cap: dur(2 * time.Second), Multiplier: 2, Jitter: "full"}},
		{"equal", scenario.Backoff{Base: dur(10 * time.Millisecond), Cap: dur(2 * time.Second), Multiplier: 2, Jitter: "equal"}},
		{"decorrelated", scenario.Backoff{Base: dur(5 * time.Millisecond), Cap: dur(2 * time.Second), Multiplier: 2, Jitter: "decorrelated"}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			var writes, done []float64
			for seed := uint64(1); seed <= runs; seed++ {
				sc := scenario.Default()
				sc.Name = "occ"
				sc.Seed = seed
				sc.Duration = dur(10 * time.Minute)
				sc.Clients.Count = clients
				sc.Clients.Arrival = scenario.Arrival{Process: "once"}
				sc.Clients.Timeout = 0
				withRetry(sc, scenario.MaxAttempts, "none")
				sc.Clients.Retry.RetryOn = []string{"error"}
				sc.Clients.Retry.Backoff = tc.backoff
				sc.Backend.Kind = "occ"
				withNetwork(sc, "normal", 10*time.Millisecond, 2*time.Millisecond)
				s := mustRun(t, sc).Summary
				if s.Succeeded != clients || s.LastSuccessS == nil {
					t.Fatalf("seed %d: %d of %d clients wrote", seed, s.Succeeded, clients)
				}
				writes = append(writes, float64(s.Received))
				done = append(done, *s.LastSuccessS*1000)
			}
			rs, err := occ.Runs(t.Context(), occ.Brooker(clients, tc.strategy, 1), runs)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				name      string
				ours, ref []float64
			}{
				{"write calls", writes, occ.Writes(rs)},
				{"completion ms", done, occ.CompletionMS(rs)},
			} {
				ma, sa := stat.MeanStdDev(m.ours, nil)
				mb, sb := stat.MeanStdDev(m.ref, nil)
				se := math.Hypot(sa, sb) / math.Sqrt(runs)
				t.Logf("%s: occ backend %.1f, sim/occ %.1f (SE of the difference %.2f)", m.name, ma, mb, se)
				record(fmt.Sprintf("OCC, %d clients, %s: %s, backend kind occ vs sim/occ", clients, tc.strategy, m.name),
					fmt.Sprintf("%.1f (sim/occ)", mb), fmt.Sprintf("%.1f (diff SE %.2f)", ma, se), "4 SE", math.Abs(ma-mb) <= 4*se)
				if math.Abs(ma-mb) > 4*se {
					t.Errorf("%s: occ backend %.2f, sim/occ %.2f, beyond 4 SE (%.2f)", m.name, ma, mb, 4*se)
				}
			}
		})
	}
}
