package policy

import (
	"math"
	"testing"
)

// The retry token bucket and the retry-only breaker of Marc Brooker,
// "Fixing retries with token buckets and circuit breakers" (2022), checked
// against his simulator, mbrooker/simulator_example
// retry_sim/retry_strategy.py: AdaptiveRetryStrategy (start: bucket =
// min(bucket + 0.1, 5); should_retry: if bucket > 1.0, bucket −= 1.0) and
// CircuitBreakerRetryCall (start: calls += 1; should_retry: failures += 1,
// then no retry if failures/calls > 0.1).

func TestBudgetTokenBucketBrookerStepTable(t *testing.T) {
	b := mustBudget(t, TokenBucketDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, level: 5},                                     // the bucket starts full
		{at: 0, op: "req", level: 5},                          // capped at 5
		{at: 0, op: "retry", allow: true, times: 4, level: 1}, // 5 → 4 → 3 → 2 → 1
		{at: 0, op: "retry", allow: false, level: 1},          // 1 is not > 1
		{at: 1, op: "fail", times: 3, level: 1},               // results move nothing
		{at: 1, op: "ok", times: 3, level: 1},
		{at: 2, op: "req", times: 9, level: 1.9},      // +0.1 per first try, exactly (milli-tokens)
		{at: 2, op: "retry", allow: true, level: 0.9}, // 1.9 > 1
		{at: 2, op: "retry", allow: false, level: 0.9},
		{at: 3, op: "req", level: 1},
		{at: 3, op: "retry", allow: false, level: 1}, // exactly at the threshold: refused
		{at: 3, op: "req", level: 1.1},
		{at: 3, op: "retry", allow: true, level: 0.1},
		{at: 4, op: "req", times: 100, level: 5}, // 10.1 capped at 5
	})
}

// In the long run a client whose every first try fails and is retried
// until refused sends Deposit/Cost = 0.1 retries per first try, plus the
// initial tokens above the threshold once: 4 retries from the full bucket
// (5 → 1). So 10,000 first tries buy exactly 4 + 1,000 retries when every
// deposit is spent as soon as the level passes 1.
func TestBudgetTokenBucketBrookerLongRun(t *testing.T) {
	b := mustBudget(t, TokenBucketDefaults(), 1)
	retries := 0
	const n = 10_000
	for k := 0; k < n; k++ {
		b.OnRequest(int64(k), 0)
		for {
			if _, ok := b.AllowRetry(int64(k), 0, CauseError); !ok {
				break
			}
			retries++
		}
	}
	// Derived: first try 1 leaves the full bucket at 5 and its retries
	// drain it to 1 (4 retries); from then on first try k lifts the level
	// past 1 when k = 2, 12, 22, …, 9992 (to 1.1, spent at once to 0.1):
	// 1,000 more.
	if want := 4 + n/10; retries != want {
		t.Errorf("retries %d, want %d", retries, want)
	}
}

func TestBudgetRetryBreakerBrookerStepTable(t *testing.T) {
	b := mustBudget(t, RetryBreakerDefaults(), 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, level: 0},
		{at: 0, op: "retry", allow: true, level: 0}, // no failures yet
		{at: 0, op: "fail", level: inf},             // a failure before any first try trips it
		{at: 0, op: "retry", allow: false, level: inf},
		{at: 1, op: "req", times: 9, level: 1.0 / 9},
		{at: 1, op: "retry", allow: false, level: 1.0 / 9}, // 1/9 > 0.1
		{at: 1, op: "req", level: 0.1},
		{at: 1, op: "retry", allow: true, level: 0.1}, // 1/10 is not > 0.1
		{at: 1, op: "retry", allow: true, level: 0.1}, // a retry costs nothing
		{at: 2, op: "fail", level: 0.2},
		{at: 2, op: "retry", allow: false, level: 0.2},
		{at: 2, op: "ok", times: 50, level: 0.2}, // successes do not dilute failures
		{at: 3, op: "req", times: 10, level: 0.1},
		{at: 3, op: "retry", allow: true, level: 0.1},
	})
}

// A windowed retry breaker forgets: failures and first tries leave the
// window like the SRE budget's records (a record made at t lives until
// bucket ⌊t/width⌋ + Buckets begins).
func TestBudgetRetryBreakerWindowStepTable(t *testing.T) {
	const s = int64(1e9)
	c := RetryBreakerDefaults()
	c.Window, c.Buckets = 10*s, 10
	b := mustBudget(t, c, 1)
	runBudgetSteps(t, b, []budgetStep{
		{at: 0, op: "req", times: 10, level: 0},
		{at: 0, op: "fail", times: 5, level: 0.5},
		{at: 0, op: "retry", allow: false, level: 0.5},
		{at: 5 * s, op: "req", times: 40, level: 0.1},
		{at: 5 * s, op: "retry", allow: true, level: 0.1},
		{at: 10*s - 1, op: "", level: 0.1}, // bucket 0 still in the window
		{at: 10 * s, op: "", level: 0},     // bucket 0 gone: 40 first tries, no failures
		{at: 10 * s, op: "fail", level: 1.0 / 40},
		{at: 15 * s, op: "", level: inf}, // the first tries of bucket 5 expire, the failure stays
		{at: 15 * s, op: "retry", allow: false, level: inf},
		{at: 20 * s, op: "", level: 0},
	})
}

var inf = math.Inf(1)
