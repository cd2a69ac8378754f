package sim

import (
	"context"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// An overall deadline covers every attempt and backoff: during a
// black-holed outage no request lives longer than the deadline, and no
// success takes longer either.
func TestDeadlineCoversAllAttempts(t *testing.T) {
	sc := withRetry(small(), 5, "none")
	sc.Faults[0].Mode = "blackhole"
	sc.Clients.Deadline = dur(2500 * time.Millisecond)
	res := mustRun(t, sc)
	s := res.Summary
	if s.DeadlineExceeded == 0 {
		t.Fatal("no request hit its deadline in a 10 s black-holed outage")
	}
	if s.DeadlineExceeded > s.Failed {
		t.Errorf("deadline_exceeded %d > failed %d: it is a subset", s.DeadlineExceeded, s.Failed)
	}
	// The histogram's resolution is 1/32 of a power of two: 2.5 s reads
	// back within 1.6%.
	if p99 := *s.LatencyP99MS; p99 > 2500*1.016 {
		t.Errorf("p99 latency %.0f ms beyond the 2.5 s deadline", p99)
	}
	// With 1 s attempt timeouts and 5 attempts a request without a
	// deadline can live 5 s + backoffs: the deadline must have cut some.
	noDL := withRetry(small(), 5, "none")
	noDL.Faults[0].Mode = "blackhole"
	if base := mustRun(t, noDL).Summary; *base.LatencyP99MS <= *s.LatencyP99MS {
		t.Errorf("p99 without a deadline %.0f ms, with %.0f ms", *base.LatencyP99MS, *s.LatencyP99MS)
	}
}

// gRPC pushback: with retry_after_mode exactly, a refused attempt is
// retried exactly retry_after later (the backoff is not used); with
// at_least the wait is max(backoff, retry_after).
func TestPushbackExactly(t *testing.T) {
	for _, mode := range []string{"exactly", "at_least"} {
		t.Run(mode, func(t *testing.T) {
			sc := withRetry(small(), 3, "none")
			sc.Clients.Count = 1
			sc.Clients.Arrival.TotalRate = 0.2
			sc.Clients.Retry.RetryAfterMode = mode
			sc.Clients.Retry.Backoff.Base = dur(5 * time.Second)
			sc.Clients.Retry.Backoff.Cap = dur(5 * time.Second)
			sc.Faults[0].RetryAfter = dur(time.Second)
			sc.Faults[0].Duration = dur(30 * time.Second)
			want := int64(time.Second)
			if mode == "at_least" {
				want = int64(5 * time.Second)
			}
			// Consecutive retries of one request (its slot and generation,
			// from the event's token) are one wait apart: refusals are
			// immediate.
			last := map[uint64]int64{}
			var gaps []int64
			_, err := Run(context.Background(), sc, Options{Trace: func(e TraceEvent) {
				if e.Kind != "retry" || e.At < int64(20*time.Second) || e.At > int64(50*time.Second) {
					return
				}
				key := uint64(e.ID)<<32 | uint64(e.Aux>>8)
				if prev, ok := last[key]; ok {
					gaps = append(gaps, e.At-prev)
				}
				last[key] = e.At
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(gaps) == 0 {
				t.Fatal("no request was retried twice during the outage")
			}
			for _, g := range gaps {
				if g != want {
					t.Errorf("retry %v after a refusal, want %v", time.Duration(g), time.Duration(want))
				}
			}
		})
	}
}

func TestDontRetryPushback(t *testing.T) {
	sc := withRetry(small(), 4, "full")
	sc.Faults = nil
	sc.Clients.Arrival.TotalRate = 300 // 3x capacity: plenty of rejections
	sc.Backend.DontRetry = true
	sc.Clients.Retry.RetryOn = []string{"rejected"}
	s := mustRun(t, sc).Summary
	if s.Rejected == 0 {
		t.Fatal("no rejections")
	}
	if s.Retries != 0 {
		t.Errorf("%d retries after rejections that said do not retry", s.Retries)
	}
	sc.Backend.DontRetry = false
	if s2 := mustRun(t, sc).Summary; s2.Retries == 0 {
		t.Error("no retries even without dont_retry: the test shows nothing")
	}
}

// The AWS adaptive rate limiter: nothing is delayed before the first
// throttling response; under overload it paces the clients, so the backend
// receives less than without it and rejects less.
func TestAdaptiveRateLimiterPaces(t *testing.T) {
	over := func(limit bool) *Result {
		sc := withRetry(small(), 3, "full")
		sc.Faults = nil
		sc.Clients.Count = 20
		sc.Clients.Arrival.TotalRate = 300 // 3x capacity
		if limit {
			rl := &scenario.RateLimiter{}
			scenario.SetDefaults(rl)
			sc.Clients.RateLimiter = rl
		}
		return mustRun(t, sc)
	}
	with, without := over(true).Summary, over(false).Summary
	if with.Paced == 0 || with.MeanPacingWaitMS == nil {
		t.Fatal("the limiter delayed nothing under 3x overload")
	}
	if with.Received >= without.Received || with.Rejected >= without.Rejected {
		t.Errorf("received %d / rejected %d with the limiter, %d / %d without", with.Received, with.Rejected, without.Received, without.Rejected)
	}
	light := small()
	light.Faults = nil
	rl := &scenario.RateLimiter{}
	scenario.SetDefaults(rl)
	light.Clients.RateLimiter = rl
	if s := mustRun(t, light).Summary; s.Paced != 0 || s.Rejected != 0 {
		t.Errorf("at 60%% load: %d paced, %d rejected; want none before any throttle", s.Paced, s.Rejected)
	}
}
