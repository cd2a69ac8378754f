package sim

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/metrics"

	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// This file is the one place where policies are built from the scenario:
// the request-policy stack of each client group (throttle, retry with
// backoff, budget, breaker, rate limiter) and the reconnect policy. Every
// parse or construction error is returned; scenario.Validate has already
// refused what it knows to be bad, so an error here is a bug in one of the
// two, reported as such rather than ignored.

// cpol is the request-policy stack of one client group: its clients are
// [start, start+n) and policy instances are indexed from start.
type cpol struct {
	name         string
	start, n     uint32
	timeout      int64
	deadline     int64 // overall per-request deadline, 0: none
	maxAtt       uint8
	throttle     *policy.Throttle
	groupSize    uint32 // clients per throttle
	acceptMask   uint8
	retryMask    uint8
	backoff      policy.Backoff
	honorRA      bool
	exactRA      bool // gRPC pushback: retry after exactly the server's delay
	clampRA      bool // AWS 2026: the hint within [backoff, backoff + 5 s]
	budget       *policy.BudgetSet
	budgetGroup  uint32
	breaker      *policy.BreakerSet
	breakerGroup uint32
	breakerMask  uint8 // outcomes that count as failures
	staleDrop    bool  // record breaker results by generation (gobreaker)
	limiter      *policy.Adaptive
	limiterMask  uint8 // outcomes that count as throttles
	propagate    bool  // attempts carry their deadline (service graphs)
	margin       int64 // subtracted from a propagated deadline
	hedge        *hedger
}

// hedger is a policy stack's hedging: its delay, fixed or the observed
// quantile of first-attempt latency.
type hedger struct {
	delay      int64
	quantile   float64
	minSamples uint64
	cancel     bool
	lat        metrics.Histogram
	seen       uint64 // samples when delay was last recomputed
}

// after is the delay before a hedge.
func (h *hedger) after() int64 {
	if h.quantile > 0 && h.lat.Count() >= h.minSamples {
		if n := h.lat.Count(); n >= h.seen+64 || h.seen < h.minSamples {
			// Recomputed every 64 samples: a histogram quantile is a scan.
			if v, ok := h.lat.Quantile(h.quantile); ok {
				h.delay = int64(v)
			}
			h.seen = n
		}
	}
	return h.delay
}

// buildStack builds the request-policy stack of group g; src names the
// throttle's random draws (a pointer, so that a branch that re-seeds the
// run, Options.Branches, reaches them too).
func buildStack(g scenario.GroupSpec, src *rng.Source) (cpol, error) {
	n := g.Count
	pp := g.Policies
	p := cpol{name: g.Name, start: uint32(g.Start), n: uint32(n), timeout: int64(pp.Timeout), deadline: int64(pp.Deadline), maxAtt: 1}
	fail := func(section string, err error) (cpol, error) {
		return cpol{}, fmt.Errorf("sim: group %q: %s: %w", g.Name, section, err)
	}
	if t := pp.Throttle; t != nil && t.Enabled {
		gs := 1
		if t.Scope == scenario.ScopeGroup {
			gs = t.GroupSize
		}
		p.groupSize = uint32(gs)
		th, err := policy.NewThrottle((n+gs-1)/gs, policy.ThrottleConfig{
			Window: int64(t.Window), Buckets: int64(t.Buckets),
			Form:              policy.ThrottleForm{K: t.K, Padding: t.Padding, Aggression: t.Aggression, MaxP: t.MaxProbability, MinRequests: uint32(t.MinRequests)},
			CountLocalRejects: t.CountLocalRejects,
			Uniform: func(stream, n uint64) float64 {
				return rng.Float64(src.Key(rng.Throttle, stream), n)
			},
		})
		if err != nil {
			return fail("throttle", err)
		}
		p.throttle = th
		p.acceptMask = outcomeMask(t.AcceptOutcomes)
	}
	if r := pp.Retry; r != nil {
		p.maxAtt = uint8(r.MaxAttempts)
		p.retryMask = outcomeMask(r.RetryOn)
		b, err := buildBackoff(r.Backoff)
		if err != nil {
			return fail("retry.backoff", err)
		}
		p.backoff = b
		p.honorRA = r.HonorRetryAfter
		p.exactRA = r.RetryAfterMode == scenario.RetryAfterExactly
		p.clampRA = r.RetryAfterMode == scenario.RetryAfterClamped
		if bg := r.Budget; bg != nil {
			p.budgetGroup = uint32(bg.GroupSize)
			cfg := bg.BudgetConfig()
			if err := cfg.Validate(); err != nil { // NewBudgetSet panics on a bad configuration
				return fail("retry.budget", err)
			}
			p.budget = policy.NewBudgetSet(cfg, (n+bg.GroupSize-1)/bg.GroupSize)
		}
	}
	if br := pp.Breaker; br != nil {
		p.breakerGroup = uint32(br.GroupSize)
		bs, err := policy.NewBreakerSet((n+br.GroupSize-1)/br.GroupSize, br.BreakerConfig())
		if err != nil {
			return fail("breaker", err)
		}
		p.breaker = bs
		p.breakerMask = outcomeMask(br.FailureOutcomes)
		p.staleDrop = bs.Config().DropStaleResults
	}
	if h := pp.Hedge; h != nil {
		p.hedge = &hedger{delay: int64(h.Delay), quantile: h.Quantile, minSamples: uint64(h.MinSamples), cancel: h.CancelLoser}
	}
	if rl := pp.RateLimiter; rl != nil {
		cfg := rl.AdaptiveConfig()
		if err := cfg.Validate(); err != nil {
			return fail("rate_limiter", err)
		}
		p.limiter = policy.NewAdaptive(n, cfg)
		p.limiterMask = outcomeMask(rl.ThrottleOutcomes)
	}
	return p, nil
}

// buildBackoff is the backoff policy of a scenario backoff section.
func buildBackoff(b scenario.Backoff) (policy.Backoff, error) {
	j, err := policy.ParseJitter(string(b.Jitter))
	if err != nil {
		return policy.Backoff{}, err
	}
	return policy.Backoff{Base: int64(b.Base), Cap: int64(b.Cap), Multiplier: b.Multiplier, Jitter: j, Fraction: b.JitterFraction, ThrottleBase: int64(b.ThrottleBase)}, nil
}

// buildReconnect is the reconnect policy of clients.connection.reconnect.
func buildReconnect(rc scenario.Reconnect) (policy.Reconnect, error) {
	pol, err := policy.ParseReconnectPolicy(string(rc.Policy))
	if err != nil {
		return policy.Reconnect{}, fmt.Errorf("sim: clients.connection.reconnect: %w", err)
	}
	b, err := buildBackoff(rc.Backoff)
	if err != nil {
		return policy.Reconnect{}, fmt.Errorf("sim: clients.connection.reconnect.backoff: %w", err)
	}
	return policy.Reconnect{Policy: pol, Delay: int64(rc.Delay), Window: int64(rc.JitterWindow), Backoff: b}, nil
}
