package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// Errors of requests the client dropped itself, for errors.Is. The error
// returned wraps one of them.
var (
	// ErrThrottled: the adaptive throttle dropped the request.
	ErrThrottled = errors.New("client: dropped by the adaptive throttle")
	// ErrBreakerOpen: the circuit breaker refused the request.
	ErrBreakerOpen = errors.New("client: refused by the open circuit breaker")
	// ErrDeadline: the request's overall deadline (the policy's, or the
	// context's) passed before an answer came. The error also matches
	// context.DeadlineExceeded.
	ErrDeadline = errors.New("client: request deadline exceeded")
)

// Config configures a Transport.
type Config struct {
	// Stack configures the policy stack: timeout, deadline, throttle,
	// retry, breaker, rate limiter. A scenario's `clients` section (or
	// one of its groups) gives it with scenario.Policies.StackConfig; a
	// program can also write one by hand. Hedging is not supported.
	Stack stack.Config
	// Clients is the number of independent policy instances (simulated
	// clients) the Transport holds; WithClient picks one. Default 1.
	Clients int
	// First is the number of the first of these clients among all of a
	// run's (a client group's start): the random draws are keyed by it, so
	// two groups' client 0 draw apart, as in the simulator. Default 0.
	First int
	// Base sends the attempts; default http.DefaultTransport.
	Base http.RoundTripper
	// Seed seeds the random draws of the throttle, the backoff jitter and
	// the breaker.
	Seed uint64
	// RetryNonIdempotent allows retrying POST, PATCH and other
	// non-idempotent methods (bodies must still be replayable).
	RetryNonIdempotent bool
	// Observe, when set, is called (synchronously, from the request's
	// goroutine) with every event of every request, for metrics; it must
	// be safe for concurrent use.
	Observe func(Event)
	// Now, when set, replaces the monotonic wall clock (tests). It returns
	// the time elapsed since the Transport was made and must not go
	// backwards.
	Now func() time.Duration
	// MaxRetryAfter caps a server's Retry-After (as gRPC caps pushback):
	// a longer one waits this long. Default DefaultMaxRetryAfter; the
	// request's deadline still ends any wait first.
	MaxRetryAfter time.Duration
	// Sleep, when set, replaces waiting d (a backoff, the rate limiter's
	// pacing) until ctx ends: it returns ctx's error if ctx ends first, nil
	// otherwise. With Now it runs the Transport on a virtual clock (tests).
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultMaxRetryAfter is Config.MaxRetryAfter's default: a Retry-After
// of a day (which a misconfigured or hostile server may send) stalls a
// request for a minute at most.
const DefaultMaxRetryAfter = time.Minute

// EventKind is what happened to a request, in the simulator's metric
// names (metrics.Row).
type EventKind uint8

// Event kinds.
const (
	Offered          EventKind = iota // a request entered RoundTrip
	Attempt                           // an attempt was sent
	Retry                             // an attempt after the first began (sent or dropped)
	Paced                             // the rate limiter delayed an attempt by Wait
	Succeeded                         // the request ended with an "ok" response after Latency
	Failed                            // the request ended in failure after its last attempt
	DeadlineExceeded                  // of Failed: its deadline passed
	BudgetRefused                     // of Failed: the retry budget refused its retry
	DroppedThrottle                   // the throttle dropped it
	DroppedBreaker                    // the breaker refused it
	TimedOut                          // an attempt outlived the per-attempt timeout
)

// Event is one event of one request.
type Event struct {
	Kind    EventKind
	Client  int
	Wait    time.Duration // Paced
	Latency time.Duration // Succeeded: from RoundTrip's start to the response headers
}

// Transport is an http.RoundTripper that runs a policy stack.
type Transport struct {
	base     http.RoundTripper
	st       *stack.Stack
	src      rng.Source
	observe  func(Event)
	now      func() time.Duration
	sleep    func(ctx context.Context, d time.Duration) error
	anyVerb  bool
	attemptT time.Duration
	overallT time.Duration

	mu    sync.Mutex
	ords  []uint32 // per client: requests so far; a request's number names its random draws
	first uint64   // Config.First: added to a client's number in its stream keys
	maxRA int64    // Config.MaxRetryAfter in ns
}

// New builds a Transport running the policy stack cfg.Stack (package
// stack, the simulator's own decisions).
func New(cfg Config) (*Transport, error) {
	n := cfg.Clients
	if n == 0 {
		n = 1
	}
	if n < 0 {
		return nil, fmt.Errorf("client: Clients must be >= 1, got %d", cfg.Clients)
	}
	if cfg.MaxRetryAfter < 0 {
		return nil, fmt.Errorf("client: MaxRetryAfter must be >= 0, got %v", cfg.MaxRetryAfter)
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.Stack.Hedge != nil {
		return nil, errors.New("client: hedge: hedging is not supported by the live client")
	}
	t := &Transport{
		base: cfg.Base, src: rng.New(cfg.Seed), observe: cfg.Observe, now: cfg.Now, sleep: cfg.Sleep,
		anyVerb: cfg.RetryNonIdempotent, attemptT: time.Duration(cfg.Stack.Timeout), overallT: time.Duration(cfg.Stack.Deadline),
		ords: make([]uint32, n), first: uint64(max(cfg.First, 0)), maxRA: int64(cfg.MaxRetryAfter),
	}
	if cfg.Stack.First == 0 {
		// Per-instance draws (the adaptive breakers' phases) keyed as the
		// simulator keys them: from the group's first client.
		cfg.Stack.First = t.first
	}
	st, err := stack.New(cfg.Stack, n, &t.src)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	t.st = st
	if t.sleep == nil {
		t.sleep = sleep
	}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.now == nil {
		start := time.Now()
		t.now = func() time.Duration { return time.Since(start) }
	}
	return t, nil
}

type clientKey struct{}

// WithClient returns a context whose requests use policy instance i of
// the Transport (0 <= i < Config.Clients).
func WithClient(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, clientKey{}, i)
}

type ordinalKey struct{}

// WithOrdinal returns a context whose requests are request number n of
// their client (counting from 0), as the simulation numbers a client's
// arrivals: the number names the request's random draws (throttle,
// backoff jitter, breaker), so a live run that passes the simulation's
// arrival ordinals draws what the simulation draws for the same request.
// Without it a Transport numbers each client's requests itself, in the
// order they reach RoundTrip.
func WithOrdinal(ctx context.Context, n uint32) context.Context {
	return context.WithValue(ctx, ordinalKey{}, n)
}

// Stack is the policy stack the Transport runs (for inspection: reading
// it is not safe while requests are in flight).
func (t *Transport) Stack() *stack.Stack { return t.st }

func (t *Transport) emit(e Event) {
	if t.observe != nil {
		t.observe(e)
	}
}

// draw names the random draws of r's current attempt as the simulator
// names a client's: its request number and attempt number in its
// client's streams.
func (t *Transport) draw(r *request) stack.Draw {
	return stack.Draw{Stream: t.first + uint64(r.c), N: stack.Index(r.ord, r.rs.Attempt)}
}

// replayable reports whether req may be sent more than once.
func (t *Transport) replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if t.anyVerb {
		return true
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// request is the state of one RoundTrip, as sim's request slot.
type request struct {
	c     int
	ord   uint32 // the client's request number
	start time.Duration
	rs    stack.Request // the state the stack's decisions keep, attempt number included
}

// RoundTrip sends req through the policy stack.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	c := 0
	if v, ok := ctx.Value(clientKey{}).(int); ok {
		c = v
	}
	if c < 0 || c >= len(t.ords) {
		return nil, fmt.Errorf("client: client %d out of range [0, %d)", c, len(t.ords))
	}
	st := t.st
	r := request{c: c}
	t.mu.Lock()
	now := t.now()
	r.start = now
	if n, ok := ctx.Value(ordinalKey{}).(uint32); ok {
		r.ord = n
	} else {
		r.ord = t.ords[c]
		t.ords[c]++
	}
	st.OnRequest(int64(now), c)
	t.mu.Unlock()
	t.emit(Event{Kind: Offered, Client: c})

	cancel := context.CancelFunc(func() {})
	if t.overallT > 0 {
		ctx, cancel = context.WithTimeout(ctx, t.overallT)
	}
	replayable := t.replayable(req)
	for {
		resp, out, err, over := t.try(ctx, req, &r)
		if over { // dropped before sending, or out of time
			cancel()
			return nil, err
		}
		if out == stack.OK {
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		if !replayable {
			t.emit(Event{Kind: Failed, Client: c})
			return finish(resp, err, cancel)
		}
		d, v := t.backoff(&r, out, resp)
		if v != stack.Retry {
			t.emit(Event{Kind: Failed, Client: c})
			if v == stack.BudgetRefused {
				t.emit(Event{Kind: BudgetRefused, Client: c})
			}
			return finish(resp, err, cancel)
		}
		if dl, has := ctx.Deadline(); has && time.Now().Add(d).After(dl) {
			// The retry would start after the deadline: give up now.
			t.emit(Event{Kind: Failed, Client: c})
			t.emit(Event{Kind: DeadlineExceeded, Client: c})
			return finish(resp, err, cancel)
		}
		discard(resp)
		if err := t.sleep(ctx, d); err != nil {
			cancel()
			return nil, t.ctxErr(ctx, c, err)
		}
	}
}

// finish returns a request's last answer (response or error) as it came.
func finish(resp *http.Response, err error, cancel context.CancelFunc) (*http.Response, error) {
	if resp != nil {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	cancel()
	return nil, err
}

// try sends the next attempt of r through the gates. It returns the
// attempt's response or error and its outcome; over means the request is
// over, with err saying why (dropped, or out of time).
func (t *Transport) try(ctx context.Context, req *http.Request, r *request) (resp *http.Response, out stack.Outcome, err error, over bool) {
	st := t.st
	c := r.c
	r.rs.Attempt++
	if r.rs.Attempt > 1 {
		t.emit(Event{Kind: Retry, Client: c})
	}
	t.mu.Lock()
	now := int64(t.now())
	drop := st.Admit(now, c, t.draw(r), &r.rs)
	var wait int64
	if drop == stack.Admitted {
		wait = st.Pace(now, c)
	}
	t.mu.Unlock()
	switch drop {
	case stack.DropThrottle:
		t.emit(Event{Kind: DroppedThrottle, Client: c})
		return nil, 0, ErrThrottled, true
	case stack.DropBreaker:
		t.emit(Event{Kind: DroppedBreaker, Client: c})
		return nil, 0, ErrBreakerOpen, true
	}
	if wait > 0 {
		t.emit(Event{Kind: Paced, Client: c, Wait: time.Duration(wait)})
		if err := t.sleep(ctx, time.Duration(wait)); err != nil {
			t.breakerResult(r, stack.Timeout) // the breaker admitted a call that is given up
			return nil, 0, t.ctxErr(ctx, c, err), true
		}
	}

	actx, acancel := ctx, context.CancelFunc(func() {})
	if t.attemptT > 0 {
		actx, acancel = context.WithTimeout(ctx, t.attemptT)
	}
	areq := req.Clone(actx)
	if r.rs.Attempt > 1 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			acancel()
			t.breakerResult(r, stack.Error) // admitted, never sent
			t.emit(Event{Kind: Failed, Client: c})
			return nil, 0, fmt.Errorf("client: replaying the body: %w", err), true
		}
		areq.Body = body
	}
	t.emit(Event{Kind: Attempt, Client: c})
	resp, err = t.base.RoundTrip(areq)
	if err != nil {
		acancel()
		if ctx.Err() != nil { // the whole request is out of time (or cancelled)
			t.emit(Event{Kind: TimedOut, Client: c})
			t.breakerResult(r, stack.Timeout) // the client gave the call up, as at the simulator's deadline
			return nil, 0, t.ctxErr(ctx, c, err), true
		}
		out = classifyErr(err)
		if out == stack.Timeout {
			t.emit(Event{Kind: TimedOut, Client: c})
		}
		t.result(r, out)
		return nil, out, err, false
	}
	out = classify(resp.StatusCode)
	t.result(r, out)
	if out == stack.OK {
		t.emit(Event{Kind: Succeeded, Client: c, Latency: t.now() - r.start})
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: acancel}
	return resp, out, nil, false
}

// result gives the policies the outcome of r's current attempt.
func (t *Transport) result(r *request, out stack.Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Result(int64(t.now()), r.c, out, &r.rs, t.draw(r))
}

// breakerResult gives the breaker alone the outcome of r's current
// attempt: one the client gave up (the request's time ran out) or never
// sent.
func (t *Transport) breakerResult(r *request, out stack.Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.BreakerResult(int64(t.now()), r.c, out, &r.rs, t.draw(r))
}

// backoff is what r does after an attempt with outcome out (and response
// resp, if any): retry after d, or give up (stack.Stack.NextRetry).
func (t *Transport) backoff(r *request, out stack.Outcome, resp *http.Response) (d time.Duration, v stack.Verdict) {
	ra := int64(0)
	if resp != nil {
		ra = max(min(retryAfter(resp.Header.Get("Retry-After"), time.Now()), t.maxRA), 0)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ns, v := t.st.NextRetry(int64(t.now()), r.c, out, ra, &r.rs, t.draw(r))
	return time.Duration(ns), v
}

// ctxErr is the error of a request whose context ended: ErrDeadline (and
// context.DeadlineExceeded) when its deadline passed, the context's error
// otherwise. Either way the request failed.
func (t *Transport) ctxErr(ctx context.Context, c int, err error) error {
	t.emit(Event{Kind: Failed, Client: c})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.emit(Event{Kind: DeadlineExceeded, Client: c})
		return deadlineError{err}
	}
	return err
}

type deadlineError struct{ err error }

func (e deadlineError) Error() string { return ErrDeadline.Error() + ": " + e.err.Error() }
func (e deadlineError) Is(target error) bool {
	return target == ErrDeadline || target == context.DeadlineExceeded
}
func (e deadlineError) Unwrap() error { return e.err }

// classify is the outcome of an HTTP status.
func classify(code int) stack.Outcome {
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return stack.Rejected
	case code >= 500:
		return stack.Error
	}
	return stack.OK
}

// classifyErr is the outcome of a transport error.
func classifyErr(err error) stack.Outcome {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return stack.Timeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return stack.Unavailable
	}
	return stack.Error
}

// retryAfter parses a Retry-After value, seconds or an HTTP date, as
// nanoseconds from now; -1 when absent or malformed, 0 for a past date.
func retryAfter(v string, now time.Time) int64 {
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return -1
		}
		return min(s, 1<<33) * 1e9 // capped at ~272 years
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(int64(at.Sub(now)), 0)
	}
	return -1
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// discard drains a little of a response that will not be returned, so
// that its connection can be reused, and closes it.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
}

// cancelBody releases a context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
