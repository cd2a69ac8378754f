package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Step tables: each step happens at a fixed virtual time; after it, the
// breaker's State at that time must be want and, if until != 0, its
// OpenUntil must be until.
type brOp uint8

const (
	opLook   brOp = iota // only check the state
	opAllow              // Allow must admit the call
	opRefuse             // Allow must refuse the call
	opOK                 // Record a success
	opFail               // Record a failure
)

func (o brOp) String() string { return [...]string{"look", "allow", "refuse", "ok", "fail"}[o] }

type brStep struct {
	at    int64
	op    brOp
	want  BreakerState
	until int64
}

// brSeq is n steps op at t0, t0+dt, ..., all expecting want.
func brSeq(op brOp, t0, dt int64, n int, want BreakerState) []brStep {
	st := make([]brStep, n)
	for k := range st {
		st[k] = brStep{at: t0 + int64(k)*dt, op: op, want: want}
	}
	return st
}

func brCat(parts ...[]brStep) []brStep {
	var all []brStep
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func runBreakerSteps(t *testing.T, s *BreakerSet, i int, steps []brStep) {
	t.Helper()
	for k, st := range steps {
		switch st.op {
		case opAllow, opRefuse:
			if got := s.Allow(st.at, i); got != (st.op == opAllow) {
				t.Fatalf("step %d (t=%v %v): Allow = %v", k, time.Duration(st.at), st.op, got)
			}
		case opOK, opFail:
			s.Record(st.at, i, st.op == opFail, 0.5)
		}
		if got := s.State(st.at, i); got != st.want {
			t.Fatalf("step %d (t=%v %v): state %v, want %v", k, time.Duration(st.at), st.op, got, st.want)
		}
		if st.until != 0 && s.OpenUntil(i) != st.until {
			t.Fatalf("step %d (t=%v %v): open until %v, want %v", k, time.Duration(st.at), st.op, time.Duration(s.OpenUntil(i)), time.Duration(st.until))
		}
	}
}

func mustBreakerSet(t testing.TB, n int, c BreakerConfig) *BreakerSet {
	t.Helper()
	s, err := NewBreakerSet(n, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	bClosed   = BreakerClosed
	bOpen     = BreakerOpen
	bHalfOpen = BreakerHalfOpen
)

// gobreaker's default ReadyToTrip is ConsecutiveFailures > 5: the sixth
// failure in a row trips, at exactly the threshold of 6; a success resets
// the run (Counts.onSuccess sets ConsecutiveFailures = 0). Timeout 60 s.
func TestBreakerConsecutiveTrip(t *testing.T) {
	t.Run("sixth failure trips", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, GobreakerDefaults()), 0, brCat(
			brSeq(opFail, 1*sec, sec, 5, bClosed), // 1..5 s: 5 failures, not > 5
			[]brStep{
				{6 * sec, opFail, bOpen, 66 * sec}, // 6 > 5: open for 60 s
				{6 * sec, opRefuse, bOpen, 0},
			}))
	})
	t.Run("a success resets the run", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, GobreakerDefaults()), 0, brCat(
			brSeq(opFail, 1*sec, sec, 5, bClosed),
			[]brStep{{6 * sec, opOK, bClosed, 0}},
			brSeq(opFail, 7*sec, sec, 5, bClosed), // 7..11 s: a new run of 5
			[]brStep{{12 * sec, opFail, bOpen, 72 * sec}},
		))
	})
}

// Open refuses every call until openUntil; the move to half-open is lazy
// (gobreaker currentState, resilience4j OpenState.tryAcquirePermission):
// it happens when asked at a time > openUntil (gobreaker:
// expiry.Before(now), so at exactly the timeout it is still open; v2/
// gobreaker.go), and gobreaker's half-open admits MaxRequests = 1 probe,
// whose success closes.
func TestBreakerOpenThenLazyHalfOpen(t *testing.T) {
	s := mustBreakerSet(t, 2, GobreakerDefaults())
	runBreakerSteps(t, s, 0, brCat(
		brSeq(opFail, 1*sec, sec, 5, bClosed),
		[]brStep{
			{6 * sec, opFail, bOpen, 66 * sec},
			{30 * sec, opRefuse, bOpen, 0},
			{66*sec - 1, opRefuse, bOpen, 0},     // one nanosecond early
			{66 * sec, opRefuse, bOpen, 0},       // exactly at the timeout: still open
			{66*sec + 1, opLook, bHalfOpen, 0},   // State makes the move
			{66*sec + 1, opAllow, bHalfOpen, 0},  // the one probe
			{66*sec + 1, opRefuse, bHalfOpen, 0}, //
			{67 * sec, opOK, bClosed, 0},         // 1 consecutive success >= MaxRequests
			{67 * sec, opAllow, bClosed, 0},
		}))

	// Lazy: with nobody asking, breaker 1 stays stored as open however
	// late it is; the first Allow after openUntil moves it and is the probe.
	for k := int64(1); k <= 6; k++ {
		s.Record(k*sec, 1, true, 0.5)
	}
	if s.state[1] != bOpen {
		t.Fatalf("stored state %v, want open", s.state[1])
	}
	if !s.Allow(66*sec+1, 1) || s.state[1] != bHalfOpen {
		t.Fatalf("Allow after openUntil: state %v, want an admitted probe in half-open", s.state[1])
	}
}

// throttlesim's earlier rule, kept as StrictExpiry = false: half-open at
// exactly openUntil, so an open period lasts exactly its length.
func TestBreakerInclusiveExpiry(t *testing.T) {
	c := GobreakerDefaults()
	c.StrictExpiry = false
	runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(
		brSeq(opFail, 1*sec, sec, 5, bClosed),
		[]brStep{
			{6 * sec, opFail, bOpen, 66 * sec},
			{66*sec - 1, opRefuse, bOpen, 0},
			{66 * sec, opLook, bHalfOpen, 0},
			{66 * sec, opAllow, bHalfOpen, 0},
		}))
}

// Half-open admits exactly HalfOpenProbes calls in all: gobreaker refuses
// once counts.Requests >= MaxRequests, resilience4j once its
// permittedNumberOfCalls counter is 0; neither gives a permit back when a
// probe's result comes in. Under gobreaker's rule the breaker closes after
// MaxRequests successes and reopens on the first failure; a probe result
// arriving after the reopen changes nothing.
func TestBreakerHalfOpenProbesAllSucceed(t *testing.T) {
	c := GobreakerDefaults()
	c.StrictExpiry = false // probes at exactly openUntil keep the step times round (TestBreakerOpenThenLazyHalfOpen covers the strict rule)
	c.ConsecutiveFailures = 1
	c.HalfOpenProbes = 3
	runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(
		[]brStep{{0, opFail, bOpen, 60 * sec}},
		brSeq(opAllow, 60*sec, 0, 3, bHalfOpen),
		[]brStep{
			{60 * sec, opRefuse, bHalfOpen, 0}, // a 4th call
			{61 * sec, opOK, bHalfOpen, 0},
			{61 * sec, opRefuse, bHalfOpen, 0}, // a result does not free a permit
			{62 * sec, opOK, bHalfOpen, 0},
			{63 * sec, opOK, bClosed, 0}, // 3 successes: close
			// Reopen on one failure:
			{64 * sec, opFail, bOpen, 124 * sec}, // a fresh trip: 60 s again
		},
		brSeq(opAllow, 124*sec, 0, 3, bHalfOpen),
		[]brStep{
			{125 * sec, opOK, bHalfOpen, 0},
			{126 * sec, opFail, bOpen, 186 * sec},
			{127 * sec, opOK, bOpen, 186 * sec}, // the third probe's late result: ignored
			{186*sec - 1, opRefuse, bOpen, 0},
			{186 * sec, opLook, bHalfOpen, 0},
		}))
}

// resilience4j's half-open state records the probes in a count window of
// permittedNumberOfCallsInHalfOpenState (10) calls whose minimum is
// min(minimumNumberOfCalls, 10); at the minimum it reopens if the failure
// rate is >= the threshold (50%) and closes otherwise
// (HalfOpenState.checkIfThresholdsExceeded). Failures come first here to
// show that one failure does not reopen, unlike gobreaker.
func TestBreakerHalfOpenRate(t *testing.T) {
	c := Resilience4jDefaults()
	c.StrictExpiry = false             // probes at exactly openUntil keep the step times round (TestBreakerOpenThenLazyHalfOpen covers the strict rule)
	c.MinCalls, c.WindowCalls = 10, 10 // trip after 10 calls, not 100
	trip := brCat(
		brSeq(opFail, 1*sec, sec, 9, bClosed), // 9 results < the minimum 10
		[]brStep{{10 * sec, opFail, bOpen, 70 * sec}},
		brSeq(opAllow, 70*sec, 0, 10, bHalfOpen),
		[]brStep{{70 * sec, opRefuse, bHalfOpen, 0}}, // an 11th call
	)
	t.Run("4 of 10 fail: 40% < 50% closes", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(trip,
			brSeq(opFail, 71*sec, sec, 4, bHalfOpen), // 71..74 s
			brSeq(opOK, 75*sec, sec, 5, bHalfOpen),   // 75..79 s: 9 results
			[]brStep{{80 * sec, opOK, bClosed, 0}},   // the 10th
		))
	})
	t.Run("5 of 10 fail: 50% >= 50% reopens", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(trip,
			brSeq(opFail, 71*sec, sec, 5, bHalfOpen),
			brSeq(opOK, 76*sec, sec, 4, bHalfOpen),
			[]brStep{{80 * sec, opOK, bOpen, 140 * sec}},
		))
	})
	// With minimumNumberOfCalls 5 < 10 permits, resilience4j decides after
	// 5 probe results: 1 failure in 5 is 20%, so it closes.
	t.Run("minimum 5: decides after 5 results", func(t *testing.T) {
		c5 := c
		c5.MinCalls = 5
		runBreakerSteps(t, mustBreakerSet(t, 1, c5), 0, brCat(
			brSeq(opFail, 1*sec, sec, 4, bClosed),
			[]brStep{{5 * sec, opFail, bOpen, 65 * sec}}, // min(5, 10) = 5 results
			brSeq(opAllow, 65*sec, 0, 10, bHalfOpen),
			[]brStep{{66 * sec, opFail, bHalfOpen, 0}},
			brSeq(opOK, 67*sec, sec, 3, bHalfOpen),
			[]brStep{{70 * sec, opOK, bClosed, 0}},
		))
	})
}

// resilience4j computes no failure rate below minimumNumberOfCalls
// (CircuitBreakerMetrics.getFailureRate returns −1), and checks the
// thresholds after every result, successes included
// (ClosedState.onSuccess), so a success can be the call that trips.
func TestBreakerRateTripMinCalls(t *testing.T) {
	c := Resilience4jDefaults()
	c.MinCalls, c.WindowCalls = 10, 20
	t.Run("nothing before 10 results", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(
			brSeq(opFail, 1*sec, sec, 9, bClosed), // 9 failures of 9: 100%, but 9 < 10
			[]brStep{{10 * sec, opFail, bOpen, 70 * sec}},
		))
	})
	t.Run("a success reaches the minimum and trips", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(
			brSeq(opFail, 1*sec, sec, 5, bClosed),
			brSeq(opOK, 6*sec, sec, 4, bClosed),
			[]brStep{{10 * sec, opOK, bOpen, 70 * sec}}, // 5/10 = 50%
		))
	})
	t.Run("below the rate stays closed", func(t *testing.T) {
		runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, brCat(
			brSeq(opFail, 1*sec, sec, 4, bClosed),
			brSeq(opOK, 5*sec, sec, 6, bClosed), // 4/10 = 40%
			[]brStep{
				{11 * sec, opFail, bClosed, 0},      // 5/11 = 45%
				{12 * sec, opFail, bOpen, 72 * sec}, // 6/12 = 50%
			}))
	})
}

// resilience4j's COUNT_BASED window (FixedSizeSlidingWindowMetrics) holds
// the last slidingWindowSize results: older ones fall out. Outcomes
// F S S S F S F with a window of 4 and a 50% threshold: cumulative counts
// would never reach 50% (3/7), the window reaches 2/4 at the 7th call.
// Also, resilience4j lowers the minimum to the window size
// (min(minimumNumberOfCalls, slidingWindowSize)).
func TestBreakerCountWindowSlides(t *testing.T) {
	type rec struct {
		failure        bool
		results, fails int
		want           BreakerState
	}
	check := func(t *testing.T, c BreakerConfig, recs []rec) {
		s := mustBreakerSet(t, 1, c)
		for k, r := range recs {
			now := int64(k+1) * sec
			s.Record(now, 0, r.failure, 0.5)
			if got := s.State(now, 0); got != r.want {
				t.Fatalf("call %d: state %v, want %v", k+1, got, r.want)
			}
			if r.want != bClosed {
				continue
			}
			if n, f := s.WindowCounts(now, 0); n != r.results || f != r.fails {
				t.Fatalf("call %d: window (%d, %d), want (%d, %d)", k+1, n, f, r.results, r.fails)
			}
		}
	}
	c := Resilience4jDefaults()
	c.MinCalls, c.WindowCalls = 4, 4
	check(t, c, []rec{
		{true, 1, 1, bClosed},
		{false, 2, 1, bClosed},
		{false, 3, 1, bClosed},
		{false, 4, 1, bClosed}, // 25%
		{true, 4, 1, bClosed},  // the first F fell out: S S S F
		{false, 4, 1, bClosed}, // S S F S
		{true, 0, 0, bOpen},    // S F S F: 50%
	})
	c.MinCalls = 100 // capped at the window: 4
	check(t, c, []rec{
		{true, 1, 1, bClosed},
		{true, 2, 2, bClosed},
		{false, 3, 2, bClosed},
		{true, 0, 0, bOpen}, // 3/4 at the 4th call
	})
}

// resilience4j's TIME_BASED window (SlidingTimeWindowMetrics) keeps one
// bucket per epoch second and evicts whole buckets as time moves on. Here
// a 4 s window of 4 buckets, minimum 4 calls, 50%: the two failures at
// 0.1 s and 0.2 s leave the window at 4.0 s, so the breaker trips at 4.7 s,
// not at 4.5 s as it would without expiry (2 failures of 4).
func TestBreakerTimeWindowSlides(t *testing.T) {
	c := Resilience4jDefaults()
	c.WindowCalls, c.WindowDuration, c.WindowBuckets, c.MinCalls = 0, 4*sec, 4, 4
	type step struct {
		at             int64
		op             brOp
		results, fails int
		want           BreakerState
	}
	check := func(t *testing.T, steps []step) {
		s := mustBreakerSet(t, 1, c)
		for k, st := range steps {
			if st.op != opLook {
				s.Record(st.at, 0, st.op == opFail, 0.5)
			}
			if got := s.State(st.at, 0); got != st.want {
				t.Fatalf("step %d (t=%v): state %v, want %v", k, time.Duration(st.at), got, st.want)
			}
			if st.want != bClosed {
				continue
			}
			if n, f := s.WindowCounts(st.at, 0); n != st.results || f != st.fails {
				t.Fatalf("step %d (t=%v): window (%d, %d), want (%d, %d)", k, time.Duration(st.at), n, f, st.results, st.fails)
			}
		}
	}
	t.Run("buckets expire", func(t *testing.T) {
		check(t, []step{
			{100 * ms, opFail, 1, 1, bClosed}, // bucket 0
			{200 * ms, opFail, 2, 2, bClosed},
			{1500 * ms, opOK, 3, 2, bClosed},   // bucket 1
			{4*sec - 1, opLook, 3, 2, bClosed}, // bucket 3: the window is buckets 0..3
			{4 * sec, opLook, 1, 0, bClosed},   // bucket 4: bucket 0 left
			{4500 * ms, opOK, 2, 0, bClosed},
			{4600 * ms, opFail, 3, 1, bClosed},
			{4700 * ms, opFail, 0, 0, bOpen}, // S S F F: 50%
		})
	})
	t.Run("a gap of two buckets", func(t *testing.T) {
		check(t, []step{
			{500 * ms, opFail, 1, 1, bClosed},  // bucket 0
			{1500 * ms, opFail, 2, 2, bClosed}, // bucket 1
			{2500 * ms, opOK, 3, 2, bClosed},   // bucket 2
			{5 * sec, opLook, 1, 0, bClosed},   // buckets 2..5: 0 and 1 left
		})
	})
	t.Run("a gap longer than the window", func(t *testing.T) {
		check(t, []step{
			{500 * ms, opFail, 1, 1, bClosed},
			{600 * ms, opFail, 2, 2, bClosed},
			{700 * ms, opFail, 3, 3, bClosed},
			{100 * sec, opLook, 0, 0, bClosed},
			{100 * sec, opFail, 1, 1, bClosed},
		})
	})
}

// The open period backs off like resilience4j's
// IntervalFunction.ofExponentialBackoff(1 s, 2, 5 s) applied to its
// attempts count: 1 on a trip from closed, +1 per reopen from half-open,
// so 1, 2, 4, 5 (cap), 5 s; a close resets it to 1.
func TestBreakerOpenBackoff(t *testing.T) {
	c := GobreakerDefaults()
	c.StrictExpiry = false // probes at exactly openUntil keep the step times round (TestBreakerOpenThenLazyHalfOpen covers the strict rule)
	c.ConsecutiveFailures = 1
	c.OpenDuration, c.OpenBackoff, c.MaxOpenDuration = sec, 2, 5*sec
	runBreakerSteps(t, mustBreakerSet(t, 1, c), 0, []brStep{
		{0, opFail, bOpen, 1 * sec},
		{1 * sec, opAllow, bHalfOpen, 0},
		{1 * sec, opFail, bOpen, 3 * sec}, // 2 s
		{3 * sec, opAllow, bHalfOpen, 0},
		{3 * sec, opFail, bOpen, 7 * sec}, // 4 s
		{7 * sec, opAllow, bHalfOpen, 0},
		{7 * sec, opFail, bOpen, 12 * sec}, // 8 s capped at 5 s
		{12 * sec, opAllow, bHalfOpen, 0},
		{12 * sec, opFail, bOpen, 17 * sec}, // 5 s
		{17 * sec, opAllow, bHalfOpen, 0},
		{17 * sec, opOK, bClosed, 0},
		{18 * sec, opFail, bOpen, 19 * sec}, // back to 1 s
	})

	// The pure function, as in its doc comment.
	periods := []struct {
		c     BreakerConfig
		opens int
		u     float64
		want  int64
	}{
		{c, 1, 0.5, 1 * sec},
		{c, 2, 0.5, 2 * sec},
		{c, 3, 0.5, 4 * sec},
		{c, 4, 0.5, 5 * sec},
		{c, 5, 0.5, 5 * sec},
		{c, 1000, 0.5, 5 * sec}, // 2^999: still the cap
		{BreakerConfig{OpenDuration: sec, OpenBackoff: 2}, 1000, 0.5, 1 << 61}, // no cap: bounded
		{BreakerConfig{OpenDuration: 60 * sec, OpenBackoff: 1}, 7, 0.5, 60 * sec},
	}
	for _, p := range periods {
		if got := p.c.OpenPeriod(p.opens, p.u); got != p.want {
			t.Errorf("%+v opens %d: got %v, want %v", p.c, p.opens, time.Duration(got), time.Duration(p.want))
		}
	}
}

// resilience4j's IntervalFunction works in whole milliseconds: the wait
// and the cap are Duration.toMillis(), each exponential step is
// (long) (previous × multiplier) and the randomised wait is (long) too
// (resilience4j-core IntervalFunction.java, ofExponentialBackoff and
// ofExponentialRandomBackoff). So 100 ms × 1.5 gives 100, 150, 225, 337,
// 505, 757 ms, where 100 · 1.5^(k−1) gives 337.5, 506.25, 759.375 ms;
// the gobreaker style keeps the exact product. A multiplier that cannot
// lift a period by a whole millisecond leaves it where it is (1 ms × 1.5
// stays 1 ms), as in resilience4j.
func TestResilience4jOpenPeriodWholeMilliseconds(t *testing.T) {
	r4j := func(open, max int64, backoff, jitter float64) BreakerConfig {
		c := Resilience4jDefaults()
		c.OpenDuration, c.MaxOpenDuration, c.OpenBackoff, c.OpenJitter = open, max, backoff, jitter
		return c
	}
	exact := GobreakerDefaults()
	exact.OpenDuration, exact.OpenBackoff = 100*ms, 1.5
	const us = ms / 1000
	for _, tt := range []struct {
		name  string
		c     BreakerConfig
		opens int
		u     float64
		want  int64
	}{
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 1, 0.5, 100 * ms},
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 2, 0.5, 150 * ms},
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 3, 0.5, 225 * ms},
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 4, 0.5, 337 * ms},
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 5, 0.5, 505 * ms},
		{"r4j 100ms×1.5", r4j(100*ms, 0, 1.5, 0), 6, 0.5, 757 * ms},
		{"gobreaker exact", exact, 4, 0.5, 337500 * us},
		{"gobreaker exact", exact, 6, 0.5, 759375 * us},
		// The wait and the cap are truncated to milliseconds first.
		{"r4j 100.9ms", r4j(100*ms+900*us, 0, 1.5, 0), 1, 0.5, 100 * ms},
		{"r4j 100.9ms×1.5", r4j(100*ms+900*us, 0, 1.5, 0), 2, 0.5, 150 * ms},
		{"r4j cap 400.9ms", r4j(100*ms, 400*ms+900*us, 1.5, 0), 5, 0.5, 400 * ms},
		{"r4j cap 400.9ms", r4j(100*ms, 400*ms+900*us, 1.5, 0), 1000, 0.5, 400 * ms},
		// The randomised wait is truncated: 757 ms × 0.5 = 378.5 ms.
		{"r4j jitter 0.5", r4j(100*ms, 0, 1.5, 0.5), 6, 0, 378 * ms},
		{"r4j jitter 0.5, cap 500ms", r4j(100*ms, 500*ms, 1.5, 0.5), 6, 0, 378 * ms},
		{"r4j jitter 0.5, cap 500ms", r4j(100*ms, 500*ms, 1.5, 0.5), 7, 0, 500 * ms}, // 1135 ms × 0.5
		// A fixed point: ⌊1 × 1.5⌋ = 1.
		{"r4j 1.5ms×1.5", r4j(1500*us, 0, 1.5, 0), 1, 0.5, 1 * ms},
		{"r4j 1.5ms×1.5", r4j(1500*us, 0, 1.5, 0), 50, 0.5, 1 * ms},
		// 7 ms × 1.1: 7, 7 (⌊7.7⌋), ... stays 7 ms.
		{"r4j 7ms×1.1", r4j(7*ms, 0, 1.1, 0), 10, 0.5, 7 * ms},
		// 10 ms × 1.1: 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 (⌊17.6⌋ = 17, ⌊18.7⌋ = 18, ⌊19.8⌋ = 19).
		{"r4j 10ms×1.1", r4j(10*ms, 0, 1.1, 0), 10, 0.5, 19 * ms},
		// Uncapped, bounded as before, in whole milliseconds.
		{"r4j uncapped", r4j(sec, 0, 2, 0), 1000, 0.5, (1 << 61) / ms * ms},
	} {
		if got := tt.c.OpenPeriod(tt.opens, tt.u); got != tt.want {
			t.Errorf("%s, opens %d, u %v: %v, want %v", tt.name, tt.opens, tt.u, time.Duration(got), time.Duration(tt.want))
		}
	}
	// resilience4j refuses a wait under 1 ms; so does the resilience4j style.
	if err := r4j(500*us, 0, 1, 0).Validate(); err == nil || !strings.Contains(err.Error(), "at least 1ms") {
		t.Errorf("resilience4j open_duration 500µs: %v, want an error", err)
	}
	g := GobreakerDefaults()
	g.OpenDuration = 500 * us
	if err := g.Validate(); err != nil {
		t.Errorf("gobreaker open_duration 500µs: %v", err)
	}
}

// Open jitter multiplies the period by U(1−f, 1+f): with f = 0.2 a 10 s
// period lies in [8 s, 12 s), grows with u, and averages 10 s over a grid
// of u. It applies after the cap (a capped 5 s period with u = 0.75 is
// 5.5 s). In a set, the draw passed to the Record that trips decides the
// breaker's openUntil.
func TestBreakerOpenJitter(t *testing.T) {
	c := BreakerConfig{OpenDuration: 10 * sec, OpenBackoff: 1, OpenJitter: 0.2}
	for _, tt := range []struct {
		u    float64
		want int64
	}{{0, 8 * sec}, {0.25, 9 * sec}, {0.5, 10 * sec}, {0.75, 11 * sec}} {
		if got := c.OpenPeriod(1, tt.u); got != tt.want {
			t.Errorf("u=%v: got %v, want %v", tt.u, time.Duration(got), time.Duration(tt.want))
		}
	}
	const n = 10_000
	var sum float64
	prev := int64(0)
	for k := 0; k < n; k++ {
		u := (float64(k) + 0.5) / n
		d := c.OpenPeriod(1, u)
		if d < 8*sec || d >= 12*sec || d < prev {
			t.Fatalf("u=%v: %v outside [8s, 12s) or below the previous %v", u, time.Duration(d), time.Duration(prev))
		}
		prev = d
		sum += float64(d)
	}
	if m := sum / n; math.Abs(m-1e10)/1e10 > 1e-3 {
		t.Errorf("mean %v, want 10s", time.Duration(m))
	}
	capped := BreakerConfig{OpenDuration: sec, OpenBackoff: 2, MaxOpenDuration: 5 * sec, OpenJitter: 0.2}
	if got := capped.OpenPeriod(4, 0.75); got != 5500*ms {
		t.Errorf("capped, u=0.75: got %v, want 5.5s", time.Duration(got))
	}

	g := GobreakerDefaults()
	g.OpenJitter = 0.2
	s := mustBreakerSet(t, 3, g)
	us := []float64{0.1, 0.5, 0.9}
	for i, u := range us {
		for k := 0; k < 6; k++ {
			s.Record(sec, i, true, u)
		}
		want := sec + g.OpenPeriod(1, u)
		if got := s.OpenUntil(i); got != want {
			t.Errorf("breaker %d (u=%v): open until %v, want %v", i, u, time.Duration(got), time.Duration(want))
		}
		if lo, hi := sec+48*sec, sec+72*sec; s.OpenUntil(i) < lo || s.OpenUntil(i) >= hi {
			t.Errorf("breaker %d: open until %v outside [49s, 73s)", i, time.Duration(s.OpenUntil(i)))
		}
	}
	if !(s.OpenUntil(0) < s.OpenUntil(1) && s.OpenUntil(1) < s.OpenUntil(2)) {
		t.Errorf("open periods do not grow with u: %v %v %v", s.OpenUntil(0), s.OpenUntil(1), s.OpenUntil(2))
	}
}

// Breakers in one set share nothing but the configuration: interleaved
// outcomes for 3000 breakers, each behaving as gobreaker alone would.
func TestBreakerSetIndependent(t *testing.T) {
	const n = 3000
	s := mustBreakerSet(t, n, GobreakerDefaults())
	for k := int64(0); k < 6; k++ {
		for i := 0; i < n; i++ {
			switch {
			case i%3 == 0: // six failures
				s.Record(k*sec, i, true, 0.5)
			case i%3 == 1 && k < 5: // five failures then a success
				s.Record(k*sec, i, true, 0.5)
			case i%3 == 1:
				s.Record(k*sec, i, false, 0.5)
			}
		}
	}
	for i := 0; i < n; i++ {
		want := bClosed
		if i%3 == 0 {
			want = bOpen
		}
		if got := s.State(5*sec, i); got != want {
			t.Fatalf("breaker %d: %v, want %v", i, got, want)
		}
	}
	for i := 0; i < n; i += 3 { // each open breaker has its own probe
		if !s.Allow(65*sec+1, i) || s.Allow(65*sec+1, i) {
			t.Fatalf("breaker %d: want exactly one probe just after 65 s", i)
		}
	}
}

// Which results count in half-open. A call admitted while closed returns
// after the breaker has tripped and moved to half-open. resilience4j hands
// every result to the current state, so it counts as a probe result
// (Record); gobreaker drops results from an older generation (RecordGen).
func TestBreakerStaleResults(t *testing.T) {
	c := GobreakerDefaults()
	c.StrictExpiry = false // probes at exactly openUntil keep the step times round (TestBreakerOpenThenLazyHalfOpen covers the strict rule)
	c.ConsecutiveFailures = 1
	s := mustBreakerSet(t, 2, c)
	for i := 0; i < 2; i++ {
		if !s.Allow(0, i) {
			t.Fatal("closed breaker refused")
		}
		slow := s.Generation(i) // call A, still in flight
		s.Allow(0, i)
		s.Record(sec, i, true, 0.5) // call B fails: open until 61 s
		if !s.Allow(61*sec, i) {    // probe C
			t.Fatal("no probe at 61 s")
		}
		probe := s.Generation(i)
		if i == 0 {
			s.Record(62*sec, i, false, 0.5) // A's success taken as the probe's
			if got := s.State(62*sec, i); got != bClosed {
				t.Errorf("Record: %v, want closed", got)
			}
			continue
		}
		if s.RecordGen(62*sec, i, slow, false, 0.5) {
			t.Error("RecordGen counted a result from before the trip")
		}
		if got := s.State(62*sec, i); got != bHalfOpen {
			t.Errorf("RecordGen: %v, want half-open", got)
		}
		if !s.RecordGen(63*sec, i, probe, true, 0.5) || s.State(63*sec, i) != bOpen {
			t.Errorf("the probe's failure did not reopen: %v", s.State(63*sec, i))
		}
	}
}

// refBreaker is the reference model: per-breaker objects, the closed
// outcomes kept as a plain list and the window recounted from it at every
// question.
type refBreaker struct {
	state             BreakerState
	until             int64
	opens, consec     int
	hist              []refOutcome
	admit, res, fails int
}

type refOutcome struct {
	t      int64
	failed bool
}

type refBreakerSet struct {
	c BreakerConfig
	b []refBreaker
}

func (r *refBreakerSet) lazy(i int, now int64) {
	if b := &r.b[i]; b.state == bOpen && now >= b.until {
		b.state, b.admit, b.res, b.fails = bHalfOpen, 0, 0, 0
	}
}

func (r *refBreakerSet) allow(i int, now int64) bool {
	r.lazy(i, now)
	b := &r.b[i]
	switch b.state {
	case bClosed:
		return true
	case bHalfOpen:
		if b.admit < r.c.HalfOpenProbes {
			b.admit++
			return true
		}
	}
	return false
}

func (r *refBreakerSet) window(i int, now int64) (n, f int) {
	h := r.b[i].hist
	if w := r.c.WindowCalls; w > 0 && len(h) > w {
		h = h[len(h)-w:]
	}
	for _, o := range h {
		if r.c.WindowCalls == 0 {
			width := r.c.WindowDuration / int64(r.c.WindowBuckets)
			if o.t/width <= now/width-int64(r.c.WindowBuckets) {
				continue
			}
		}
		n++
		if o.failed {
			f++
		}
	}
	return n, f
}

func (r *refBreakerSet) trip(i int, now int64, u float64) {
	b := &r.b[i]
	b.opens++
	b.state, b.until = bOpen, now+r.c.OpenPeriod(b.opens, u)
}

func (r *refBreakerSet) close(i int) {
	b := &r.b[i]
	b.state, b.opens, b.consec, b.hist = bClosed, 0, 0, nil
}

func (r *refBreakerSet) record(i int, now int64, failure bool, u float64) {
	b := &r.b[i]
	switch b.state {
	case bClosed:
		if r.c.Trip == TripConsecutive {
			if !failure {
				b.consec = 0
				return
			}
			if b.consec++; b.consec >= r.c.ConsecutiveFailures {
				r.trip(i, now, u)
			}
			return
		}
		b.hist = append(b.hist, refOutcome{now, failure})
		minCalls := r.c.MinCalls
		if r.c.WindowCalls > 0 {
			minCalls = min(minCalls, r.c.WindowCalls)
		}
		if n, f := r.window(i, now); n >= minCalls && float64(f)/float64(n) >= r.c.FailureRate {
			r.trip(i, now, u)
		}
	case bHalfOpen:
		b.res++
		if failure {
			b.fails++
		}
		if r.c.HalfOpen == HalfOpenAllSucceed {
			if failure {
				r.trip(i, now, u)
			} else if b.res >= r.c.HalfOpenProbes {
				r.close(i)
			}
			return
		}
		need := r.c.HalfOpenProbes
		if r.c.MinCalls > 0 {
			need = min(need, r.c.MinCalls)
		}
		if b.res >= need {
			if float64(b.fails)/float64(b.res) >= r.c.FailureRate {
				r.trip(i, now, u)
			} else {
				r.close(i)
			}
		}
	}
}

// The flat set must agree with the reference model step by step under
// random traffic: calls admitted, left in flight, and completed out of
// order (so results also arrive in later states), with failure phases that
// make the breakers trip, probe, reopen and close many times.
func TestBreakerSetMatchesReference(t *testing.T) {
	configs := map[string]BreakerConfig{
		"consecutive, backoff, jitter": {Trip: TripConsecutive, ConsecutiveFailures: 3,
			OpenDuration: 500 * ms, OpenBackoff: 2, MaxOpenDuration: 3 * sec, OpenJitter: 0.3,
			HalfOpenProbes: 2, HalfOpen: HalfOpenAllSucceed},
		"rate, 100-call window": {Trip: TripRate, FailureRate: 0.5, MinCalls: 20, WindowCalls: 100,
			OpenDuration: 500 * ms, OpenBackoff: 1, HalfOpenProbes: 5, HalfOpen: HalfOpenRate},
		"rate, 130-call window, 15 probes": {Trip: TripRate, FailureRate: 0.4, MinCalls: 10, WindowCalls: 130,
			OpenDuration: sec, OpenBackoff: 1.5, HalfOpenProbes: 15, HalfOpen: HalfOpenRate},
		"rate, 2 s window of 8 buckets": {Trip: TripRate, FailureRate: 0.5, MinCalls: 5,
			WindowDuration: 2 * sec, WindowBuckets: 8, OpenDuration: 700 * ms, OpenBackoff: 1,
			OpenJitter: 0.2, HalfOpenProbes: 3, HalfOpen: HalfOpenAllSucceed},
		"consecutive, rate half-open": {Trip: TripConsecutive, ConsecutiveFailures: 2, FailureRate: 0.34,
			OpenDuration: 300 * ms, OpenBackoff: 1, HalfOpenProbes: 3, HalfOpen: HalfOpenRate},
	}
	for name, c := range configs {
		t.Run(name, func(t *testing.T) {
			const n = 7
			r := rand.New(rand.NewPCG(11, 12))
			s := mustBreakerSet(t, n, c)
			ref := &refBreakerSet{c: c, b: make([]refBreaker, n)}
			inFlight := make([]int, n)
			var now int64
			transitions := 0
			for step := 0; step < 30_000; step++ {
				now += r.Int64N(int64(20 * ms))
				i := r.IntN(n)
				if inFlight[i] == 0 || r.IntN(5) < 3 {
					got, want := s.Allow(now, i), ref.allow(i, now)
					if got != want {
						t.Fatalf("step %d t=%v breaker %d: Allow %v, reference %v", step, time.Duration(now), i, got, want)
					}
					if got {
						inFlight[i]++
					}
				} else {
					inFlight[i]--
					p := 0.1 // failure probability: bad phases of 3 s
					if (now/(3*sec)+int64(i))%2 == 0 {
						p = 0.8
					}
					failure, u := r.Float64() < p, r.Float64()
					before := s.Generation(i)
					s.Record(now, i, failure, u)
					ref.record(i, now, failure, u)
					if s.Generation(i) != before {
						transitions++
					}
				}
				got, want := s.State(now, i), func() BreakerState { ref.lazy(i, now); return ref.b[i].state }()
				if got != want {
					t.Fatalf("step %d t=%v breaker %d: %v, reference %v", step, time.Duration(now), i, got, want)
				}
				if got == bOpen && s.OpenUntil(i) != ref.b[i].until {
					t.Fatalf("step %d breaker %d: open until %d, reference %d", step, i, s.OpenUntil(i), ref.b[i].until)
				}
				if got == bClosed && c.Trip == TripRate {
					gn, gf := s.WindowCounts(now, i)
					wn, wf := ref.window(i, now)
					if gn != wn || gf != wf {
						t.Fatalf("step %d breaker %d: window (%d, %d), reference (%d, %d)", step, i, gn, gf, wn, wf)
					}
				}
			}
			t.Logf("%d state changes from Record", transitions)
			if transitions < 100 {
				t.Errorf("only %d state changes from Record: the run does not exercise the machine", transitions)
			}
		})
	}
}

func TestBreakerZeroAllocs(t *testing.T) {
	timed := Resilience4jDefaults()
	timed.WindowCalls, timed.WindowDuration, timed.WindowBuckets = 0, 10*sec, 10
	for name, c := range map[string]BreakerConfig{"gobreaker": GobreakerDefaults(), "resilience4j": Resilience4jDefaults(), "time window": timed} {
		c.OpenDuration, c.OpenJitter, c.OpenBackoff, c.MaxOpenDuration = sec, 0.1, 2, 10*sec
		s := mustBreakerSet(t, 64, c)
		var now int64
		k := 0
		allocs := testing.AllocsPerRun(10_000, func() {
			now += int64(3 * ms)
			k++
			i := k % 64
			if s.Allow(now, i) {
				s.Record(now, i, k%7 < 4, 0.5)
			}
			_ = s.State(now, i)
			_, _ = s.WindowCounts(now, i)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Allow/Record/State", name, allocs)
		}
	}
}

// A set of n breakers is a dozen slices: a few tens of bytes per breaker,
// and the number of allocations does not grow with n.
func TestBreakerSetMemory(t *testing.T) {
	const n = 100_000
	for name, tt := range map[string]struct {
		c       BreakerConfig
		perItem int
	}{
		// state 1 + gen, opens, 3 half-open counters 4·5 + openUntil 8 + consec 4
		"gobreaker": {GobreakerDefaults(), 33},
		// the same without consec (29) + calls, fails, head 4·3 + 100
		// outcome bits in 2 words 16
		"resilience4j": {Resilience4jDefaults(), 57},
	} {
		s := mustBreakerSet(t, n, tt.c)
		want := n*tt.perItem + emptyBreakerSetBytes()
		if got := s.Bytes(); got != want {
			t.Errorf("%s: Bytes() = %d, want %d (%d per breaker)", name, got, want, tt.perItem)
		}
		allocs := testing.AllocsPerRun(2, func() { _, _ = NewBreakerSet(n, tt.c) })
		if allocs > 16 {
			t.Errorf("%s: NewBreakerSet made %v allocations", name, allocs)
		}
	}
}

// emptyBreakerSetBytes is the size of the BreakerSet struct itself.
func emptyBreakerSetBytes() int { return (&BreakerSet{}).Bytes() }

func TestBreakerValidate(t *testing.T) {
	for name, c := range map[string]BreakerConfig{"gobreaker": GobreakerDefaults(), "resilience4j": Resilience4jDefaults()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s defaults: %v", name, err)
		}
	}
	r4j := Resilience4jDefaults
	gb := GobreakerDefaults
	tests := []struct {
		name string
		c    BreakerConfig
		want string
	}{
		{"rate above 1", func() BreakerConfig { c := r4j(); c.FailureRate = 1.5; return c }(), "breaker: failure_rate must be in (0, 1], got 1.5"},
		{"rate 0", func() BreakerConfig { c := r4j(); c.FailureRate = 0; return c }(), "failure_rate must be in (0, 1], got 0"},
		{"rate NaN", func() BreakerConfig { c := r4j(); c.FailureRate = math.NaN(); return c }(), "failure_rate"},
		{"rate half-open needs a rate", func() BreakerConfig { c := gb(); c.HalfOpen = HalfOpenRate; return c }(), "failure_rate"},
		{"consecutive 0", func() BreakerConfig { c := gb(); c.ConsecutiveFailures = 0; return c }(), "consecutive_failures must be in [1, "},
		{"min calls 0", func() BreakerConfig { c := r4j(); c.MinCalls = 0; return c }(), "min_calls must be in [1, "},
		{"no window", func() BreakerConfig { c := r4j(); c.WindowCalls = 0; return c }(), "needs a window"},
		{"two windows", func() BreakerConfig { c := r4j(); c.WindowDuration, c.WindowBuckets = sec, 1; return c }(), "not both"},
		{"negative window", func() BreakerConfig { c := r4j(); c.WindowCalls = -1; return c }(), "window_calls must be in [1, "},
		{"buckets missing", func() BreakerConfig { c := r4j(); c.WindowCalls, c.WindowDuration = 0, sec; return c }(), "window_buckets must be in [1, "},
		{"duration missing", func() BreakerConfig { c := r4j(); c.WindowCalls, c.WindowBuckets = 0, 10; return c }(), "window_duration must be > 0"},
		{"uneven buckets", func() BreakerConfig {
			c := r4j()
			c.WindowCalls, c.WindowDuration, c.WindowBuckets = 0, sec, 3
			return c
		}(), "must be a multiple of window_buckets"},
		{"open 0", func() BreakerConfig { c := gb(); c.OpenDuration = 0; return c }(), "open_duration must be > 0"},
		{"backoff 0", func() BreakerConfig { c := gb(); c.OpenBackoff = 0; return c }(), "open_backoff must be a finite number >= 1"},
		{"backoff inf", func() BreakerConfig { c := gb(); c.OpenBackoff = math.Inf(1); return c }(), "open_backoff"},
		{"cap below open", func() BreakerConfig { c := gb(); c.MaxOpenDuration = sec; return c }(), "max_open_duration must be 0 (no cap) or >= open_duration"},
		{"jitter 1", func() BreakerConfig { c := gb(); c.OpenJitter = 1; return c }(), "open_jitter must be in [0, 1), got 1"},
		{"jitter negative", func() BreakerConfig { c := gb(); c.OpenJitter = -0.1; return c }(), "open_jitter"},
		{"probes 0", func() BreakerConfig { c := gb(); c.HalfOpenProbes = 0; return c }(), "half_open_probes must be in [1, "},
		{"unknown trip", func() BreakerConfig { c := gb(); c.Trip = 9; return c }(), "unknown trip rule 9"},
		{"unknown half-open rule", func() BreakerConfig { c := gb(); c.HalfOpen = 9; return c }(), "unknown half-open rule 9"},
	}
	// Zero fields NewBreakerSet fills with gobreaker's values.
	defaulted := map[string]bool{"consecutive 0": true, "open 0": true, "backoff 0": true, "probes 0": true}
	for _, tt := range tests {
		err := tt.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
		if _, err := NewBreakerSet(1, tt.c); (err == nil) != defaulted[tt.name] {
			t.Errorf("%s: NewBreakerSet: got error %v, want one: %v", tt.name, err, !defaulted[tt.name])
		}
	}
	// Every bad field is reported, one line each.
	c := BreakerConfig{Trip: TripRate, FailureRate: 2, OpenBackoff: 1}
	if got := strings.Count(c.Validate().Error(), "\n") + 1; got != 5 {
		t.Errorf("want 5 problems (failure_rate, min_calls, window, open_duration, half_open_probes), got %d:\n%v", got, c.Validate())
	}
	if _, err := NewBreakerSet(-1, gb()); err == nil {
		t.Error("NewBreakerSet(-1) gave no error")
	}
}

func TestBreakerNames(t *testing.T) {
	for s, want := range map[BreakerState]string{bClosed: "closed", bOpen: "open", bHalfOpen: "half-open", 7: "BreakerState(7)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", s, got, want)
		}
	}
	for v, want := range map[fmt.Stringer]string{TripConsecutive: "consecutive", TripRate: "rate", HalfOpenAllSucceed: "all-succeed", HalfOpenRate: "rate"} {
		if got := v.String(); got != want {
			t.Errorf("%#v: got %q, want %q", v, got, want)
		}
	}
}

func ExampleBreakerSet() {
	s, _ := NewBreakerSet(1, GobreakerDefaults())
	for k := 1; k <= 6; k++ { // six failures in a row
		now := int64(k) * int64(time.Second)
		if s.Allow(now, 0) {
			s.Record(now, 0, true, 0.5) // u: the open-jitter draw (no jitter here)
		}
	}
	fmt.Println(s.State(0, 0), time.Duration(s.OpenUntil(0)))
	at := func(d time.Duration) int64 { return int64(d) }
	fmt.Println(s.Allow(at(time.Minute), 0), s.State(at(66*time.Second), 0)) // still open at exactly the timeout, as gobreaker
	after := at(66*time.Second + 1)
	fmt.Println(s.State(after, 0), s.Allow(after, 0), s.Allow(after, 0))
	s.Record(at(67*time.Second), 0, false, 0.5)
	fmt.Println(s.State(at(67*time.Second), 0))
	// Output:
	// open 1m6s
	// false open
	// half-open true false
	// closed
}

func BenchmarkBreakerSet(b *testing.B) {
	timed := Resilience4jDefaults()
	timed.WindowCalls, timed.WindowDuration, timed.WindowBuckets = 0, 60*sec, 60
	for _, bc := range []struct {
		name string
		c    BreakerConfig
	}{{"gobreaker", GobreakerDefaults()}, {"resilience4j", Resilience4jDefaults()}, {"time-window", timed}} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 100_000
			s := mustBreakerSet(b, n, bc.c)
			b.ReportAllocs()
			b.ResetTimer()
			var now int64
			x := uint64(88172645463325252)
			for i := 0; i < b.N; i++ {
				now += 1000 // a million calls per simulated second
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				id := int(x % n)
				if s.Allow(now, id) {
					s.Record(now, id, x>>63 == 1, float64(x>>11)/(1<<53))
				}
			}
		})
	}
}

// Zero settings take gobreaker's values; an invalid one is an error.
func TestNewBreakerSetDefaults(t *testing.T) {
	s, err := NewBreakerSet(1, BreakerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d := GobreakerDefaults()
	got := s.Config()
	if got.OpenDuration != d.OpenDuration || got.OpenBackoff != d.OpenBackoff || got.HalfOpenProbes != d.HalfOpenProbes || got.ConsecutiveFailures != d.ConsecutiveFailures {
		t.Errorf("got %+v, want gobreaker's open duration, backoff, probes and consecutive failures", got)
	}
	if _, err := NewBreakerSet(1, BreakerConfig{Trip: TripRate}); err == nil {
		t.Error("rate trip without a window: got no error, want one")
	}
}
