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
