package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// result is what became of one request of a scripted arrival sequence:
// its status code and when (on the bubble's clock) its answer came.
type result struct {
	code int
	at   time.Duration
}

// script sends one request at each of the times arrive (from the start of
// the bubble) to the server of backend and returns each one's result in
// the order sent.
func script(t *testing.T, backend string, arrive []time.Duration) []result {
	t.Helper()
	var out []result
	synctest.Test(t, func(t *testing.T) {
		s := bubble(t, backend, nil)
		start := time.Now()
		out = make([]result, len(arrive))
		done := make(chan struct{}, len(arrive))
		for i, at := range arrive {
			time.Sleep(at - time.Since(start))
			go func() {
				a := do(context.Background(), s)
				out[i] = result{code: a.code, at: time.Since(start)}
				if a.aborted {
					out[i].code = 0
				}
				done <- struct{}{}
			}()
			synctest.Wait() // admitted, queued or answered before the next one arrives
		}
		for range arrive {
			<-done
		}
	})
	return out
}

// Each queue discipline and limit runs live through the same admission
// value as the simulator (sim/admission): one worker, 100 ms services,
// arrivals 1 ms apart, and the order and verdict of the answers is the
// decision's. Before the live server called the admission value, every
// case but fifo was refused ("not supported by the live server").
func TestDisciplinesLive(t *testing.T) {
	const one = "backend:\n  workers: 1\n  service: {dist: constant, mean: 100ms}\n"
	ms := time.Millisecond
	four := []time.Duration{0, ms, 2 * ms, 3 * ms}
	for _, tt := range []struct {
		name, extra string
		arrive      []time.Duration
		want        []result
	}{
		{"fifo", "  queue: {limit: 5}\n", four,
			[]result{{200, 100 * ms}, {200, 200 * ms}, {200, 300 * ms}, {200, 400 * ms}}},
		{"lifo", "  queue: {limit: 5, discipline: lifo}\n", four,
			[]result{{200, 100 * ms}, {200, 400 * ms}, {200, 300 * ms}, {200, 200 * ms}}},
		// Newest first while more than one waits: D, then C, then B.
		{"adaptive_lifo", "  queue: {limit: 5, discipline: adaptive_lifo, lifo_threshold: 1}\n", four,
			[]result{{200, 100 * ms}, {200, 400 * ms}, {200, 300 * ms}, {200, 200 * ms}}},
		// B sets the first-above time (150 ms); at 200 ms CoDel drops C
		// (answered 503 as it reaches the worker) and keeps D, which is
		// before its next drop time; E finds one job behind it and is kept.
		{"codel", "  queue: {limit: 10, discipline: codel, codel_target: 5ms, codel_interval: 50ms}\n",
			[]time.Duration{0, ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms},
			[]result{{200, 100 * ms}, {200, 200 * ms}, {503, 200 * ms}, {200, 300 * ms}, {200, 400 * ms}, {200, 500 * ms}}},
		// A bucket of two tokens refilled at 1/s: the third and fourth
		// arrivals are refused at once.
		{"rate_limit", "  queue: {limit: 5}\n  rate_limit: {rate: 1/s, burst: 2}\n", four,
			[]result{{200, 100 * ms}, {200, 200 * ms}, {503, 2 * ms}, {503, 3 * ms}}},
		// A limit of two held (queued or in service) refuses the third
		// and fourth.
		{"concurrency_limit", "  queue: {limit: 5}\n  concurrency_limit: {kind: aimd, initial: 2, min: 1, max: 2}\n", four,
			[]result{{200, 100 * ms}, {200, 200 * ms}, {503, 2 * ms}, {503, 3 * ms}}},
		// failsafe-go's queueing at a limit of one, factors 1 and 2: B
		// finds none beyond the limit (below 1: admitted), C one (rate
		// (1 − 1)/(2 − 1) = 0: admitted), D two (at 2: refused).
		{"concurrency_limit_failsafe_queue", "  queue: {limit: 5}\n  concurrency_limit: {kind: failsafe, initial: 1, min: 1, max: 1, initial_rejection_factor: 1, max_rejection_factor: 2}\n", four,
			[]result{{200, 100 * ms}, {200, 200 * ms}, {200, 300 * ms}, {503, 3 * ms}}},
		// The queue timeout rejects B and C when they reach the worker.
		{"queue_timeout", "  queue: {limit: 5, timeout: 50ms}\n", []time.Duration{0, ms, 2 * ms},
			[]result{{200, 100 * ms}, {503, 100 * ms}, {503, 100 * ms}}},
		// Degradation past one queued: B starts at 100 ms with C and D
		// still waiting and takes half its 100 ms; C starts with only D
		// waiting and takes all of it, as does D.
		{"degrade", "  queue: {limit: 5}\n  degrade: {when_queue_above: 1, service_fraction: 0.5}\n", four,
			[]result{{200, 100 * ms}, {200, 150 * ms}, {200, 250 * ms}, {200, 350 * ms}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := script(t, one+tt.extra, tt.arrive)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", fmtResults(got), fmtResults(tt.want))
			}
		})
	}
}

func fmtResults(rs []result) string {
	s := ""
	for _, r := range rs {
		s += fmt.Sprintf(" %d@%v", r.code, r.at)
	}
	return s
}
