package policy

import (
	"errors"
	"fmt"
	"math"
)

// ClientRateLimiter is the client-side send-rate limiter of the AWS SDKs' "adaptive"
// retry mode (CUBIC send-rate control feeding a token bucket) for n clients,
// kept as flat per-client slices. Sources: botocore retries/adaptive.py
// (ClientRateLimiter, RateClocker), retries/throttling.py (CubicCalculator)
// and retries/bucket.py (TokenBucket); aws-sdk-go-v2 aws/retry/adaptive.go,
// adaptive_ratelimit.go and adaptive_token_bucket.go.
//
// Per client:
//
//   - Measured rate. Every response (Update) is counted. Time is cut into
//     BucketInterval buckets; when a response lands in a later bucket than
//     the last one, the count (including this response) over the gap is the
//     current rate and measured = S·count/Δ + (1−S)·measured, S = Smoothing.
//     Both SDKs call this the send rate but count responses, in the response
//     hook ("needs-retry" / the attempt token's release), not sends.
//   - Throttle response: r = measured before the first throttle, else
//     min(measured, fill); W_max = r; K = ∛(W_max·(1−β)/C); last_fail = now;
//     new = β·r; the limiter is enabled (for good: neither SDK turns it off).
//   - Any other response: new = C·(t − last_fail − K)³ + W_max, t in seconds.
//   - Then, for both: fill = max(min(new, 2·measured), MinRate) and
//     capacity = max(min(new, 2·measured), 1); the bucket is first refilled
//     at the old fill rate up to now and then clamped to the new capacity.
//   - Each send takes 1 token. Before the first throttle sends are not
//     limited and take no token (the bucket still fills, up to capacity).
//
// With the defaults (β 0.7, C 0.4), after a throttle at measured 10 rps:
//
//	t − last_fail  0    1       K=1.9574  2          3        4        5
//	new rate       7.0  9.6489  10 (W_max) 10.00003  10.4533  13.4087  21.2663
//
// (the table of aws-sdk-go-v2 TestAdaptiveRateLimit_cubic "success"), each
// then capped at 2·measured: 20 rps while the client measures 10.
//
// Blocking. Both SDKs delay a send rather than fail it (Go can fail instead
// with FailOnNoAttemptTokens: TryAcquire). Acquire follows the reservation
// model of golang.org/x/time/rate's Reserve: the caller takes the token at
// once, the balance may go negative (a debt repaid at the fill rate), and
// the wait is how long until the balance would be back at zero. Concurrent
// waiters are served in call order, one token interval apart (1/fill), and
// a wait is fixed when reserved: a later change of the fill rate changes
// how fast the remaining debt is repaid, and so the waits of later calls,
// but not the waits already handed out. For a single waiter at a constant
// rate this is the SDKs' wait, (1 − available)/fill. The SDKs differ for
// concurrent waiters: Go sleeps (1 − available)/fill and then competes
// again for the token (no order; a loser sleeps again), and botocore
// waits on a condition variable that a rate change wakes, so a waiter's
// wait is recomputed when the rate changes.
//
// Where botocore and the Go SDK differ, and what is followed here:
//
//   - Initial bucket: botocore makes TokenBucket(max_rate=1) at client
//     creation (fill 1, capacity 1, 0 tokens, refill clock started), so up
//     to 1 token can accrue before the first response; Go starts at fill 0,
//     capacity 0 and 0 tokens and starts the refill clock at the first
//     Update. Followed: Go (fill 0 until the first Update, so no token
//     accrues before it). Both start W_max at 0 and last_fail at creation,
//     so until the first throttle new = C·t³ (t since creation), capped at
//     2·measured: irrelevant to sends, which are unlimited then, but it
//     sets how full the bucket is when the first throttle enables it.
//   - K: botocore recomputes K only on a throttle; Go before every Update
//     (from the same W_max: the same number). Followed: on a throttle.
//     Both take the cube root as x^(1/3) (** / math.Pow), and so does K
//     here, to reproduce their numbers to the last bit (math.Cbrt differs
//     by an ulp, which the cube amplifies to a few ulps of the rate).
//   - The first rate bucket: both set last bucket = floor(creation time)
//     in whole seconds, later buckets are multiples of 0.5 s. Followed: a
//     client created at 3.7 s whose first response comes at 3.9 s closes
//     the bucket [3, 3.5): 1 response over 0.5 s; at 4.0 s: over 1 s.
//   - Time: both use float seconds of the wall clock; here integer virtual
//     nanoseconds, so bucket boundaries are exact.
//   - Waits are rounded up to the whole nanosecond (never early).
//
// Not modelled here: the retry quota and the backoff of standard mode,
// which adaptive mode inherits; note aws/aws-sdk-go-v2#3550 (open): Go's
// adaptive mode never returns the NoRetryIncrement on success (its attempt
// token's release only calls Update), so its quota only drains. The Java
// SDK v2 deprecated ADAPTIVE in 2.25 (it lost its state across requests)
// for ADAPTIVE_V2. Scope is one limiter per client instance (Reset starts
// a fresh one).
//
// Time must not go backwards for a client. No method allocates.
type ClientRateLimiter struct {
	cfg ClientRateLimiterConfig

	enabled  []bool
	measured []float64 // smoothed response rate, rps
	count    []int64   // responses since lastBkt
	lastBkt  []int64   // start of the last closed-out bucket, ns

	wmax     []float64 // CUBIC W_max, rps
	k        []float64 // CUBIC K, s
	lastFail []int64   // ns

	fill     []float64 // token bucket fill rate, tokens/s
	capacity []float64 // token bucket capacity, tokens
	tokens   []float64 // balance at lastFill; negative: reserved ahead
	lastFill []int64   // ns
}

// ClientRateLimiterConfig is the configuration shared by all clients of an ClientRateLimiter.
type ClientRateLimiterConfig struct {
	Beta           float64 // multiplicative decrease on a throttle (0.7)
	C              float64 // CUBIC scale constant (0.4)
	Smoothing      float64 // weight of the newest bucket's rate (0.8)
	MinRate        float64 // floor of the fill rate, rps (0.5)
	BucketInterval int64   // width of the rate-measuring buckets, ns (0.5 s)
}

// ClientRateLimiterDefaults is the configuration of both SDKs: β 0.7, C 0.4,
// smoothing 0.8, minimum fill rate 0.5 rps, 0.5 s buckets (botocore
// CubicCalculator, RateClocker, TokenBucket._MIN_RATE; aws-sdk-go-v2
// newAdaptiveRateLimit).
func ClientRateLimiterDefaults() ClientRateLimiterConfig {
	return ClientRateLimiterConfig{Beta: 0.7, C: 0.4, Smoothing: 0.8, MinRate: 0.5, BucketInterval: 500_000_000}
}

// Validate reports a configuration the limiter cannot run with.
func (c ClientRateLimiterConfig) Validate() error {
	switch {
	case !(c.Beta > 0 && c.Beta < 1):
		return errors.New("policy: client rate limiter Beta must be in (0, 1)")
	case !(c.C > 0) || math.IsInf(c.C, 1):
		return errors.New("policy: client rate limiter C must be positive")
	case !(c.Smoothing > 0 && c.Smoothing <= 1):
		return errors.New("policy: client rate limiter Smoothing must be in (0, 1]")
	case !(c.MinRate > 0) || math.IsInf(c.MinRate, 1):
		return errors.New("policy: client rate limiter MinRate must be positive")
	case c.BucketInterval <= 0:
		return errors.New("policy: client rate limiter BucketInterval must be positive")
	}
	return nil
}

// K is the CUBIC time, in seconds, for the rate to climb back to wmax after
// a throttle: ∛(wmax·(1−β)/C). wmax 10 → ∛7.5 = 1.9574338205844317;
// wmax 8 → 1.8171205928321397 (botocore test_throttling.py).
func (c ClientRateLimiterConfig) K(wmax float64) float64 {
	return math.Pow(wmax*(1-c.Beta)/c.C, 1.0/3)
}

// Cubic is the CUBIC rate dt seconds after the last throttle:
// C·(dt − k)³ + wmax. Cubic(w, K(w), 0) = β·w; Cubic(w, k, k) = w;
// Cubic(w, k, k+1) = w + C.
func (c ClientRateLimiterConfig) Cubic(wmax, k, dt float64) float64 {
	x := dt - k
	return c.C*x*x*x + wmax
}

// NewClientRateLimiter makes the limiters of n clients, all created at
// time 0. A zero field of cfg takes ClientRateLimiterDefaults' value; a
// configuration that fails Validate, or n < 0, is an error.
func NewClientRateLimiter(n int, cfg ClientRateLimiterConfig) (*ClientRateLimiter, error) {
	if n < 0 {
		return nil, fmt.Errorf("policy: number of client rate limiters must be >= 0, got %d", n)
	}
	d := ClientRateLimiterDefaults()
	for _, f := range []struct{ v, def *float64 }{{&cfg.Beta, &d.Beta}, {&cfg.C, &d.C}, {&cfg.Smoothing, &d.Smoothing}, {&cfg.MinRate, &d.MinRate}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if cfg.BucketInterval == 0 {
		cfg.BucketInterval = d.BucketInterval
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &ClientRateLimiter{
		cfg:      cfg,
		enabled:  make([]bool, n),
		measured: make([]float64, n),
		count:    make([]int64, n),
		lastBkt:  make([]int64, n),
		wmax:     make([]float64, n),
		k:        make([]float64, n),
		lastFail: make([]int64, n),
		fill:     make([]float64, n),
		capacity: make([]float64, n),
		tokens:   make([]float64, n),
		lastFill: make([]int64, n),
	}
	return a, nil
}

// Len is the number of clients.
func (a *ClientRateLimiter) Len() int { return len(a.fill) }

// Config is the shared configuration.
func (a *ClientRateLimiter) Config() ClientRateLimiterConfig { return a.cfg }

// Reset makes client i a fresh limiter created at time now (a new SDK
// client): not enabled, measured 0, W_max 0, last_fail now, an empty bucket
// with fill rate 0, first rate bucket floor(now) in whole seconds.
func (a *ClientRateLimiter) Reset(now int64, i int) {
	a.enabled[i] = false
	a.measured[i] = 0
	a.count[i] = 0
	a.lastBkt[i] = floorTo(now, 1_000_000_000)
	a.wmax[i] = 0
	a.k[i] = 0
	a.lastFail[i] = now
	a.fill[i] = 0
	a.capacity[i] = 0
	a.tokens[i] = 0
	a.lastFill[i] = now
}

// Acquire takes client i's token for a send at time now and returns how
// long, in ns, the send must wait (0: send now). Before the first throttle
// it takes nothing and returns 0. The token is reserved even when the wait
// is positive: the caller must send after the wait, not call again.
//
//	fill 2 rps, empty bucket, four calls at t:  waits 0.5 s, 1 s, 1.5 s, 2 s
func (a *ClientRateLimiter) Acquire(now int64, i int) (wait int64) {
	if !a.enabled[i] {
		return 0
	}
	a.refill(i, now)
	a.tokens[i]--
	if a.tokens[i] >= 0 {
		return 0
	}
	return int64(math.Ceil(-a.tokens[i] / a.fill[i] * 1e9))
}

// TryAcquire is Acquire without waiting (aws-sdk-go-v2's
// FailOnNoAttemptTokens): it takes a token and returns true if one is
// available at now (or the limiter is not enabled), else takes nothing and
// returns false.
func (a *ClientRateLimiter) TryAcquire(now int64, i int) bool {
	if !a.enabled[i] {
		return true
	}
	a.refill(i, now)
	if a.tokens[i] < 1 {
		return false
	}
	a.tokens[i]--
	return true
}

// Update records a response of client i at time now; throttled says
// whether it was a throttling error.
func (a *ClientRateLimiter) Update(now int64, i int, throttled bool) {
	c := &a.cfg
	// Measured rate (RateClocker.record / updateMeasuredRate).
	a.count[i]++
	if b := floorTo(now, c.BucketInterval); b > a.lastBkt[i] {
		rate := float64(a.count[i]) / (float64(b-a.lastBkt[i]) / 1e9)
		a.measured[i] = rate*c.Smoothing + a.measured[i]*(1-c.Smoothing)
		a.count[i] = 0
		a.lastBkt[i] = b
	}
	m := a.measured[i]
	var rate float64
	if throttled {
		r := m
		if a.enabled[i] {
			r = min(m, a.fill[i])
		}
		a.wmax[i] = r
		a.k[i] = c.K(r)
		a.lastFail[i] = now
		rate = r * c.Beta
		a.enabled[i] = true
	} else {
		rate = c.Cubic(a.wmax[i], a.k[i], float64(now-a.lastFail[i])/1e9)
	}
	a.setRate(i, now, min(rate, 2*m))
}

// setRate is botocore's TokenBucket.max_rate setter (Go's
// tokenBucketUpdateRate): refill at the old rate, then fill =
// max(r, MinRate), capacity = max(r, 1), balance clamped to the capacity.
func (a *ClientRateLimiter) setRate(i int, now int64, r float64) {
	a.refill(i, now)
	a.fill[i] = max(r, a.cfg.MinRate)
	a.capacity[i] = max(r, 1)
	a.tokens[i] = min(a.tokens[i], a.capacity[i])
}

func (a *ClientRateLimiter) refill(i int, now int64) {
	if dt := now - a.lastFill[i]; dt > 0 {
		a.tokens[i] = min(a.capacity[i], a.tokens[i]+float64(dt)*a.fill[i]/1e9)
		a.lastFill[i] = now
	}
}

// FillRate is client i's token fill rate in tokens (sends) per second: the
// send-rate limit once enabled (0 before the first Update).
func (a *ClientRateLimiter) FillRate(i int) float64 { return a.fill[i] }

// Enabled reports whether client i has seen a throttle, so its sends are
// rate limited.
func (a *ClientRateLimiter) Enabled(i int) bool { return a.enabled[i] }

// Measured is client i's smoothed measured response rate, rps.
func (a *ClientRateLimiter) Measured(i int) float64 { return a.measured[i] }

// Capacity is client i's bucket capacity in tokens.
func (a *ClientRateLimiter) Capacity(i int) float64 { return a.capacity[i] }

// CubicState returns client i's CUBIC state: W_max (rps), K (s) and the time of
// the last throttle (ns).
func (a *ClientRateLimiter) CubicState(i int) (wmax, k float64, lastFail int64) {
	return a.wmax[i], a.k[i], a.lastFail[i]
}

// Tokens is client i's token balance at time now, without changing state;
// negative when sends are reserved ahead.
func (a *ClientRateLimiter) Tokens(now int64, i int) float64 {
	t := a.tokens[i]
	if dt := now - a.lastFill[i]; dt > 0 {
		t = min(a.capacity[i], t+float64(dt)*a.fill[i]/1e9)
	}
	return t
}

// floorTo rounds t down to a multiple of w (w > 0), also for negative t.
func floorTo(t, w int64) int64 {
	r := t % w
	if r < 0 {
		r += w
	}
	return t - r
}
