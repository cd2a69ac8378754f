package scenario

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// This file is the one place where a scenario's request-policy section
// becomes a policy stack's configuration (stack.Config), for the
// simulator (sim builds every client group's and every call's stack from
// it) and for live mode alike. It sits on the section types, not in
// package stack, so that stack (and live/client, which builds on it)
// does not import the scenario and its YAML decoder.

// StackConfig is the policy stack configuration of p: timeout, deadline,
// throttle, retry (backoff, Retry-After, budget), breaker, rate limiter
// and hedging.
func (p Policies) StackConfig() (stack.Config, error) {
	c := stack.Config{Timeout: int64(p.Timeout), Deadline: int64(p.Deadline)}
	fail := func(section string, err error) (stack.Config, error) {
		return stack.Config{}, fmt.Errorf("scenario: %s: %w", section, err)
	}
	if t := p.Throttle; t != nil && t.Enabled {
		gs := 1
		if t.Scope == ScopeGroup {
			gs = t.GroupSize
		}
		acc, err := stack.ParseOutcomes(t.AcceptOutcomes)
		if err != nil {
			return fail("throttle.accept_outcomes", err)
		}
		c.Throttle = &stack.ThrottleConfig{
			Throttle: policy.ThrottleConfig{
				Window: int64(t.Window), Buckets: int64(t.Buckets),
				Form:              policy.ThrottleForm{K: t.K, Padding: t.Padding, Aggression: t.Aggression, MaxP: t.MaxProbability, MinRequests: uint32(t.MinRequests)},
				CountLocalRejects: t.CountLocalRejects,
			},
			GroupSize: gs, Accepts: acc,
		}
	}
	if r := p.Retry; r != nil {
		on, err := stack.ParseOutcomes(r.RetryOn)
		if err != nil {
			return fail("retry.retry_on", err)
		}
		b, err := r.Backoff.BackoffConfig()
		if err != nil {
			return fail("retry.backoff", err)
		}
		mode := stack.IgnoreRetryAfter
		if r.HonorRetryAfter {
			switch r.RetryAfterMode {
			case RetryAfterExactly:
				mode = stack.ExactlyRetryAfter
			case RetryAfterClamped:
				mode = stack.ClampedRetryAfter
			default:
				mode = stack.AtLeastRetryAfter
			}
		}
		c.Retry = &stack.RetryConfig{MaxAttempts: r.MaxAttempts, On: on, Backoff: b, RetryAfter: mode}
		if bg := r.Budget; bg != nil {
			cfg := bg.BudgetConfig()
			if err := cfg.Validate(); err != nil {
				return fail("retry.budget", err)
			}
			c.Retry.Budget = &stack.BudgetConfig{Budget: cfg, GroupSize: bg.GroupSize}
		}
	}
	if br := p.Breaker; br != nil {
		f, err := stack.ParseOutcomes(br.FailureOutcomes)
		if err != nil {
			return fail("breaker.failure_outcomes", err)
		}
		cfg := br.BreakerConfig()
		if err := cfg.Validate(); err != nil {
			return fail("breaker", err)
		}
		c.Breaker = &stack.BreakerConfig{Breaker: cfg, GroupSize: br.GroupSize, Failures: f}
	}
	if rl := p.RateLimiter; rl != nil {
		th, err := stack.ParseOutcomes(rl.ThrottleOutcomes)
		if err != nil {
			return fail("rate_limiter.throttle_outcomes", err)
		}
		cfg := rl.ClientRateLimiterConfig()
		if err := cfg.Validate(); err != nil {
			return fail("rate_limiter", err)
		}
		c.RateLimiter = &stack.RateLimiterConfig{Limiter: cfg, Throttles: th}
	}
	if h := p.Hedge; h != nil {
		c.Hedge = &stack.HedgeConfig{Delay: int64(h.Delay), Quantile: h.Quantile, MinSamples: uint64(h.MinSamples), CancelLoser: h.CancelLoser}
	}
	if a := p.AdaptiveBreaker; a != nil {
		f, err := stack.ParseOutcomes(a.FailureOutcomes)
		if err != nil {
			return fail("adaptive_breaker.failure_outcomes", err)
		}
		cfg := a.AdaptiveBreakerConfig()
		if err := cfg.Validate(); err != nil {
			return fail("adaptive_breaker", err)
		}
		c.AdaptiveBreaker = &stack.AdaptiveBreakerConfig{Breaker: cfg, GroupSize: a.GroupSize, Failures: f}
	}
	return c, nil
}

// BackoffConfig is the backoff policy of b.
func (b Backoff) BackoffConfig() (policy.Backoff, error) {
	j, err := policy.ParseJitter(string(b.Jitter))
	if err != nil {
		return policy.Backoff{}, err
	}
	return policy.Backoff{Base: int64(b.Base), Cap: int64(b.Cap), Multiplier: b.Multiplier, Jitter: j, Fraction: b.JitterFraction, ThrottleBase: int64(b.ThrottleBase)}, nil
}

// ReconnectConfig is the reconnect policy of r.
func (r Reconnect) ReconnectConfig() (policy.Reconnect, error) {
	pol, err := policy.ParseReconnectPolicy(string(r.Policy))
	if err != nil {
		return policy.Reconnect{}, err
	}
	b, err := r.Backoff.BackoffConfig()
	if err != nil {
		return policy.Reconnect{}, fmt.Errorf("backoff: %w", err)
	}
	return policy.Reconnect{Policy: pol, Delay: int64(r.Delay), Window: int64(r.JitterWindow), Backoff: b}, nil
}
