package sim

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// An overall deadline covers every attempt and backoff: during a
// black-holed outage no request lives longer than the deadline, and no
// success takes longer either.
func TestDeadlineCoversAllAttempts(t *testing.T) {
	sc := withRetry(small(), 5, "none")
	sc.Faults[0].Mode = "blackhole"
	sc.Clients.Deadline = dur(2500 * time.Millisecond)
	res := mustRun(t, sc)
	s := res.Summary
	if s.DeadlineExceeded == 0 {
		t.Fatal("no request hit its deadline in a 10 s black-holed outage")
	}
	if s.DeadlineExceeded > s.Failed {
		t.Errorf("deadline_exceeded %d > failed %d: it is a subset", s.DeadlineExceeded, s.Failed)
	}
	// The histogram's resolution is 1/32 of a power of two: 2.5 s reads
	// back within 1.6%.
	if p99 := *s.LatencyP99MS; p99 > 2500*1.016 {
		t.Errorf("p99 latency %.0f ms beyond the 2.5 s deadline", p99)
	}
	// With 1 s attempt timeouts and 5 attempts a request without a
	// deadline can live 5 s + backoffs: the deadline must have cut some.
	noDL := withRetry(small(), 5, "none")
	noDL.Faults[0].Mode = "blackhole"
	if base := mustRun(t, noDL).Summary; *base.LatencyP99MS <= *s.LatencyP99MS {
		t.Errorf("p99 without a deadline %.0f ms, with %.0f ms", *base.LatencyP99MS, *s.LatencyP99MS)
	}
}

// gRPC pushback: with retry_after_mode exactly, a refused attempt is
// retried exactly retry_after later (the backoff is not used); with
// at_least the wait is max(backoff, retry_after).
func TestPushbackExactly(t *testing.T) {
	for _, mode := range []string{"exactly", "at_least"} {
		t.Run(mode, func(t *testing.T) {
			sc := withRetry(small(), 3, "none")
			sc.Clients.Count = 1
			sc.Clients.Arrival.TotalRate = 0.2
			sc.Clients.Retry.RetryAfterMode = scenario.RetryAfterMode(mode)
			sc.Clients.Retry.Backoff.Base = dur(5 * time.Second)
			sc.Clients.Retry.Backoff.Cap = dur(5 * time.Second)
			sc.Faults[0].RetryAfter = dur(time.Second)
			sc.Faults[0].Duration = dur(30 * time.Second)
			want := int64(time.Second)
			if mode == "at_least" {
				want = int64(5 * time.Second)
			}
			// Consecutive retries of one request (its slot and generation,
			// from the event's token) are one wait apart: refusals are
			// immediate.
			last := map[uint64]int64{}
			var gaps []int64
			_, err := Run(context.Background(), sc, Options{Trace: func(e TraceEvent) {
				if e.Kind != "retry" || e.At < int64(20*time.Second) || e.At > int64(50*time.Second) {
					return
				}
				key := uint64(e.ID)<<32 | uint64(e.Aux>>8)
				if prev, ok := last[key]; ok {
					gaps = append(gaps, e.At-prev)
				}
				last[key] = e.At
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(gaps) == 0 {
				t.Fatal("no request was retried twice during the outage")
			}
			for _, g := range gaps {
				if g != want {
					t.Errorf("retry %v after a refusal, want %v", time.Duration(g), time.Duration(want))
				}
			}
		})
	}
}

func TestDontRetryPushback(t *testing.T) {
	sc := withRetry(small(), 4, "full")
	sc.Faults = nil
	sc.Clients.Arrival.TotalRate = 300 // 3x capacity: plenty of rejections
	sc.Backend.DontRetry = true
	sc.Clients.Retry.RetryOn = []string{"rejected"}
	s := mustRun(t, sc).Summary
	if s.Rejected == 0 {
		t.Fatal("no rejections")
	}
	if s.Retries != 0 {
		t.Errorf("%d retries after rejections that said do not retry", s.Retries)
	}
	sc.Backend.DontRetry = false
	if s2 := mustRun(t, sc).Summary; s2.Retries == 0 {
		t.Error("no retries even without dont_retry: the test shows nothing")
	}
}

// The AWS adaptive rate limiter: nothing is delayed before the first
// throttling response; under overload it paces the clients, so the backend
// receives less than without it and rejects less.
func TestAdaptiveRateLimiterPaces(t *testing.T) {
	over := func(limit bool) *Result {
		sc := withRetry(small(), 3, "full")
		sc.Faults = nil
		sc.Clients.Count = 20
		sc.Clients.Arrival.TotalRate = 300 // 3x capacity
		if limit {
			rl := &scenario.RateLimiter{}
			scenario.SetDefaults(rl)
			sc.Clients.RateLimiter = rl
		}
		return mustRun(t, sc)
	}
	with, without := over(true).Summary, over(false).Summary
	if with.Paced == 0 || with.MeanPacingWaitMS == nil {
		t.Fatal("the limiter delayed nothing under 3x overload")
	}
	if with.Received >= without.Received || with.Rejected >= without.Rejected {
		t.Errorf("received %d / rejected %d with the limiter, %d / %d without", with.Received, with.Rejected, without.Received, without.Rejected)
	}
	light := small()
	light.Faults = nil
	rl := &scenario.RateLimiter{}
	scenario.SetDefaults(rl)
	light.Clients.RateLimiter = rl
	if s := mustRun(t, light).Summary; s.Paced != 0 || s.Rejected != 0 {
		t.Errorf("at 60%% load: %d paced, %d rejected; want none before any throttle", s.Paced, s.Rejected)
	}
}

// independentFailures: 60 requests/s for 1000 s against a backend with
// room to spare whose served attempts fail with probability x; clients make
// up to 4 attempts on errors, full-jitter backoff, no timeout.
func independentFailures(x float64) *scenario.Scenario {
	sc := withRetry(small(), 4, "full")
	sc.Faults = nil
	sc.Duration = dur(1000 * time.Second)
	sc.Clients.Arrival.TotalRate = 60
	sc.Clients.Timeout = 0
	sc.Clients.Retry.RetryOn = []string{"error"}
	sc.Backend.Workers = 50
	sc.Backend.ErrorRate = x
	return sc
}

// Plain retries against independent failures: with failure probability x
// and up to N retries, a request makes 1 + x + ... + x^N attempts on
// average and succeeds with probability 1 − x^(N+1). The backend has ample
// capacity, so failures come only from error_rate.
//
// Tolerances: ~60,000 requests per case. The attempts per request have a
// standard deviation of at most 1.05 (x = 0.5), so their mean is within
// 0.0043 (1 sd); 1% of the amplification (≥ 0.0105) is at least 2.4 sd at
// x = 0.05 and 4.4 sd at x = 0.5. Success is a binomial proportion with sd
// at most sqrt(0.25/60000) = 0.002; the tolerance is 0.01 (5 sd).
func TestRetryAmplificationClosedForm(t *testing.T) {
	for _, x := range []float64{0.05, 0.1, 0.2, 0.5} {
		s := mustRun(t, independentFailures(x)).Summary
		wantAmp := 1 + x + x*x + x*x*x
		wantOK := 1 - x*x*x*x
		done := float64(s.Succeeded + s.Failed)
		amp := float64(s.Attempts) / float64(s.Offered)
		ok := float64(s.Succeeded) / done
		t.Logf("x=%.2f: amplification %.4f (theory %.4f), success %.4f (theory %.4f)", x, amp, wantAmp, ok, wantOK)
		record(fmt.Sprintf("3 retries, independent failures x=%.2f: amplification", x), fmt.Sprintf("%.4f (1+x+x²+x³)", wantAmp), fmt.Sprintf("%.4f", amp), "1%", math.Abs(amp-wantAmp)/wantAmp <= 0.01)
		record(fmt.Sprintf("3 retries, x=%.2f: success", x), fmt.Sprintf("%.4f (1−x⁴)", wantOK), fmt.Sprintf("%.4f", ok), "0.01", math.Abs(ok-wantOK) <= 0.01)
		if math.Abs(amp-wantAmp)/wantAmp > 0.01 {
			t.Errorf("x=%.2f: amplification %.4f, want %.4f", x, amp, wantAmp)
		}
		if math.Abs(ok-wantOK) > 0.01 {
			t.Errorf("x=%.2f: success %.4f, want %.4f", x, ok, wantOK)
		}
	}
}

// Budgets cap what plain retries would do: with half the attempts failing,
// 3 retries amplify load by 1.875; the SRE 10% budget holds retries to
// about a tenth of the sent requests, gRPC's token bucket stops retrying
// while failures outweigh successes ten to one, Finagle allows 10 retries
// per second plus 20% of the 40 requests per second (18 of the 35 retries
// per second plain retries would make), and AWS's quota runs dry. One busy
// client, so Finagle's per-client floor of 10 retries/s does not cover it.
func TestRetryBudgetsCapAmplification(t *testing.T) {
	base := func() *scenario.Scenario {
		sc := withRetry(small(), 4, "full")
		sc.Faults = nil
		sc.Duration = dur(300 * time.Second)
		sc.Clients.Count = 1
		sc.Clients.Arrival.TotalRate = 40
		sc.Clients.Timeout = 0
		sc.Clients.Retry.RetryOn = []string{"error"}
		sc.Backend.Workers = 50
		sc.Backend.ErrorRate = 0.5
		return sc
	}
	plain := mustRun(t, base()).Summary
	for _, kind := range []string{"sre", "grpc", "finagle", "aws"} {
		t.Run(kind, func(t *testing.T) {
			sc := base()
			b := &scenario.Budget{}
			scenario.SetDefaults(b)
			b.Kind = scenario.BudgetKind(kind)
			sc.Clients.Retry.Budget = b
			s := mustRun(t, sc).Summary
			amp := *s.Amplification
			t.Logf("%s: amplification %.3f (plain %.3f), %d retries refused", kind, amp, *plain.Amplification, s.BudgetRefused)
			if s.BudgetRefused == 0 || amp >= *plain.Amplification {
				t.Errorf("budget %s refused %d retries, amplification %.3f vs %.3f without", kind, s.BudgetRefused, amp, *plain.Amplification)
			}
			if kind == "finagle" && math.Abs(amp-(40+10+0.2*40)/40.0) > 0.03 {
				t.Errorf("Finagle: amplification %.3f, want (40 + 10 + 0.2·40)/40 = 1.45", amp)
			}
			if kind == "sre" {
				// retries ≤ 10% of sent requests: amplification ≤ 1/0.9,
				// plus one window's worth of slack at the start.
				if amp > 1/0.9+0.01 {
					t.Errorf("SRE budget: amplification %.3f above 1/0.9", amp)
				}
			}
		})
	}
}

// Circuit breakers (one per 20-client group, gobreaker defaults but 5 s
// open): during the outage they open and refuse locally, so far fewer
// attempts hit the dead backend; after it, half-open probes close them and
// the service recovers.
func TestBreakerShedsDuringOutage(t *testing.T) {
	run := func(breaker bool) metrics.Summary {
		sc := withRetry(small(), 3, "full")
		if breaker {
			b := &scenario.Breaker{}
			scenario.SetDefaults(b)
			b.GroupSize = 20
			b.OpenDuration = dur(5 * time.Second)
			sc.Clients.Breaker = b
		}
		return mustRun(t, sc).Summary
	}
	with, without := run(true), run(false)
	t.Logf("sent into the outage: %d with breakers, %d without; %d refused by breakers", with.FailedOutage, without.FailedOutage, with.DropBreaker)
	if with.DropBreaker == 0 {
		t.Fatal("no breaker ever refused a call during a 10 s outage")
	}
	if 2*with.FailedOutage > without.FailedOutage {
		t.Errorf("breakers let %d attempts into the outage, without them %d: want less than half", with.FailedOutage, without.FailedOutage)
	}
	if !with.Recovery.Recovered {
		t.Errorf("with breakers the service did not recover: %+v", with.Recovery)
	}
}

// Client groups: each group runs its own policies, the group sizes follow
// the shares, and the per-group figures add up to the fleet's.
func TestClientGroups(t *testing.T) {
	res := mustRun(t, loadScenario(t, "mixed-fleet.yaml"))
	if len(res.Groups) != 2 {
		t.Fatalf("%d groups", len(res.Groups))
	}
	cur, old := res.Groups[0].Summary, res.Groups[1].Summary
	if cur.Clients != 8000 || old.Clients != 2000 {
		t.Errorf("group sizes %d and %d, want 8000 and 2000", cur.Clients, old.Clients)
	}
	s := res.Summary
	if cur.Offered+old.Offered != s.Offered || cur.Succeeded+old.Succeeded != s.Succeeded ||
		cur.Failed+old.Failed != s.Failed || cur.Attempts+old.Attempts != s.Attempts ||
		cur.DropThrottle+old.DropThrottle != s.DropThrottle || cur.BudgetRefused+old.BudgetRefused != s.BudgetRefused {
		t.Errorf("groups do not add up to the fleet: %+v + %+v vs %+v", cur, old, s)
	}
	// The old clients retry at once and never throttle: more attempts per
	// request, and no local drops; the current ones are held by their
	// throttle and budget.
	if *old.Amplification <= *cur.Amplification || old.DropThrottle != 0 || cur.DropThrottle == 0 {
		t.Errorf("old apps amplification %.3f (drops %d), current %.3f (drops %d)", *old.Amplification, old.DropThrottle, *cur.Amplification, cur.DropThrottle)
	}
	// The backend's counts of each group's attempts add up too.
	if cur.Received+old.Received != s.Received || cur.Served+old.Served != s.Served || cur.TimedOut+old.TimedOut != s.TimedOut ||
		cur.Rejected+old.Rejected != s.Rejected+s.QueueTimeouts || cur.FailedOutage+old.FailedOutage != s.FailedOutage {
		t.Errorf("backend counts by group do not add up: %+v + %+v vs %+v", cur, old, s)
	}
	// Per interval too.
	for i := range res.Series.Rows {
		if a, b, c := res.Groups[0].Series.Rows[i].Attempts, res.Groups[1].Series.Rows[i].Attempts, res.Series.Rows[i].Attempts; a+b != c {
			t.Fatalf("interval %d: attempts %d + %d != %d", i, a, b, c)
		}
	}
	for _, g := range res.Groups {
		if len(g.Series.Rows) != len(res.Series.Rows) {
			t.Errorf("group %s: got %d rows, want one per interval (%d)", g.Name, len(g.Series.Rows), len(res.Series.Rows))
		}
	}
	// A scenario without groups has no group breakdown.
	if r := mustRun(t, small()); len(r.Groups) != 0 {
		t.Error("group output without groups")
	}
}

// A half-open probe the throttle drops would never get a result and would
// keep the breaker half-open (refusing everything) for the rest of the run;
// the breaker therefore comes after the throttle, and a call abandoned at
// its deadline counts as a timeout. Regression test for both: from 30 s
// after the outage on, no breaker may still be refusing calls.
func TestBreakerNeverStuckHalfOpen(t *testing.T) {
	for _, deadline := range []time.Duration{0, 1500 * time.Millisecond} {
		sc := withRetry(withThrottle(small(), 2), 3, "full")
		sc.Clients.Count = 20
		sc.Clients.Throttle.Window = dur(10 * time.Second)
		sc.Clients.Throttle.Buckets = 10
		sc.Clients.Deadline = dur(deadline)
		sc.Duration = dur(240 * time.Second)
		sc.Faults[0].Duration = dur(30 * time.Second)
		b := &scenario.Breaker{}
		scenario.SetDefaults(b)
		b.OpenDuration = dur(5 * time.Second)
		sc.Clients.Breaker = b
		res := mustRun(t, sc)
		var refused, ok int64
		for _, r := range res.Series.Rows[80:] { // the outage ended at 50 s
			refused += r.DropBreaker
			ok += r.Succeeded
		}
		if refused > 0 || ok == 0 {
			t.Errorf("deadline %v: after the outage breakers refused %d calls and %d succeeded", deadline, refused, ok)
		}
	}
}

// Faults act in time order whatever their order in the file.
func TestFaultOrderDoesNotMatter(t *testing.T) {
	mk := func(reverse bool) *Result {
		sc := small()
		sc.Duration = dur(90 * time.Second)
		a := scenario.Fault{Kind: "outage", Mode: "refuse", Start: dur(10 * time.Second), Duration: dur(10 * time.Second)}
		b := scenario.Fault{Kind: "capacity", Fraction: 0.3, Start: dur(20 * time.Second), Duration: dur(10 * time.Second)}
		c := scenario.Fault{Kind: "outage", Mode: "refuse", Start: dur(30 * time.Second), Duration: dur(10 * time.Second)}
		sc.Faults = []scenario.Fault{a, b, c}
		if reverse {
			sc.Faults = []scenario.Fault{c, b, a}
		}
		return mustRun(t, sc)
	}
	x, y := mk(false), mk(true)
	if fmt.Sprint(x.Series.Rows) != fmt.Sprint(y.Series.Rows) {
		t.Error("listing the same faults in another order changed the time series")
	}
	for i := 30; i < 40; i++ { // the last outage must happen
		if x.Series.Rows[i].FailedOutage == 0 || x.Series.Rows[i].CapacityNS != 0 {
			t.Fatalf("second %d: no outage (refused %d, capacity %d)", i, x.Series.Rows[i].FailedOutage, x.Series.Rows[i].CapacityNS)
		}
	}
}

// Durations far beyond the run (a Retry-After of 290 years, a timeout of
// the same) must not overflow the clock, and a reconnect backoff that can
// draw a zero wait must not loop at one instant.
func TestExtremeDurationsRun(t *testing.T) {
	huge := dur(2562047 * time.Hour)
	sc := withRetry(small(), 3, "full")
	sc.Backend.RetryAfter = huge
	sc.Clients.Timeout = huge
	sc.Clients.Arrival.TotalRate = 300
	mustRun(t, sc)

	cs := connScenario(50)
	cs.Clients.Connection.Reconnect = scenario.Reconnect{Policy: "backoff",
		Backoff: scenario.Backoff{Base: 1, Cap: 1, Multiplier: 1, Jitter: "full"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := Run(ctx, cs, Options{}); err != nil {
		t.Fatalf("a reconnect backoff of 1 ns: %v", err)
	}
}

// The SRE book ("Addressing Cascading Failures"): 3 retries at each of 3
// layers turn one failing request into 4³ = 64 attempts at the bottom.
// The simulator has one backend, so layers are composed from single-layer
// runs: layer 1's clients retry against the database; seen from layer 2,
// one call into layer 1 fails with the probability f₁ measured there and
// costs amp₁ database attempts, independently of other calls, so layer 2 is
// a run against a backend with error_rate f₁, and the database sees
// amp₁·amp₂·amp₃ attempts per top-level request. Theory with independent
// database failures x: A(x)·A(x⁴)·A(x¹⁶), A(p) = 1+p+p²+p³. A database that
// is down (every attempt refused, from the end of the first second, which
// the simulator keeps as the goodput baseline) is the book's case: each
// layer makes exactly 4 attempts, so one run is all three layers (the
// ~60 requests of the first second, of ~60,000, succeed at once). Tolerance 2% on the
// product: each factor's standard error is at most about 0.25% with ~60,000
// requests, and requests still in flight at the end make a run's ratio a
// hair low.
func TestLayeredRetryAmplification(t *testing.T) {
	layer := func(errorRate float64, down bool) (amp, fail float64) {
		sc := independentFailures(errorRate)
		if down {
			sc.Clients.Retry.RetryOn = append(sc.Clients.Retry.RetryOn, "unavailable")
			sc.Faults = []scenario.Fault{{Kind: "outage", Mode: "refuse", Start: dur(time.Second), Duration: sc.Duration - dur(time.Second)}}
		}
		s := mustRun(t, sc).Summary
		return float64(s.Attempts) / float64(s.Offered), float64(s.Failed) / float64(s.Succeeded+s.Failed)
	}
	A := func(p float64) float64 { return 1 + p + p*p + p*p*p }

	amp, fail := layer(0, true)
	total := amp * amp * amp
	t.Logf("database down: %.4f attempts per request per layer (failed %.4f), %.2f at the database", amp, fail, total)
	record("3 retries at each of 3 layers, composed from one-layer runs, database down: attempts at the database", "64 (4³)", fmt.Sprintf("%.2f", total), "2%", math.Abs(total-64)/64 <= 0.02)
	if math.Abs(total-64)/64 > 0.02 || fail < 0.998 {
		t.Errorf("database down: %.2f attempts at the database (want 64), %.4f of requests failed (want all but the first second's)", total, fail)
	}

	x := 0.5
	want := A(x) * A(math.Pow(x, 4)) * A(math.Pow(x, 16))
	total, f := 1.0, x
	var factors []string
	for l := 1; l <= 3; l++ {
		a, nf := layer(f, false)
		total *= a
		factors = append(factors, fmt.Sprintf("%.4f", a))
		f = nf
	}
	t.Logf("x=%.2f: layer amplifications %v, %.4f at the database (theory %.4f), top-level failure %.2g", x, factors, total, want, f)
	record(fmt.Sprintf("3 retries at each of 3 layers, composed from one-layer runs, database failures x=%.2f: attempts at the database", x),
		fmt.Sprintf("%.4f (A(x)·A(x⁴)·A(x¹⁶))", want), fmt.Sprintf("%.4f (%s)", total, strings.Join(factors, " · ")), "2%", math.Abs(total-want)/want <= 0.02)
	if math.Abs(total-want)/want > 0.02 {
		t.Errorf("x=%.2f: %.4f attempts at the database, want %.4f", x, total, want)
	}
}
