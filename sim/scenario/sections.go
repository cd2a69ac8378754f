package scenario

import (
	"math"
	"strings"
	"time"
)

// Each policy section checks itself, given the path it is at
// (clients.retry, clients.groups.1.retry, services.0.calls.2.retry): a
// section is checked by the same rules, with the same messages, wherever
// it is (TestPolicySectionValidatesTheSameEverywhere). A nil section is
// not set and has nothing to check. What a section depends on outside
// itself is the run around it (v.scenario): its duration, its network,
// its backend's kind.

// validate checks the policy sections of a group or a call under path
// (clients.groups.N, services.N.calls.M). Their timeout and deadline are
// checked by their holders, whose rules for them differ. The fleet
// checks its sections one by one (Scenario.validate), around its groups.
func (pp *Policies) validate(v *validator, path string) {
	pp.Throttle.validate(v, path+".throttle")
	pp.Retry.validate(v, path+".retry")
	pp.Breaker.validate(v, path+".breaker")
	pp.Hedge.validate(v, path+".hedge")
	pp.RateLimiter.validate(v, path+".rate_limiter")
	pp.AdaptiveBreaker.validate(v, path+".adaptive_breaker")
}

// validate checks a throttle section at path p.
func (t *Throttle) validate(v *validator, p string) {
	if t == nil {
		return
	}
	s := v.scenario
	v.check(t.K > 0, p+".k", "must be > 0, got %g", t.K)
	v.check(t.Window > 0, p+".window", "must be > 0, got %s", t.Window)
	v.check(t.Buckets >= 1 && t.Buckets <= 1_000_000, p+".buckets", "must be in 1..1000000, got %d", t.Buckets)
	if t.Window > 0 && t.Buckets >= 1 {
		v.check(int64(t.Window)%int64(t.Buckets) == 0, p+".buckets", "window %s does not split into %d equal buckets", t.Window, t.Buckets)
		width := int64(t.Window) / int64(t.Buckets)
		v.check(width > 0 && int64(s.Duration)/max(width, 1) < 1<<32, p+".buckets", "buckets of %s over a %s run are more than 2^32 buckets; use fewer buckets", Duration(width), s.Duration)
	}
	v.check(t.GroupSize >= 1, p+".group_size", "must be >= 1, got %d", t.GroupSize)
	v.check(t.Scope == ScopeGroup || t.GroupSize == 1, p+".group_size", "is %d but scope is %q: set scope: group to share a throttle", t.GroupSize, t.Scope)
	v.check(len(t.AcceptOutcomes) > 0, p+".accept_outcomes", "must name at least one outcome (usually [ok])")
	v.check(t.Padding > 0, p+".padding", "must be > 0 (the SRE book: 1, gRPC's RLS throttler: 8), got %g", t.Padding)
	v.check(t.Aggression > 0, p+".aggression", "must be > 0 (1: the SRE formula), got %g", t.Aggression)
	v.check(t.MaxProbability > 0 && t.MaxProbability <= 1, p+".max_probability", "must be in (0, 1], got %g", t.MaxProbability)
	v.check(t.MinRequests >= 0, p+".min_requests", "must be >= 0, got %d", t.MinRequests)
}

// validate checks a retry section, and its budget, at path p.
func (r *Retry) validate(v *validator, p string) {
	if r == nil {
		return
	}
	v.check(r.MaxAttempts >= 1 && r.MaxAttempts <= MaxAttempts, p+".max_attempts", "must be in 1..%d, got %d", MaxAttempts, r.MaxAttempts)
	b := r.Backoff
	v.check(b.Base >= 0, p+".backoff.base", "must be >= 0, got %s", b.Base)
	v.check(b.Cap >= b.Base, p+".backoff.cap", "must be >= base (%s), got %s", b.Base, b.Cap)
	v.check(b.Multiplier >= 1, p+".backoff.multiplier", "must be >= 1, got %g", b.Multiplier)
	v.check(b.Jitter != JitterDecorrelated || b.Base > 0, p+".backoff.base", "decorrelated jitter needs base > 0")
	v.check(b.JitterFraction >= 0 && b.JitterFraction <= 1, p+".backoff.jitter_fraction", "must be in [0, 1], got %g", b.JitterFraction)
	v.check(b.ThrottleBase >= 0, p+".backoff.throttle_base", "must be >= 0 (0: base after throttles too), got %s", b.ThrottleBase)
	v.check(b.Jitter != JitterDecorrelated || b.ThrottleBase == 0, p+".backoff.throttle_base", "does not apply to decorrelated jitter")
	if bg := r.Budget; bg != nil {
		v.check(bg.GroupSize >= 1, p+".budget.group_size", "must be >= 1, got %d", bg.GroupSize)
		bp, before := p+".budget.", len(v.errs)
		switch bc := bg.BudgetConfig(); bg.Kind {
		case BudgetTokenBucket:
			for _, f := range []struct {
				name string
				x    float64
			}{{"bucket_capacity", bc.BucketCapacity}, {"bucket_initial", bc.BucketInitial}, {"bucket_deposit", bc.Deposit}, {"bucket_threshold", bc.Threshold}, {"bucket_cost", bc.Cost}} {
				v.check(f.x >= 0 && f.x <= 1e6, bp+f.name, "must be in [0, 1000000] tokens, got %g", f.x)
			}
			v.check(bc.Cost >= 0.0005, bp+"bucket_cost", "must be at least 0.001 tokens (amounts are kept to 3 decimals), got %g", bc.Cost)
			v.check(bc.BucketInitial <= bc.BucketCapacity, bp+"bucket_initial", "must not exceed bucket_capacity (%g), got %g", bc.BucketCapacity, bc.BucketInitial)
		case BudgetRetryBreaker:
			v.check(bc.MaxFailureRate >= 0 && bc.MaxFailureRate <= 1e6, bp+"max_failure_rate", "must be in [0, 1000000] (failures per first try; Brooker: 0.1), got %g", bc.MaxFailureRate)
			v.check(bc.Window >= 0, bp+"window", "must be >= 0 (0: count since the client started), got %s", Duration(bc.Window))
			v.check(bc.Window == 0 || bc.Window >= int64(time.Millisecond), bp+"window", "must be 0 or at least 1ms, got %s", Duration(bc.Window))
		}
		v.check(bg.Charge != ChargeSend || (bg.Kind != BudgetGRPC && bg.Kind != BudgetRetryBreaker), bp+"charge",
			"send does not apply to kind %s: it charges nothing when it grants a retry (it counts the retry's result)", bg.Kind)
		if err := bg.BudgetConfig().Validate(); err != nil && len(v.errs) == before { // the field checks above said it better
			v.check(false, p+".budget", "%v", err)
		}
	}
}

// validate checks a breaker section at path p.
func (br *Breaker) validate(v *validator, p string) {
	if br == nil {
		return
	}
	v.check(br.GroupSize >= 1, p+".group_size", "must be >= 1, got %d", br.GroupSize)
	v.check(len(br.FailureOutcomes) > 0, p+".failure_outcomes", "must name at least one outcome")
	if err := br.BreakerConfig().Validate(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			v.check(false, p, "%s", strings.TrimPrefix(line, "breaker: "))
		}
	}
}

// validate checks a hedge section at path p.
func (h *Hedge) validate(v *validator, p string) {
	if h == nil {
		return
	}
	s := v.scenario
	v.check(h.Delay >= 0, p+".delay", "must be >= 0, got %s", h.Delay)
	v.check(h.Quantile >= 0 && h.Quantile < 1, p+".quantile", "must be in [0, 1) (0: use delay; e.g. 0.95), got %g", h.Quantile)
	v.check(h.MinSamples >= 1, p+".min_samples", "must be >= 1, got %d", h.MinSamples)
	v.check(s.Network == nil, p, "is not modelled with a network section yet")
	v.check(s.Backend.Kind != BackendOCC, p, "does not apply to backend.kind occ")
}

// validate checks a rate limiter section at path p.
func (rl *RateLimiter) validate(v *validator, p string) {
	if rl == nil {
		return
	}
	v.check(rl.Beta > 0 && rl.Beta < 1, p+".beta", "must be in (0, 1), got %g", rl.Beta)
	v.check(rl.C > 0, p+".c", "must be > 0, got %g", rl.C)
	v.check(rl.Smoothing > 0 && rl.Smoothing <= 1, p+".smoothing", "must be in (0, 1], got %g", rl.Smoothing)
	v.check(rl.MinRate > 0, p+".min_rate", "must be > 0, got %s", rl.MinRate)
	v.check(rl.BucketInterval > 0, p+".bucket_interval", "must be > 0, got %s", rl.BucketInterval)
	v.check(len(rl.ThrottleOutcomes) > 0, p+".throttle_outcomes", "must name at least one outcome (usually [rejected])")
}

// validate checks an adaptive breaker section at path p.
func (a *AdaptiveBreaker) validate(v *validator, p string) {
	if a == nil {
		return
	}
	v.check(a.Defensiveness > 0 && !math.IsInf(a.Defensiveness, 1), p+".defensiveness", "must be a finite number > 0 (Semian: 5), got %g", a.Defensiveness)
	v.check(a.Interval > 0, p+".interval", "must be > 0, got %s", a.Interval)
	v.check(a.Window > 0, p+".window", "must be > 0, got %s", a.Window)
	if a.Window > 0 && a.Interval > 0 {
		n := int64(a.Window) / int64(a.Interval)
		v.check(int64(a.Window)%int64(a.Interval) == 0 && n <= 1<<16, p+".window", "must be a multiple of interval (%s), at most 65536 of them, got %s", a.Interval, a.Window)
	}
	v.check(a.InitialErrorRate >= 0 && a.InitialErrorRate <= 1, p+".initial_error_rate", "must be in [0, 1], got %g", a.InitialErrorRate)
	v.check(a.Cap > 0 && a.Cap <= 1, p+".cap", "must be in (0, 1], got %g", a.Cap)
	v.check(len(a.FailureOutcomes) > 0, p+".failure_outcomes", "must name at least one outcome")
	v.check(a.GroupSize >= 1, p+".group_size", "must be >= 1, got %d", a.GroupSize)
}
