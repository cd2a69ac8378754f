package policy

import "testing"

// Presets named after a library behave like that library (issue 16 item
// 7). Each test replays what the library's own code or tests assert.

// sony/gobreaker v2/gobreaker_test.go TestDefaultCircuitBreaker, step for
// step: 5 failures, a success, a failure (counts 7/1/6, 1 consecutive
// failure), 5 more failures trip (6 consecutive > 5); calls are refused;
// at 59 s still open; after the 60 s Timeout half-open; a failure reopens;
// 60 s later half-open again; a success closes. gobreaker moves to
// half-open only when expiry.Before(now) (v2/gobreaker.go currentState):
// at exactly 60 s it is still open.
func TestGobreakerDefaultCircuitBreaker(t *testing.T) {
	s := mustBreakerSet(t, 1, GobreakerDefaults())
	const open1 = 60 * sec
	open2 := open1 + 1 + 60*sec
	runBreakerSteps(t, s, 0, brCat(
		brSeq(opFail, 0, 0, 5, bClosed),
		[]brStep{{0, opOK, bClosed, 0}, {0, opFail, bClosed, 0}},
		brSeq(opFail, 0, 0, 4, bClosed),
		[]brStep{
			{0, opFail, bOpen, open1}, // 6 consecutive failures
			{0, opRefuse, bOpen, 0},
			{59 * sec, opRefuse, bOpen, 0},
			{60 * sec, opRefuse, bOpen, 0}, // exactly the Timeout: still open
			{60*sec + 1, opLook, bHalfOpen, 0},
			{60*sec + 1, opAllow, bHalfOpen, 0},
			{60*sec + 1, opFail, bOpen, open2}, // half-open to open
			{open2, opRefuse, bOpen, 0},
			{open2 + 1, opAllow, bHalfOpen, 0},
			{open2 + 1, opOK, bClosed, 0}, // MaxRequests (1) consecutive successes
		}))
}

// gobreaker consults ReadyToTrip in onFailure only (v2/gobreaker.go): a
// success never trips, even one that brings a custom rule's ratio to its
// threshold. Rule: at least 3 requests and a failure ratio >= 0.6 (the
// shape of gobreaker_test.go's customCB). fail, fail, ok: 2/3 >= 0.6 on a
// success, still closed; the next failure, 3/4, trips. resilience4j
// (TripOnFailuresOnly false) trips on that success.
func TestGobreakerCustomTripOnFailuresOnly(t *testing.T) {
	g := GobreakerDefaults()
	g.Trip, g.FailureRate, g.MinCalls, g.WindowCalls = TripRate, 0.6, 3, 1000
	runBreakerSteps(t, mustBreakerSet(t, 1, g), 0, []brStep{
		{0, opFail, bClosed, 0},
		{1, opFail, bClosed, 0},
		{2, opOK, bClosed, 0},          // 2/3 reached on a success: not consulted
		{3, opFail, bOpen, 3 + 60*sec}, // 3/4 on a failure: open
	})
	r := g
	r.TripOnFailuresOnly = false
	runBreakerSteps(t, mustBreakerSet(t, 1, r), 0, []brStep{
		{0, opFail, bClosed, 0},
		{1, opFail, bClosed, 0},
		{2, opOK, bOpen, 2 + 60*sec}, // consulted after a success too
	})
}

// gobreaker drops a result from an earlier generation (afterRequest:
// generation != before → return): a call admitted while closed whose
// failure arrives after the breaker tripped and moved on changes nothing.
// RecordGen is that rule; Record (resilience4j's) gives the result to the
// current state.
func TestGobreakerLateResultIgnored(t *testing.T) {
	c := GobreakerDefaults()
	c.ConsecutiveFailures = 1
	s := mustBreakerSet(t, 1, c)
	s.Allow(0, 0)
	late := s.Generation(0) // admitted while closed
	s.Allow(0, 0)
	s.Record(0, 0, true, 0.5) // another call fails: open until 60 s
	if !s.Allow(61*sec, 0) {  // a probe in half-open
		t.Fatal("no probe at 61 s")
	}
	if s.RecordGen(61*sec, 0, late, false, 0.5) {
		t.Fatal("RecordGen took a result from an earlier generation")
	}
	if got := s.State(61*sec, 0); got != bHalfOpen {
		t.Fatalf("state %v after a late success, want half-open (gobreaker ignores it)", got)
	}
}

// resilience4j IntervalFunction.ofExponentialRandomBackoff(initial,
// multiplier, randomizationFactor, maxInterval) randomises the backed-off
// interval first and caps it after (Math.min(interval, maxIntervalMillis)),
// so no wait exceeds the cap. Open 10 s, ×2, factor 0.5, cap 25 s; the
// second open: 20 s × [0.5, 1.5] = [10 s, 30 s], capped at 25 s.
// (resilience4j's randomize adds up to 1 ms more: min + r·(max − min + 1);
// not modelled.) The earlier order, capped then jittered, is kept as
// JitterBeforeCap false and can exceed the cap.
func TestResilience4jOpenWaitJitteredThenCapped(t *testing.T) {
	c := Resilience4jDefaults()
	c.OpenDuration, c.OpenBackoff, c.OpenJitter, c.MaxOpenDuration = 10*sec, 2, 0.5, 25*sec
	old := c
	old.JitterBeforeCap = false
	for _, tt := range []struct {
		opens    int
		u        float64
		want     int64 // resilience4j
		wantPrev int64 // capped, then jittered
	}{
		{1, 0, 5 * sec, 5 * sec},
		{1, 0.5, 10 * sec, 10 * sec},
		{2, 0, 10 * sec, 10 * sec},
		{2, 0.5, 20 * sec, 20 * sec},
		{2, 0.75, 25 * sec, 25 * sec},
		{2, 0.9, 25 * sec, 28 * sec},
		{3, 0, 20 * sec, 12500 * sec / 1000}, // 40 s × 0.5, against 25 s × 0.5
		{3, 0.5, 25 * sec, 25 * sec},
	} {
		if got := c.OpenPeriod(tt.opens, tt.u); got != tt.want {
			t.Errorf("resilience4j opens %d u %v: %v ns, want %v", tt.opens, tt.u, got, tt.want)
		}
		if got := old.OpenPeriod(tt.opens, tt.u); got != tt.wantPrev {
			t.Errorf("cap-then-jitter opens %d u %v: %v ns, want %v", tt.opens, tt.u, got, tt.wantPrev)
		}
	}
}

// aws-sdk-go-v2 aws/retry/jitter_backoff.go (standard mode, the legacy
// formula): BackoffDelay(attempt) = rand·2^attempt s while attempt ≤
// int(log2(MaxBackoff/1 s)), else exactly MaxBackoff with no jitter. The
// middleware passes the number of the attempt that failed (1 before the
// first retry), so the first retry waits U[0, 2 s): an effective base of
// 2 s, not botocore's 1 s (retries/standard.py ExponentialBackoff:
// rand·2^(attempt−1)). With MaxBackoff 20 s, int(log2 20) = 4: retries 1–4
// are jittered over 2, 4, 8, 16 s and retry 5 on waits exactly 20 s.
func TestAWSSDKGoV2StandardBackoff(t *testing.T) {
	b := Backoff{Base: 2 * sec, Cap: 20 * sec, Multiplier: 2, Jitter: FullBelowCap}
	for _, tt := range []struct {
		n    int
		u    float64
		want int64
	}{
		{1, 0.5, 1 * sec}, {1, 0, 0}, // U[0, 2 s)
		{2, 0.5, 2 * sec},
		{3, 0.5, 4 * sec},
		{4, 0.5, 8 * sec}, {4, 0.99, 15840 * sec / 1000}, // still jittered at 16 s ≤ 20 s
		{5, 0, 20 * sec}, {5, 0.5, 20 * sec}, {9, 0.1, 20 * sec}, // beyond: exactly MaxBackoff
	} {
		if got := b.Delay(tt.n, 0, tt.u); got != tt.want {
			t.Errorf("retry %d u %v: %v, want %v", tt.n, tt.u, got, tt.want)
		}
	}
	// Full jitter, throttlesim's jitter: full, keeps jittering at the cap.
	b.Jitter = Full
	if got := b.Delay(5, 0, 0.5); got != 10*sec {
		t.Errorf("full jitter at the cap: %v, want 10 s", got)
	}
	// An exact power of two: MaxBackoff 16 s gives int(log2 16) = 4, so
	// retry 4 is jittered over 16 s and retry 5 waits 16 s.
	b = Backoff{Base: 2 * sec, Cap: 16 * sec, Multiplier: 2, Jitter: FullBelowCap}
	if got := b.Delay(4, 0, 0.5); got != 8*sec {
		t.Errorf("MaxBackoff 16 s, retry 4: %v, want 8 s", got)
	}
	if got := b.Delay(5, 0, 0.5); got != 16*sec {
		t.Errorf("MaxBackoff 16 s, retry 5: %v, want 16 s", got)
	}
}

// aws-sdk-go-v2 aws/retry/retry2026_test.go TestRetry2026StandardMode,
// with the test's random source fixed at 1 ("exponentialBase: 1"):
// delays 50, 100, 200, 400 ms ("verifying exponential backoff timing");
// with MaxBackoff 200 ms, 50, 100, 200, 200 ms ("verify max backoff
// time"); 1 s after a Throttling error ("throttling error token bucket
// drain and backoff duration"); DynamoDB's 25 ms base: 25, 50, 100 ms; an
// x-amz-retry-after of 10,000 ms waits 5,050 ms, of 0 ms the backoff
// (50 ms), of 1,500 ms 1,500 ms.
func TestAWSRetries2026Backoff(t *testing.T) {
	const ms = sec / 1000
	b := Backoff{Base: 50 * ms, Cap: 20 * sec, Multiplier: 2, Jitter: Full, ThrottleBase: sec}
	for n, want := range []int64{50 * ms, 100 * ms, 200 * ms, 400 * ms} {
		if got := b.DelayAfter(n+1, 0, 1, false); got != want {
			t.Errorf("retry %d: %v, want %v", n+1, got, want)
		}
	}
	if got := b.DelayAfter(1, 0, 1, true); got != sec {
		t.Errorf("after a throttle: %v, want 1 s", got)
	}
	capped := b
	capped.Cap = 200 * ms
	for n, want := range []int64{50 * ms, 100 * ms, 200 * ms, 200 * ms} {
		if got := capped.DelayAfter(n+1, 0, 1, false); got != want {
			t.Errorf("max 200 ms, retry %d: %v, want %v", n+1, got, want)
		}
	}
	ddb := b
	ddb.Base = 25 * ms
	for n, want := range []int64{25 * ms, 50 * ms, 100 * ms} {
		if got := ddb.DelayAfter(n+1, 0, 1, false); got != want {
			t.Errorf("dynamodb retry %d: %v, want %v", n+1, got, want)
		}
	}
	for _, tt := range []struct{ ra, want int64 }{{10000 * ms, 5050 * ms}, {0, 50 * ms}, {1500 * ms, 1500 * ms}} {
		if got := ClampRetryAfter(b.DelayAfter(1, 0, 1, false), tt.ra, AWS2026RetryAfterExtra); got != tt.want {
			t.Errorf("x-amz-retry-after %v: %v, want %v", tt.ra, got, tt.want)
		}
	}
}

// A retried request that succeeds: botocore gives back the retry's cost
// only (quota.py; AWSStandardDefaults); aws-sdk-go-v2 gives back the cost
// through the retry token and NoRetryIncrement through the attempt token
// (standard.go GetAttemptToken: "applies to result of the each attempt,
// including the first"), IncrementAfterRetry.
func TestAWSSDKGoV2RetriedSuccessRefund(t *testing.T) {
	for _, tt := range []struct {
		name string
		goV2 bool
		want float64
	}{{"botocore", false, 495}, {"aws-sdk-go-v2", true, 496}} {
		c := AWSStandardDefaults()
		c.IncrementAfterRetry = tt.goV2
		b := mustBudget(t, c, 1)
		runBudgetSteps(t, b, []budgetStep{
			{op: "retry", allow: true, cost: 5, level: 495}, // request A's retry
			{op: "retry", allow: true, cost: 5, level: 490}, // request B's retry
			{op: "ok", charge: 5, level: tt.want},           // A's retry succeeds
			{op: "ok", level: tt.want + 1},                  // a request without retries: +1 in both
		})
	}
}

// twitter/util TokenBucketTest "provisions reserves" (TTL 3 s, 10 lazy
// slices of 300 ms, the bucket used once a second): tokens withdrawn at
// 0 s still count at 1, 2 and 3 s and are gone at 4 s, because each
// turn-over at a 1 s gap moves the slots by ⌊1000/300⌋ = 3 and loses the
// rest (WindowedAdder.expired). Here with w = 50 (percent_can_retry 20)
// and a reserve of 1 retry/s × 3 s × 50 = 150: three retries at 0 s spend
// it; refused at 1, 2, 3 s; allowed at 4 s. With aligned slices the
// withdrawals expire at exactly 3 s.
func TestFinagleProvisionsReserves(t *testing.T) {
	c := FinagleDefaults()
	c.TTL, c.MinRetriesPerSec, c.PercentCanRetry = 3*sec, 1, 20
	start := []budgetStep{
		{at: 0, op: "retry", times: 3, allow: true, level: 0},
		{at: 0, op: "retry", allow: false, level: 0},
		{at: 1 * sec, op: "retry", allow: false, level: 0},
		{at: 2 * sec, op: "retry", allow: false, level: 0},
	}
	runBudgetSteps(t, mustBudget(t, c, 1), append(start[:4:4],
		budgetStep{at: 3 * sec, op: "retry", allow: false, level: 0},  // Finagle: still refused at 3 s
		budgetStep{at: 4 * sec, op: "retry", allow: true, level: 100}, // the −150 expired: 150 − 50
	))
	c.FinagleAlignedSlices = true
	runBudgetSteps(t, mustBudget(t, c, 1), append(start[:4:4],
		budgetStep{at: 3 * sec, op: "retry", allow: true, level: 100}, // aligned: slice 0 gone at 3 s
		budgetStep{at: 4 * sec, op: "retry", allow: true, level: 50},
	))
}

// twitter/util TokenBucketTest "a leaky bucket is leaky": put 100, take 1,
// and after the TTL (3 s) nothing is left to take. Here: two requests
// deposit 2,000, a retry with percent_can_retry 1 takes 1,000; at 3 s the
// single turn-over skips every slot (⌊3000/300⌋ − 1 = 9 ≥ N).
func TestFinagleLeakyBucketIsLeaky(t *testing.T) {
	c := FinagleDefaults()
	c.TTL, c.MinRetriesPerSec, c.PercentCanRetry = 3*sec, 0, 1
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{at: 0, op: "req", times: 2, level: 2000},
		{at: 0, op: "retry", allow: true, level: 1000},
		{at: 3 * sec, op: "retry", allow: false, level: 0},
	})
}
