package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// policies is the stack configuration of the clients section of a
// minimal scenario.
func policies(t testing.TB, clients string) stack.Config {
	t.Helper()
	src := "name: t\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\n" + clients
	sc, err := scenario.Parse([]byte(src), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sc.Clients.ResolvedGroups()[0].Policies.StackConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// counter tallies events by kind.
type counter struct {
	mu sync.Mutex
	n  map[EventKind]int
}

func (c *counter) observe(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[EventKind]int{}
	}
	c.n[e.Kind]++
}

func (c *counter) get(k EventKind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// newTransport is a Transport over a fresh http.Transport, closed when
// the test ends (goleak sees no idle connections left over).
func newTransport(t testing.TB, cfg Config) (*Transport, *counter) {
	t.Helper()
	base := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(base.CloseIdleConnections)
	cfg.Base = base
	var c counter
	cfg.Observe = c.observe
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr, &c
}

// serve is an httptest server answering with the codes in turn (the last
// one repeats), counting the requests and recording their bodies.
type script struct {
	mu     sync.Mutex
	codes  []int
	n      int
	bodies []string
	delay  map[int]time.Duration // request number (from 1) → delay before answering
	ra     string                // Retry-After on failures
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.n++
	n := s.n
	s.bodies = append(s.bodies, string(b))
	code := s.codes[min(n, len(s.codes))-1]
	d := s.delay[n]
	s.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if code != 200 && s.ra != "" {
		w.Header().Set("Retry-After", s.ra)
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, "answer %d", n)
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func newServer(t testing.TB, s *script) *httptest.Server {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

const fastRetry = `  retry:
    max_attempts: 3
    backoff: {base: 1ms, cap: 5ms, multiplier: 2, jitter: full}
    retry_on: [rejected, timeout, unavailable, error]
`

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		codes    []int
		method   string
		body     string
		getBody  bool
		anyVerb  bool
		wantCode int
		wantN    int // requests the server saw
	}{
		{"503 then ok", []int{503, 503, 200}, "GET", "", false, false, 200, 3},
		{"429 and 500 are retried too", []int{429, 500, 200}, "GET", "", false, false, 200, 3},
		{"attempts run out: the last answer", []int{503}, "GET", "", false, false, 503, 3},
		{"a 404 is an answer, not a failure", []int{404, 200}, "GET", "", false, false, 404, 1},
		{"PUT is idempotent", []int{503, 200}, "PUT", "x", true, false, 200, 2},
		{"POST is not retried", []int{503, 200}, "POST", "x", true, false, 503, 1},
		{"POST with RetryNonIdempotent", []int{503, 200}, "POST", "x", true, true, 200, 2},
		{"a body that cannot be replayed is not retried", []int{503, 200}, "PUT", "x", false, false, 503, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{codes: tt.codes}
			srv := newServer(t, s)
			tr, ev := newTransport(t, Config{Stack: policies(t, fastRetry), RetryNonIdempotent: tt.anyVerb})
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
				if !tt.getBody {
					body = io.MultiReader(body) // hides the type NewRequest knows how to replay
				}
			}
			req, err := http.NewRequest(tt.method, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode || s.count() != tt.wantN {
				t.Errorf("got %d after %d requests, want %d after %d", resp.StatusCode, s.count(), tt.wantCode, tt.wantN)
			}
			if want := fmt.Sprintf("answer %d", tt.wantN); string(b) != want {
				t.Errorf("body %q, want %q (the last attempt's)", b, want)
			}
			for i, got := range s.bodies {
				if got != tt.body {
					t.Errorf("attempt %d sent body %q, want %q", i+1, got, tt.body)
				}
			}
			if got := ev.get(Attempt); got != tt.wantN {
				t.Errorf("%d Attempt events, want %d", got, tt.wantN)
			}
			if got := ev.get(Retry); got != tt.wantN-1 {
				t.Errorf("%d Retry events, want %d", got, tt.wantN-1)
			}
			ok := tt.wantCode < 500 && tt.wantCode != 429
			if ev.get(Succeeded) != b2i(ok) || ev.get(Failed) != b2i(!ok) || ev.get(Offered) != 1 {
				t.Errorf("offered %d, succeeded %d, failed %d; want 1, %d, %d", ev.get(Offered), ev.get(Succeeded), ev.get(Failed), b2i(ok), b2i(!ok))
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// An attempt that outlives the timeout is given up and retried; the
// overall deadline ends the request with ErrDeadline.
func TestTimeouts(t *testing.T) {
	t.Run("per-attempt timeout, then a fast answer", func(t *testing.T) {
		s := &script{codes: []int{200}, delay: map[int]time.Duration{1: 2 * time.Second}}
		srv := newServer(t, s)
		tr, ev := newTransport(t, Config{Stack: policies(t, "  timeout: 50ms\n"+fastRetry)})
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// "answer 2" is the proof that the first attempt was given up:
		// it would have answered "answer 1" after its 2 s (a bound on the
		// elapsed time would add nothing but a chance failure).
		if resp.StatusCode != 200 || string(b) != "answer 2" || ev.get(TimedOut) != 1 {
			t.Errorf("got %d %q with %d timeouts, want 200 \"answer 2\" with 1", resp.StatusCode, b, ev.get(TimedOut))
		}
	})
	t.Run("overall deadline", func(t *testing.T) {
		s := &script{codes: []int{200}, delay: map[int]time.Duration{1: 2 * time.Second, 2: 2 * time.Second, 3: 2 * time.Second}}
		srv := newServer(t, s)
		tr, ev := newTransport(t, Config{Stack: policies(t, "  timeout: 40ms\n  deadline: 100ms\n"+fastRetry)})
		_, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want ErrDeadline and context.DeadlineExceeded", err)
		}
		if ev.get(DeadlineExceeded) != 1 || ev.get(Failed) != 1 {
			t.Errorf("deadline %d, failed %d; want 1, 1", ev.get(DeadlineExceeded), ev.get(Failed))
		}
	})
	t.Run("the context's deadline bounds the retries", func(t *testing.T) {
		s := &script{codes: []int{503}, ra: "3600"}
		srv := newServer(t, s)
		tr, _ := newTransport(t, Config{Stack: policies(t, fastRetry+"    honor_retry_after: true\n")})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// Retry-After: 3600 puts the retry past the context's deadline:
		// the 503 comes back at once, long before the minute is up (had
		// the client waited for the deadline, ctx would have ended).
		if resp.StatusCode != 503 || s.count() != 1 || ctx.Err() != nil {
			t.Errorf("got %d after %d requests, context %v; want the first 503 at once", resp.StatusCode, s.count(), ctx.Err())
		}
	})
}

// A refused connection is "unavailable": retried, then the error returned.
func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tr, ev := newTransport(t, Config{Stack: policies(t, fastRetry)})
	_, err = (&http.Client{Transport: tr}).Get("http://" + addr)
	if err == nil || errors.Is(err, ErrThrottled) {
		t.Fatalf("got %v, want the connection error", err)
	}
	if got := classifyErr(err); got != stack.Unavailable {
		t.Errorf("classified %v, want unavailable", got)
	}
	if ev.get(Attempt) != 3 || ev.get(Failed) != 1 {
		t.Errorf("%d attempts, %d failed; want 3, 1", ev.get(Attempt), ev.get(Failed))
	}
}

// The throttle drops requests once the backend rejects everything, and the
// caller can tell with errors.Is. With no accepts in the window, the SRE
// probability after R requests is R/(R+1) (padding 1): from the 20th
// request on it is >= 0.95, so of the last 80 of 100 requests the drops
// are Binomial(80, >= 0.95), mean >= 76 and 5 standard deviations below
// it is 76 − 5·√(80·0.95·0.05) ≈ 66. The seed is fixed; the bound is the
// maths, not this seed's luck.
func TestThrottleDrops(t *testing.T) {
	s := &script{codes: []int{503}}
	srv := newServer(t, s)
	now := time.Duration(0) // a frozen clock: nothing leaves the window
	tr, ev := newTransport(t, Config{
		Stack: policies(t, "  throttle: {k: 2, window: 1m, buckets: 60, count_local_rejects: true, accept_outcomes: [ok]}\n"),
		Seed:  7, Now: func() time.Duration { return now },
	})
	hc := &http.Client{Transport: tr}
	late := 0
	for i := range 100 {
		resp, err := hc.Get(srv.URL)
		switch {
		case errors.Is(err, ErrThrottled):
			if i == 0 {
				t.Fatal("the first request was dropped")
			}
			if i >= 20 {
				late++
			}
		case err != nil:
			t.Fatal(err)
		default:
			resp.Body.Close()
		}
	}
	if late < 66 {
		t.Errorf("%d of the last 80 requests dropped, want >= 66", late)
	}
	if ev.get(DroppedThrottle)+s.count() != 100 {
		t.Errorf("drops %d + sent %d != 100", ev.get(DroppedThrottle), s.count())
	}
}

// The breaker opens after gobreaker's default 5 consecutive failures and
// refuses with ErrBreakerOpen; after its open duration a probe goes out.
func TestBreaker(t *testing.T) {
	s := &script{codes: []int{500, 500, 500, 500, 500, 500, 200}}
	srv := newServer(t, s)
	now := time.Duration(0)
	tr, ev := newTransport(t, Config{
		Stack: policies(t, "  breaker: {trip: consecutive, consecutive_failures: 5, open_duration: 10s}\n"),
		Now:   func() time.Duration { return now },
	})
	hc := &http.Client{Transport: tr}
	get := func() error {
		resp, err := hc.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for i := range 5 {
		if err := get(); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if err := get(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("6th request: got %v, want ErrBreakerOpen", err)
	}
	now = 11 * time.Second // past the open duration: a half-open probe
	if err := get(); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if s.count() != 6 || ev.get(DroppedBreaker) != 1 {
		t.Errorf("server saw %d, breaker dropped %d; want 6, 1", s.count(), ev.get(DroppedBreaker))
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want int64
	}{
		{"", -1},
		{"0", 0},
		{"3", 3e9},
		{"-1", -1},
		{"soon", -1},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90e9},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"Wed, 03 Dec 2026 04:00:30 GMT", 30e9},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// The delay before a retry is at least the server's Retry-After when the
// policy honours it, and the backoff alone when it does not.
func TestBackoffHonoursRetryAfter(t *testing.T) {
	for _, honor := range []bool{true, false} {
		tr, _ := newTransport(t, Config{Stack: policies(t, fastRetry+fmt.Sprintf("    honor_retry_after: %v\n", honor))})
		resp := &http.Response{Header: http.Header{"Retry-After": {"2"}}}
		d, v := tr.backoff(&request{}, stack.Rejected, resp)
		if v != stack.Retry {
			t.Fatal("refused without a budget")
		}
		if honor && d != 2*time.Second || !honor && d > 5*time.Millisecond {
			t.Errorf("honor %v: delay %v", honor, d)
		}
	}
}

// A Retry-After of a day waits MaxRetryAfter at most (a minute by
// default); before, it stalled the request for the whole day when no
// deadline was set.
func TestRetryAfterIsCapped(t *testing.T) {
	for _, tt := range []struct {
		max  time.Duration
		ra   string
		want time.Duration
	}{
		{0, "86400", DefaultMaxRetryAfter},
		{5 * time.Second, "86400", 5 * time.Second},
		{5 * time.Second, "2", 2 * time.Second},
		{0, time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat), DefaultMaxRetryAfter},
	} {
		tr, _ := newTransport(t, Config{Stack: policies(t, fastRetry+"    honor_retry_after: true\n"), MaxRetryAfter: tt.max})
		d, v := tr.backoff(&request{}, stack.Rejected, &http.Response{Header: http.Header{"Retry-After": {tt.ra}}})
		if v != stack.Retry || d != tt.want {
			t.Errorf("max %v, Retry-After %s: delay %v (verdict %v), want %v", tt.max, tt.ra, d, v, tt.want)
		}
	}
	if _, err := New(Config{MaxRetryAfter: -time.Second}); err == nil {
		t.Error("a negative MaxRetryAfter was accepted")
	}
}

// Thousands of goroutines share one Transport (run under -race by make
// test-race): every request is accounted for exactly once.
func TestConcurrent(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.WriteHeader(503)
		}
	}))
	t.Cleanup(srv.Close)
	const clients, each = 200, 10
	tr, ev := newTransport(t, Config{Clients: clients,
		Stack: policies(t, "  throttle: {k: 2}\n  breaker: {}\n"+fastRetry+"    budget: {kind: sre}\n")})
	hc := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			ctx := WithClient(context.Background(), c)
			for range each {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
				if resp, err := hc.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	ends := ev.get(Succeeded) + ev.get(Failed) + ev.get(DroppedThrottle) + ev.get(DroppedBreaker)
	if ev.get(Offered) != clients*each || ends != clients*each {
		t.Errorf("offered %d, ended %d; want %d each", ev.get(Offered), ends, clients*each)
	}
	if int(n.Load()) != ev.get(Attempt) {
		t.Errorf("server saw %d, client sent %d", n.Load(), ev.get(Attempt))
	}
	if _, err := tr.RoundTrip(httptest.NewRequestWithContext(WithClient(context.Background(), clients), "GET", srv.URL, nil)); err == nil {
		t.Error("a client out of range was accepted")
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := New(Config{Clients: -1}); err == nil {
		t.Error("Clients -1 accepted")
	}
	p := policies(t, "  hedge: {delay: 10ms}\n")
	if _, err := New(Config{Stack: p}); err == nil || !strings.Contains(err.Error(), "hedge") {
		t.Errorf("hedge: got %v, want an error naming it", err)
	}
}

// Client groups draw apart: a Transport's streams are keyed by its
// clients' numbers in the whole run (Config.First), so client 0 of a
// group starting at 5 draws what client 5 of a group starting at 0 does,
// not what that group's client 0 does.
func TestFirstKeysTheDraws(t *testing.T) {
	mk := func(first, clients int) *Transport {
		tr, err := New(Config{Clients: clients, First: first, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b := mk(0, 10), mk(5, 5)
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	x5, y0 := a.draw(&request{c: 5}), b.draw(&request{c: 0})
	x0 := mk(0, 10).draw(&request{c: 0})
	if x5 != y0 {
		t.Errorf("client 5 of the whole draws %v, client 0 of the group from 5 draws %v: want the same", x5, y0)
	}
	if x0 == y0 {
		t.Errorf("client 0 of two groups draw the same %v", x0)
	}
}

// A request's ordinal names its draws: the first request of a Transport
// told it is request 3 waits the backoff (full jitter) that the fourth
// request of a Transport counting its own requests waits, and not the
// first one's.
func TestWithOrdinalNamesTheDraws(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(srv.Close)
	// delays sends n requests (ctx from mk) and returns the retry delay of each.
	delays := func(n int, mk func(i int) context.Context) []time.Duration {
		var got []time.Duration
		tr, _ := newTransport(t, Config{Seed: 3, Stack: policies(t, "  retry:\n    max_attempts: 2\n    backoff: {base: 1s, cap: 10s, jitter: full}\n    retry_on: [rejected]\n"),
			Sleep: func(_ context.Context, d time.Duration) error { got = append(got, d); return nil }})
		for i := range n {
			req, _ := http.NewRequestWithContext(mk(i), "GET", srv.URL, nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		return got
	}
	own := delays(4, func(int) context.Context { return context.Background() })
	told := delays(1, func(int) context.Context { return WithOrdinal(context.Background(), 3) })
	if len(own) != 4 || len(told) != 1 {
		t.Fatalf("got %d and %d retries, want 4 and 1", len(own), len(told))
	}
	if told[0] != own[3] || told[0] == own[0] {
		t.Errorf("request told it is number 3 waits %v; want request 3's %v, not request 0's %v", told[0], own[3], own[0])
	}
}

// Two groups' transports (First 0 and First 4, as live mode builds them)
// draw their adaptive breakers' phases from their own clients' keys, as
// the simulator does: breaker 0 of the second group is not breaker 0 of
// the first.
func TestAdaptiveBreakerPhaseFollowsFirst(t *testing.T) {
	cfg := stack.Config{AdaptiveBreaker: &stack.AdaptiveBreakerConfig{Breaker: policy.SemianAdaptiveDefaults(), Failures: stack.Outcomes(stack.Error)}}
	a, err := New(Config{Stack: cfg, Clients: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Stack: cfg, Clients: 4, First: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Stack().AdaptiveBreaker(), b.Stack().AdaptiveBreaker()
	if got, other := pb.Phase(0), pa.Phase(0); got == other {
		t.Errorf("second group's breaker 0: got phase %d, the first group's too", got)
	}
	one, err := New(Config{Stack: cfg, Clients: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pb.Phase(0), one.Stack().AdaptiveBreaker().Phase(4); got != want {
		t.Errorf("second group's breaker 0: got phase %d, want %d (client 4's of one fleet)", got, want)
	}
}
