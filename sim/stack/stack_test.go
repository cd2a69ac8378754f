package stack

import (
	"testing"

	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
)

func newStack(t *testing.T, c Config, n int) *Stack {
	t.Helper()
	src := rng.New(1)
	s, err := New(c, n, &src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NextRetry's verdicts and delays, one decision at a time.
func TestNextRetry(t *testing.T) {
	retry := func(mode RetryAfterMode) *RetryConfig {
		return &RetryConfig{MaxAttempts: 3, On: Outcomes(Rejected, Timeout), RetryAfter: mode,
			Backoff: policy.Backoff{Base: 100, Cap: 1000, Multiplier: 2}} // no jitter: 100, 200, 400, …
	}
	for _, tt := range []struct {
		name      string
		cfg       Config
		out       Outcome
		attempt   uint8
		backoffs  uint8
		ra        int64
		wantD     int64
		wantV     Verdict
		wantBacks uint8
	}{
		{"not retryable", Config{Retry: retry(IgnoreRetryAfter)}, Error, 1, 0, 0, 0, GiveUp, 0},
		{"no retry policy", Config{}, Rejected, 1, 0, 0, 0, GiveUp, 0},
		{"attempts used up", Config{Retry: retry(IgnoreRetryAfter)}, Rejected, 3, 0, 0, 0, GiveUp, 0},
		{"server says do not retry", Config{Retry: retry(AtLeastRetryAfter)}, Rejected, 1, 0, DontRetry, 0, GiveUp, 0},
		{"first backoff", Config{Retry: retry(IgnoreRetryAfter)}, Timeout, 1, 0, 0, 100, Retry, 1},
		{"second backoff", Config{Retry: retry(IgnoreRetryAfter)}, Timeout, 2, 1, 0, 200, Retry, 2},
		{"retry-after ignored", Config{Retry: retry(IgnoreRetryAfter)}, Rejected, 1, 0, 5000, 100, Retry, 1},
		{"retry-after at least", Config{Retry: retry(AtLeastRetryAfter)}, Rejected, 1, 0, 5000, 5000, Retry, 1},
		{"retry-after exactly resets the backoff", Config{Retry: retry(ExactlyRetryAfter)}, Rejected, 2, 1, 50, 50, Retry, 0},
		{"exactly without a hint backs off", Config{Retry: retry(ExactlyRetryAfter)}, Rejected, 2, 1, 0, 200, Retry, 2},
		{"clamped to backoff + 5 s", Config{Retry: retry(ClampedRetryAfter)}, Rejected, 1, 0, 1e12, 100 + policy.AWS2026RetryAfterExtra, Retry, 1},
	} {
		s := newStack(t, tt.cfg, 1)
		r := Request{Attempt: tt.attempt, Backoffs: tt.backoffs}
		d, v := s.NextRetry(0, 0, tt.out, tt.ra, &r, Draw{})
		if d != tt.wantD || v != tt.wantV || r.Backoffs != tt.wantBacks {
			t.Errorf("%s: got delay %d, verdict %d, backoffs %d; want %d, %d, %d", tt.name, d, v, r.Backoffs, tt.wantD, tt.wantV, tt.wantBacks)
		}
	}
}

// An AWS quota of 10 pays for one timeout retry (10) and refuses the
// next; the charge is kept in the request and refunded on success.
func TestNextRetryBudget(t *testing.T) {
	b := policy.AWSStandardDefaults()
	b.Capacity = 10
	s := newStack(t, Config{Retry: &RetryConfig{MaxAttempts: 5, On: Outcomes(Timeout), Budget: &BudgetConfig{Budget: b}}}, 1)
	r := Request{Attempt: 1}
	if _, v := s.NextRetry(0, 0, Timeout, 0, &r, Draw{}); v != Retry || r.Charge != 10 {
		t.Fatalf("first retry: got verdict %d, charge %d; want Retry, 10", v, r.Charge)
	}
	r.Attempt = 2
	if _, v := s.NextRetry(0, 0, Timeout, 0, &r, Draw{}); v != BudgetRefused {
		t.Errorf("second retry: got verdict %d, want BudgetRefused", v)
	}
	s.Result(0, 0, OK, &r, Draw{})
	if got := s.Budget().Level(0, 0); got != 10 {
		t.Errorf("after the success: got %v tokens, want the charge back, 10", got)
	}
}

// Admit drops by the breaker once it is open, and a group shares one.
func TestAdmitBreakerGroups(t *testing.T) {
	br := policy.GobreakerDefaults()
	br.ConsecutiveFailures = 1
	s := newStack(t, Config{Breaker: &BreakerConfig{Breaker: br, GroupSize: 2, Failures: Outcomes(Error)}}, 4)
	var r Request
	if got := s.Admit(0, 1, Draw{}, &r); got != Admitted {
		t.Fatalf("closed breaker: got %d, want Admitted", got)
	}
	s.Result(1, 1, Error, &r, Draw{})
	for _, tt := range []struct {
		client int
		want   Drop
	}{{0, DropBreaker}, {1, DropBreaker}, {2, Admitted}, {3, Admitted}} {
		if got := s.Admit(2, tt.client, Draw{}, &r); got != tt.want {
			t.Errorf("client %d after client 1's failure: got %d, want %d", tt.client, got, tt.want)
		}
	}
}

// The adaptive breaker: no coin while its rejection rate is 0; after a
// second of all failures its rate is 1 − 0.01 (clamped from 0.99) and
// every attempt of the group is refused, whatever its draw; the other
// group's breaker is untouched.
func TestAdmitAdaptiveBreaker(t *testing.T) {
	cfg := policy.SemianAdaptiveDefaults()
	s := newStack(t, Config{AdaptiveBreaker: &AdaptiveBreakerConfig{Breaker: cfg, GroupSize: 2, Failures: Outcomes(Error)}}, 4)
	var r Request
	for k := range 20 {
		at := int64(k) * 1e7 // 0–0.2 s, before any update
		if got := s.Admit(at, 0, Draw{Stream: 0, N: uint64(k)}, &r); got != Admitted {
			t.Fatalf("attempt %d before any update: got %d, want Admitted", k, got)
		}
		s.Result(at, 0, Error, &r, Draw{})
	}
	// Every breaker has updated by 2 s (phases are in (0, 1 s]): the
	// group of clients 0 and 1 saw 100% errors, r = 1 − 0.01 then 1.
	a := s.AdaptiveBreaker()
	if got := a.RejectionRate(2e9, s.AdaptiveBreakerOf(1)); got < 0.98 {
		t.Fatalf("rejection rate after 100%% errors: got %v, want >= 0.98", got)
	}
	for _, tt := range []struct {
		client int
		want   Drop
	}{{0, DropBreaker}, {1, DropBreaker}, {2, Admitted}, {3, Admitted}} {
		dropped := 0
		for k := range 100 {
			if s.Admit(25e8, tt.client, Draw{Stream: uint64(tt.client), N: uint64(k)}, &r) == DropBreaker {
				dropped++
			}
		}
		if want := map[Drop]int{DropBreaker: 99, Admitted: 0}[tt.want]; (tt.want == Admitted && dropped != 0) || (tt.want == DropBreaker && dropped < want) {
			t.Errorf("client %d: got %d of 100 dropped, want %s", tt.client, dropped, map[Drop]string{DropBreaker: ">= 99", Admitted: "0"}[tt.want])
		}
	}
}

// Bad settings are errors, never panics.
func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    Config
		n    int
	}{
		{"negative clients", Config{}, -1},
		{"throttle buckets", Config{Throttle: &ThrottleConfig{Throttle: policy.ThrottleConfig{Window: 1e9, Buckets: -1, Form: policy.ThrottleForm{K: 2}}}}, 1},
		{"budget ratio", Config{Retry: &RetryConfig{Budget: &BudgetConfig{Budget: policy.BudgetConfig{Kind: policy.BudgetSRE, Ratio: -1, Window: 1e9, Buckets: 1}}}}, 1},
		{"breaker", Config{Breaker: &BreakerConfig{Breaker: policy.BreakerConfig{Trip: policy.TripRate}}}, 1},
		{"limiter beta", Config{RateLimiter: &RateLimiterConfig{Limiter: policy.ClientRateLimiterConfig{Beta: 2}}}, 1},
		{"max attempts", Config{Retry: &RetryConfig{MaxAttempts: 300}}, 1},
		{"adaptive breaker", Config{AdaptiveBreaker: &AdaptiveBreakerConfig{Breaker: policy.AdaptiveBreakerConfig{}}}, 1},
	} {
		src := rng.New(1)
		if _, err := New(tt.c, tt.n, &src); err == nil {
			t.Errorf("%s: got no error, want one", tt.name)
		}
	}
}

func TestParseOutcomes(t *testing.T) {
	got, err := ParseOutcomes([]string{"timeout", "ok"})
	if want := Outcomes(Timeout, OK); err != nil || got != want {
		t.Errorf("got %b, %v; want %b", got, err, want)
	}
	if _, err := ParseOutcomes([]string{"rejectd"}); err == nil {
		t.Error("an unknown outcome: got no error, want one")
	}
	for o := OK; o < NumOutcomes; o++ {
		if s, _ := ParseOutcomes([]string{o.String()}); !s.Has(o) {
			t.Errorf("%v does not parse back", o)
		}
	}
}

// The overshoot of charging retries when they are sent (Envoy users'
// finding): 100 requests of one client, then a synchronised burst in
// which all 100 fail at the same instant and ask for a retry with a
// 100 ms backoff, against a 20% budget. Charged at the decision, the
// budget sees each granted retry before the next decision: SRE (ratio
// 0.2, a retry counts as a request too) grants k while k/(100 + k) < 0.2,
// 25 retries, 20% of the 125 attempts; Finagle (percent_can_retry 0.2, no
// reserve) has 100 × 1000 tokens for retries of 5000 each, 20. Charged at
// the send, every decision sees the budget before any of them: all 100
// are granted and go together after the backoff, 50% of the attempts
// for SRE, five times what Finagle allows.
func TestBudgetChargeAtSendOvershoots(t *testing.T) {
	sre := policy.SREDefaults()
	sre.Ratio = 0.2
	fin := policy.FinagleDefaults()
	fin.PercentCanRetry, fin.MinRetriesPerSec = 0.2, 0
	for _, tt := range []struct {
		name   string
		budget policy.BudgetConfig
		send   bool
		want   int
		level  float64 // Level after the sends: SRE retries/requests, Finagle tokens
	}{
		{"sre decision", sre, false, 25, 0.2},
		{"sre send", sre, true, 100, 0.5},
		{"finagle decision", fin, false, 20, 0},
		{"finagle send", fin, true, 100, 100*1000 - 100*5000},
	} {
		b := tt.budget
		b.ChargeAtSend = tt.send
		s := newStack(t, Config{Retry: &RetryConfig{MaxAttempts: 2, On: Outcomes(Error),
			Backoff: policy.Backoff{Base: 100e6, Cap: 100e6, Multiplier: 1}, Budget: &BudgetConfig{Budget: b}}}, 1)
		reqs := make([]Request, 100)
		for k := range reqs {
			s.OnRequest(int64(k)*1e6, 0) // 100 requests over 0.1 s
			reqs[k].Attempt = 1
			if got := s.Admit(int64(k)*1e6, 0, Draw{}, &reqs[k]); got != Admitted {
				t.Fatalf("%s: first attempt %d: got %d, want Admitted", tt.name, k, got)
			}
		}
		const burst = int64(5e8) // all fail at 0.5 s
		granted := 0
		for k := range reqs {
			s.Result(burst, 0, Error, &reqs[k], Draw{})
			if _, v := s.NextRetry(burst, 0, Error, 0, &reqs[k], Draw{}); v == Retry {
				granted++
				reqs[k].Attempt = 2
			}
		}
		if granted != tt.want {
			t.Errorf("%s: got %d retries granted in the burst, want %d", tt.name, granted, tt.want)
		}
		// After the backoff the granted retries are sent (and, with send,
		// charged only now): the budget then holds every one of them.
		for k := range reqs {
			if reqs[k].Attempt == 2 {
				s.Admit(burst+100e6, 0, Draw{}, &reqs[k])
			}
		}
		if got := s.Budget().Level(burst+100e6, 0); got != tt.level {
			t.Errorf("%s: budget level after the sends: got %v, want %v", tt.name, got, tt.level)
		}
	}
}
