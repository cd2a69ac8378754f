package stack

import "github.com/throttlesim/throttlesim/sim/policy"

// Config is a request-policy stack's configuration: plain data, the
// policies' own configurations and the outcome sets that route each
// attempt's outcome to them. A nil section is a policy the stack does not
// have. A scenario's policy section translates to one with
// scenario.Policies.StackConfig; a program can also write one by hand.
type Config struct {
	// Timeout is the per-attempt timeout and Deadline the overall
	// per-request deadline, in nanoseconds; 0: none. The stack does not
	// enforce them (its caller owns the clock); it carries them.
	Timeout, Deadline int64
	Throttle          *ThrottleConfig
	Retry             *RetryConfig
	Breaker           *BreakerConfig
	RateLimiter       *RateLimiterConfig
	Hedge             *HedgeConfig
	AdaptiveBreaker   *AdaptiveBreakerConfig
	// First is the random-stream entity of the stack's client 0 (in the
	// simulator: the group's first client id, or a call's edge entity);
	// per-instance draws (the adaptive breakers' update phases) are keyed
	// by First + instance, so that two stacks of one run never share them.
	First uint64
}

// ThrottleConfig is the adaptive throttle (SRE "Handling Overload").
type ThrottleConfig struct {
	// Throttle is the throttles' configuration; its Uniform is set by New
	// (the throttle draws from the stack's random source).
	Throttle policy.ThrottleConfig
	// GroupSize consecutive clients share one throttle (0 or 1: one each).
	GroupSize int
	// Accepts are the outcomes that count as the backend accepting a
	// request.
	Accepts OutcomeSet
}

// RetryAfterMode is how a retry uses the server's Retry-After.
type RetryAfterMode uint8

// Retry-After modes.
const (
	// IgnoreRetryAfter: the backoff alone.
	IgnoreRetryAfter RetryAfterMode = iota
	// AtLeastRetryAfter: max(backoff, Retry-After) (HTTP clients).
	AtLeastRetryAfter
	// ExactlyRetryAfter: exactly the server's delay, and the backoff
	// starts over (gRPC pushback, gRFC A6).
	ExactlyRetryAfter
	// ClampedRetryAfter: the hint within [backoff, backoff + 5 s] (AWS
	// 2026 retry mode).
	ClampedRetryAfter
)

// RetryConfig is the retry policy: attempts, which outcomes are retried,
// the backoff between attempts, Retry-After and the retry budget.
type RetryConfig struct {
	// MaxAttempts counts the first attempt (1: no retries; 0 means 1).
	MaxAttempts int
	// On are the outcomes that are retried.
	On         OutcomeSet
	Backoff    policy.Backoff
	RetryAfter RetryAfterMode
	Budget     *BudgetConfig // nil: no retry budget
}

// BudgetConfig is a retry budget.
type BudgetConfig struct {
	Budget policy.BudgetConfig
	// GroupSize consecutive clients share one budget (0 or 1: one each).
	GroupSize int
}

// BreakerConfig is a circuit breaker.
type BreakerConfig struct {
	Breaker policy.BreakerConfig
	// GroupSize consecutive clients share one breaker (0 or 1: one each).
	GroupSize int
	// Failures are the outcomes that count as failures; any other counts
	// as a success.
	Failures OutcomeSet
}

// RateLimiterConfig is the client send-rate limiter (the AWS SDKs'
// adaptive retry mode), one per client.
type RateLimiterConfig struct {
	Limiter policy.ClientRateLimiterConfig
	// Throttles are the outcomes that count as throttling responses.
	Throttles OutcomeSet
}

// HedgeConfig is hedging ("The Tail at Scale"): a copy of a request's
// first attempt after a delay.
type HedgeConfig struct {
	// Delay before the hedge; with Quantile > 0, the delay until
	// MinSamples first attempts have succeeded.
	Delay int64
	// Quantile, when > 0, hedges after that quantile of the latency of
	// the requests answered on their first try.
	Quantile   float64
	MinSamples uint64
	// CancelLoser: when one copy succeeds, the other is cancelled if it
	// is still queued.
	CancelLoser bool
}

// AdaptiveBreakerConfig is Semian's adaptive circuit breaker: it rejects a
// fraction of attempts, set by a controller on the error rate.
type AdaptiveBreakerConfig struct {
	Breaker policy.AdaptiveBreakerConfig
	// GroupSize consecutive clients share one breaker (0 or 1: one each):
	// Semian keeps one per process and resource.
	GroupSize int
	// Failures are the outcomes that count as errors; any other counts as
	// a success.
	Failures OutcomeSet
}
