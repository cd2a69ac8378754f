package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlesim/throttlesim/live/client"
	"github.com/throttlesim/throttlesim/sim"
)

// openFDs is the number of this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es) // (the directory's own fd while it is read is in both counts)
}

// fdSlack is what the fd count may exceed its expected value by once the
// run is over. The count is polled, since the target closes its end of a
// connection the client closed when its connection goroutine reads the
// EOF, a moment later. A connection the client keeps open costs 2 (both
// of its ends are this process's): forgetting Run's CloseIdleConnections
// leaves 2 connections here, 4 descriptors, which the slack of 1 does
// not hide. The 1 is for the runtime, which may open a descriptor of its
// own on first use of a facility (the network poller's were opened before
// the first count, by warming up).
const fdSlack = 1

// okServer serves 200s on ln, counting them.
func okServer(ln net.Listener, served *atomic.Int64) *http.Server {
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
	})}
	go hs.Serve(ln)
	return hs
}

// The target is killed (its listener and every connection closed) and
// restarted on the same loopback port during a live run against
// --target: the requests sent while it is down are counted as failures,
// those after the restart succeed again, the run stops cleanly when
// asked, and no goroutine or file descriptor is left behind. Each phase
// waits for its events (20 successes, 20 failures, 20 successes again),
// not for a time, so it holds whatever the machine's speed.
func TestLiveTargetKilledAndRestarted(t *testing.T) {
	// Warm up the network poller so that its descriptors are open before
	// the first count.
	warm, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	warm.Close()
	before := openFDs(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var served1, served2 atomic.Int64
	hs := okServer(ln, &served1)

	var ok, failed atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := parse(t, neverAnswers, "clients.timeout=1s")
	type ran struct {
		res  *sim.Result
		info *Info
		err  error
	}
	done := make(chan ran, 1)
	go func() {
		res, info, err := Run(ctx, sc, Options{Target: "http://" + addr + "/", events: func(e client.Event) {
			switch e.Kind {
			case client.Succeeded:
				ok.Add(1)
			case client.Failed:
				failed.Add(1)
			}
		}})
		done <- ran{res, info, err}
	}()

	waitFor(t, "20 successes", func() bool { return ok.Load() >= 20 })
	hs.Close() // killed: the listener and every connection closed
	waitFor(t, "20 failures while the target is down", func() bool { return failed.Load() >= 20 })
	okBefore := ok.Load()
	var ln2 net.Listener
	waitFor(t, "the port to be bound again", func() bool { // at once, with SO_REUSEADDR (Go's default)
		ln2, err = net.Listen("tcp", addr)
		return err == nil
	})
	hs2 := okServer(ln2, &served2)
	waitFor(t, "20 successes after the restart", func() bool { return served2.Load() >= 20 && ok.Load() >= okBefore+20 })
	cancel()

	var r ran
	select {
	case r = <-done:
	case <-time.After(hangGuard):
		t.Fatal("hang guard: the run did not stop")
	}
	// The client's side is checked with the target still up, so that a
	// connection the client kept open (both of its ends are this
	// process's) shows; the restarted target's listener is the one more.
	var after int
	waitFor(t, "the file descriptors to close", func() bool { after = openFDs(t); return after <= before+1+fdSlack })
	t.Logf("fds: %d before, %d after with the restarted target's listener (slack %d)", before, after, fdSlack)
	hs2.Close()
	goleak.VerifyNone(t)
	if !errors.Is(r.err, sim.ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted (stopped by the test)", r.err)
	}
	// The rows count every event the hook saw before the stop.
	s := r.res.Summary
	if s.Failed < 20 || s.Succeeded < 40 || s.Succeeded+s.Failed > s.Offered {
		t.Errorf("offered %d, succeeded %d, failed %d; want >= 40 successes and >= 20 failures, all among the offered", s.Offered, s.Succeeded, s.Failed)
	}
	if served1.Load()+served2.Load() < s.Succeeded {
		t.Errorf("the targets served %d+%d, fewer than the %d successes", served1.Load(), served2.Load(), s.Succeeded)
	}
	if r.info.GeneratorDropped != 0 {
		t.Errorf("%d dropped at the cap: a dead target's refusals must not fill it", r.info.GeneratorDropped)
	}

}
