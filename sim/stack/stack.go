package stack

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
)

// Stack is the request-policy stack of a set of clients: throttle,
// circuit breaker, client rate limiter, retries with backoff, Retry-After
// and a retry budget, hedging. It holds the policies' state for its n
// clients (a policy shared by a group of clients is indexed by the
// client's index divided by the group size) and makes every decision of a
// request's life as a method of that state, the time now and the
// request's own state (Request): admit or drop (Admit), the rate
// limiter's wait (Pace), what an outcome feeds back to which policy
// (Result), the next retry's delay or giving up (NextRetry), the hedge's
// delay (HedgeDelay). The simulator's event loop and live mode's HTTP
// client call the same methods.
//
// Random draws are named, not taken in turn: a Draw names the draws of
// one attempt, and each policy draws from its own purpose of the stack's
// rng.Source, only when it needs one (the throttle only when its
// rejection probability is above 0, the backoff only when it jitters).
//
// A Stack is not safe for concurrent use. Copies share the policies'
// state.
type Stack struct {
	src               *rng.Source
	timeout, deadline int64
	maxAtt            uint8
	raMode            RetryAfterMode
	staleDrop         bool // record breaker results by generation (gobreaker)
	more              bool // a limiter, budget or breaker: Result has more to do than the throttle
	gated             bool // a throttle or a breaker: Admit may drop (or a retry's charge is due at its send)
	sendCharge        bool // the budget charges a retry when it is sent (BudgetConfig.ChargeAtSend)
	extra             bool // sendCharge or an adaptive breaker: admit asks admitExtra
	breakers          bool // a breaker or an adaptive breaker: results go to breakerResult
	accepts           OutcomeSet
	retryOn           OutcomeSet
	failures          OutcomeSet
	throttles         OutcomeSet

	throttle      *policy.Throttle
	throttleGroup uint32 // clients per throttle (≥ 1)
	budget        *policy.BudgetSet
	budgetGroup   uint32
	breaker       *policy.BreakerSet
	breakerGroup  uint32
	limiter       *policy.ClientRateLimiter
	backoff       policy.Backoff
	hedge         *Hedger
	adaptive      *policy.AdaptiveBreakerSet
	adaptiveGroup uint32
	adFailures    OutcomeSet
}

// Draw names the random draws of one attempt: draw N of the stream of
// entity Stream, for each policy's purpose (rng.Throttle, rng.Backoff,
// rng.Breaker).
type Draw struct{ Stream, N uint64 }

// Index is the draw index of attempt number attempt of request number ord
// of an entity: the simulator's naming, which live mode shares.
func Index(ord uint32, attempt uint8) uint64 { return uint64(ord)<<8 | uint64(attempt) }

// Request is the state of one request that the stack's decisions read and
// update: the caller keeps one per request (the simulator in its request
// slot, live mode in its RoundTrip) and zeroes it when the request starts.
type Request struct {
	PrevSleep int64  // the last backoff (decorrelated jitter)
	Charge    int32  // what the budget charged for the latest retry (AWS refunds it)
	Gen       uint32 // the breaker's generation when it admitted the current attempt
	Attempt   uint8  // the current attempt's number (1: the first); the caller counts them
	Backoffs  uint8  // backoffs since the start or the last pushback reset
	// Hedging: H1 is the attempt number of the first copy while a hedge
	// is also in flight, 0 otherwise; HLive says which of the two are
	// still awaited (1: the first, 2: the hedge).
	H1, HLive uint8
	// Uncharged: the current retry was granted but its budget charge
	// (Charge) is due when it is sent (BudgetConfig.ChargeAtSend).
	Uncharged bool
}

// Drop is why Admit dropped an attempt (Admitted: it did not).
type Drop uint8

// Admission decisions.
const (
	Admitted     Drop = iota
	DropThrottle      // the throttle rejected it locally
	DropBreaker       // the open (or saturated half-open) breaker refused it
)

// Verdict is NextRetry's decision.
type Verdict uint8

// Retry decisions.
const (
	Retry         Verdict = iota // retry after the delay
	GiveUp                       // not retryable, out of attempts, or the server said not to retry
	BudgetRefused                // the retry budget refused the retry
)

// DontRetry, as a retry-after, is the server saying "do not retry" (gRPC
// pushback with a negative delay).
const DontRetry = -1

// New builds the stack of n clients from c; src names the random draws (a
// pointer: a caller that re-seeds its source, as the simulator's branches
// do, reaches the stack's draws too).
func New(c Config, n int, src *rng.Source) (*Stack, error) {
	if n < 0 {
		return nil, fmt.Errorf("stack: number of clients must be >= 0, got %d", n)
	}
	s := &Stack{src: src, timeout: c.Timeout, deadline: c.Deadline, maxAtt: 1, throttleGroup: 1, budgetGroup: 1, breakerGroup: 1}
	if t := c.Throttle; t != nil {
		g, err := groupSize(t.GroupSize)
		if err != nil {
			return nil, fmt.Errorf("stack: throttle: %w", err)
		}
		s.throttleGroup = g
		tc := t.Throttle
		tc.Uniform = func(stream, n uint64) float64 { return rng.Float64(src.Key(rng.Throttle, stream), n) }
		th, err := policy.NewThrottle(groups(n, g), tc)
		if err != nil {
			return nil, fmt.Errorf("stack: throttle: %w", err)
		}
		s.throttle, s.accepts = th, t.Accepts
	}
	if r := c.Retry; r != nil {
		if r.MaxAttempts < 0 || r.MaxAttempts > 255 {
			return nil, fmt.Errorf("stack: retry: max attempts must be in [0, 255] (0: 1), got %d", r.MaxAttempts)
		}
		s.maxAtt = uint8(max(r.MaxAttempts, 1))
		s.retryOn, s.backoff, s.raMode = r.On, r.Backoff, r.RetryAfter
		if b := r.Budget; b != nil {
			g, err := groupSize(b.GroupSize)
			if err != nil {
				return nil, fmt.Errorf("stack: retry budget: %w", err)
			}
			s.budgetGroup = g
			bs, err := policy.NewBudgetSet(groups(n, g), b.Budget)
			if err != nil {
				return nil, fmt.Errorf("stack: retry budget: %w", err)
			}
			s.budget = bs
		}
	}
	if b := c.Breaker; b != nil {
		g, err := groupSize(b.GroupSize)
		if err != nil {
			return nil, fmt.Errorf("stack: breaker: %w", err)
		}
		s.breakerGroup = g
		bs, err := policy.NewBreakerSet(groups(n, g), b.Breaker)
		if err != nil {
			return nil, fmt.Errorf("stack: breaker: %w", err)
		}
		s.breaker, s.failures, s.staleDrop = bs, b.Failures, b.Breaker.DropStaleResults
	}
	if l := c.RateLimiter; l != nil {
		lim, err := policy.NewClientRateLimiter(n, l.Limiter)
		if err != nil {
			return nil, fmt.Errorf("stack: rate limiter: %w", err)
		}
		s.limiter, s.throttles = lim, l.Throttles
	}
	if a := c.AdaptiveBreaker; a != nil {
		g, err := groupSize(a.GroupSize)
		if err != nil {
			return nil, fmt.Errorf("stack: adaptive breaker: %w", err)
		}
		// Each breaker's updates start at its own phase in (0, interval],
		// as each process starts its update thread at its own time; the
		// phase is keyed by c.First + b, unique in the run (breaker b's
		// clients start at First + b·group, so First + b is within the
		// stack's own entities).
		iv := a.Breaker.Interval
		phase := func(b int) int64 {
			return iv - int64(rng.Float64(src.Key(rng.AdaptiveBreaker, c.First+uint64(b)), rng.AdaptivePhaseDraw)*float64(iv))
		}
		ab, err := policy.NewAdaptiveBreakerSet(groups(n, g), a.Breaker, phase)
		if err != nil {
			return nil, fmt.Errorf("stack: adaptive breaker: %w", err)
		}
		s.adaptive, s.adaptiveGroup, s.adFailures = ab, g, a.Failures
	}
	s.more = s.limiter != nil || s.budget != nil || s.breaker != nil || s.adaptive != nil
	s.sendCharge = s.budget != nil && c.Retry.Budget.Budget.ChargeAtSend
	s.extra = s.sendCharge || s.adaptive != nil
	s.breakers = s.breaker != nil || s.adaptive != nil
	s.gated = s.throttle != nil || s.breaker != nil || s.adaptive != nil || s.sendCharge
	if h := c.Hedge; h != nil {
		s.hedge = &Hedger{delay: h.Delay, quantile: h.Quantile, minSamples: h.MinSamples, cancel: h.CancelLoser}
	}
	return s, nil
}

// Timeout is the per-attempt timeout in ns (0: none).
func (s *Stack) Timeout() int64 { return s.timeout }

// Deadline is the overall per-request deadline in ns (0: none).
func (s *Stack) Deadline() int64 { return s.deadline }

// MaxAttempts is the most attempts a request makes (1 without retries).
func (s *Stack) MaxAttempts() int { return int(s.maxAtt) }

// Throttle is the stack's throttles (nil: none), for inspection.
func (s *Stack) Throttle() *policy.Throttle { return s.throttle }

// Budget is the stack's retry budgets (nil: none), for inspection.
func (s *Stack) Budget() *policy.BudgetSet { return s.budget }

// Breaker is the stack's breakers (nil: none), for inspection.
func (s *Stack) Breaker() *policy.BreakerSet { return s.breaker }

// AdaptiveBreaker is the stack's adaptive breakers (nil: none), for
// inspection.
func (s *Stack) AdaptiveBreaker() *policy.AdaptiveBreakerSet { return s.adaptive }

// AdaptiveBreakerOf is the index of client i's adaptive breaker.
func (s *Stack) AdaptiveBreakerOf(i int) int { return of(i, s.adaptiveGroup) }

// Limiter is the stack's client rate limiters (nil: none), for inspection.
func (s *Stack) Limiter() *policy.ClientRateLimiter { return s.limiter }

// Hedge is the stack's hedging (nil: it does not hedge).
func (s *Stack) Hedge() *Hedger { return s.hedge }

// ThrottleOf, BudgetOf and BreakerOf are the index of client i's
// throttle, budget and breaker.
func (s *Stack) ThrottleOf(i int) int { return of(i, s.throttleGroup) }

// BudgetOf is the index of client i's retry budget.
func (s *Stack) BudgetOf(i int) int { return of(i, s.budgetGroup) }

// BreakerOf is the index of client i's breaker.
func (s *Stack) BreakerOf(i int) int { return of(i, s.breakerGroup) }

// of is the index of client i's instance of a policy shared by groups of
// g clients: no division in the common case of one each (a division is
// tens of cycles on the simulator's hot path), 32-bit otherwise.
func of(i int, g uint32) int {
	if g == 1 {
		return i
	}
	return int(uint32(i) / g)
}

// groupSize is a configured group size as kept: 0 means 1.
func groupSize(n int) (uint32, error) {
	if n < 0 || n > 1<<31 {
		return 0, fmt.Errorf("group size must be in [0, 2^31], got %d", n)
	}
	return uint32(max(n, 1)), nil
}

// groups is the number of policy instances for n clients in groups of g.
func groups(n int, g uint32) int { return (n + int(g) - 1) / int(g) }

// Start is client i starting at now (its rate limiter is created then).
func (s *Stack) Start(now int64, i int) {
	if s.limiter != nil {
		s.limiter.Reset(now, i)
	}
}

// OnRequest is client i issuing a new request at now (the budget counts
// it).
func (s *Stack) OnRequest(now int64, i int) {
	if s.budget != nil {
		s.budget.OnRequest(now, s.BudgetOf(i))
	}
}

// Admit decides whether client i sends an attempt at now: the throttle,
// then the adaptive breaker (its coin, drawn only when its rejection rate
// is above 0), then the breaker, which comes last among the gates that
// may drop the attempt (a call it admits, possibly a half-open probe, is
// always sent and so always gets a result). An admitted attempt's breaker
// generation is kept in r. Both breakers' refusals are DropBreaker.
func (s *Stack) Admit(now int64, i int, d Draw, r *Request) Drop {
	if !s.gated { // inlined: no gate is no call
		return Admitted
	}
	return s.admit(now, i, d, r)
}

func (s *Stack) admit(now int64, i int, d Draw, r *Request) Drop {
	if s.extra {
		if dr := s.admitExtra(now, i, d, r); dr != Admitted {
			return dr
		}
	} else if s.throttle != nil && !s.throttle.Allow(now, of(i, s.throttleGroup), d.Stream, d.N) {
		return DropThrottle
	}
	if s.breaker == nil {
		return Admitted
	}
	b := of(i, s.breakerGroup)
	if !s.breaker.Allow(now, b) {
		return DropBreaker
	}
	r.Gen = s.breaker.Generation(b)
	return Admitted
}

// admitExtra is admit's gates before the breaker when a retry's budget
// charge is due at its send or an adaptive breaker is set: the charge,
// the throttle, the adaptive breaker. Apart from admit, so that a stack
// with neither (R1's) tests one flag instead of two and keeps admit small.
func (s *Stack) admitExtra(now int64, i int, d Draw, r *Request) Drop {
	if s.sendCharge && r.Uncharged {
		// The retry leaves its backoff: its budget charge is due now,
		// whatever the gates below decide.
		s.budget.ChargeRetry(now, of(i, s.budgetGroup), r.Charge)
		r.Uncharged = false
	}
	if s.throttle != nil && !s.throttle.Allow(now, of(i, s.throttleGroup), d.Stream, d.N) {
		return DropThrottle
	}
	if s.adaptive != nil {
		a := of(i, s.adaptiveGroup)
		if s.adaptive.NeedsDraw(now, a) && !s.adaptive.Allow(now, a, rng.Float64(s.src.Key(rng.AdaptiveBreaker, d.Stream), d.N)) {
			return DropBreaker
		}
	}
	return Admitted
}

// Pace is how long client i's rate limiter delays an admitted attempt at
// now (0: send it now). It never drops one.
func (s *Stack) Pace(now int64, i int) int64 {
	if s.limiter == nil {
		return 0
	}
	return s.limiter.Acquire(now, i)
}

// Result feeds the outcome of client i's current attempt (of request r)
// back at now: to the throttle (an accept), the rate limiter (a throttle
// or not), the retry budget (only successes and retryable failures count,
// gRFC A6: "only retryable or non-fatal codes count as failures") and the
// breaker (BreakerResult).
func (s *Stack) Result(now int64, i int, out Outcome, r *Request, d Draw) {
	if s.more || s.accepts.Has(out) { // inlined: nothing to do is no call (R1's rejections)
		s.result(now, i, out, r, d)
	}
}

// result is Result's work.
func (s *Stack) result(now int64, i int, out Outcome, r *Request, d Draw) {
	if s.throttle != nil && s.accepts.Has(out) {
		s.throttle.Accept(now, of(i, s.throttleGroup))
	}
	if s.limiter != nil {
		s.limiter.Update(now, i, s.throttles.Has(out))
	}
	if s.budget != nil && (out == OK || s.retryOn.Has(out)) {
		s.budget.OnResult(now, of(i, s.budgetGroup), out == OK, r.Charge)
	}
	if s.breakers {
		s.breakerResult(now, i, out, r, d)
	}
}

// BreakerResult gives client i's breaker the result of r's current
// attempt alone: for an attempt the client gave up (its deadline passed)
// or that never left (its connection went away while it was paced).
func (s *Stack) BreakerResult(now int64, i int, out Outcome, r *Request, d Draw) {
	if s.breakers {
		s.breakerResult(now, i, out, r, d)
	}
}

func (s *Stack) breakerResult(now int64, i int, out Outcome, r *Request, d Draw) {
	if s.adaptive != nil {
		s.adaptive.Record(now, of(i, s.adaptiveGroup), s.adFailures.Has(out))
		if s.breaker == nil {
			return
		}
	}
	u := rng.Float64(s.src.Key(rng.Breaker, d.Stream), d.N)
	b, failure := of(i, s.breakerGroup), s.failures.Has(out)
	if s.staleDrop {
		s.breaker.RecordGen(now, b, r.Gen, failure, u) // gobreaker: a late result is ignored
		return
	}
	s.breaker.Record(now, b, failure, u)
}

// Retries reports whether an attempt with outcome out is retried at all
// (when it is not, NextRetry gives up: a caller may skip the call).
func (s *Stack) Retries(out Outcome) bool { return s.retryOn.Has(out) }

// NextRetry decides, at now, what request r of client i does after its
// attempt number r.Attempt ended with outcome out (not OK) and the server's
// retryAfter (0: none; DontRetry: do not retry): retry after delay, or
// give up (not a retryable outcome, no attempts left, the server said
// not to) or the budget refused the retry. A retry is charged to the
// budget here, or, with BudgetConfig.ChargeAtSend, when Admit lets it go
// after its backoff (r.Uncharged until then); the caller still gives up if the retry would start after the
// request's deadline.
func (s *Stack) NextRetry(now int64, i int, out Outcome, retryAfter int64, r *Request, d Draw) (delay int64, v Verdict) {
	if !s.retryOn.Has(out) || r.Attempt >= s.maxAtt || retryAfter == DontRetry {
		return 0, GiveUp
	}
	if s.budget != nil {
		cause := policy.CauseError
		switch out {
		case Timeout:
			cause = policy.CauseTimeout
		case Rejected:
			cause = policy.CauseThrottle // an overload rejection is throttling
		}
		var charge int32
		var ok bool
		if s.sendCharge {
			charge, ok = s.budget.CanRetry(now, of(i, s.budgetGroup), cause)
		} else {
			charge, ok = s.budget.AllowRetry(now, of(i, s.budgetGroup), cause)
		}
		if !ok {
			return 0, BudgetRefused
		}
		r.Charge, r.Uncharged = charge, s.sendCharge
	}
	if s.raMode == ExactlyRetryAfter && retryAfter > 0 {
		// gRPC pushback: retry after exactly the server's delay and start
		// the backoff over.
		r.Backoffs, r.PrevSleep = 0, 0
		return retryAfter, Retry
	}
	u := rng.Float64(s.src.Key(rng.Backoff, d.Stream), d.N)
	delay = s.backoff.DelayAfter(int(r.Backoffs)+1, r.PrevSleep, u, out == Rejected) // a rejection is a throttle
	r.Backoffs++
	r.PrevSleep = delay
	switch s.raMode {
	case ClampedRetryAfter:
		delay = policy.ClampRetryAfter(delay, retryAfter, policy.AWS2026RetryAfterExtra)
	case AtLeastRetryAfter:
		delay = policy.HonorRetryAfter(delay, retryAfter)
	}
	return delay, Retry
}

// Hedger is a stack's hedging: its delay, fixed or the observed quantile
// of the latency of requests answered on their first try.
type Hedger struct {
	delay      int64
	quantile   float64
	minSamples uint64
	cancel     bool
	lat        metrics.Histogram
	seen       uint64 // samples when delay was last recomputed
}

// CancelLoser reports whether the losing copy is cancelled.
func (h *Hedger) CancelLoser() bool { return h.cancel }

// Observe adds the latency of a request answered on its first try, hedged
// or not: with a hedge at its p95, the p95 of this latency is the hedge
// delay itself (the hedge changes only the tail beyond it), so the
// estimate settles where it should.
func (h *Hedger) Observe(lat int64) { h.lat.Add(lat) }

// Delay is the delay before a hedge.
func (h *Hedger) Delay() int64 {
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
