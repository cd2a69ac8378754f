package policy

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Circuit breakers (Nygard, "Release It!"; Fowler, "CircuitBreaker"), with
// the semantics of two reference implementations:
//
//   - sony/gobreaker (gobreaker.go, v2/gobreaker.go): trip on consecutive
//     failures, a fixed open Timeout, half-open admits MaxRequests calls and
//     closes after MaxRequests consecutive successes, any failure reopens.
//     A result counts only in the generation (state period) that admitted
//     the call.
//   - resilience4j (CircuitBreakerStateMachine.java, CircuitBreakerMetrics.java,
//     core/metrics/SlidingTimeWindowMetrics.java, core/IntervalFunction.java):
//     trip when the failure rate over a count- or time-based sliding window
//     reaches a threshold once minimumNumberOfCalls results are in; the wait
//     in open is an IntervalFunction of the number of consecutive opens;
//     half-open admits permittedNumberOfCallsInHalfOpenState calls and
//     decides on their failure rate.
//
// As everywhere in this package, time is explicit (now, int64 ns of virtual
// time, never decreasing per breaker) and randomness is an explicit uniform
// draw u in [0, 1).

// BreakerState is the state of one circuit breaker.
type BreakerState uint8

// Breaker states.
const (
	BreakerClosed   BreakerState = iota // calls pass; outcomes are counted
	BreakerOpen                         // calls are refused until the open period ends
	BreakerHalfOpen                     // a limited number of probe calls pass
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("BreakerState(%d)", uint8(s))
}

// BreakerTrip is the rule that opens a closed breaker.
type BreakerTrip uint8

// Trip rules.
const (
	// TripConsecutive opens after ConsecutiveFailures failures in a row; a
	// success resets the run (gobreaker's Counts.ConsecutiveFailures with
	// its default ReadyToTrip).
	TripConsecutive BreakerTrip = iota
	// TripRate opens when, with at least the minimum number of results in
	// the sliding window, failures/results >= FailureRate (resilience4j).
	TripRate
)

func (t BreakerTrip) String() string {
	switch t {
	case TripConsecutive:
		return "consecutive"
	case TripRate:
		return "rate"
	}
	return fmt.Sprintf("BreakerTrip(%d)", uint8(t))
}

// HalfOpenRule decides how a half-open breaker closes or reopens.
type HalfOpenRule uint8

// Half-open rules.
const (
	// HalfOpenAllSucceed (gobreaker): any failure reopens at once; the
	// breaker closes when HalfOpenProbes successes have been recorded
	// (gobreaker: ConsecutiveSuccesses >= MaxRequests; as one failure
	// reopens, consecutive successes are all the successes).
	HalfOpenAllSucceed HalfOpenRule = iota
	// HalfOpenRate (resilience4j): the probe results go into a count window
	// of HalfOpenProbes calls whose minimum is min(MinCalls, HalfOpenProbes)
	// (MinCalls 0: HalfOpenProbes). When that many results are in, the
	// breaker reopens if failures/results >= FailureRate and closes
	// otherwise. With resilience4j's defaults (10 permits, 100 minimum calls)
	// this decides on all 10 probes: 4 failures close, 5 reopen.
	HalfOpenRate
)

func (r HalfOpenRule) String() string {
	switch r {
	case HalfOpenAllSucceed:
		return "all-succeed"
	case HalfOpenRate:
		return "rate"
	}
	return fmt.Sprintf("HalfOpenRule(%d)", uint8(r))
}

// BreakerConfig is the configuration shared by the breakers of a
// BreakerSet. Durations are in nanoseconds. Fields a rule does not use are
// ignored (the window fields under TripConsecutive, for instance).
type BreakerConfig struct {
	Trip BreakerTrip

	// ConsecutiveFailures (TripConsecutive) is the length of the run of
	// failures that opens the breaker. gobreaker's default ReadyToTrip is
	// "ConsecutiveFailures > 5", which is ConsecutiveFailures = 6 here.
	ConsecutiveFailures int

	// FailureRate (TripRate and HalfOpenRate), in (0, 1]: the breaker opens
	// when failures/results >= FailureRate (resilience4j compares
	// failureRate >= failureRateThreshold; default 50%).
	FailureRate float64
	// MinCalls (TripRate) is resilience4j's minimumNumberOfCalls (default
	// 100): no rate is computed over fewer results. For a count window
	// resilience4j uses min(MinCalls, WindowCalls), and so does this.
	MinCalls int

	// The sliding window of TripRate: set exactly one kind.
	//
	// Count-based: the last WindowCalls results (resilience4j COUNT_BASED,
	// slidingWindowSize default 100).
	WindowCalls int
	// Time-based: WindowBuckets buckets of WindowDuration/WindowBuckets ns.
	// A result at t goes into bucket floor(t/width); at time now the window
	// holds the buckets b > floor(now/width) − WindowBuckets. resilience4j's
	// TIME_BASED window of N seconds is WindowDuration N s, WindowBuckets N.
	WindowDuration int64
	WindowBuckets  int

	// OpenDuration is the open period after a trip (gobreaker Timeout and
	// resilience4j waitDurationInOpenState, both 60 s by default).
	OpenDuration int64
	// OpenBackoff >= 1 multiplies the open period for each consecutive open
	// without a close in between: the k-th open lasts
	// min(MaxOpenDuration, OpenDuration·OpenBackoff^(k−1)), like
	// resilience4j's IntervalFunction.ofExponentialBackoff applied to its
	// attempts count (1 on the trip from closed, +1 per reopen from
	// half-open, back to 1 after a close). 1 means a fixed period. With
	// TruncateMillis the product is resilience4j's, whole milliseconds
	// truncated at every step.
	OpenBackoff float64
	// MaxOpenDuration caps the backed-off period; 0 means no cap.
	MaxOpenDuration int64
	// OpenJitter in [0, 1) multiplies the period by U(1−f, 1+f) so that the
	// probes of many clients do not synchronise. It is applied after the
	// cap, so a capped period still spreads (and may exceed the cap by the
	// fraction). resilience4j's ofExponentialRandomBackoff randomises first
	// and caps after, which piles clients at the cap; this deliberately
	// does not.
	OpenJitter float64

	// HalfOpenProbes >= 1 is the number of calls admitted in one half-open
	// period (gobreaker MaxRequests, where 0 means 1; resilience4j
	// permittedNumberOfCallsInHalfOpenState, default 10). It counts calls
	// admitted, not calls in flight: a probe's result does not free a
	// permit, in either library.
	HalfOpenProbes int
	HalfOpen       HalfOpenRule

	// What the libraries do where throttlesim once chose otherwise. The
	// zero values are those earlier choices; GobreakerDefaults and
	// Resilience4jDefaults set the libraries' behaviour.
	//
	// StrictExpiry: an open breaker turns half-open only at now >
	// OpenUntil, as both libraries compare (gobreaker currentState:
	// expiry.Before(now); resilience4j OpenState: isAfter); at exactly
	// the open timeout it is still open. false: at now >= OpenUntil, so
	// an open period lasts exactly its length.
	StrictExpiry bool
	// TripOnFailuresOnly: under TripRate the rule is consulted after a
	// failure only (gobreaker calls ReadyToTrip in onFailure only). false:
	// after every result, as resilience4j checks the rate after successes
	// too (a success can be the call that reaches the minimum).
	TripOnFailuresOnly bool
	// JitterBeforeCap: the open period is jittered, then capped
	// (resilience4j IntervalFunction.ofExponentialRandomBackoff with a
	// maximum: randomize, then Math.min), so clients pile up at the cap.
	// false: capped, then jittered, so a capped period still spreads.
	JitterBeforeCap bool
	// TruncateMillis: open periods are whole milliseconds, truncated at
	// every step as resilience4j computes them (IntervalFunction works in
	// long milliseconds: Duration.toMillis() of the wait and of the cap,
	// each backoff step (long)(previous × multiplier), the randomised wait
	// (long)). 100 ms × 1.5 is 100, 150, 225, 337, 505, 757 ms, not
	// 100 · 1.5^(k−1) = … 337.5, 506.25, 759.375 ms. OpenDuration must then
	// be at least 1 ms (resilience4j refuses less). false: exact
	// nanoseconds, Open·Backoff^(k−1).
	TruncateMillis bool
	// DropStaleResults tells the caller to record results with RecordGen:
	// a result counts only if the breaker has not changed state since its
	// call was admitted (gobreaker afterRequest: generation != before →
	// return). false: Record, every result goes to the current state
	// (resilience4j). BreakerSet itself does not read it.
	DropStaleResults bool
}

const (
	sec64  = int64(1e9)
	msec64 = int64(1e6)
)

// GobreakerDefaults is sony/gobreaker's NewCircuitBreaker(Settings{}):
// ReadyToTrip "ConsecutiveFailures > 5" (ConsecutiveFailures 6), Timeout
// 60 s, MaxRequests 0 → 1 probe, closing after that probe succeeds; still
// open at exactly the timeout; a custom (rate) trip rule consulted on
// failures only. Not modelled: Interval, the cyclic clearing of the closed
// counts (its default 0 never clears them, as here). gobreaker drops a
// result from an earlier generation: use RecordGen for that.
func GobreakerDefaults() BreakerConfig {
	return BreakerConfig{
		Trip:                TripConsecutive,
		ConsecutiveFailures: 6,
		OpenDuration:        60 * sec64,
		OpenBackoff:         1,
		HalfOpenProbes:      1,
		HalfOpen:            HalfOpenAllSucceed,
		StrictExpiry:        true,
		TripOnFailuresOnly:  true,
		DropStaleResults:    true,
	}
}

// Resilience4jDefaults is resilience4j's CircuitBreakerConfig.ofDefaults():
// failureRateThreshold 50%, COUNT_BASED window of 100 calls,
// minimumNumberOfCalls 100, waitDurationInOpenState 60 s (fixed),
// permittedNumberOfCallsInHalfOpenState 10. Not modelled: the slow-call
// rate (100% of calls slower than 60 s), maxWaitDurationInHalfOpenState
// (0: wait for the probes forever, which is what this does) and the
// automatic open → half-open timer (off by default; here it is lazy).
// Still open at exactly the wait; a backed-off, randomised wait is
// randomised first and capped after; every open period is whole
// milliseconds, truncated at each backoff step (TruncateMillis).
func Resilience4jDefaults() BreakerConfig {
	return BreakerConfig{
		Trip:            TripRate,
		FailureRate:     0.5,
		MinCalls:        100,
		WindowCalls:     100,
		OpenDuration:    60 * sec64,
		OpenBackoff:     1,
		HalfOpenProbes:  10,
		HalfOpen:        HalfOpenRate,
		StrictExpiry:    true,
		JitterBeforeCap: true,
		TruncateMillis:  true,
	}
}

// maxCount bounds the count fields so that they fit the uint32 counters.
const maxCount = math.MaxInt32

// Validate reports every invalid field, one line each.
func (c BreakerConfig) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("breaker: "+format, a...)) }
	needRate := false
	switch c.Trip {
	case TripConsecutive:
		if c.ConsecutiveFailures < 1 || c.ConsecutiveFailures > maxCount {
			bad("consecutive_failures must be in [1, %d], got %d", maxCount, c.ConsecutiveFailures)
		}
	case TripRate:
		needRate = true
		if c.MinCalls < 1 || c.MinCalls > maxCount {
			bad("min_calls must be in [1, %d], got %d", maxCount, c.MinCalls)
		}
		count, timed := c.WindowCalls != 0, c.WindowDuration != 0 || c.WindowBuckets != 0
		switch {
		case count && timed:
			bad("set window_calls or window_duration/window_buckets, not both")
		case count:
			if c.WindowCalls < 1 || c.WindowCalls > maxCount {
				bad("window_calls must be in [1, %d], got %d", maxCount, c.WindowCalls)
			}
		case timed:
			if c.WindowBuckets < 1 || c.WindowBuckets > maxCount {
				bad("window_buckets must be in [1, %d], got %d", maxCount, c.WindowBuckets)
			}
			if c.WindowDuration <= 0 {
				bad("window_duration must be > 0, got %d ns", c.WindowDuration)
			} else if c.WindowBuckets >= 1 && c.WindowDuration%int64(c.WindowBuckets) != 0 {
				bad("window_duration (%d ns) must be a multiple of window_buckets (%d)", c.WindowDuration, c.WindowBuckets)
			}
		default:
			bad("trip rule rate needs a window: set window_calls or window_duration and window_buckets")
		}
	default:
		bad("unknown trip rule %d", c.Trip)
	}
	switch c.HalfOpen {
	case HalfOpenAllSucceed:
	case HalfOpenRate:
		needRate = true
		if c.Trip != TripRate && c.MinCalls < 0 {
			bad("min_calls must be >= 0, got %d", c.MinCalls)
		}
	default:
		bad("unknown half-open rule %d", c.HalfOpen)
	}
	if needRate && !(c.FailureRate > 0 && c.FailureRate <= 1) {
		bad("failure_rate must be in (0, 1], got %v", c.FailureRate)
	}
	if c.OpenDuration <= 0 {
		bad("open_duration must be > 0, got %d ns", c.OpenDuration)
	} else if c.TruncateMillis && c.OpenDuration < msec64 {
		bad("open_duration must be at least 1ms when open periods are whole milliseconds (resilience4j), got %d ns", c.OpenDuration)
	}
	if !(c.OpenBackoff >= 1) || math.IsInf(c.OpenBackoff, 1) {
		bad("open_backoff must be a finite number >= 1 (1: no backoff), got %v", c.OpenBackoff)
	}
	if c.MaxOpenDuration < 0 || (c.MaxOpenDuration > 0 && c.MaxOpenDuration < c.OpenDuration) {
		bad("max_open_duration must be 0 (no cap) or >= open_duration (%d ns), got %d ns", c.OpenDuration, c.MaxOpenDuration)
	}
	if !(c.OpenJitter >= 0 && c.OpenJitter < 1) {
		bad("open_jitter must be in [0, 1), got %v", c.OpenJitter)
	}
	if c.HalfOpenProbes < 1 || c.HalfOpenProbes > maxCount {
		bad("half_open_probes must be in [1, %d], got %d", maxCount, c.HalfOpenProbes)
	}
	return errors.Join(errs...)
}

// maxOpenPeriod bounds an uncapped backed-off period (2^61 ns ≈ 73 years)
// so that now + period cannot overflow in any sensible run.
const maxOpenPeriod = float64(1 << 61)

// OpenPeriod is the length of the opens-th consecutive open period
// (opens >= 1: 1 for a trip from closed, +1 for each reopen from half-open)
// given the uniform draw u for the jitter:
//
//	min(Max, B(opens)) · (1 + Jitter·(2u − 1))     (cap, then jitter)
//	min(Max, B(opens) · (1 + Jitter·(2u − 1)))     (JitterBeforeCap)
//
// where the backed-off period B(k) is Open·Backoff^(k−1) exactly or, with
// TruncateMillis, resilience4j's per-step truncation in whole milliseconds:
// B(1) = ⌊Open⌋ms, B(k) = ⌊B(k−1)·Backoff⌋ms; the cap is then ⌊Max⌋ms and
// the jittered period is truncated to whole milliseconds too.
//
//	Open 1s, Backoff 2, Max 5s:  opens 1 → 1s, 2 → 2s, 3 → 4s, 4 → 5s, 5 → 5s
//	Open 10s, Jitter 0.2:        u = 0 → 8s, 0.5 → 10s, 0.75 → 11s, → 12s
//	Open 10s, Jitter 0.2, Max 10s, JitterBeforeCap: u = 0 → 8s, 0.5 → 10s, 0.75 → 10s
//	Open 100ms, Backoff 1.5, TruncateMillis: 100, 150, 225, 337, 505, 757 ms
func (c BreakerConfig) OpenPeriod(opens int, u float64) int64 {
	maxD := float64(c.MaxOpenDuration)
	if c.TruncateMillis {
		maxD = float64(c.MaxOpenDuration / msec64 * msec64)
	}
	d := c.backedOff(opens, maxD)
	capped := func() {
		if c.MaxOpenDuration > 0 && d > maxD {
			d = maxD
		}
		if d > maxOpenPeriod {
			d = maxOpenPeriod
		}
	}
	if !c.JitterBeforeCap {
		capped()
	} else if d > maxOpenPeriod {
		d = maxOpenPeriod
	}
	if c.OpenJitter > 0 {
		// The explicit conversion keeps the product from being fused into
		// the addition (FMA), so amd64 and arm64 round alike.
		d *= 1 + float64(c.OpenJitter*(2*u-1))
	}
	if c.JitterBeforeCap {
		capped()
	}
	if c.TruncateMillis {
		return int64(d) / msec64 * msec64 // the randomised wait, (long) in ms
	}
	return int64(d)
}

// backedOff is B(opens) of OpenPeriod in nanoseconds, before cap and
// jitter; maxD is the cap OpenPeriod applies (whole milliseconds with
// TruncateMillis).
func (c BreakerConfig) backedOff(opens int, maxD float64) float64 {
	if !c.TruncateMillis {
		d := float64(c.OpenDuration)
		if c.OpenBackoff > 1 && opens > 1 {
			d *= math.Pow(c.OpenBackoff, float64(opens-1))
		}
		return d
	}
	// resilience4j: LongStream.iterate(initial, x -> (long) (x * multiplier)).
	// Milliseconds below 2^53 are exact in a float64, and the product is
	// the same IEEE double multiplication as Java's, so the truncation
	// matches. The steps stop once the period can no longer change the
	// result: past the bound maxOpenPeriod, at the cap (or at cap/(1−jitter)
	// when the jitter comes before the cap), or at a fixed point
	// (⌊x·Backoff⌋ = x, which a multiplier close to 1 reaches at once).
	ms := float64(c.OpenDuration / msec64)
	stop := maxOpenPeriod / float64(msec64)
	if c.MaxOpenDuration > 0 {
		lim := maxD / float64(msec64)
		if c.JitterBeforeCap && c.OpenJitter > 0 {
			lim /= 1 - c.OpenJitter
		}
		stop = math.Min(stop, lim)
	}
	for k := 1; k < opens && c.OpenBackoff > 1 && ms < stop; k++ {
		next := math.Floor(ms * c.OpenBackoff)
		if next == ms {
			break
		}
		ms = next
	}
	return ms * float64(msec64)
}

// BreakerSet holds n circuit breakers that share one BreakerConfig, as
// flat per-field slices (a struct of arrays): a million breakers are a
// dozen slices, not a million objects. Breaker i is addressed by its index.
//
// The state machine of each breaker:
//
//   - Closed: Allow admits every call. Record counts the outcome (a run of
//     failures, or the sliding window) and trips to Open per Trip; under
//     TripRate the rate is checked after every result, successes too, as
//     resilience4j does (a success can be the call that reaches the
//     minimum), or after failures only with TripOnFailuresOnly (gobreaker).
//   - Open until OpenUntil: Allow refuses. The move to HalfOpen is lazy, as
//     in gobreaker and in resilience4j without its optional timer: it
//     happens in Allow or State at a time now >= OpenUntil, or now >
//     OpenUntil with StrictExpiry (both libraries compare strictly; their
//     presets set it). The open period is OpenPeriod: backed off per
//     OpenBackoff, capped, then jittered — or jittered, then capped, with
//     JitterBeforeCap (resilience4j). Results recorded while Open — calls admitted
//     before the trip — change nothing (gobreaker drops them by
//     generation; resilience4j counts them only in the open state's
//     metrics, which never trip anything).
//   - HalfOpen: Allow admits HalfOpenProbes calls in all, then refuses;
//     Record closes or reopens per HalfOpen.
//
// Counts reset at every state change: the closed counts on entering
// Closed, the half-open counts on entering HalfOpen. A reopen lengthens the
// open period per OpenBackoff; a close resets that count.
//
// Which results count in half-open: Record gives a result to the breaker's
// current state, as resilience4j does, so a call admitted while closed
// whose result arrives in half-open counts as a probe result. RecordGen
// implements gobreaker's rule instead: a result counts only if no state
// change happened since its call was admitted. Which of the two is used is
// the caller's choice (BreakerConfig.DropStaleResults tells it; the
// BreakerSet does not read that field).
//
// Calls refused by Allow must not be recorded (neither library counts
// them). Time must not go backwards for any one breaker, and must be >= 0.
// Nothing allocates after NewBreakerSet.
type BreakerSet struct {
	cfg BreakerConfig

	consecMax, probes, minCalls, hoMin uint32
	winCalls                           uint32 // count window size
	stride                             int    // count window: uint64 words per breaker
	width                              int64  // time window: bucket width
	nb                                 int    // time window: buckets per breaker

	state     []BreakerState
	gen       []uint32 // incremented at every state change
	opens     []uint32 // consecutive opens since the last close
	openUntil []int64
	hoAdmit   []uint32 // half-open: calls admitted
	hoRes     []uint32 // half-open: results recorded
	hoFail    []uint32 // half-open: failures among them

	consec []uint32 // TripConsecutive: the current run of failures

	calls, fails []uint32 // TripRate: results and failures in the window
	head         []uint32 // count window: next slot of the ring
	bits         []uint64 // count window: ring of outcome bits (1 = failure), stride words per breaker
	last         []int64  // time window: bucket of the latest advance
	bkt          []uint32 // time window: (results, failures) per bucket, 2·nb per breaker
}

// NewBreakerSet makes n closed breakers with configuration c. A zero
// OpenDuration, OpenBackoff or HalfOpenProbes, and with the consecutive
// trip rule a zero ConsecutiveFailures, takes gobreaker's value
// (GobreakerDefaults); a configuration that fails Validate is an error.
func NewBreakerSet(n int, c BreakerConfig) (*BreakerSet, error) {
	if n < 0 {
		return nil, fmt.Errorf("breaker: number of breakers must be >= 0, got %d", n)
	}
	d := GobreakerDefaults()
	if c.OpenDuration == 0 {
		c.OpenDuration = d.OpenDuration
	}
	if c.OpenBackoff == 0 {
		c.OpenBackoff = d.OpenBackoff
	}
	if c.HalfOpenProbes == 0 {
		c.HalfOpenProbes = d.HalfOpenProbes
	}
	if c.Trip == TripConsecutive && c.ConsecutiveFailures == 0 {
		c.ConsecutiveFailures = d.ConsecutiveFailures
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &BreakerSet{
		cfg:       c,
		probes:    uint32(c.HalfOpenProbes),
		state:     make([]BreakerState, n),
		gen:       make([]uint32, n),
		opens:     make([]uint32, n),
		openUntil: make([]int64, n),
		hoAdmit:   make([]uint32, n),
		hoRes:     make([]uint32, n),
		hoFail:    make([]uint32, n),
	}
	s.hoMin = s.probes
	if c.HalfOpen == HalfOpenRate && c.MinCalls > 0 && c.MinCalls < c.HalfOpenProbes {
		s.hoMin = uint32(c.MinCalls) // resilience4j CircuitBreakerMetrics.forHalfOpen
	}
	switch c.Trip {
	case TripConsecutive:
		s.consecMax = uint32(c.ConsecutiveFailures)
		s.consec = make([]uint32, n)
	case TripRate:
		s.calls = make([]uint32, n)
		s.fails = make([]uint32, n)
		s.minCalls = uint32(c.MinCalls)
		if c.WindowCalls > 0 {
			s.winCalls = uint32(c.WindowCalls)
			s.minCalls = min(s.minCalls, s.winCalls) // resilience4j: min(minimumNumberOfCalls, slidingWindowSize)
			s.stride = (c.WindowCalls + 63) / 64
			s.head = make([]uint32, n)
			s.bits = make([]uint64, n*s.stride)
		} else {
			s.nb = c.WindowBuckets
			s.width = c.WindowDuration / int64(c.WindowBuckets)
			s.last = make([]int64, n)
			s.bkt = make([]uint32, 2*n*s.nb)
		}
	}
	return s, nil
}

// Len is the number of breakers.
func (s *BreakerSet) Len() int { return len(s.state) }

// Config is the configuration the set was made with.
func (s *BreakerSet) Config() BreakerConfig { return s.cfg }

// Allow reports whether breaker i admits a call at time now, and counts
// the call if it is a half-open probe.
func (s *BreakerSet) Allow(now int64, i int) bool {
	switch s.state[i] {
	case BreakerClosed:
		return true
	case BreakerOpen:
		if s.stillOpen(i, now) {
			return false
		}
		s.toHalfOpen(i)
	}
	if s.hoAdmit[i] >= s.probes {
		return false
	}
	s.hoAdmit[i]++
	return true
}

// State is breaker i's state at time now (moving an expired Open breaker
// to HalfOpen, as gobreaker's State does).
func (s *BreakerSet) State(now int64, i int) BreakerState {
	if s.state[i] == BreakerOpen && !s.stillOpen(i, now) {
		s.toHalfOpen(i)
	}
	return s.state[i]
}

// stillOpen: breaker i (Open) refuses at now.
func (s *BreakerSet) stillOpen(i int, now int64) bool {
	return now < s.openUntil[i] || (s.cfg.StrictExpiry && now == s.openUntil[i])
}

// OpenUntil is the end of breaker i's latest open period: while it is Open,
// the time from which it admits probes.
func (s *BreakerSet) OpenUntil(i int) int64 { return s.openUntil[i] }

// Generation is breaker i's state-change counter. Read it right after an
// Allow that admitted a call and pass it to RecordGen with the call's
// result to get gobreaker's rule.
func (s *BreakerSet) Generation(i int) uint32 { return s.gen[i] }

// Record records the result of a call that breaker i admitted, at time
// now. u is the uniform draw for the open-period jitter, used only if this
// result opens the breaker (a trip from Closed or a reopen from HalfOpen).
func (s *BreakerSet) Record(now int64, i int, failure bool, u float64) {
	switch s.state[i] {
	case BreakerClosed:
		if s.cfg.Trip == TripConsecutive {
			if !failure {
				s.consec[i] = 0
				return
			}
			s.consec[i]++
			if s.consec[i] >= s.consecMax {
				s.toOpen(i, now, u)
			}
			return
		}
		if s.winCalls > 0 {
			s.pushCount(i, failure)
		} else {
			s.pushTime(i, now, failure)
		}
		if s.cfg.TripOnFailuresOnly && !failure {
			return
		}
		if n := s.calls[i]; n >= s.minCalls && rateReached(s.fails[i], n, s.cfg.FailureRate) {
			s.toOpen(i, now, u)
		}
	case BreakerHalfOpen:
		s.hoRes[i]++
		if failure {
			s.hoFail[i]++
		}
		if s.cfg.HalfOpen == HalfOpenAllSucceed {
			if failure {
				s.toOpen(i, now, u)
			} else if s.hoRes[i] >= s.probes {
				s.toClosed(i, now)
			}
			return
		}
		if s.hoRes[i] >= s.hoMin {
			if rateReached(s.hoFail[i], s.hoRes[i], s.cfg.FailureRate) {
				s.toOpen(i, now, u)
			} else {
				s.toClosed(i, now)
			}
		}
	}
}

// RecordGen is Record with gobreaker's generation rule: the result is
// dropped, and false returned, if breaker i changed state since the call
// was admitted (gen is Generation(i) read at admission).
func (s *BreakerSet) RecordGen(now int64, i int, gen uint32, failure bool, u float64) bool {
	if gen != s.gen[i] {
		return false
	}
	s.Record(now, i, failure, u)
	return true
}

// WindowCounts is the number of results and of failures in breaker i's
// sliding window at time now (TripRate; 0, 0 otherwise or when not Closed
// — the window restarts empty at every close).
func (s *BreakerSet) WindowCounts(now int64, i int) (results, failures int) {
	if s.cfg.Trip != TripRate || s.state[i] != BreakerClosed {
		return 0, 0
	}
	if s.winCalls == 0 {
		s.advance(i, now)
	}
	return int(s.calls[i]), int(s.fails[i])
}

// Bytes is the memory held by the set.
func (s *BreakerSet) Bytes() int {
	u32 := len(s.gen) + len(s.opens) + len(s.hoAdmit) + len(s.hoRes) + len(s.hoFail) +
		len(s.consec) + len(s.calls) + len(s.fails) + len(s.head) + len(s.bkt)
	u64 := len(s.openUntil) + len(s.bits) + len(s.last)
	return int(unsafe.Sizeof(*s)) + len(s.state) + 4*u32 + 8*u64
}

// rateReached is failures/results >= rate, resilience4j's
// "failureRate >= failureRateThreshold". Division, not multiplication,
// so that a ratio equal to a decimal threshold (5/10 and 0.5, 3/10 and
// 0.3) compares equal: both round to the same double.
func rateReached(failures, results uint32, rate float64) bool {
	return float64(failures)/float64(results) >= rate
}

func (s *BreakerSet) toOpen(i int, now int64, u float64) {
	if s.opens[i] < math.MaxUint32 {
		s.opens[i]++
	}
	s.state[i] = BreakerOpen
	s.gen[i]++
	s.openUntil[i] = now + s.cfg.OpenPeriod(int(s.opens[i]), u)
}

func (s *BreakerSet) toHalfOpen(i int) {
	s.state[i] = BreakerHalfOpen
	s.gen[i]++
	s.hoAdmit[i], s.hoRes[i], s.hoFail[i] = 0, 0, 0
}

func (s *BreakerSet) toClosed(i int, now int64) {
	s.state[i] = BreakerClosed
	s.gen[i]++
	s.opens[i] = 0
	switch {
	case s.cfg.Trip == TripConsecutive:
		s.consec[i] = 0
	case s.winCalls > 0:
		// The old bits may stay: a slot is read only once the ring is
		// full again, and by then every slot has been rewritten.
		s.calls[i], s.fails[i], s.head[i] = 0, 0, 0
	default:
		s.calls[i], s.fails[i] = 0, 0
		clear(s.bkt[2*i*s.nb : 2*(i+1)*s.nb])
		s.last[i] = max(s.last[i], now/s.width)
	}
}

// pushCount adds one outcome to breaker i's ring of the last WindowCalls
// outcomes (resilience4j FixedSizeSlidingWindowMetrics): once the ring is
// full, the oldest outcome falls out.
func (s *BreakerSet) pushCount(i int, failure bool) {
	pos := s.head[i]
	w := &s.bits[i*s.stride+int(pos>>6)]
	bit := uint64(1) << (pos & 63)
	if s.calls[i] == s.winCalls {
		if *w&bit != 0 {
			s.fails[i]--
		}
	} else {
		s.calls[i]++
	}
	if failure {
		*w |= bit
		s.fails[i]++
	} else {
		*w &^= bit
	}
	if pos++; pos == s.winCalls {
		pos = 0
	}
	s.head[i] = pos
}

// advance expires the buckets of breaker i that have left the window at
// time now (resilience4j SlidingTimeWindowMetrics.moveWindowToCurrentEpochSecond:
// subtract each evicted bucket from the totals, at most nb of them).
func (s *BreakerSet) advance(i int, now int64) {
	b, last := now/s.width, s.last[i]
	if b <= last {
		return
	}
	base, nb := 2*i*s.nb, int64(s.nb)
	if b-last >= nb {
		clear(s.bkt[base : base+2*s.nb])
		s.calls[i], s.fails[i] = 0, 0
	} else {
		for k := last + 1; k <= b; k++ {
			j := base + 2*int(k%nb)
			s.calls[i] -= s.bkt[j]
			s.fails[i] -= s.bkt[j+1]
			s.bkt[j], s.bkt[j+1] = 0, 0
		}
	}
	s.last[i] = b
}

func (s *BreakerSet) pushTime(i int, now int64, failure bool) {
	s.advance(i, now)
	j := 2*i*s.nb + 2*int(s.last[i]%int64(s.nb))
	s.bkt[j]++
	s.calls[i]++
	if failure {
		s.bkt[j+1]++
		s.fails[i]++
	}
}
