package policy

import (
	"fmt"
	"math"
)

// Jitter is how randomness is applied to an exponential backoff.
type Jitter uint8

// Jitter variants (Marc Brooker, "Exponential Backoff And Jitter", AWS
// Architecture Blog, 2015). With expo = min(cap, base·mult^(n−1)):
const (
	NoJitter     Jitter = iota // expo
	Full                       // U(0, expo)
	Equal                      // expo/2 + U(0, expo/2)
	Decorrelated               // min(cap, U(base, 3·prev)), prev₀ = base
	Proportional               // expo·U(1−f, 1+f), after the cap (gRPC: f = 0.2)
	// FullBelowCap is full jitter while the uncapped delay
	// base·mult^(n−1) is at most the cap, and exactly the cap, without
	// jitter, beyond: aws-sdk-go-v2's standard ExponentialJitterBackoff
	// (aws/retry/jitter_backoff.go: attempt > int(log2(max/1 s)) returns
	// maxBackoff, else rand·2^attempt seconds), which is this with base
	// 2 s and multiplier 2.
	FullBelowCap
)

// ParseJitter maps a scenario name to a Jitter.
func ParseJitter(s string) (Jitter, error) {
	switch s {
	case "none", "":
		return NoJitter, nil
	case "full":
		return Full, nil
	case "equal":
		return Equal, nil
	case "decorrelated":
		return Decorrelated, nil
	case "proportional":
		return Proportional, nil
	case "full-below-cap":
		return FullBelowCap, nil
	}
	return 0, fmt.Errorf("policy: unknown jitter %q", s)
}

// Backoff is exponential backoff with jitter; durations in nanoseconds.
type Backoff struct {
	Base, Cap  int64
	Multiplier float64
	Jitter     Jitter
	Fraction   float64 // the ± fraction of Proportional jitter
	// ThrottleBase, when > 0, replaces Base after a throttling error (the
	// AWS 2026 retry mode: 1 s after a throttle, 50 ms otherwise). Used
	// by DelayAfter only.
	ThrottleBase int64
}

// Expo is the capped exponential delay before retry n (n = 1 for the first
// retry): min(cap, base·mult^(n−1)).
func (b Backoff) Expo(n int) int64 {
	d := float64(b.Base) * math.Pow(b.Multiplier, float64(n-1))
	if d >= float64(b.Cap) {
		return b.Cap
	}
	return int64(math.Round(d))
}

// Delay is the wait before retry n given a uniform draw u in [0, 1) and,
// for decorrelated jitter, the previous wait prev (0 before the first
// retry, which means base).
//
//	base 100ms, cap 10s, mult 2, retry n:  1      2      3      8
//	none                                  100ms  200ms  400ms  10s
//	full (u = 0.5)                        50ms   100ms  200ms  5s
//	equal (u = 0.5)                       75ms   150ms  300ms  7.5s
//	proportional f=0.2 (u = 1)            120ms  240ms  480ms  12s
//
// Proportional jitter is applied after the cap, as gRPC's retry and
// connection backoff do, so it can exceed the cap by the fraction.
func (b Backoff) Delay(n int, prev int64, u float64) int64 {
	switch b.Jitter {
	case Proportional:
		return int64(float64(b.Expo(n)) * (1 + b.Fraction*(2*u-1)))
	case Full:
		return int64(u * float64(b.Expo(n)))
	case FullBelowCap:
		if float64(b.Base)*math.Pow(b.Multiplier, float64(n-1)) > float64(b.Cap) {
			return b.Cap
		}
		return int64(u * float64(b.Expo(n)))
	case Equal:
		e := b.Expo(n)
		return e/2 + int64(u*float64(e-e/2))
	case Decorrelated:
		if prev <= 0 {
			prev = b.Base
		}
		hi := 3 * float64(prev)
		d := float64(b.Base) + u*(hi-float64(b.Base))
		if d >= float64(b.Cap) {
			return b.Cap
		}
		return int64(d)
	}
	return b.Expo(n)
}

// DelayAfter is Delay for a retry after a failure that was (throttled) or
// was not a throttling error: with ThrottleBase > 0 a throttle's backoff
// starts from ThrottleBase instead of Base (aws-sdk-go-v2
// backoffDelay2026: x = 1 s if IsErrorThrottle, else the base delay;
// t = rand·min(x·2^i, MAX_BACKOFF)).
func (b Backoff) DelayAfter(n int, prev int64, u float64, throttled bool) int64 {
	if throttled && b.ThrottleBase > 0 {
		b.Base = b.ThrottleBase
	}
	return b.Delay(n, prev, u)
}

// HonorRetryAfter returns the wait before a retry when the server asked
// for retryAfter (0: no hint): the client waits at least that long.
func HonorRetryAfter(delay, retryAfter int64) int64 {
	return max(delay, retryAfter)
}

// AWS2026RetryAfterExtra is how far beyond the backoff the AWS 2026 retry
// mode follows an x-amz-retry-after hint (5 s).
const AWS2026RetryAfterExtra = int64(5e9)

// ClampRetryAfter is the AWS 2026 retry mode's use of x-amz-retry-after:
// the hint, but never less than the backoff and never more than the
// backoff plus extra (aws-sdk-go-v2 retry2026_test.go: a 10,000 ms hint
// over a 50 ms backoff waits 5,050 ms; a 0 ms hint waits the backoff).
// retryAfter 0 (no hint) waits the backoff.
func ClampRetryAfter(backoff, retryAfter, extra int64) int64 {
	return max(backoff, min(retryAfter, backoff+extra))
}
