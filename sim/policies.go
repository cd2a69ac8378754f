package sim

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// This file is the one place where policies are built from the scenario:
// the request-policy stack of each client group (throttle, retry with
// backoff, budget, breaker, rate limiter) and the reconnect policy. Every
// parse or construction error is returned; scenario.Validate has already
// refused what it knows to be bad, so an error here is a bug in one of the
// two, reported as such rather than ignored.

// cpol is the request-policy stack of one client group (or of one call
// of a service): its clients are [start, start+n) and its policy
// instances are indexed from start. The stack makes the decisions
// (package stack); cpol adds what only the simulator knows.
type cpol struct {
	stack.Stack
	name      string
	start, n  uint32
	propagate bool  // attempts carry their deadline (service graphs)
	margin    int64 // subtracted from a propagated deadline
}

// buildStack builds the request-policy stack of group g from its
// section's stack configuration (scenario.Policies.StackConfig, the one
// translation); src names the random draws (a pointer, so that a branch
// that re-seeds the run, Options.Branches, reaches them too); first is
// the random-stream entity of the stack's client 0 (stack.Config.First):
// the group's first client, or a call's edge entity.
func buildStack(g scenario.GroupSpec, first uint64, src *rng.Source) (cpol, error) {
	cfg, err := g.Policies.StackConfig()
	if err != nil {
		return cpol{}, fmt.Errorf("sim: group %q: %w", g.Name, err)
	}
	cfg.First = first
	st, err := stack.New(cfg, g.Count, src)
	if err != nil {
		return cpol{}, fmt.Errorf("sim: group %q: %w", g.Name, err)
	}
	return cpol{Stack: *st, name: g.Name, start: uint32(g.Start), n: uint32(g.Count)}, nil
}

// buildReconnect is the reconnect policy of clients.connection.reconnect.
func buildReconnect(rc scenario.Reconnect) (policy.Reconnect, error) {
	r, err := rc.ReconnectConfig()
	if err != nil {
		return policy.Reconnect{}, fmt.Errorf("sim: clients.connection.reconnect: %w", err)
	}
	return r, nil
}
