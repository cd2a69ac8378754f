package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

func TestSameSeedSameBytes(t *testing.T) {
	a := mustRun(t, withRetry(withThrottle(small(), 2), 3, "full"))
	b := mustRun(t, withRetry(withThrottle(small(), 2), 3, "full"))
	if ra, rb := fmt.Sprint(a.Series.Rows), fmt.Sprint(b.Series.Rows); ra != rb {
		t.Error("the time series differs between two runs of the same scenario and seed")
	}
	ja, _ := json.Marshal(a.Summary)
	jb, _ := json.Marshal(b.Summary)
	if !bytes.Equal(ja, jb) {
		t.Error("the summary differs between two runs of the same scenario and seed")
	}
	if a.Fingerprint != b.Fingerprint || a.Events != b.Events {
		t.Errorf("fingerprints %x/%x, events %d/%d", a.Fingerprint, b.Fingerprint, a.Events, b.Events)
	}
	seed := uint64(99)
	c, err := Run(context.Background(), withRetry(withThrottle(small(), 2), 3, "full"), Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if c.Fingerprint == a.Fingerprint {
		t.Error("another seed gave the same trajectory")
	}
}

// Common random numbers: arrivals are named by (seed, client, ordinal), so
// no policy can move them.
func TestPoliciesLeaveArrivalsUnchanged(t *testing.T) {
	base := mustRun(t, small())
	variants := map[string]*scenario.Scenario{
		"throttle K=2":            withThrottle(small(), 2),
		"throttle K=1.1":          withThrottle(small(), 1.1),
		"retries, full jitter":    withRetry(small(), 3, "full"),
		"retries, no jitter":      withRetry(small(), 5, "none"),
		"throttle + decorrelated": withRetry(withThrottle(small(), 2), 3, "decorrelated"),
	}
	for name, sc := range variants {
		t.Run(name, func(t *testing.T) {
			res := mustRun(t, sc)
			if res.ArrivalHash != base.ArrivalHash || res.Arrivals != base.Arrivals {
				t.Errorf("arrivals changed: hash %x vs %x, count %d vs %d", res.ArrivalHash, base.ArrivalHash, res.Arrivals, base.Arrivals)
			}
			if res.Fingerprint == base.Fingerprint {
				t.Error("the policy changed nothing at all in the trajectory")
			}
		})
	}
}

func TestAccountingInvariants(t *testing.T) {
	flood := withRetry(small(), 5, "none") // fills the accept backlog: unanswered attempts
	flood.Clients.Arrival.TotalRate = 3000
	flood.Backend.AcceptBacklog = 5
	flood.Backend.RejectCost = dur(20 * time.Millisecond)
	// With a network, blackhole outages and timeouts shorter than the
	// round trip: late answers, work for clients that gave up.
	netted := withNetwork(withRetry(small(), 4, "full"), "exponential", 50*time.Millisecond, 0)
	netted.Faults[0].Mode = "blackhole"
	netted.Clients.Timeout = dur(150 * time.Millisecond)
	for _, sc := range []*scenario.Scenario{
		small(),
		withRetry(withThrottle(small(), 2), 3, "full"),
		withRetry(withThrottle(small(), 1.5), 4, "none"),
		flood,
		netted,
		withNetwork(withRetry(withThrottle(small(), 2), 3, "full"), "normal", 20*time.Millisecond, 10*time.Millisecond),
	} {
		res := mustRun(t, sc)
		s := res.Summary
		if s.InFlight < 0 {
			t.Errorf("offered %d < succeeded %d + failed %d + dropped %d", s.Offered, s.Succeeded, s.Failed, s.DropThrottle)
		}
		if s.Offered != int64(res.Arrivals) {
			t.Errorf("offered %d, arrivals %d", s.Offered, res.Arrivals)
		}
		// Every attempt sent reached the backend or met the outage, or
		// with a network is still on its way at the end.
		transit := s.Attempts - s.Received - s.FailedOutage
		if sc.Network == nil && transit != 0 || transit < 0 || transit > 100 {
			t.Errorf("attempts %d, received %d + failed_outage %d: %d in transit at the end", s.Attempts, s.Received, s.FailedOutage, transit)
		}
		if s.Received != s.Accepted+s.Rejected+s.Unanswered {
			t.Errorf("received %d != accepted %d + rejected %d + unanswered %d", s.Received, s.Accepted, s.Rejected, s.Unanswered)
		}
		// What was admitted was served, skipped, timed out in the queue,
		// lost in an outage, or is still inside the backend at the end.
		inside := s.Accepted - s.Served - s.Cancelled - s.QueueTimeouts - s.LostOutage
		if inside < 0 || inside > int64(sc.Backend.Workers+sc.Backend.Queue.Limit) {
			t.Errorf("admitted work left inside the backend: %d, want 0..workers+queue", inside)
		}
		if s.Succeeded > s.Served {
			t.Errorf("succeeded %d > served %d", s.Succeeded, s.Served)
		}
		if sc == flood && s.Unanswered == 0 {
			t.Error("the flood scenario left no attempt unanswered: the accept-backlog path is untested")
		}
		if sc == netted && (s.TimedOut == 0 || s.Served <= s.Succeeded) {
			t.Errorf("the network scenario: %d timed out, %d served, %d succeeded; want late answers and work nobody used", s.TimedOut, s.Served, s.Succeeded)
		}
	}
}

// The occ backend's books balance: every write call succeeded or was
// refused, every client wrote once (arrival once), including across an
// outage that refuses reads and writes.
func TestOCCAccounting(t *testing.T) {
	sc := scenario.Default()
	sc.Name = "occ"
	sc.Duration = dur(2 * time.Minute)
	sc.Clients.Count = 60
	sc.Clients.Arrival = scenario.Arrival{Process: "once"}
	sc.Clients.Timeout = 0
	withRetry(sc, scenario.MaxAttempts, "full")
	sc.Clients.Retry.Backoff.Base = dur(10 * time.Millisecond)
	sc.Backend.Kind = "occ"
	withNetwork(sc, "normal", 10*time.Millisecond, 2*time.Millisecond)
	sc.Faults = []scenario.Fault{{Kind: "outage", Mode: "refuse", Start: dur(time.Second), Duration: dur(2 * time.Second)}}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	s := mustRun(t, sc).Summary
	if s.Offered != 60 || s.Succeeded != 60 {
		t.Fatalf("offered %d, succeeded %d; want all 60 clients to write", s.Offered, s.Succeeded)
	}
	if s.Received != s.Served || s.Succeeded != s.Received-s.Errors {
		t.Errorf("write calls %d, served %d, refused %d, succeeded %d: want succeeded = calls − refused", s.Received, s.Served, s.Errors, s.Succeeded)
	}
	if s.FailedOutage == 0 {
		t.Error("no attempt met the outage: the outage path is untested")
	}
	if s.Attempts != s.Received+s.FailedOutage {
		t.Errorf("attempts %d != write calls %d + refused in the outage %d (every attempt ended)", s.Attempts, s.Received, s.FailedOutage)
	}
}

func TestInterruptReturnsPartialResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sc := small()
	sc.Duration = dur(10 * time.Minute)
	sc.Clients.Arrival.TotalRate = 6000
	sc.Backend.Workers = 1000
	calls := 0
	res, err := Run(ctx, sc, Options{Progress: func(now, end int64) {
		calls++
		if now > end/4 {
			cancel()
		}
	}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got error %v, want ErrInterrupted", err)
	}
	if res == nil || res.Complete {
		t.Fatal("no partial result, or it claims to be complete")
	}
	if res.StoppedAt <= 0 || res.StoppedAt >= int64(sc.Duration) {
		t.Errorf("stopped at %d, want inside the run", res.StoppedAt)
	}
	if got, want := len(res.Series.Rows), int(res.StoppedAt/int64(time.Second))+1; got != want {
		t.Errorf("partial series has %d rows, want %d", got, want)
	}
	if calls == 0 {
		t.Error("progress was never reported")
	}
}

func TestConstantArrivalsAreEvenlySpaced(t *testing.T) {
	sc := small()
	sc.Faults = nil
	sc.Clients.Arrival.Process = "constant"
	sc.Clients.Count = 10
	sc.Clients.Arrival.TotalRate = 10 // one per client per second
	res := mustRun(t, sc)
	// Each client issues exactly one request per second after its phase:
	// 60 s gives 59 or 60 per client, 590..600 in all, and 10 per second.
	if res.Arrivals < 590 || res.Arrivals > 600 {
		t.Errorf("got %d arrivals, want 590..600", res.Arrivals)
	}
	for i, r := range res.Series.Rows[1:] {
		if r.Offered != 10 {
			t.Fatalf("second %d: %d arrivals, want 10", i+1, r.Offered)
		}
	}
}

func TestLoadProfileStep(t *testing.T) {
	sc := small()
	sc.Faults = nil
	sc.Duration = dur(200 * time.Second)
	sc.Clients.Arrival.TotalRate = 50
	sc.Clients.Arrival.Profile = []scenario.Step{{At: dur(100 * time.Second), Multiplier: 3}, {At: dur(150 * time.Second), Multiplier: 0}}
	res := mustRun(t, sc)
	sum := func(from, to int) float64 {
		var n int64
		for _, r := range res.Series.Rows[from:to] {
			n += r.Offered
		}
		return float64(n) / float64(to-from)
	}
	// Poisson counts over 100 s at 50/s have sd sqrt(5000)/100 = 0.71 per
	// second; over 50 s at 150/s, sqrt(7500)/50 = 1.7. Bounds are 5 sd.
	if m := sum(0, 100); math.Abs(m-50) > 3.6 {
		t.Errorf("rate before the step %.2f/s, want 50", m)
	}
	if m := sum(100, 150); math.Abs(m-150) > 8.7 {
		t.Errorf("rate during the step %.2f/s, want 150", m)
	}
	if m := sum(150, 200); m != 0 {
		t.Errorf("rate after the zero step %.2f/s, want 0", m)
	}
}

// A request slot's generation has 24 bits: after 2^24 requests a slot is
// retired, not wrapped, or a stale timer of a request 2^24 requests ago
// would match the request now in flight (a one-client fleet reuses one
// slot for every request; found by review with 40 M requests of one
// client, 58% of them failed by stale timeouts).
func TestSlotRetiredBeforeItsGenerationWraps(t *testing.T) {
	sc := small()
	m, err := newModel(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	cl := &m.cl
	var slot uint32
	tokens := map[uint32]bool{}
	for i := 0; i < 1<<24; i++ {
		got := cl.alloc()
		if i == 0 {
			slot = got
		} else if got != slot {
			t.Fatalf("reuse %d: got slot %d, want %d", i, got, slot)
		}
		cl.reqs[slot].rs.Attempt = 1
		if i < 4 || i >= 1<<24-4 {
			tokens[cl.reqs[slot].token()] = true
		}
		cl.release(slot)
	}
	if got := cl.alloc(); got == slot {
		t.Fatalf("slot %d reused after 2^24 generations: its tokens start over", slot)
	}
	if len(tokens) != 8 {
		t.Errorf("the first and last four generations gave %d distinct tokens, want 8", len(tokens))
	}
}

// A policy configuration that scenario validation lets through but the
// policy package refuses comes back from Run as an error, never as a
// panic (the budget and limiter constructors panic on bad settings).
func TestRunReturnsPolicyBuildErrors(t *testing.T) {
	sc := withRetry(small(), 3, "full")
	b := &scenario.Budget{}
	scenario.SetDefaults(b)
	sc.Clients.Retry.Budget = b
	p, err := buildStack(sc.Clients.ResolvedGroups()[0], 0, new(rng.New(1)))
	if err != nil || p.Budget() == nil {
		t.Fatalf("valid stack: err %v, budget %v", err, p.Budget())
	}
	neg := -0.5
	b.Ratio = &neg // refused by policy.BudgetConfig.Validate
	g := sc.Clients.ResolvedGroups()[0]
	if _, err := buildStack(g, 0, new(rng.New(1))); err == nil || !strings.Contains(err.Error(), "retry.budget") {
		t.Errorf("buildStack with ratio -0.5: got %v, want an error naming retry.budget", err)
	}
}
