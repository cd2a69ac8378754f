package sim

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/live/client"
	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// The differential test: the simulator's client (model.attempt, send,
// answer, outcome, as the event loop calls them) and live mode's client
// (a real client.Transport sending to an httptest server on loopback)
// are driven through the same scripted sequence of answers (latency,
// outcome, Retry-After) on the same virtual clock, and must make the
// same decisions: which attempts go out and when, which are paced and by
// how much, which are dropped and by which policy, each retry's delay,
// each give-up and its reason, and the policies' state after every
// request (breaker state, budget level, limiter fill rate, throttle
// counts). Nothing depends on the wall clock: the Transport's clock and
// sleeps are the script's (Config.Now, Config.Sleep), and no timeout is
// armed (the script's timeouts are answers).

// answer is one scripted answer to an attempt.
type answer struct {
	lat int64 // ns from the send to the answer
	out uint8 // outOK … outError
	ra  int64 // the Retry-After of a rejection, whole seconds in ns (0: none)
}

// diffScript is a reproducible script: the gaps between one request's
// end and the next one's arrival, and the answers, consumed in order by
// the attempts that are sent.
func diffScript(seed uint64, requests int) (gaps []int64, ans []answer) {
	key := rng.New(seed).Key(rng.Arrival, 99)
	n := uint64(0)
	u := func() float64 { n++; return rng.Float64(key, n) }
	for range requests {
		gaps = append(gaps, int64(10e6+u()*1.5e9))
	}
	for range 8 * requests {
		a := answer{lat: int64(1e6 + u()*80e6)}
		switch x := u(); {
		case x < 0.35:
			a.out = outOK
		case x < 0.6:
			a.out = outRejected
			if u() < 0.3 {
				a.ra = int64(1+int(u()*2)) * 1e9
			}
		case x < 0.75:
			a.out = outError
		case x < 0.87:
			a.out = outUnavailable
		default:
			a.out, a.lat = outTimeout, 200e6
		}
		ans = append(ans, a)
	}
	return gaps, ans
}

// snapshot is the policies' state of client 0 of st at now.
func snapshot(st *stack.Stack, now int64) string {
	var b strings.Builder
	if br := st.Breaker(); br != nil {
		fmt.Fprintf(&b, " breaker=%v", br.State(now, 0))
	}
	if ab := st.AdaptiveBreaker(); ab != nil {
		fmt.Fprintf(&b, " adaptive=%.4f", ab.RejectionRate(now, 0))
	}
	if bu := st.Budget(); bu != nil {
		fmt.Fprintf(&b, " budget=%g", bu.Level(now, 0))
	}
	if l := st.Limiter(); l != nil {
		fmt.Fprintf(&b, " fill=%g", l.FillRate(0))
	}
	if th := st.Throttle(); th != nil {
		r, a := th.Counts(0)
		fmt.Fprintf(&b, " throttle=%d/%d", r, a)
	}
	return b.String()
}

// simDecisions drives the simulator's client code through the script.
func simDecisions(t *testing.T, sc *scenario.Scenario, gaps []int64, ans []answer) []string {
	t.Helper()
	m, err := newModel(sc, sc.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	logf := func(now int64, format string, a ...any) {
		log = append(log, fmt.Sprintf("%d ", now)+fmt.Sprintf(format, a...))
	}
	totals := func() (r metrics.Row) {
		for _, x := range m.mt.ser.Rows {
			r.DropThrottle += x.DropThrottle
			r.DropBreaker += x.DropBreaker
			r.BudgetRefused += x.BudgetRefused
			r.Failed += x.Failed
			r.Succeeded += x.Succeeded
		}
		return r
	}
	// scheduled runs f on a fresh calendar and returns the event it
	// scheduled for slot (kind k), if any: the step's other events (the
	// next arrival, the worker's completion) are not run.
	scheduled := func(f func(), slot uint32, k uint8) (int64, bool) {
		m.q = calendar{engine.NewQueue(16)}
		f()
		for {
			e, ok := m.q.Pop()
			if !ok {
				return 0, false
			}
			if e.Kind() == k && e.ID == slot && e.Aux == m.cl.reqs[slot].token() {
				return int64(e.At), true
			}
		}
	}
	pl := &m.cl.pols[0]
	var now int64
	next := 0
	for _, gap := range gaps {
		now += gap
		before := totals()
		slot := uint32(len(m.cl.reqs))
		if k := len(m.cl.freeSlots); k > 0 {
			slot = m.cl.freeSlots[k-1]
		}
		w, paced := scheduled(func() { m.onArrival(now, 0) }, slot, evSend)
		for m.cl.reqs[slot].state != stFree {
			r := &m.cl.reqs[slot]
			if paced { // as the loop's evSend
				logf(now, "paced %d", w-now)
				now = w
				m.q = calendar{engine.NewQueue(16)}
				m.send(now, slot)
			}
			if r.state != stInFlight {
				t.Fatalf("sim: request in state %d, want in flight", r.state)
			}
			logf(now, "attempt %d", r.rs.Attempt)
			if next == len(ans) {
				t.Fatal("script too short")
			}
			a := ans[next]
			next++
			tok, at := r.token(), now+a.lat
			d, retry := scheduled(func() {
				if a.out == outTimeout { // as the loop's evTimeout
					m.countR(at, r, timedOut)
					m.outcome(at, slot, tok, outTimeout, 0)
				} else { // as the backend answers
					m.answer(at, slot, tok, a.out, a.ra)
				}
			}, slot, evRetry)
			now = at
			if !retry {
				break
			}
			logf(now, "retry %d", d-now)
			now = d
			w, paced = scheduled(func() { m.attempt(now, slot) }, slot, evSend) // as the loop's evRetry
		}
		after := totals()
		switch {
		case after.DropThrottle > before.DropThrottle:
			logf(now, "drop throttle")
		case after.DropBreaker > before.DropBreaker:
			logf(now, "drop breaker")
		case after.BudgetRefused > before.BudgetRefused:
			logf(now, "budget refused")
		case after.Failed > before.Failed:
			logf(now, "failed")
		case after.Succeeded > before.Succeeded:
			logf(now, "ok")
		default:
			t.Fatalf("sim: request ended without a count")
		}
		logf(now, "end%s", snapshot(&pl.Stack, now))
	}
	return log
}

// scriptRT answers each attempt from the script: it moves the
// Transport's virtual clock by the answer's latency and returns the
// answer, from the loopback server for an HTTP status or as the transport
// error that the live client classifies as unavailable or timeout.
type scriptRT struct {
	base  http.RoundTripper
	ans   []answer
	next  int
	clock *int64
	fail  func(string)
}

func (s *scriptRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.next == len(s.ans) {
		s.fail("script too short")
		return nil, syscall.ECONNREFUSED
	}
	a := s.ans[s.next]
	s.next++
	*s.clock += a.lat
	switch a.out {
	case outUnavailable:
		return nil, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	case outTimeout:
		return nil, fmt.Errorf("read: %w", context.DeadlineExceeded)
	}
	req = req.Clone(req.Context())
	req.Header.Set("X-Status", strconv.Itoa(map[uint8]int{outOK: 200, outRejected: 503, outError: 500}[a.out]))
	if a.ra > 0 {
		req.Header.Set("X-Retry-After", strconv.FormatInt(a.ra/1e9, 10))
	}
	return s.base.RoundTrip(req)
}

// liveDecisions drives a live client.Transport through the script.
func liveDecisions(t *testing.T, cfg stack.Config, seed uint64, gaps []int64, ans []answer) []string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ra := r.Header.Get("X-Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		code, _ := strconv.Atoi(r.Header.Get("X-Status"))
		w.WriteHeader(code)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	var clock int64
	var log []string
	logf := func(format string, a ...any) {
		log = append(log, fmt.Sprintf("%d ", clock)+fmt.Sprintf(format, a...))
	}
	var attempt int
	var pacing bool
	var end string
	cfg.Timeout, cfg.Deadline = 0, 0 // the script's timeouts are answers; no wall-clock timer may fire
	tr, err := client.New(client.Config{
		Stack: cfg, Seed: seed,
		Base: &scriptRT{base: base, ans: ans, clock: &clock, fail: func(s string) { t.Error(s) }},
		Now:  func() time.Duration { return time.Duration(clock) },
		Sleep: func(_ context.Context, d time.Duration) error {
			if pacing {
				pacing = false
			} else {
				logf("retry %d", int64(d))
			}
			clock += int64(d)
			return nil
		},
		Observe: func(e client.Event) {
			switch e.Kind {
			case client.Attempt:
				logf("attempt %d", attempt)
			case client.Retry: // a retry begins, sent or dropped
				attempt++
			case client.Paced:
				pacing = true
				logf("paced %d", int64(e.Wait))
			case client.DroppedThrottle:
				end = "drop throttle"
			case client.DroppedBreaker:
				end = "drop breaker"
			case client.Succeeded:
				end = "ok"
			case client.Failed:
				if end == "" {
					end = "failed"
				}
			case client.BudgetRefused:
				end = "budget refused"
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, gap := range gaps {
		clock += gap
		attempt, end = 1, ""
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		logf("%s", end)
		logf("end%s", snapshot(tr.Stack(), clock))
	}
	return log
}

func TestDifferentialSimAndLiveClient(t *testing.T) {
	const head = "seed: 7\nduration: 2h\nbackend:\n  workers: 10000\n  service: {dist: constant, mean: 1ms}\n" +
		"clients:\n  count: 1\n  arrival: {process: constant, rate: 1/s}\n"
	for _, tc := range []struct {
		name, clients string
		must          []string // decisions the script must lead to
	}{
		{"aws-adaptive", `  throttle: {k: 2, window: 4s, buckets: 4}
  retry:
    max_attempts: 3
    backoff: {base: 50ms, cap: 2s, jitter: full}
    retry_on: [rejected, timeout, unavailable]
    honor_retry_after: true
    budget: {kind: aws, capacity: 40}
  breaker: {style: gobreaker, consecutive_failures: 4, open_duration: 3s}
  rate_limiter: {}
`, []string{"drop throttle", "drop breaker", "budget refused", "paced", "breaker=half-open"}},
		{"grpc-pushback", `  retry:
    max_attempts: 5
    backoff: {base: 20ms, cap: 1s, multiplier: 1.6, jitter: proportional, jitter_fraction: 0.2}
    retry_on: [rejected, unavailable]
    honor_retry_after: true
    retry_after_mode: exactly
    budget: {kind: grpc, max_tokens: 6, token_ratio: 0.2}
  breaker: {style: resilience4j, window_calls: 10, min_calls: 5, failure_rate: 0.5, open_duration: 2s, open_jitter: 0.3, half_open_probes: 2}
`, []string{"drop breaker", "budget refused", "breaker=half-open"}},
		{"clamped-sre", `  throttle: {k: 2, window: 5s, buckets: 5, accept_outcomes: [ok, error]}
  retry:
    max_attempts: 3
    backoff: {base: 30ms, cap: 3s, jitter: decorrelated}
    retry_on: [rejected, timeout, error]
    honor_retry_after: true
    retry_after_mode: clamped
    budget: {kind: sre, ratio: 0.3, window: 20s}
  breaker: {style: gobreaker, consecutive_failures: 2, open_duration: 1s, open_backoff: 2, max_open_duration: 8s, failure_outcomes: [timeout, unavailable]}
  rate_limiter: {throttle_outcomes: [rejected, unavailable]}
`, []string{"drop throttle", "drop breaker", "paced"}},
		{"semian-dual", `  retry:
    max_attempts: 3
    backoff: {base: 50ms, cap: 1s, jitter: full}
    retry_on: [rejected, timeout, unavailable]
    budget: {kind: sre, ratio: 0.2, window: 10s, charge: send}
  breaker: {style: gobreaker, consecutive_failures: 5, open_duration: 2s}
  adaptive_breaker: {defensiveness: 2, window: 5s, failure_outcomes: [timeout, unavailable, error]}
`, []string{"drop breaker", "adaptive=0.", "adaptive=1.0000", "budget refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte("name: diff\n"+head+tc.clients), "diff.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := sc.Clients.ResolvedGroups()[0].Policies.StackConfig()
			if err != nil {
				t.Fatal(err)
			}
			gaps, ans := diffScript(uint64(len(tc.name)), 120)
			want := simDecisions(t, sc, gaps, ans)
			got := liveDecisions(t, cfg, sc.Seed, gaps, ans)
			for i := range max(len(got), len(want)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Fatalf("decision %d: live %q, simulator %q (the %d before agree)", i, g, w, i)
				}
			}
			// The script must have exercised every kind of decision the
			// stack makes, or the comparison proves little.
			all := strings.Join(want, "\n")
			for _, d := range append([]string{"attempt 2", "retry ", " ok", " failed", "breaker=open"}, tc.must...) {
				if !strings.Contains(all, d) {
					t.Errorf("the script never led to %q", d)
				}
			}
			t.Logf("%d decisions agree", len(want))
			if testing.Verbose() {
				t.Log(all)
			}
		})
	}
}
