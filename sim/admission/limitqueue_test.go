package admission

import (
	"math"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// failsafeBackend is a backend with a failsafe limit of 10 (min = max)
// and the queueing rule set by q.
func failsafeBackend(t *testing.T, q func(*scenario.ConcurrencyLimit)) Admission {
	t.Helper()
	be := backend(scenario.QueueFIFO, 1000, 0, 0)
	cl := &scenario.ConcurrencyLimit{Kind: scenario.LimiterFailsafe, Initial: 10, Min: 10, Max: 10}
	q(cl)
	be.ConcurrencyLimit = cl
	a, err := New(be, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// With factors 2 and 3 and a limit of 10 (failsafe-go.dev's example) an
// arrival is admitted while fewer than 20 wait beyond the limit, refused
// from 30, and in between admitted at a rate falling linearly to 0.
func TestLimitQueueFactors(t *testing.T) {
	a := failsafeBackend(t, func(c *scenario.ConcurrencyLimit) { c.InitialRejectionFactor, c.MaxRejectionFactor = 2, 3 })
	for _, tt := range []struct {
		held     int
		wantShed bool
	}{{9, false}, {10, false}, {29, false}, {40, true}, {55, true}} {
		if _, shed := a.Arrive(0, Load{Busy: 4, Limit: 4, Queued: tt.held - 4}, 0); shed != tt.wantShed {
			t.Errorf("%d held: got shed %v, want %v", tt.held, shed, tt.wantShed)
		}
	}
	// 25 beyond the limit: rate 0.5; 10,000 arrivals shed 50% ± 2%.
	shed := 0
	const n = 10000
	for range n {
		if _, s := a.Arrive(0, Load{Busy: 4, Limit: 4, Queued: 31}, 0); s {
			shed++
		}
	}
	if got := float64(shed) / n; math.Abs(got-0.5) > 0.02 {
		t.Errorf("35 held (25 beyond a limit of 10): got shed share %.3f, want 0.5 ± 0.02", got)
	}
}

// The latency rule: no baseline yet means no rejection; without queueing
// a full limit refuses.
func TestLimitQueueLatencyAndNone(t *testing.T) {
	a := failsafeBackend(t, func(c *scenario.ConcurrencyLimit) { c.RejectionThreshold, c.MaxExecutionTime = 100e6, 500e6 })
	if _, shed := a.Arrive(0, Load{Busy: 4, Limit: 4, Queued: 500}, 0); shed {
		t.Errorf("latency rule, no baseline RTT yet: got shed, want admitted (estimateRTT is 0)")
	}
	b := failsafeBackend(t, func(*scenario.ConcurrencyLimit) {})
	if _, shed := b.Arrive(0, Load{Busy: 4, Limit: 4, Queued: 6}, 0); !shed {
		t.Errorf("no queueing, 10 held at a limit of 10: got admitted, want shed")
	}
	if b.conc.q != nil {
		t.Errorf("no queueing: got a queue rule, want nil")
	}
}

// The latency rule's rate follows the baseline: ⌈(queued+1)/L⌉ batches of
// the baseline RTT against threshold 100 ms and max 500 ms.
func TestLimitQueueLatencyRate(t *testing.T) {
	a := failsafeBackend(t, func(c *scenario.ConcurrencyLimit) {
		c.RejectionThreshold, c.MaxExecutionTime, c.WindowSize, c.MinWindow, c.MaxWindow = 100e6, 500e6, 1, 1, 1
	})
	a.Sample(10, 100e6, 5, false) // one window: the baseline is 100 ms
	q := a.conc.q
	for _, tt := range []struct {
		queued int
		want   float64
	}{{0, 0}, {9, 0}, {10, 0.25}, {29, 0.5}, {39, 0.75}, {49, 1}, {50, 1}} {
		if got := q.rate(tt.queued, 10); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%d queued beyond a limit of 10: got rate %g, want %g", tt.queued, got, tt.want)
		}
	}
}

// The prioritised limiter: with 200 admissions recorded half in business
// priority 0 (levels 700–799) and half in 7 (levels 0–99), a calibration
// with 29 beyond a limit of 10 (rate 0.9) puts the threshold in the top
// class: every priority-7 arrival is refused while the limit is full;
// some priority-0 ones pass; from 30 beyond the limit all are refused.
func TestLimitQueuePrioritized(t *testing.T) {
	a := failsafeBackend(t, func(c *scenario.ConcurrencyLimit) {
		c.Prioritized, c.InitialRejectionFactor, c.MaxRejectionFactor, c.CalibrationInterval, c.LevelWindow = true, 2, 3, 1e9, 1000
	})
	if !a.Prioritized() || a.UserLevels() != 1 {
		t.Fatalf("got Prioritized %v, UserLevels %d, want true, 1", a.Prioritized(), a.UserLevels())
	}
	for i := range 200 {
		if _, shed := a.Arrive(0, Load{Busy: 1, Limit: 4}, 7*(i%2)); shed {
			t.Fatalf("arrival %d below the limit: got shed", i)
		}
	}
	full := Load{Busy: 4, Limit: 4, Queued: 35}
	admitted := [2]int{}
	for i := range 100 {
		for k, prio := range []int{0, 7} {
			if _, shed := a.Arrive(1e9+int64(i), full, prio); !shed {
				admitted[k]++
			}
		}
	}
	if admitted[1] != 0 || admitted[0] == 0 {
		t.Errorf("29 beyond a limit of 10: got %d of 100 priority-0 and %d of 100 priority-7 admitted, want some and none", admitted[0], admitted[1])
	}
	if _, shed := a.Arrive(1e9+500, Load{Busy: 4, Limit: 4, Queued: 36}, 0); !shed {
		t.Errorf("30 beyond a limit of 10 (max factor 3): got admitted, want shed")
	}
}
