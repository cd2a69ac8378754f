// Package client is an HTTP client that applies a throttlesim client
// policy stack — the SRE adaptive throttle, retries with backoff and
// jitter, Retry-After, retry budgets, circuit breakers, the AWS adaptive
// rate limiter, per-attempt timeouts and an overall deadline — to real
// requests.
//
// It runs the very decisions the simulator runs (package sim/stack, over
// the state machines of sim/policy), configured by a stack.Config — from
// a scenario's `clients` section (scenario.Policies.StackConfig, the
// translation the simulator uses) or written by hand — with the wall
// clock plugged in for the simulator's virtual clock: what a scenario
// predicts is what ships. It imports neither the simulator nor the
// scenario decoder.
//
// A Transport is an http.RoundTripper:
//
//	tr, err := client.New(client.Config{Stack: cfg})
//	hc := &http.Client{Transport: tr}
//
// # HTTP semantics
//
//   - Outcomes: a response with status 429 or 503 is "rejected"; any
//     other 5xx is "error"; anything else (2xx, 3xx, other 4xx) is "ok".
//     A refused or reset connection is "unavailable"; an attempt that
//     outlives the policy's timeout is "timeout"; another transport error
//     is "error".
//   - Retries go only to idempotent methods (GET, HEAD, OPTIONS, TRACE,
//     PUT, DELETE, or any request with an Idempotency-Key header, as
//     net/http decides) unless Config.RetryNonIdempotent is set, and only
//     when the body can be replayed (no body, or Request.GetBody set).
//   - The policy's deadline and the request context's deadline bound the
//     whole request, retries and backoff included; the policy's timeout
//     bounds each attempt. A successful response's body stays readable
//     until it is closed (the timeout keeps applying to it, as with
//     http.Client.Timeout).
//   - Retry-After is read as seconds or as an HTTP date.
//   - When the retries run out, or the budget refuses one, or the next
//     retry would start after the deadline, the last response (or error)
//     is returned as it came. A request the client drops itself returns
//     an error that errors.Is matches to ErrThrottled, ErrBreakerOpen or
//     ErrDeadline.
//
// # Concurrency
//
// A Transport is safe for concurrent use. Its policies are guarded by one
// mutex, held only while a policy decides (never during I/O or sleeps).
// A Transport holds Config.Clients independent policy instances, one per
// simulated client; WithClient picks the instance a request uses, so one
// Transport can stand for a whole fleet of clients, as in `throttlesim
// live`. An application with one logical client uses the default, 1.
package client
