package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// budgetStep is one row of a budget step table: at virtual time at, do op
// on instance i times times, then check the instance's Level.
type budgetStep struct {
	at     int64
	op     string // "req", "retry", "ok" (success), "fail", "" (look)
	i      int
	times  int        // 0 means 1
	cause  RetryCause // retry
	charge int32      // ok/fail: the request's latest retry charge
	allow  bool       // retry: expected answer, every time
	cost   int32      // retry: expected charge when allowed (0: don't check)
	level  float64    // Level(i, at) after the step
}

func runBudgetSteps(t *testing.T, b *BudgetSet, steps []budgetStep) {
	t.Helper()
	for k, st := range steps {
		n := max(st.times, 1)
		for j := 0; j < n; j++ {
			switch st.op {
			case "req":
				b.OnRequest(st.at, st.i)
			case "retry":
				c, ok := b.AllowRetry(st.at, st.i, st.cause)
				if ok != st.allow {
					t.Fatalf("step %d (t=%dns retry #%d of %d, instance %d): allowed=%v, want %v (level before %v)",
						k, st.at, j+1, n, st.i, ok, st.allow, b.Level(st.at, st.i))
				}
				if ok && st.cost != 0 && c != st.cost {
					t.Fatalf("step %d: charge %d, want %d", k, c, st.cost)
				}
				if !ok && c != 0 {
					t.Fatalf("step %d: refused retry charged %d", k, c)
				}
			case "ok":
				b.OnResult(st.at, st.i, true, st.charge)
			case "fail":
				b.OnResult(st.at, st.i, false, st.charge)
			case "":
			default:
				t.Fatalf("step %d: unknown op %q", k, st.op)
			}
		}
		if got := b.Level(st.at, st.i); got != st.level {
			t.Fatalf("step %d (t=%dns %s ×%d, instance %d): level %v, want %v", k, st.at, st.op, n, st.i, got, st.level)
		}
	}
}

// gRFC A6 retry throttling with its example config, maxTokens 10 and
// tokenRatio 0.1: retries only while token_count > 5.
func TestBudgetGRPCStepTable(t *testing.T) {
	const s = int64(1e9)
	b := mustBudget(t, GRPCDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, level: 10}, // starts at maxTokens
		{at: 0, op: "retry", allow: true, cost: 1, level: 10}, // 10 > 5; a retry itself costs nothing
		{at: s, op: "fail", times: 4, level: 6},               // −1 per failed attempt
		{at: s, op: "retry", allow: true, level: 6},           // 6 > 5
		{at: s, op: "fail", level: 5},                         // 5 failures in all
		{at: s, op: "retry", allow: false, level: 5},          // 5 is not > 5
		{at: 2 * s, op: "ok", level: 5.1},                     // +tokenRatio
		{at: 2 * s, op: "retry", allow: true, level: 5.1},     // 5.1 > 5
		{at: 2 * s, op: "fail", level: 4.1},
		{at: 2 * s, op: "retry", allow: false, level: 4.1},
		{at: 3 * s, op: "fail", times: 10, level: 0}, // 3.1, 2.1, 1.1, 0.1, then the floor 0
		{at: 3 * s, op: "ok", times: 50, level: 5},   // 50 × 0.1 = 5 exactly (milli-tokens: no float drift)
		{at: 3 * s, op: "retry", allow: false, level: 5},
		{at: 3 * s, op: "ok", level: 5.1},
		{at: 3 * s, op: "retry", allow: true, level: 5.1},
		{at: 4 * s, op: "ok", times: 100, level: 10}, // 15.1 capped at maxTokens
		{at: 4 * s, op: "retry", allow: true, level: 10},
	})
}

// tokenRatio is kept to 3 decimals: 0.1234 → 0.123.
func TestBudgetGRPCTokenRatioDecimals(t *testing.T) {
	c := GRPCDefaults()
	c.TokenRatio = 0.1234
	b := mustBudget(t, c, 1)
	runBudgetSteps(t, b, []budgetStep{
		{op: "fail", level: 9},
		{op: "ok", level: 9.123},
	})
	c.TokenRatio = 0.0004 // rounds to 0
	if c.Validate() == nil {
		t.Error("TokenRatio 0.0004 accepted")
	}
}

// AWS standard mode: quota 500, retry 5, timeout retry 10, +1 on a success
// without retries, the last retry's cost back on a success after retries.
func TestBudgetAWSStandardStepTable(t *testing.T) {
	const s = int64(1e9)
	b := mustBudget(t, AWSStandardDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, level: 500},
		{at: 0, op: "retry", times: 100, allow: true, cost: 5, level: 0}, // 100 × 5 = 500
		{at: 0, op: "retry", allow: false, level: 0},                     // fail fast, nothing taken
		{at: s, op: "ok", level: 1},                                      // success, not retried: +1
		{at: s, op: "retry", allow: false, level: 1},                     // 1 < 5
		{at: s, op: "retry", cause: CauseThrottle, allow: false, level: 1},
		{at: s, op: "ok", times: 4, level: 5},
		{at: s, op: "retry", allow: true, cost: 5, level: 0},
		{at: s, op: "fail", charge: 5, level: 0},      // a failure gives nothing back
		{at: s, op: "ok", charge: 5, level: 5},        // success after a retry: its cost back
		{at: 2 * s, op: "ok", times: 495, level: 500}, // +1 each
		{at: 2 * s, op: "ok", level: 500},             // capped at capacity
		{at: 2 * s, op: "ok", charge: 10, level: 500}, // a refund is capped too
		// 50 timeout retries at 10 each empty the quota.
		{at: 3 * s, op: "retry", cause: CauseTimeout, times: 50, allow: true, cost: 10, level: 0},
		{at: 3 * s, op: "ok", charge: 10, level: 10}, // refund of a timeout retry
		{at: 3 * s, op: "retry", cause: CauseTimeout, allow: true, cost: 10, level: 0},
		{at: 3 * s, op: "ok", times: 9, level: 9},
		{at: 3 * s, op: "retry", cause: CauseTimeout, allow: false, level: 9},  // 9 < 10
		{at: 3 * s, op: "retry", allow: true, cost: 5, level: 4},               // but 9 ≥ 5
		{at: 3 * s, op: "retry", cause: CauseThrottle, allow: false, level: 4}, // a throttle costs 5 too
	})
}

// The 2026 mode, checked against aws-sdk-go-v2 retry2026_test.go.
func TestBudgetAWS2026StepTable(t *testing.T) {
	b := mustBudget(t, AWS2026Defaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		// "retry eventually succeeds": 500, 502-like errors, then 200.
		{op: "retry", allow: true, cost: 14, level: 486},
		{op: "retry", allow: true, cost: 14, level: 472},
		{op: "ok", charge: 14, level: 486}, // only the last retry's 14 comes back
		// "throttling error token bucket drain": 495, then 500 on success.
		{op: "ok", times: 14, level: 500},
		{op: "retry", cause: CauseThrottle, allow: true, cost: 5, level: 495},
		{op: "ok", charge: 5, level: 500},
		// 2026 does not price timeouts apart (botocore 2.1).
		{op: "retry", cause: CauseTimeout, allow: true, cost: 14, level: 486},
	})
	// "retry quota recovery after successful responses": 30 initial tokens
	// (the Go test's TokenRateLimit(30): capacity 30).
	c := AWS2026Defaults()
	c.Capacity = 30
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{op: "retry", allow: true, level: 16},
		{op: "retry", allow: true, level: 2},
		{op: "ok", charge: 14, level: 16},
		{op: "retry", allow: true, level: 2},
		{op: "ok", charge: 14, level: 16},
	})
	// "retry stops after retry quota exhaustion": 20 tokens → 6 → refused.
	c.Capacity = 20
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{op: "retry", allow: true, level: 6},
		{op: "retry", allow: false, level: 6},
	})
	// "no retries at all if retry quota is 0".
	c.Capacity = 0
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{{op: "retry", allow: false, level: 0}})
}

// Finagle RetryBudget() defaults: deposit 1000, withdrawal 1000/0.2 = 5000,
// reserve 10/s × 10 s × 5000 = 500,000 (100 retries), TTL 10 s in ten 1-s
// slices, aligned (FinagleAlignedSlices): a record made in second b is
// gone from second b+10 on.
func TestBudgetFinagleReserveStepTable(t *testing.T) {
	const s = int64(1e9)
	c := FinagleDefaults()
	c.FinagleAlignedSlices = true
	b := mustBudget(t, c, 1)
	if w := b.WithdrawCost(); w != 5000 {
		t.Fatalf("withdrawal %d, want 5000", w)
	}
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, level: 500_000},
		// No traffic: the reserve allows minRetriesPerSec·ttl = 100 retries.
		{at: 0, op: "retry", times: 100, allow: true, level: 0},
		{at: 0, op: "retry", allow: false, level: 0},
		{at: 5 * s, op: "retry", allow: false, level: 0},
		{at: 10*s - 1, op: "retry", allow: false, level: 0}, // slice 0 still in (0 > 9 − 10)
		{at: 10 * s, level: 500_000},                        // the withdrawals of slice 0 expired
		{at: 10 * s, op: "retry", times: 100, allow: true, level: 0},
		{at: 10 * s, op: "retry", allow: false, level: 0},
	})
}

// The percentage and the reserve add up: 100 requests at once deposit
// 100,000 = 20 retries, plus the reserve's 100.
func TestBudgetFinaglePercentStepTable(t *testing.T) {
	b := mustBudget(t, FinagleDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{op: "req", times: 100, level: 600_000},
		{op: "retry", times: 120, allow: true, level: 0},
		{op: "retry", allow: false, level: 0},
	})
	c := FinagleDefaults()
	c.MinRetriesPerSec = 0 // percentage only
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{op: "retry", allow: false, level: 0}, // no reserve, no deposits
		{op: "req", times: 100, level: 100_000},
		{op: "retry", times: 20, allow: true, level: 0}, // 20% of 100
		{op: "retry", allow: false, level: 0},
	})
}

// Deposits expire after the TTL, and so do withdrawals, so a retry can
// outlive the deposits that paid for it and push the balance below zero
// (aligned slices).
func TestBudgetFinagleExpiryStepTable(t *testing.T) {
	const s = int64(1e9)
	c := FinagleDefaults()
	c.MinRetriesPerSec = 0
	c.FinagleAlignedSlices = true
	b := mustBudget(t, c, 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, op: "req", times: 5, level: 5000},         // slice 0
		{at: 10*s - 1, level: 5000},                       // still in
		{at: 10 * s, level: 0},                            // deposits expired
		{at: 10 * s, op: "retry", allow: false, level: 0}, // nothing left to pay with
		{at: 20 * s, op: "req", times: 5, level: 5000},    // slice 20
		{at: 29*s + s/2, op: "retry", allow: true, level: 0},
		{at: 30 * s, level: -5000},                  // slice 20's deposits gone, slice 29's withdrawal not
		{at: 30 * s, op: "req", times: 5, level: 0}, // slice 30
		{at: 30 * s, op: "retry", allow: false, level: 0},
		{at: 39*s - 1, level: 0},  // slice 29 still in (29 > 38 − 10)
		{at: 39 * s, level: 5000}, // the withdrawal expired
		{at: 39 * s, op: "retry", allow: true, level: 0},
	})
}

// Finagle's own arithmetic for other parameters (RetryBudget.apply).
func TestBudgetFinagleParameters(t *testing.T) {
	tests := []struct {
		name        string
		ttl         int64
		minPerSec   int
		pct         float64
		w, reserve  int64
		retriesFree int // retries the reserve allows with no traffic
	}{
		{"defaults", 10e9, 10, 0.2, 5000, 500_000, 100},
		{"0.3 truncates 3333.33", 10e9, 10, 0.3, 3333, 333_300, 100},
		{"percent 0: cost 1, reserve only", 10e9, 10, 0, 1, 100, 100},
		{"ttl.inSeconds truncates 1.5 s to 1", 1_500_000_000, 10, 0.2, 5000, 50_000, 10},
		{"percentCanRetry 2: two retries per request", 10e9, 0, 2, 500, 0, 0},
		{"Empty: both 0", 10e9, 0, 0, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FinagleDefaults()
			c.TTL, c.MinRetriesPerSec, c.PercentCanRetry = tt.ttl, tt.minPerSec, tt.pct
			b := mustBudget(t, c, 1)
			if b.WithdrawCost() != tt.w || b.Level(0, 0) != float64(tt.reserve) {
				t.Fatalf("withdrawal %d reserve %v, want %d, %d", b.WithdrawCost(), b.Level(0, 0), tt.w, tt.reserve)
			}
			n := 0
			for {
				if _, ok := b.AllowRetry(0, 0, CauseError); !ok {
					break
				}
				n++
			}
			if n != tt.retriesFree {
				t.Fatalf("%d retries with no traffic, want %d", n, tt.retriesFree)
			}
		})
	}
	// percentCanRetry 2: one request pays for two retries.
	c := FinagleDefaults()
	c.MinRetriesPerSec, c.PercentCanRetry = 0, 2
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{op: "req", level: 1000},
		{op: "retry", times: 2, allow: true, level: 0},
		{op: "retry", allow: false, level: 0},
	})
}

// At a steady 100 requests/s, each followed by a retry attempt, with no
// reserve: the balance reaches 5000 on every 5th request (k ≡ 4 mod 5), so
// exactly 20% are retried. Every 1-s slice holds 100 deposits and 20
// withdrawals, net 0, so its expiry leaves the pattern unchanged: 1200
// retries for 6000 requests in 60 s.
func TestBudgetFinagleSteadyTwentyPercent(t *testing.T) {
	c := FinagleDefaults()
	c.MinRetriesPerSec = 0
	b := mustBudget(t, c, 1)
	granted := 0
	for k := 0; k < 6000; k++ {
		now := int64(k) * 10e6
		b.OnRequest(now, 0)
		_, ok := b.AllowRetry(now, 0, CauseError)
		if ok != (k%5 == 4) {
			t.Fatalf("request %d (t=%dns): retry allowed=%v", k, now, ok)
		}
		if ok {
			granted++
		}
	}
	if granted != 1200 {
		t.Fatalf("%d retries, want 1200", granted)
	}
}

// The SRE book's per-client budget, Ratio 0.1 over 120 s in 1-s buckets.
// By default a granted retry is itself a request, so a retry is allowed
// iff retries/(first attempts + retries) < 0.1.
func TestBudgetSREStepTable(t *testing.T) {
	const s = int64(1e9)
	b := mustBudget(t, SREDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, op: "retry", allow: false, level: 0}, // no requests: nothing to ratio
		{at: 0, op: "req", times: 10, level: 0},
		{at: 0, op: "retry", allow: true, level: 1.0 / 11},      // 0/10 < 0.1; now 1 of 11
		{at: 0, op: "retry", allow: true, level: 2.0 / 12},      // 1/11 = 0.091 < 0.1
		{at: 0, op: "retry", allow: false, level: 2.0 / 12},     // 2/12 = 0.167
		{at: s, op: "req", times: 8, level: 2.0 / 20},           // bucket 1
		{at: s, op: "retry", allow: false, level: 2.0 / 20},     // exactly 0.1 is not below
		{at: s, op: "req", level: 2.0 / 21},                     // 0.095
		{at: s, op: "retry", allow: true, level: 3.0 / 22},      // granted
		{at: 120*s - 1, level: 3.0 / 22},                        // bucket 0 still in
		{at: 120 * s, level: 1.0 / 10},                          // bucket 0 (12 requests, 2 retries) gone
		{at: 120 * s, op: "retry", allow: false, level: 0.1},    // 1/10
		{at: 121 * s, op: "retry", allow: false, level: 0},      // everything expired
		{at: 121 * s, op: "req", level: 0},                      // a fresh start
		{at: 121 * s, op: "retry", allow: true, level: 1.0 / 2}, // 0/1 < 0.1: a sparse client's one retry
		{at: 121 * s, op: "retry", allow: false, level: 0.5},
	})
}

// FirstAttemptsOnly: requests are only new application requests, so a
// retry is allowed iff retries/first attempts < 0.1.
func TestBudgetSREFirstAttemptsOnly(t *testing.T) {
	c := SREDefaults()
	c.FirstAttemptsOnly = true
	runBudgetSteps(t, mustBudget(t, c, 1), []budgetStep{
		{op: "req", times: 10, level: 0},
		{op: "retry", allow: true, level: 0.1},  // 0/10
		{op: "retry", allow: false, level: 0.1}, // 1/10 is not below 0.1
		{op: "req", times: 10, level: 0.05},
		{op: "retry", allow: true, level: 0.1}, // 1/20
		{op: "retry", allow: false, level: 0.1},
	})
}

// 100 requests/s for 90 s (inside one window), each followed by a retry
// attempt. Default: allowed iff R/(Q+R) < 0.1 ⇔ 9R < Q, so after Q first
// attempts R = ⌈Q/9⌉: 1000 retries for 9000 requests (10% of all sent).
// FirstAttemptsOnly: 10R < Q, R = ⌈Q/10⌉ = 900.
func TestBudgetSRESteadyRatio(t *testing.T) {
	for _, first := range []bool{false, true} {
		c := SREDefaults()
		c.FirstAttemptsOnly = first
		b := mustBudget(t, c, 1)
		granted := 0
		for k := 0; k < 9000; k++ {
			now := int64(k) * 10e6
			b.OnRequest(now, 0)
			if _, ok := b.AllowRetry(now, 0, CauseError); ok {
				granted++
			}
		}
		want := 1000
		if first {
			want = 900
		}
		if granted != want {
			t.Errorf("FirstAttemptsOnly=%v: %d retries, want %d", first, granted, want)
		}
	}
}

// The windowed kinds against a naive reference: per instance, a list of
// every record with its bucket, scanned on each decision.
func TestBudgetWindowedMatchesNaive(t *testing.T) {
	const s = int64(1e9)
	sreFirst := SREDefaults()
	sreFirst.FirstAttemptsOnly = true
	sreShort := SREDefaults()
	sreShort.Window, sreShort.Buckets = 5*s, 20 // 250 ms buckets
	finAligned := FinagleDefaults()
	finAligned.FinagleAlignedSlices = true
	finShort := finAligned
	finShort.TTL, finShort.MinRetriesPerSec = 2*s, 3
	for ci, c := range []BudgetConfig{SREDefaults(), sreFirst, sreShort, finAligned, finShort} {
		r := rand.New(rand.NewPCG(uint64(ci), 7))
		const n = 4
		b := mustBudget(t, c, n)
		width, length := c.Window/c.Buckets, c.Window
		if c.Kind == BudgetFinagle {
			width, length = c.TTL/c.Buckets, c.TTL
		}
		type rec struct {
			bucket int64
			retry  bool
		}
		naive := make([][]rec, n)
		count := func(i int, now int64) (req, ret int64) {
			for _, x := range naive[i] {
				if x.bucket > now/width-c.Buckets {
					if x.retry {
						ret++
					} else {
						req++
					}
				}
			}
			return
		}
		now := int64(0)
		for step := 0; step < 20_000; step++ {
			now += r.Int64N(length / 50)
			i := r.IntN(n)
			if r.IntN(3) > 0 {
				b.OnRequest(now, i)
				naive[i] = append(naive[i], rec{now / width, false})
				continue
			}
			req, ret := count(i, now)
			var want bool
			if c.Kind == BudgetSRE {
				want = req > 0 && float64(ret)/float64(req) < c.Ratio
			} else {
				w := b.WithdrawCost()
				reserve := int64(c.MinRetriesPerSec) * (c.TTL / s) * w
				want = reserve+1000*req-w*ret >= w
			}
			_, got := b.AllowRetry(now, i, CauseError)
			if got != want {
				t.Fatalf("config %d step %d: instance %d (req %d, ret %d) allowed=%v, want %v", ci, step, i, req, ret, got, want)
			}
			if got {
				if c.Kind == BudgetSRE && !c.FirstAttemptsOnly {
					naive[i] = append(naive[i], rec{now / width, false})
				}
				naive[i] = append(naive[i], rec{now / width, true})
			}
		}
	}
}

// What one instance does leaves the others untouched.
func TestBudgetInstancesIndependent(t *testing.T) {
	for _, c := range []BudgetConfig{SREDefaults(), GRPCDefaults(), FinagleDefaults(), AWSStandardDefaults(), AWS2026Defaults(), TokenBucketDefaults(), RetryBreakerDefaults()} {
		const n = 3
		b, fresh := mustBudget(t, c, n), mustBudget(t, c, n)
		if b.Len() != n {
			t.Fatalf("kind %d: Len %d", c.Kind, b.Len())
		}
		// Instance 0: a little normal traffic, on both sets.
		for _, x := range []*BudgetSet{b, fresh} {
			for k := 0; k < 30; k++ {
				x.OnRequest(0, 0)
				x.OnResult(0, 0, true, 0)
			}
		}
		// Instance 1 of b: a storm of failures and retries until refused.
		for k := 0; k < 1000; k++ {
			b.OnRequest(0, 1)
			b.OnResult(0, 1, false, 0)
			b.AllowRetry(0, 1, CauseTimeout)
		}
		if _, ok := b.AllowRetry(0, 1, CauseError); ok {
			t.Errorf("kind %d: instance 1 still allowed after the storm", c.Kind)
		}
		for _, i := range []int{0, 2} {
			if got, want := b.Level(0, i), fresh.Level(0, i); got != want {
				t.Errorf("kind %d: instance %d level %v, want %v", c.Kind, i, got, want)
			}
		}
		_, ok0 := b.AllowRetry(0, 0, CauseError)
		_, want0 := fresh.AllowRetry(0, 0, CauseError)
		if ok0 != want0 || !ok0 {
			t.Errorf("kind %d: instance 0 allowed=%v, fresh set %v (want both true)", c.Kind, ok0, want0)
		}
	}
}

func TestBudgetValidate(t *testing.T) {
	for _, c := range []BudgetConfig{SREDefaults(), GRPCDefaults(), FinagleDefaults(), AWSStandardDefaults(), AWS2026Defaults(), TokenBucketDefaults(), RetryBreakerDefaults()} {
		if err := c.Validate(); err != nil {
			t.Errorf("defaults of kind %d: %v", c.Kind, err)
		}
	}
	bad := []struct {
		name string
		edit func(*BudgetConfig)
		base BudgetConfig
	}{
		{"SRE ratio 0", func(c *BudgetConfig) { c.Ratio = 0 }, SREDefaults()},
		{"SRE ratio > 1", func(c *BudgetConfig) { c.Ratio = 1.5 }, SREDefaults()},
		{"SRE no buckets", func(c *BudgetConfig) { c.Buckets = 0 }, SREDefaults()},
		{"SRE buckets < 1 ms", func(c *BudgetConfig) { c.Window = 119e6 }, SREDefaults()},
		{"Finagle buckets < 1 ms", func(c *BudgetConfig) { c.Buckets = 20_000 }, FinagleDefaults()},
		{"gRPC maxTokens 0", func(c *BudgetConfig) { c.MaxTokens = 0 }, GRPCDefaults()},
		{"gRPC maxTokens > 1000", func(c *BudgetConfig) { c.MaxTokens = 1001 }, GRPCDefaults()},
		{"gRPC tokenRatio 0", func(c *BudgetConfig) { c.TokenRatio = 0 }, GRPCDefaults()},
		{"Finagle ttl < 1 s", func(c *BudgetConfig) { c.TTL = 999e6 }, FinagleDefaults()},
		{"Finagle ttl > 60 s", func(c *BudgetConfig) { c.TTL = 61e9 }, FinagleDefaults()},
		{"Finagle negative minRetriesPerSec", func(c *BudgetConfig) { c.MinRetriesPerSec = -1 }, FinagleDefaults()},
		{"Finagle percent > 1000", func(c *BudgetConfig) { c.PercentCanRetry = 1001 }, FinagleDefaults()},
		{"Finagle negative percent", func(c *BudgetConfig) { c.PercentCanRetry = -0.1 }, FinagleDefaults()},
		{"Finagle no buckets", func(c *BudgetConfig) { c.Buckets = 0 }, FinagleDefaults()},
		{"AWS negative capacity", func(c *BudgetConfig) { c.Capacity = -1 }, AWSStandardDefaults()},
		{"AWS cost 0", func(c *BudgetConfig) { c.TimeoutCost = 0 }, AWSStandardDefaults()},
		{"AWS negative increment", func(c *BudgetConfig) { c.NoRetryIncrement = -1 }, AWSStandardDefaults()},
		{"token bucket cost 0", func(c *BudgetConfig) { c.Cost = 0 }, TokenBucketDefaults()},
		{"token bucket cost rounds to 0", func(c *BudgetConfig) { c.Cost = 0.0004 }, TokenBucketDefaults()},
		{"token bucket negative deposit", func(c *BudgetConfig) { c.Deposit = -0.1 }, TokenBucketDefaults()},
		{"token bucket capacity > 1e6", func(c *BudgetConfig) { c.BucketCapacity = 2e6 }, TokenBucketDefaults()},
		{"token bucket NaN threshold", func(c *BudgetConfig) { c.Threshold = math.NaN() }, TokenBucketDefaults()},
		{"token bucket initial above capacity", func(c *BudgetConfig) { c.BucketInitial = 6 }, TokenBucketDefaults()},
		{"retry breaker negative rate", func(c *BudgetConfig) { c.MaxFailureRate = -0.1 }, RetryBreakerDefaults()},
		{"retry breaker infinite rate", func(c *BudgetConfig) { c.MaxFailureRate = math.Inf(1) }, RetryBreakerDefaults()},
		{"retry breaker negative window", func(c *BudgetConfig) { c.Window = -1 }, RetryBreakerDefaults()},
		{"retry breaker window without buckets", func(c *BudgetConfig) { c.Window = 10e9 }, RetryBreakerDefaults()},
		{"retry breaker buckets < 1 ms", func(c *BudgetConfig) { c.Window, c.Buckets = 10e6, 20 }, RetryBreakerDefaults()},
		{"unknown kind", func(c *BudgetConfig) { c.Kind = 9 }, AWSStandardDefaults()},
	}
	for _, tt := range bad {
		c := tt.base
		tt.edit(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if _, err := NewBudgetSet(1, BudgetConfig{Kind: BudgetGRPC}); err == nil {
		t.Error("NewBudgetSet: got no error for an invalid config, want one")
	}
	if _, err := NewBudgetSet(-1, GRPCDefaults()); err == nil {
		t.Error("NewBudgetSet(-1): got no error, want one")
	}
}

// budgetTraffic is a steady mixed load on instance k%n at 1 ms steps:
// a request, a failure, a retry if allowed, a success.
func budgetTraffic(b *BudgetSet, k int, n int) {
	now := int64(k) * 1e6
	i := k % n
	b.OnRequest(now, i)
	b.OnResult(now, i, false, 0)
	c, ok := b.AllowRetry(now, i, RetryCause(k%3))
	if !ok {
		c = 0
	}
	b.OnResult(now, i, k%4 != 0, c)
}

func TestBudgetZeroAllocs(t *testing.T) {
	windowed := RetryBreakerDefaults()
	windowed.Window, windowed.Buckets = 10e9, 10
	for _, c := range []BudgetConfig{SREDefaults(), GRPCDefaults(), FinagleDefaults(), AWSStandardDefaults(), TokenBucketDefaults(), RetryBreakerDefaults(), windowed} {
		const n = 100
		b := mustBudget(t, c, n)
		k := 0
		// Warm up over two windows so the windowed kinds' FIFO has reached
		// its steady size.
		for ; k < 250_000; k++ {
			budgetTraffic(b, k, n)
		}
		if a := testing.AllocsPerRun(20_000, func() { budgetTraffic(b, k, n); k++ }); a != 0 {
			t.Errorf("kind %d: %v allocations per call", c.Kind, a)
		}
	}
}

func BenchmarkBudgetSet(b *testing.B) {
	for _, c := range []BudgetConfig{SREDefaults(), GRPCDefaults(), FinagleDefaults(), AWSStandardDefaults(), TokenBucketDefaults(), RetryBreakerDefaults()} {
		name := [...]string{"sre", "grpc", "finagle", "aws", "token-bucket", "retry-breaker"}[c.Kind]
		b.Run(name, func(b *testing.B) {
			bs := mustBudget(b, c, 1000)
			b.ReportAllocs()
			for k := 0; k < b.N; k++ {
				budgetTraffic(bs, k, 1000)
			}
		})
	}
}

func ExampleBudgetSet() {
	// The AWS standard retry quota of one client: 500 tokens.
	b, _ := NewBudgetSet(1, AWSStandardDefaults())
	b.OnRequest(0, 0)
	charge, ok := b.AllowRetry(0, 0, CauseTimeout) // the first attempt timed out
	fmt.Println(ok, charge, b.Level(0, 0))
	b.OnResult(1e9, 0, true, charge) // the retry succeeded: its cost comes back
	fmt.Println(b.Level(1e9, 0))
	// Output:
	// true 10 490
	// 500
}

// mustBudget is NewBudgetSet(n, c), failing the test on an error.
func mustBudget(t testing.TB, c BudgetConfig, n int) *BudgetSet {
	t.Helper()
	b, err := NewBudgetSet(n, c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
