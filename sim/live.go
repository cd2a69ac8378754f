package sim

import (
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// This file exports, for live mode (live/client, live/server, live), the
// request-policy stack that buildStack builds, the backend's service-time
// sampler and the clients' arrival times: code outside the simulator runs
// the same policies, draws and arrivals against the wall clock. It adds no
// second implementation: each export calls the simulator's own code.

// Outcome is an attempt's outcome as a client sees it, in the order and
// with the names the scenario's outcome lists use (retry_on,
// accept_outcomes, failure_outcomes, throttle_outcomes).
type Outcome uint8

// Attempt outcomes.
const (
	OutcomeOK          = Outcome(outOK)          // "ok": an answer the client takes as success
	OutcomeRejected    = Outcome(outRejected)    // "rejected": the server refused it as overloaded (HTTP 429, 503)
	OutcomeUnavailable = Outcome(outUnavailable) // "unavailable": the server could not be reached (refused, reset)
	OutcomeTimeout     = Outcome(outTimeout)     // "timeout": the client gave up waiting
	OutcomeError       = Outcome(outError)       // "error": the server answered with an error
)

// String is the outcome's scenario name.
func (o Outcome) String() string {
	if uint8(o) < numOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// OutcomeSet is a set of outcomes, as a scenario outcome list builds it.
type OutcomeSet uint8

// Has reports whether o is in the set.
func (s OutcomeSet) Has(o Outcome) bool { return s&(1<<o) != 0 }

// Stack is the request-policy stack of one client group, built from the
// scenario exactly as a simulation builds it. Policy instances are indexed
// by the client's position in the group, divided by the policy's group
// size (ThrottleGroup, BudgetGroup, BreakerGroup). The policies are not
// safe for concurrent use.
type Stack struct {
	Name    string
	Clients int
	// Timeout is the per-attempt timeout and Deadline the overall
	// per-request deadline, in nanoseconds; 0: none.
	Timeout, Deadline int64
	// MaxAttempts is 1 without a retry policy.
	MaxAttempts int

	Throttle        *policy.Throttle // nil: no throttle
	ThrottleGroup   int              // clients per throttle
	ThrottleAccepts OutcomeSet       // outcomes that count as accepts

	RetryOn         OutcomeSet
	Backoff         policy.Backoff
	HonorRetryAfter bool
	ExactRetryAfter bool // gRPC pushback: retry after exactly the server's delay
	ClampRetryAfter bool // AWS 2026: the hint clamped to [backoff, backoff + 5 s]

	Budget      *policy.BudgetSet // nil: no retry budget
	BudgetGroup int

	Breaker         *policy.BreakerSet // nil: no breaker
	BreakerGroup    int
	BreakerFailures OutcomeSet
	StaleDrop       bool // record breaker results by generation (gobreaker)

	Limiter          *policy.Adaptive // nil: no rate limiter
	LimiterThrottles OutcomeSet

	// Hedge is true when the group hedges; hedging is built by the
	// simulator's event loop and has no state machine here.
	Hedge bool
}

// BuildStack builds the request-policy stack of client group g (one of
// scenario.Clients.ResolvedGroups) with the simulator's own builder; src
// names the throttle's random draws (Throttle.Allow's stream and counter).
func BuildStack(g scenario.GroupSpec, src rng.Source) (*Stack, error) {
	p, err := buildStack(g, &src) // its own copy: a live stack never branches
	if err != nil {
		return nil, err
	}
	return &Stack{
		Name: p.name, Clients: int(p.n),
		Timeout: p.timeout, Deadline: p.deadline, MaxAttempts: int(p.maxAtt),
		Throttle: p.throttle, ThrottleGroup: max(int(p.groupSize), 1), ThrottleAccepts: OutcomeSet(p.acceptMask),
		RetryOn: OutcomeSet(p.retryMask), Backoff: p.backoff,
		HonorRetryAfter: p.honorRA, ExactRetryAfter: p.exactRA, ClampRetryAfter: p.clampRA,
		Budget: p.budget, BudgetGroup: max(int(p.budgetGroup), 1),
		Breaker: p.breaker, BreakerGroup: max(int(p.breakerGroup), 1), BreakerFailures: OutcomeSet(p.breakerMask), StaleDrop: p.staleDrop,
		Limiter: p.limiter, LimiterThrottles: OutcomeSet(p.limiterMask),
		Hedge: p.hedge != nil,
	}, nil
}

// Arrivals gives the arrival times of a scenario's application requests
// exactly as a simulation with the same seed draws them (startup, arrival
// process, load profile), for a live run that wants the simulation's
// arrivals (common random numbers between the two).
type Arrivals struct{ m *model }

// NewArrivals builds the arrival process of sc (valid) with seed.
func NewArrivals(sc *scenario.Scenario, seed uint64) (*Arrivals, error) {
	m, err := newModel(sc, seed)
	if err != nil {
		return nil, err
	}
	return &Arrivals{m: m}, nil
}

// First is client c's first arrival at or after its start: its time in ns
// and its ordinal (the number of arrivals its startup skipped), as the
// simulation's start schedules it. at >= the scenario's duration: none.
func (a *Arrivals) First(c int) (at int64, n uint32) {
	m := a.m
	start := m.startTime(uint32(c))
	t := m.firstArrival(uint32(c))
	if m.cl.once || m.cl.atStart {
		t = start
	}
	for t < start {
		n++
		t = m.nextArrival(uint32(c), n, t)
	}
	return t, n
}

// Next is the time of client c's arrival n+1, after its arrival n at t
// (math.MaxInt64: none).
func (a *Arrivals) Next(c int, n uint32, t int64) int64 {
	return a.m.nextArrival(uint32(c), n+1, t)
}
