package policy

import (
	"errors"
	"fmt"
	"math"
)

// BudgetKind names a retry budget: a per-client (or per-group) limit on how
// many retries may be sent, as opposed to the per-request attempt cap.
type BudgetKind uint8

// Retry budgets. Each keeps state per instance (one per client or per
// client group) and fails a refused retry at once: none of them blocks.
const (
	// BudgetSRE: retry only while retries/requests < Ratio over a sliding
	// window (Google SRE book, "Handling Overload", "Deciding to Retry").
	BudgetSRE BudgetKind = iota
	// BudgetGRPC: gRPC retry throttling (gRFC A6): a token count, −1 per
	// failed attempt, +TokenRatio per successful one, retries only while
	// above MaxTokens/2.
	BudgetGRPC
	// BudgetFinagle: Finagle's RetryBudget: a leaky token bucket, deposits
	// per request and withdrawals per retry expiring after a TTL, plus a
	// standing reserve.
	BudgetFinagle
	// BudgetAWS: the AWS SDKs' standard-mode retry quota: a bucket of
	// Capacity tokens, each retry costs tokens, successes give some back.
	BudgetAWS
	// BudgetTokenBucket: Brooker's retry token bucket ("Fixing retries
	// with token buckets and circuit breakers", 2022; "adaptive" in
	// mbrooker/simulator_example retry_sim/retry_strategy.py
	// AdaptiveRetryStrategy): a capped bucket that every first try fills by
	// Deposit, and that pays Cost per retry while it holds more than
	// Threshold. Failures and successes do not move it.
	BudgetTokenBucket
	// BudgetRetryBreaker: Brooker's circuit breaker on retries only (same
	// post; CircuitBreakerRetryStrategy in retry_strategy.py): no retry
	// while failures/first tries exceeds MaxFailureRate, cumulative or over
	// a sliding window. First tries are never refused.
	BudgetRetryBreaker
)

// RetryCause is why the attempt that wants a retry failed. Only BudgetAWS
// prices causes differently; the other kinds ignore it.
type RetryCause uint8

// Retry causes, as the AWS SDKs classify them.
const (
	// CauseError: any other retryable failure (5xx, connection error).
	CauseError RetryCause = iota
	// CauseTimeout: the attempt timed out (botocore: ConnectTimeoutError or
	// ReadTimeoutError; aws-sdk-go-v2: an error that IsErrorTimeout).
	CauseTimeout
	// CauseThrottle: the server throttled the attempt (429-like error codes
	// such as Throttling, SlowDown; botocore ThrottlingErrorDetector).
	CauseThrottle
)

// BudgetConfig is the configuration shared by every instance of a
// BudgetSet. Only the fields of Kind are read; start from SREDefaults,
// GRPCDefaults, FinagleDefaults, AWSStandardDefaults or AWS2026Defaults.
type BudgetConfig struct {
	Kind BudgetKind

	// Buckets is the number of time buckets of the sliding window (SRE:
	// Window/Buckets wide; Finagle: TTL/Buckets wide). A record made at t
	// lives in bucket floor(t/width) and expires when bucket
	// floor(t/width)+Buckets begins, i.e. after between (Buckets−1)·width
	// and Buckets·width: the model's approximation of a sliding window.
	// Buckets must be at least 1 ms wide.
	Buckets int64

	// SRE.
	Ratio  float64 // a retry is allowed while retries/requests < Ratio (0.1)
	Window int64   // ns; the book gives none for the retry ratio (2 min)
	// FirstAttemptsOnly makes requests count only new application
	// requests. By default (false) a granted retry counts as a request as
	// well, so the ratio is the share of sent requests that are retries.
	FirstAttemptsOnly bool

	// gRPC. A6 has no defaults (both must be set); GRPCDefaults uses A6's
	// example, 10 and 0.1.
	MaxTokens  float64 // in (0, 1000]
	TokenRatio float64 // > 0; kept to 3 decimals (rounded to the nearest 0.001)

	// Finagle (RetryBudget.apply).
	TTL              int64   // ns, deposits and withdrawals expire after it; [1 s, 60 s]
	MinRetriesPerSec int     // reserve: this many retries per second of TTL; ≥ 0
	PercentCanRetry  float64 // retries per request, as a fraction; 0 or [1e-6, 1000]
	// FinagleAlignedSlices replaces Finagle's lazy slices (the default,
	// false: twitter/util WindowedAdder, whose slices turn over only when
	// the bucket is used at least TTL/Buckets after the last turn-over,
	// counting whole slices of the time elapsed, so a record can outlive
	// the TTL when the budget is used sparsely) by slices aligned to
	// multiples of TTL/Buckets from time 0, in which a record lives
	// between (Buckets−1)/Buckets and all of the TTL whatever the traffic.
	FinagleAlignedSlices bool

	// AWS (retry quota).
	Capacity         int32 // tokens, and the initial balance (500)
	RetryCost        int32 // a retry after CauseError (5; 2026: 14)
	TimeoutCost      int32 // a retry after CauseTimeout (10; 2026: 14)
	ThrottleCost     int32 // a retry after CauseThrottle (5; 2026: 5)
	NoRetryIncrement int32 // returned by a success that needed no retry (1)
	// IncrementAfterRetry: a successful retry returns its charge and
	// NoRetryIncrement as well (aws-sdk-go-v2 standard.go: the attempt
	// token, "applies to result of the each attempt, including the
	// first", adds NoRetryIncrement; the retry token returns the cost).
	// false: the charge only (botocore quota.py release on a retried
	// request).
	IncrementAfterRetry bool

	// Token bucket (Brooker 2022). Token amounts are kept to 3 decimals
	// (rounded to the nearest 0.001), so that ten deposits of 0.1 make
	// exactly 1; each must be in [0, 1e6].
	BucketCapacity float64 // the cap (5)
	BucketInitial  float64 // the level at time 0 (5: full), ≤ BucketCapacity
	Deposit        float64 // added by every first try, up to the cap (0.1)
	Threshold      float64 // a retry is allowed while the level is > Threshold (1)
	Cost           float64 // taken by every granted retry (1); > 0

	// Retry-only breaker (Brooker 2022). A retry is refused while
	// failures/first tries > MaxFailureRate (0.1). Window 0 counts from
	// time 0 (Brooker's simulator); Window > 0 counts over a sliding window
	// of Buckets buckets (see Buckets).
	MaxFailureRate float64

	// ChargeAtSend: a granted retry is charged when it is sent, after its
	// backoff (ChargeRetry), not when it is granted (AllowRetry does both
	// at once). The decision still reads the budget at the failure, so
	// retries waiting out their backoff are invisible to each other's
	// decisions (Envoy's retry budget counts only retries in flight).
	// Only the kinds whose grant charges something: SRE, Finagle, AWS and
	// the token bucket (CanRetry).
	ChargeAtSend bool
}

// SREDefaults is the SRE book's per-client retry budget: retries while
// retries/requests < 10%. The book states no window for this ratio; we use
// the two minutes it gives for adaptive throttling, in 1-second buckets.
func SREDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetSRE, Ratio: 0.1, Window: 120e9, Buckets: 120}
}

// GRPCDefaults is gRPC retry throttling with the example of gRFC A6
// ("maxTokens": 10, "tokenRatio": 0.1). A6 defines no defaults: a service
// config must set both fields; these are our documented choice.
func GRPCDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetGRPC, MaxTokens: 10, TokenRatio: 0.1}
}

// FinagleDefaults is Finagle's RetryBudget(): TTL 10 s, minRetriesPerSec 10,
// percentCanRetry 0.2 (finagle-core RetryBudget.scala), with the 10 slices
// of the WindowedAdder behind TokenBucket.newLeakyBucket, turned over
// lazily as Finagle does (see FinagleAlignedSlices).
func FinagleDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetFinagle, TTL: 10e9, MinRetriesPerSec: 10, PercentCanRetry: 0.2, Buckets: 10}
}

// AWSStandardDefaults is the retry quota of the AWS SDKs' standard mode:
// 500 tokens, retry cost 5, timeout cost 10, +1 on a success without
// retries (aws-sdk-go-v2 aws/retry/standard.go DefaultRetryRateTokens,
// DefaultRetryCost, DefaultRetryTimeoutCost, DefaultNoRetryIncrement;
// botocore retries/quota.py INITIAL_CAPACITY and retries/standard.py
// RetryQuotaChecker). Throttles cost the ordinary 5.
func AWSStandardDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetAWS, Capacity: 500, RetryCost: 5, TimeoutCost: 10, ThrottleCost: 5, NoRetryIncrement: 1}
}

// AWS2026Defaults is the opt-in 2026 standard mode (AWS_NEW_RETRIES_2026;
// botocore STANDARD_RETRY_MODE_VERSION "2.1", RetryQuotaChecker
// _RETRY_COST_V2 = 14 and _THROTTLING_RETRY_COST = 5): a retry costs 14,
// or 5 after a throttle; timeouts are not priced apart (botocore 2.1 checks
// only for throttling). aws-sdk-go-v2 retry2026_test.go: 500 → 486 → 472
// after two 5xx retries, back to 486 on success; 495 after a throttle.
func AWS2026Defaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetAWS, Capacity: 500, RetryCost: 14, TimeoutCost: 14, ThrottleCost: 5, NoRetryIncrement: 1}
}

// TokenBucketDefaults is the retry token bucket of Brooker's 2022 post as
// his simulator runs it (mbrooker/simulator_example
// retry_sim/retry_sim.py, AdaptiveRetryFactory(0.1, 5)): capacity 5,
// starting full, +0.1 per first try, a retry allowed while the level is
// > 1 and costing 1.
func TokenBucketDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetTokenBucket, BucketCapacity: 5, BucketInitial: 5, Deposit: 0.1, Threshold: 1, Cost: 1}
}

// RetryBreakerDefaults is the retry-only breaker of Brooker's 2022 post as
// his simulator runs it (retry_sim.py, CircuitBreakerRetryFactory(
// NRetriesFactory(3), 0.1)): no retries while failures/first tries > 10%,
// both counted since the client started (no window).
func RetryBreakerDefaults() BudgetConfig {
	return BudgetConfig{Kind: BudgetRetryBreaker, MaxFailureRate: 0.1}
}

// Validate reports a configuration a BudgetSet cannot run with.
func (c BudgetConfig) Validate() error {
	if c.ChargeAtSend && (c.Kind == BudgetGRPC || c.Kind == BudgetRetryBreaker) {
		return errors.New("policy: ChargeAtSend: this budget kind charges nothing when it grants a retry (gRPC and the retry breaker count the retry's result instead)")
	}
	switch c.Kind {
	case BudgetSRE:
		switch {
		case !(c.Ratio > 0 && c.Ratio <= 1):
			return errors.New("policy: SRE budget Ratio must be in (0, 1]")
		case c.Buckets < 1:
			return errors.New("policy: SRE budget Buckets must be at least 1")
		case c.Window/c.Buckets < minBudgetBucket:
			return errors.New("policy: SRE budget buckets (Window/Buckets) must be at least 1 ms wide")
		}
	case BudgetGRPC:
		switch {
		case !(c.MaxTokens > 0 && c.MaxTokens <= 1000) || milli(c.MaxTokens) < 1:
			return errors.New("policy: gRPC budget MaxTokens must be in [0.001, 1000]")
		case !(c.TokenRatio > 0) || math.IsInf(c.TokenRatio, 1):
			return errors.New("policy: gRPC budget TokenRatio must be positive")
		case milli(c.TokenRatio) < 1:
			return errors.New("policy: gRPC budget TokenRatio rounds to 0 at 3 decimals")
		case milli(c.TokenRatio) > math.MaxInt32/2:
			return errors.New("policy: gRPC budget TokenRatio too large")
		}
	case BudgetFinagle:
		switch {
		case c.TTL < 1e9 || c.TTL > 60e9:
			return errors.New("policy: Finagle budget TTL must be in [1 s, 60 s]")
		case c.MinRetriesPerSec < 0 || c.MinRetriesPerSec > 1e6:
			return errors.New("policy: Finagle budget MinRetriesPerSec must be in [0, 1e6]")
		case !(c.PercentCanRetry == 0 || c.PercentCanRetry >= 1e-6 && c.PercentCanRetry <= 1000):
			// Finagle allows (0, 1e-6) too; we refuse it so that
			// 1000/PercentCanRetry and the reserve fit in int64.
			return errors.New("policy: Finagle budget PercentCanRetry must be 0 or in [1e-6, 1000]")
		case c.Buckets < 1:
			return errors.New("policy: Finagle budget Buckets must be at least 1")
		case c.TTL/c.Buckets < minBudgetBucket:
			return errors.New("policy: Finagle budget buckets (TTL/Buckets) must be at least 1 ms wide")
		case !c.FinagleAlignedSlices && (c.Buckets < 2 || c.Buckets > 256):
			return errors.New("policy: Finagle budget Buckets must be in [2, 256] (WindowedAdder: slices > 1)")
		}
	case BudgetAWS:
		switch {
		case c.Capacity < 0:
			return errors.New("policy: AWS budget Capacity must not be negative")
		case c.RetryCost < 1 || c.TimeoutCost < 1 || c.ThrottleCost < 1:
			return errors.New("policy: AWS budget retry costs must be at least 1")
		case c.NoRetryIncrement < 0:
			return errors.New("policy: AWS budget NoRetryIncrement must not be negative")
		}
	case BudgetTokenBucket:
		for _, f := range []struct {
			name string
			v    float64
		}{{"BucketCapacity", c.BucketCapacity}, {"BucketInitial", c.BucketInitial}, {"Deposit", c.Deposit}, {"Threshold", c.Threshold}, {"Cost", c.Cost}} {
			if !(f.v >= 0 && f.v <= 1e6) {
				return fmt.Errorf("policy: token-bucket budget %s must be in [0, 1e6], got %v", f.name, f.v)
			}
		}
		switch {
		case milli(c.Cost) < 1:
			return errors.New("policy: token-bucket budget Cost must be at least 0.001")
		case milli(c.BucketInitial) > milli(c.BucketCapacity):
			return errors.New("policy: token-bucket budget BucketInitial must not exceed BucketCapacity")
		}
	case BudgetRetryBreaker:
		switch {
		case !(c.MaxFailureRate >= 0) || math.IsInf(c.MaxFailureRate, 1):
			return errors.New("policy: retry-breaker budget MaxFailureRate must be a finite number >= 0")
		case c.Window < 0:
			return errors.New("policy: retry-breaker budget Window must be >= 0 (0: since the start)")
		case c.Window > 0 && c.Buckets < 1:
			return errors.New("policy: retry-breaker budget Buckets must be at least 1")
		case c.Window > 0 && c.Window/c.Buckets < minBudgetBucket:
			return errors.New("policy: retry-breaker budget buckets (Window/Buckets) must be at least 1 ms wide")
		}
	default:
		return fmt.Errorf("policy: unknown retry budget kind %d", c.Kind)
	}
	return nil
}

// minBudgetBucket is the narrowest bucket of the windowed kinds: Window
// numbers buckets in 32 bits, which at 1 ms lasts 49 days of virtual time.
const minBudgetBucket = 1e6

// milli is x in thousandths, rounded to the nearest (gRPC core keeps the
// token count in milli-tokens; A6: "Up to 3 decimal places are supported").
func milli(x float64) int64 { return int64(math.Round(x * 1000)) }

// BudgetSet is n retry budgets of one kind and one configuration, kept as
// flat slices (one element per instance), so a million clients cost a few
// slices, not a million objects. Instance i is a client or a client group:
// the caller maps clients to instances (scope per client, as the AWS SDKs
// per client object, gRPC per channel and server name, Finagle per client
// stack; or per group).
//
// The caller reports three events per instance:
//
//   - OnRequest when a new application request starts (its first attempt);
//   - AllowRetry when an attempt failed and the caller wants to retry it:
//     true means the retry is sent and has been charged;
//   - OnResult when an attempt finishes, with the charge of the request's
//     latest granted retry (0 if it was never retried).
//
// What each kind does with them:
//
//	kind     OnRequest        AllowRetry                          OnResult
//	SRE      requests++       retries/requests < Ratio → retries++ —
//	gRPC     —                tokens > MaxTokens/2 (no charge)    fail −1 (≥ 0), success +TokenRatio (≤ max)
//	Finagle  deposit 1000     balance ≥ w → withdraw w            —
//	AWS      —                quota ≥ cost → quota −= cost        success: +charge, or +1 if not retried (≤ Capacity)
//	bucket   +Deposit (≤ cap) level > Threshold → level −= Cost     —
//	breaker  first tries++    failures/first tries ≤ rate (no charge) failure: failures++
//
// Time must not go backwards across the whole set (the windowed kinds
// share one FIFO of records, see Window). No method allocates, except
// that the windowed kinds' FIFO grows, amortised, until it holds one
// window of records.
type BudgetSet struct {
	c BudgetConfig
	n int

	tok []int32 // gRPC, token bucket: milli-tokens; AWS: quota
	win *Window // SRE: requests, retries; Finagle: deposits, withdrawals; retry breaker: first tries, failures

	first, fails []uint32 // retry breaker without a window: counts since time 0

	capMilli, depMilli, thrMilli, costMilli int32 // token bucket

	// Finagle's lazy WindowedAdder, per instance: the writer (the current
	// slice), the time of the last turn-over in ms, the index of the next
	// slot and slices−1 closed slots (all in tokens).
	fw, fOld []int64
	fIdx     []uint8
	fBuf     []int64
	fN       int   // closed slots per instance: slices − 1
	fWin     int64 // slice width in ms: TTL/slices, integer ms as in Finagle

	maxMilli, ratioMilli int32 // gRPC
	deposit, withdraw    int64 // Finagle, tokens per request and per retry
	reserve              int64 // Finagle
}

// NewBudgetSet makes n budgets with configuration c, each at its initial
// state: SRE and Finagle windows empty, gRPC at MaxTokens, AWS at Capacity.
// It returns an error if c is invalid (see Validate) or n is negative or
// ≥ 2³¹.
func NewBudgetSet(n int, c BudgetConfig) (*BudgetSet, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if n < 0 || n >= 1<<31 {
		return nil, fmt.Errorf("policy: number of budgets must be in [0, 2^31), got %d", n)
	}
	b := &BudgetSet{c: c, n: n}
	switch c.Kind {
	case BudgetSRE:
		b.win = NewWindow(n, c.Window/c.Buckets, c.Buckets)
	case BudgetGRPC:
		b.maxMilli, b.ratioMilli = int32(milli(c.MaxTokens)), int32(milli(c.TokenRatio))
		b.tok = make([]int32, n)
		for i := range b.tok {
			b.tok[i] = b.maxMilli
		}
	case BudgetFinagle:
		// RetryBudget.apply: with percentCanRetry 0 a request deposits
		// nothing and a retry costs 1 (all credit comes from the reserve);
		// otherwise deposit ScaleFactor = 1000 and withdraw
		// (1000/percentCanRetry).toInt (truncated). The reserve scales
		// minRetriesPerSec by ttl.inSeconds (whole seconds, truncated) and
		// by the withdrawal. Both 0 is RetryBudget.Empty, which the same
		// arithmetic gives: the balance never reaches the cost of 1.
		b.deposit, b.withdraw = 0, 1
		if c.PercentCanRetry > 0 {
			b.deposit, b.withdraw = 1000, int64(1000/c.PercentCanRetry)
		}
		b.reserve = int64(c.MinRetriesPerSec) * (c.TTL / 1e9) * b.withdraw
		if c.FinagleAlignedSlices {
			b.win = NewWindow(n, c.TTL/c.Buckets, c.Buckets)
		} else {
			// WindowedAdder.apply(range, slices, now): window =
			// range/slices, N = slices − 1, old = now() at creation (0).
			b.fN, b.fWin = int(c.Buckets-1), (c.TTL/1e6)/c.Buckets
			b.fw, b.fOld, b.fIdx = make([]int64, n), make([]int64, n), make([]uint8, n)
			b.fBuf = make([]int64, n*b.fN)
		}
	case BudgetAWS:
		b.tok = make([]int32, n)
		for i := range b.tok {
			b.tok[i] = c.Capacity
		}
	case BudgetTokenBucket:
		b.capMilli, b.depMilli = int32(milli(c.BucketCapacity)), int32(milli(c.Deposit))
		b.thrMilli, b.costMilli = int32(milli(c.Threshold)), int32(milli(c.Cost))
		b.tok = make([]int32, n)
		init := int32(milli(c.BucketInitial))
		for i := range b.tok {
			b.tok[i] = init
		}
	case BudgetRetryBreaker:
		if c.Window > 0 {
			b.win = NewWindow(n, c.Window/c.Buckets, c.Buckets)
		} else {
			b.first, b.fails = make([]uint32, n), make([]uint32, n)
		}
	}
	return b, nil
}

// Len is the number of instances.
func (b *BudgetSet) Len() int { return b.n }

// Config is the configuration the set was made with.
func (b *BudgetSet) Config() BudgetConfig { return b.c }

// OnRequest tells instance i that a new application request starts its
// first attempt at now. SRE counts it in requests; Finagle deposits 1000
// tokens (once per logical request, as RetryFilter.apply does); the token
// bucket gains Deposit (up to its capacity); the retry breaker counts a
// first try; gRPC and AWS ignore it.
func (b *BudgetSet) OnRequest(now int64, i int) {
	switch b.c.Kind {
	case BudgetSRE:
		b.win.RecordRequest(now, i)
	case BudgetFinagle:
		if b.win != nil {
			b.win.RecordRequest(now, i)
		} else {
			b.finagleAdd(i, now, b.deposit)
		}
	case BudgetTokenBucket:
		// AdaptiveRetryStrategy.start: bucket = min(bucket + fill, size).
		// Never above the cap: BucketInitial ≤ BucketCapacity; both ≤ 1e9
		// milli-tokens, so the sum fits int32.
		b.tok[i] = min(b.tok[i]+b.depMilli, b.capMilli)
	case BudgetRetryBreaker:
		if b.win != nil {
			b.win.RecordRequest(now, i)
		} else if b.first[i] < math.MaxUint32 {
			b.first[i]++
		}
	}
}

// AllowRetry reports whether instance i may send a retry at now of an
// attempt that failed for cause. If ok, the retry is charged and charge
// (≥ 1) is what it cost: the AWS quota cost of cause, 1 for the other
// kinds. The caller keeps the charge of a request's latest granted retry
// and passes it to OnResult (AWS refunds it on success: botocore keeps it
// in the request context, aws-sdk-go-v2 in the retry token's release
// function, so it is per request, not per client). If !ok nothing changes
// and the retry must not be sent (every kind fails fast).
//
//   - SRE: allowed iff requests > 0 and retries/requests < Ratio, both
//     counted in the window at now; a granted retry adds 1 to retries and,
//     unless FirstAttemptsOnly, 1 to requests.
//   - gRPC: allowed iff token_count > MaxTokens/2. Nothing is charged
//     here: the retry's own failure or success will move the tokens.
//   - Finagle: allowed iff balance ≥ w, where balance = reserve + 1000 ×
//     deposits − w × withdrawals in the window and w = 1000/PercentCanRetry;
//     then w is withdrawn (TokenBucket.newLeakyBucket tryGet).
//   - AWS: allowed iff the quota holds the cost of cause; then the cost is
//     taken (quota.py acquire).
func (b *BudgetSet) AllowRetry(now int64, i int, cause RetryCause) (charge int32, ok bool) {
	switch b.c.Kind {
	case BudgetSRE:
		b.win.Advance(now)
		req, ret := b.win.Counts(i)
		// The division of exact integers is correctly rounded, so a ratio
		// exactly at Ratio (1/10 against 0.1) compares equal: refused.
		if req == 0 || float64(ret)/float64(req) >= b.c.Ratio {
			return 0, false
		}
		if !b.c.FirstAttemptsOnly {
			b.win.RecordRequest(now, i)
		}
		b.win.RecordAccept(now, i)
		return 1, true
	case BudgetGRPC:
		if 2*int64(b.tok[i]) <= int64(b.maxMilli) {
			return 0, false
		}
		return 1, true
	case BudgetFinagle:
		if b.finagleCount(i, now) < b.withdraw {
			return 0, false
		}
		if b.win != nil {
			b.win.RecordAccept(now, i)
		} else {
			b.finagleAdd(i, now, -b.withdraw) // TokenBucket.tryGet: put(-n)
		}
		return 1, true
	case BudgetAWS:
		cost := b.awsCost(cause)
		if cost > b.tok[i] {
			return 0, false
		}
		b.tok[i] -= cost
		return cost, true
	case BudgetTokenBucket:
		// AdaptiveRetryStrategy.should_retry: if bucket > 1.0, take 1.0.
		if b.tok[i] <= b.thrMilli {
			return 0, false
		}
		b.tok[i] -= b.costMilli
		return 1, true
	case BudgetRetryBreaker:
		if b.breakerTripped(i, now) {
			return 0, false
		}
		return 1, true
	}
	return 0, false
}

// breakerTripped is CircuitBreakerRetryCall.should_retry's test,
// failures/first tries > MaxFailureRate (division, so that 1/10 against
// 0.1 compares equal: not tripped). Failures without any first try in the
// window (they can outlive them) trip it.
func (b *BudgetSet) breakerTripped(i int, now int64) bool {
	first, fails := b.breakerCounts(i, now)
	if first == 0 {
		return fails > 0
	}
	return float64(fails)/float64(first) > b.c.MaxFailureRate
}

func (b *BudgetSet) breakerCounts(i int, now int64) (first, fails uint32) {
	if b.win != nil {
		b.win.Advance(now)
		return b.win.Counts(i)
	}
	return b.first[i], b.fails[i]
}

// OnResult tells instance i that an attempt finished at now. success is
// whether it succeeded; charge is the charge of the request's latest
// granted retry (from AllowRetry), 0 if the request has not been retried.
//
//   - gRPC: every attempt counts, first or retry: a failure takes 1 token
//     (not below 0), a success adds TokenRatio (not above MaxTokens). A6
//     counts as failures only the retryable (or non-fatal) status codes and
//     "don't retry" pushback; the caller should not report other outcomes.
//   - AWS: a success gives back charge if the request was retried, else
//     NoRetryIncrement, never above Capacity; a failure gives nothing
//     (botocore release_retry_quota on after-call, 2xx only).
//   - retry breaker: a failure counts in failures (Brooker counts every
//     failed attempt, first try or retry, including the last one).
//   - SRE, Finagle and the token bucket ignore results.
func (b *BudgetSet) OnResult(now int64, i int, success bool, charge int32) {
	switch b.c.Kind {
	case BudgetRetryBreaker:
		if success {
			return
		}
		if b.win != nil {
			b.win.RecordAccept(now, i)
		} else if b.fails[i] < math.MaxUint32 {
			b.fails[i]++
		}
	case BudgetGRPC:
		t := b.tok[i]
		if success {
			t = min(t+b.ratioMilli, b.maxMilli)
		} else {
			t = max(t-1000, 0)
		}
		b.tok[i] = t
	case BudgetAWS:
		if !success {
			return
		}
		inc := int64(b.c.NoRetryIncrement)
		if charge > 0 {
			inc = int64(charge)
			if b.c.IncrementAfterRetry {
				inc += int64(b.c.NoRetryIncrement) // in int64: the sum of two int32 fits
			}
		}
		b.tok[i] += int32(min(inc, int64(b.c.Capacity-b.tok[i])))
	}
}

// Level is instance i's budget state at now, for metrics and tests:
//
//	SRE      retries/requests in the window (0 with no requests)
//	gRPC     token_count (thousandths exact)
//	Finagle  tokens: reserve + 1000·deposits − w·withdrawals (a retry needs w)
//	AWS      tokens left in the quota
//	bucket   tokens in the bucket (thousandths exact)
//	breaker  failures/first tries (0 with neither; +Inf with failures only)
func (b *BudgetSet) Level(now int64, i int) float64 {
	switch b.c.Kind {
	case BudgetSRE:
		b.win.Advance(now)
		req, ret := b.win.Counts(i)
		if req == 0 {
			return 0
		}
		return float64(ret) / float64(req)
	case BudgetGRPC:
		return float64(b.tok[i]) / 1000
	case BudgetFinagle:
		return float64(b.finagleCount(i, now))
	case BudgetAWS:
		return float64(b.tok[i])
	case BudgetTokenBucket:
		return float64(b.tok[i]) / 1000
	case BudgetRetryBreaker:
		first, fails := b.breakerCounts(i, now)
		switch {
		case first > 0:
			return float64(fails) / float64(first)
		case fails > 0:
			return math.Inf(1)
		}
		return 0
	}
	return 0
}

// WithdrawCost is the Finagle withdrawal per retry, w (0 for other kinds).
func (b *BudgetSet) WithdrawCost() int64 {
	if b.c.Kind != BudgetFinagle {
		return 0
	}
	return b.withdraw
}

// finagleCount is TokenBucket.count: the windowed sum plus the reserve.
// Withdrawals expire like deposits, so the sum can go negative (a retry
// outliving the deposits that paid for it eats into the reserve).
func (b *BudgetSet) finagleCount(i int, now int64) int64 {
	if b.win == nil {
		// WindowedAdder.sum: turn over if due, then writer + slots.
		b.finagleTurn(i, now)
		sum := b.fw[i]
		for _, v := range b.fBuf[i*b.fN : (i+1)*b.fN] {
			sum += v
		}
		return b.reserve + sum
	}
	b.win.Advance(now)
	dep, wd := b.win.Counts(i)
	return b.reserve + b.deposit*int64(dep) - b.withdraw*int64(wd)
}

// finagleAdd is WindowedAdder.add: turn over if due, then add x to the
// writer.
func (b *BudgetSet) finagleAdd(i int, now, x int64) {
	b.finagleTurn(i, now)
	b.fw[i] += x
}

// finagleTurn is WindowedAdder.expired, run when now − old ≥ window (in
// whole milliseconds, as Stopwatch.timeMillis): the writer's sum closes
// the current slot, the index moves on, then ⌊(now − old)/window⌋ − 1
// more slots (at most N) are cleared and skipped; old = now. So the slots
// move by ⌊gap/window⌋ per turn-over and the remainder of the gap is
// lost: records outlive the TTL when turn-overs are sparse.
func (b *BudgetSet) finagleTurn(i int, now int64) {
	ms := now / 1e6
	gap := ms - b.fOld[i]
	if gap < b.fWin {
		return
	}
	buf := b.fBuf[i*b.fN : (i+1)*b.fN]
	k := int(b.fIdx[i])
	buf[k] = b.fw[i]
	b.fw[i] = 0
	k = (k + 1) % b.fN
	if skip := min(gap/b.fWin-1, int64(b.fN)); skip > 0 {
		for j := int64(0); j < skip; j++ {
			buf[(k+int(j))%b.fN] = 0
		}
		k = (k + int(skip)) % b.fN
	}
	b.fIdx[i] = uint8(k)
	b.fOld[i] = ms
}

// awsCost is what a retry after a failure of cause takes from an aws
// quota: the timeout or throttle cost for those causes, else retry_cost.
func (b *BudgetSet) awsCost(cause RetryCause) int32 {
	switch cause {
	case CauseTimeout:
		return b.c.TimeoutCost
	case CauseThrottle:
		return b.c.ThrottleCost
	}
	return b.c.RetryCost
}
