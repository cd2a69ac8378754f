package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/throttlesim/throttlesim/live/client"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// A scenario's clients section, as a simulation reads it, configures the
// real client.
func Example() {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 { // overloaded twice, then fine
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	sc, err := scenario.Parse([]byte(`
name: example
clients:
  count: 1
  arrival: {total_rate: 1/s}
  timeout: 1s
  retry:
    max_attempts: 3
    backoff: {base: 1ms, cap: 10ms, multiplier: 2, jitter: full}
    retry_on: [rejected, timeout, unavailable]
    honor_retry_after: true
`), "example.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	cfg, err := sc.Clients.ResolvedGroups()[0].Policies.StackConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	tr, err := client.New(client.Config{Stack: cfg, Base: base})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status, "after", calls.Load(), "attempts")
	// Output: 200 OK after 3 attempts
}

// A request the client drops itself returns an error errors.Is can test.
func ExampleErrBreakerOpen() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	sc, err := scenario.Parse([]byte(`
name: example
clients:
  count: 1
  arrival: {total_rate: 1/s}
  breaker: {trip: consecutive, consecutive_failures: 2, open_duration: 1m}
`), "example.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	cfg, err := sc.Clients.ResolvedGroups()[0].Policies.StackConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	tr, err := client.New(client.Config{Stack: cfg, Base: base})
	if err != nil {
		fmt.Println(err)
		return
	}
	hc := &http.Client{Transport: tr}
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL, nil)
		resp, err := hc.Do(req)
		switch {
		case errors.Is(err, client.ErrBreakerOpen):
			fmt.Println(i, "refused locally")
		case err != nil:
			fmt.Println(i, err)
		default:
			resp.Body.Close()
			fmt.Println(i, resp.StatusCode)
		}
	}
	// Output:
	// 1 500
	// 2 500
	// 3 refused locally
}

// A program that has no scenario writes the stack's configuration by
// hand: here three attempts with capped exponential backoff (no jitter)
// on overload rejections, and a breaker that opens after two failures.
func Example_handBuilt() {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	br := policy.GobreakerDefaults()
	br.ConsecutiveFailures = 2
	cfg := stack.Config{
		Timeout: int64(time.Second),
		Retry: &stack.RetryConfig{
			MaxAttempts: 3,
			On:          stack.Outcomes(stack.Rejected, stack.Unavailable, stack.Timeout),
			Backoff:     policy.Backoff{Base: int64(time.Millisecond), Cap: int64(10 * time.Millisecond), Multiplier: 2},
		},
		Breaker: &stack.BreakerConfig{Breaker: br, Failures: stack.Outcomes(stack.Rejected, stack.Timeout, stack.Unavailable, stack.Error)},
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr, err := client.New(client.Config{Stack: cfg, Base: base})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = (&http.Client{Transport: tr}).Get(srv.URL)
	fmt.Println(calls.Load(), "attempts;", errors.Is(err, client.ErrBreakerOpen))
	// Output: 2 attempts; true
}

// One Transport can stand for a fleet: each request names its client, and
// each client has its own policy instances (here, its own breaker).
func ExampleWithClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	sc, err := scenario.Parse([]byte(`
name: example
clients:
  count: 2
  arrival: {total_rate: 1/s}
  breaker: {trip: consecutive, consecutive_failures: 1, open_duration: 1m}
`), "example.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	cfg, err := sc.Clients.ResolvedGroups()[0].Policies.StackConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	tr, err := client.New(client.Config{Stack: cfg, Clients: 2, Base: base})
	if err != nil {
		fmt.Println(err)
		return
	}
	get := func(c int, query string) {
		req, _ := http.NewRequestWithContext(client.WithClient(context.Background(), c), "GET", srv.URL+query, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			fmt.Printf("client %d: %v\n", c, err)
			return
		}
		resp.Body.Close()
		fmt.Printf("client %d: %d\n", c, resp.StatusCode)
	}
	get(0, "?fail=1") // opens client 0's breaker
	get(0, "")
	get(1, "") // client 1's breaker is closed
	// Output:
	// client 0: 500
	// client 0: client: refused by the open circuit breaker
	// client 1: 200
}
