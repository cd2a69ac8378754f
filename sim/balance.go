package sim

import (
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// lbKind is a service's load-balancing policy (scenario.LBPolicy),
// resolved to a small integer when the model is built.
type lbKind uint8

const (
	lbRoundRobin lbKind = iota
	lbRandom
	lbLeastOutstanding
	lbP2C
	lbPeakEWMA
)

var lbKinds = map[scenario.LBPolicy]lbKind{
	"": lbRoundRobin, scenario.LBRoundRobin: lbRoundRobin, scenario.LBRandom: lbRandom,
	scenario.LBLeastOutstanding: lbLeastOutstanding, scenario.LBP2C: lbP2C, scenario.LBPeakEWMA: lbPeakEWMA,
}

// joinKind is when a parallel group of calls is done (scenario.Join),
// resolved to a small integer when the model is built.
type joinKind uint8

const (
	joinAll joinKind = iota
	joinAny
	joinFirst
)

var joinKinds = map[scenario.Join]joinKind{"": joinAll, scenario.JoinAll: joinAll, scenario.JoinAny: joinAny, scenario.JoinFirst: joinFirst}

// loadBy is what a balancer compares replicas by: requests outstanding
// (queued or in service), or connections held (an L4 balancer placing
// connections).
type loadBy uint8

const (
	byOutstanding loadBy = iota
	byHeld
)

// balance is the one load balancer, for requests (pick) and connections
// (connTarget): it chooses among n candidates of node nd — candidate j is
// replica at(cand, j) + off of m.svcs — by the node's policy: in turn
// (round robin), the first least loaded after a rotating start (least
// outstanding), one at random, or the less loaded of two random picks
// (p2c; peak EWMA compares the replicas' EWMA cost when by is
// byOutstanding). Draw j is rng.Float64(key, base|j). It returns the
// chosen replica's index in m.svcs.
func (m *model) balance(nd *node, cand []uint16, n int, off int, by loadBy, key, base uint64) int {
	draw := func(j uint64) int { return at(cand, int(rng.Float64(key, base|j)*float64(n))) + off }
	switch nd.lb {
	case lbRandom:
		return draw(0)
	case lbLeastOutstanding:
		// The first least-loaded replica after a rotating start, so ties
		// spread instead of piling onto one replica.
		start := int(nd.rr % uint32(n))
		nd.rr++
		best := at(cand, start) + off
		for j := 1; j < n; j++ {
			if c := at(cand, (start+j)%n) + off; m.load(c, by) < m.load(best, by) {
				best = c
			}
		}
		return best
	case lbP2C, lbPeakEWMA:
		a, b := draw(0), draw(1) // with replacement, as Envoy and the supermarket model
		if nd.lb == lbPeakEWMA && by == byOutstanding {
			now := m.now
			if m.svcs[b].ewmaLoad(now, nd.tau) < m.svcs[a].ewmaLoad(now, nd.tau) {
				return b
			}
			return a
		}
		if m.load(b, by) < m.load(a, by) {
			return b
		}
		return a
	}
	j := nd.rr % uint32(n)
	nd.rr++
	return at(cand, int(j)) + off
}

// load is replica p's load as by measures it.
func (m *model) load(p int, by loadBy) int {
	if by == byHeld {
		return m.svcs[p].held
	}
	return m.svcs[p].outstanding()
}
