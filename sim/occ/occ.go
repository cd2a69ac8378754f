// Package occ simulates clients contending on one row under optimistic
// concurrency control, the experiment of Marc Brooker's "Exponential
// Backoff And Jitter" (AWS Architecture Blog, 2015).
//
// Each of N clients wants to update the row once: it reads the row's
// version, then writes with that version; a write whose version is stale
// fails, and the client waits its backoff and starts again with a read.
// Every message crosses the network in |N(mean, sd)|. All clients start at
// time 0. The run ends when every client has written; its completion time
// is the time the last successful write's answer arrives.
//
// The backoff before the client's n-th read after a failure follows the
// blog's simulator: exponential = min(cap, base·2ⁿ) (so the first retry
// waits 2·base), full and equal jitter over that value, decorrelated =
// min(cap, U(base, 3·previous)) starting from base, and none = no wait.
// The formulas are sim/policy's (policy.Backoff.Delay with retry n+1).
package occ

import (
	"context"
	"fmt"
	"math"

	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
)

// Strategies are the backoff strategies of the blog, in its order.
var Strategies = []string{"none", "exponential", "full", "equal", "decorrelated"}

// Config is one contention experiment. Durations are in nanoseconds.
type Config struct {
	Clients  int
	Strategy string // one of Strategies
	Base     int64  // backoff base (the blog: 5 ms)
	Cap      int64  // backoff cap (the blog: 2 s)
	NetMean  int64  // mean one-way network delay (the blog: 10 ms)
	NetSD    int64  // its standard deviation (the blog: 2 ms)
	Seed     uint64
}

// Brooker returns the blog's setup for n clients and a strategy.
func Brooker(n int, strategy string, seed uint64) Config {
	return Config{Clients: n, Strategy: strategy, Base: 5e6, Cap: 2e9, NetMean: 10e6, NetSD: 2e6, Seed: seed}
}

// Result is what one run measured.
type Result struct {
	Writes     int64 // write calls the server handled
	Failures   int64 // writes refused for a stale version
	Completion int64 // ns until the last client's write succeeded (answer received)
	Events     uint64
}

const (
	readArrives  uint8 = iota // at the server
	readAnswer                // back at the client, with the version
	writeArrives              // at the server, with the version read
	writeAnswer               // back at the client; Aux = 1 when it succeeded
)

type client struct {
	version uint64 // the version the client read
	retries int    // failed writes so far
	prev    int64  // previous decorrelated wait
	net     uint64 // draws taken from the network stream
	draws   uint64 // draws taken from the backoff stream
}

// Run simulates one experiment.
func Run(c Config) (Result, error) {
	if c.Clients < 1 {
		return Result{}, fmt.Errorf("occ: clients must be at least 1, got %d", c.Clients)
	}
	if c.Base <= 0 || c.Cap < c.Base || c.NetMean < 0 || c.NetSD < 0 {
		return Result{}, fmt.Errorf("occ: need 0 < base ≤ cap and a non-negative network delay")
	}
	none := false
	var b policy.Backoff
	b.Base, b.Cap, b.Multiplier = c.Base, c.Cap, 2
	switch c.Strategy {
	case "none":
		none = true
	case "exponential":
		b.Jitter = policy.NoJitter
	case "full":
		b.Jitter = policy.Full
	case "equal":
		b.Jitter = policy.Equal
	case "decorrelated":
		b.Jitter = policy.Decorrelated
	default:
		return Result{}, fmt.Errorf("occ: unknown strategy %q (want one of %v)", c.Strategy, Strategies)
	}

	src := rng.New(c.Seed)
	cl := make([]client, c.Clients)
	q := engine.NewQueue(c.Clients)
	hop := func(id uint32) int64 {
		k := &cl[id]
		d := float64(c.NetMean) + float64(c.NetSD)*rng.Normal(src.Key(rng.Network, uint64(id)), k.net)
		k.net++
		return int64(math.Abs(d))
	}
	for i := range cl {
		q.Schedule(engine.Time(hop(uint32(i))), readArrives, uint32(i), 0)
	}

	var r Result
	var version uint64
	r.Events = q.Run(func(e engine.Event) bool {
		now, id := int64(e.At), e.ID
		k := &cl[id]
		switch e.Kind() {
		case readArrives:
			k.version = version
			q.Schedule(engine.Time(now+hop(id)), readAnswer, id, 0)
		case readAnswer:
			q.Schedule(engine.Time(now+hop(id)), writeArrives, id, 0)
		case writeArrives:
			r.Writes++
			ok := uint32(0)
			if k.version == version {
				version++
				ok = 1
			} else {
				r.Failures++
			}
			q.Schedule(engine.Time(now+hop(id)), writeAnswer, id, ok)
		case writeAnswer:
			if e.Aux == 1 {
				r.Completion = now
				return true
			}
			k.retries++
			var wait int64
			if !none {
				u := rng.Float64(src.Key(rng.Backoff, uint64(id)), k.draws)
				k.draws++
				wait = b.Delay(k.retries+1, k.prev, u)
				k.prev = wait
			}
			q.Schedule(engine.Time(now+hop(id)+wait), readArrives, id, 0)
		}
		return true
	})
	if version != uint64(c.Clients) {
		return r, fmt.Errorf("occ: internal error: %d successful writes for %d clients", version, c.Clients)
	}
	return r, nil
}

// Runs runs c with seeds seed, seed+1, ... (n of them), as the blog
// averages 100 runs per point. It stops between runs when ctx is
// cancelled. Summarise the results with sweep.Describe.
func Runs(ctx context.Context, c Config, n int) ([]Result, error) {
	out := make([]Result, 0, n)
	base := c.Seed
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		c.Seed = base + uint64(i)
		r, err := Run(c)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Writes and CompletionMS are the two measures of a set of runs, as
// slices for sweep.Describe.
func Writes(rs []Result) []float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = float64(r.Writes)
	}
	return xs
}

// CompletionMS: see Writes.
func CompletionMS(rs []Result) []float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = float64(r.Completion) / 1e6
	}
	return xs
}
