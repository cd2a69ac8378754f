package live

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim"
)

// hangGuard bounds the waits of these tests: it is never reached on a
// working machine (the waits are for events that take milliseconds), it
// only turns a hang into a failure.
const hangGuard = 60 * time.Second

// waitFor polls cond until it holds, failing the test after hangGuard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("hang guard: still waiting for %s after %v", what, hangGuard)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// neverAnswers is an hour-long scenario without a per-attempt timeout or
// retries, so a request that reaches a target that never answers stays in
// flight until the run is stopped.
const neverAnswers = `name: never-answers
duration: 1h
metrics: {interval: 1s}
clients:
  count: 20
  arrival: {process: poisson, total_rate: 200/s}
  timeout: 0s
backend:
  workers: 5
  service: {dist: constant, mean: 10ms}
`

// With the cap at N against a target that never answers, exactly N
// requests are in flight and every later arrival is the generator's own
// drop: counted, not sent, not offered. The run is stopped (by its
// context) only once the target holds N requests and 30 arrivals have
// been dropped, so every count below holds by construction, whatever
// the machine's speed: no request can end before the stop (none is
// answered, none times out), so no place in flight frees up.
func TestMaxInFlightDropsAtTheCap(t *testing.T) {
	const capN, wantDrops = 5, 30
	var held atomic.Int64
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select { // until the client gives up (the run's end) or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)

	var sent, dropped atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(hangGuard)
		for held.Load() < capN || dropped.Load() < wantDrops {
			if time.Now().After(deadline) {
				break // Run returns; the assertions below report it
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, info, err := Run(ctx, parse(t, neverAnswers), Options{
		Target: ts.URL, MaxInFlight: capN,
		arrived: func(ok bool) {
			if ok {
				sent.Add(1)
			} else {
				dropped.Add(1)
			}
		},
	})
	if !errors.Is(err, sim.ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted (stopped by the test)", err)
	}
	if held.Load() != capN || sent.Load() != capN {
		t.Errorf("target held %d requests, %d sent; want exactly the cap, %d", held.Load(), sent.Load(), capN)
	}
	if dropped.Load() < wantDrops || info.GeneratorDropped != dropped.Load() {
		t.Errorf("generator dropped %d (info %d); want at least %d, and info to agree", dropped.Load(), info.GeneratorDropped, wantDrops)
	}
	if info.MaxInFlight != capN || info.PeakInFlight != capN {
		t.Errorf("info: max in flight %d, peak %d; want both %d", info.MaxInFlight, info.PeakInFlight, capN)
	}
	// Every arrival was either sent or dropped; only the sent ones are
	// offered (the client saw them), and none succeeded.
	if got := int64(res.Arrivals); got != capN+info.GeneratorDropped {
		t.Errorf("arrivals %d, want %d sent + %d dropped", got, capN, info.GeneratorDropped)
	}
	if s := res.Summary; s.Offered != capN || s.Attempts != capN || s.Succeeded != 0 {
		t.Errorf("offered %d, attempts %d, succeeded %d; want %d, %d, 0", s.Offered, s.Attempts, s.Succeeded, capN, capN)
	}
	if info.ScheduleOK || info.Schedule().ScheduleOK || info.Schedule().GeneratorDropped != info.GeneratorDropped || info.Schedule().MaxInFlight != capN {
		t.Errorf("schedule ok %v, summary live %+v; want not ok, and the drops in summary.json", info.ScheduleOK, info.Schedule())
	}
}

func TestMaxInFlightOptions(t *testing.T) {
	if _, _, err := Run(context.Background(), parse(t, small), Options{MaxInFlight: -1}); err == nil {
		t.Error("MaxInFlight -1: no error")
	}
	// The default never exceeds the fixed cap, and leaves room for both
	// ends of each connection when the backend is in process.
	for _, inProc := range []bool{false, true} {
		n := DefaultInFlight(inProc)
		if n < 1 || n > MaxInFlightCap {
			t.Errorf("in process %v: default %d, want 1 to %d", inProc, n, MaxInFlightCap)
		}
		if lim := openFileLimit(); lim > 0 && inProc && uint64(2*n) > max(lim, 2) {
			t.Errorf("in process: default %d needs %d fds, limit %d", n, 2*n, lim)
		}
	}
}
