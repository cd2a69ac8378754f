package sim

import (
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/policy"
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
	lbPrequal
)

var lbKinds = map[scenario.LBPolicy]lbKind{
	"": lbRoundRobin, scenario.LBRoundRobin: lbRoundRobin, scenario.LBRandom: lbRandom,
	scenario.LBLeastOutstanding: lbLeastOutstanding, scenario.LBP2C: lbP2C, scenario.LBPeakEWMA: lbPeakEWMA,
	scenario.LBPrequal: lbPrequal,
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
// chosen replica's index in m.svcs. Prequal picks requests in
// prequalPick; here (connections) it is p2c.
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
	case lbP2C, lbPeakEWMA, lbPrequal:
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

// prequal is a service's Prequal balancer (lb: prequal, several
// replicas): one probe pool for all its callers, as a proxy in front of
// the replicas would hold, and what each replica answers a probe with.
type prequal struct {
	pool  *policy.Prequal
	whole int     // probes sent per pick, and
	frac  float64 // the probability of one more
	lat   []rifLat
	cand  []uint16 // the candidates of the pick in progress (nil: all)
	elig  func(int) bool
}

// rifLat is one replica's recent latencies (ns, from arrival at the
// replica to the end of service) by the requests in flight (RIF) each
// request found when it arrived: the last latN of each RIF below rifN,
// RIFs from rifN−1 up sharing the last row.
type rifLat struct {
	v     [rifN][latN]float64
	med   [rifN]float64 // v's median, when fresh
	n     [rifN]uint8   // samples held (≤ latN)
	k     [rifN]uint8   // the next slot
	fresh [rifN]bool
}

const (
	rifN = 64
	latN = 8
)

// newPrequal builds the balancer of a service with reps replicas.
func newPrequal(cfg *scenario.Prequal, reps int) (*prequal, error) {
	c := scenario.DefaultPrequal()
	if cfg != nil {
		c = *cfg
	}
	pool, err := policy.NewPrequal(policy.PrequalConfig{PoolSize: c.PoolSize, QRIF: c.QRIF, MaxAge: int64(c.MaxAge), MaxReuse: c.MaxReuse})
	if err != nil {
		return nil, err
	}
	whole, frac := math.Modf(c.ProbeRate)
	pq := &prequal{pool: pool, whole: int(whole), frac: frac, lat: make([]rifLat, reps)}
	pq.elig = func(r int) bool { return slices.Contains(pq.cand, uint16(r)) }
	return pq, nil
}

// observe records the latency of a request replica j served that found
// rif requests in flight on arrival.
func (pq *prequal) observe(j, rif int, lat float64) {
	l := &pq.lat[j]
	r := min(rif, rifN-1)
	l.v[r][l.k[r]] = lat
	l.k[r] = (l.k[r] + 1) % latN
	l.n[r] = min(l.n[r]+1, latN)
	l.fresh[r] = false
}

// estimate is replica j's answer to a probe at rif requests in flight:
// the median (the upper one of an even count) of its recent latencies at
// that RIF, or at the nearest RIF it has any for (below first); 0 when it
// has served nothing yet.
func (pq *prequal) estimate(j, rif int) float64 {
	l := &pq.lat[j]
	r := min(rif, rifN-1)
	for d := 0; d < rifN; d++ {
		for _, q := range [2]int{r - d, r + d} {
			if q >= 0 && q < rifN && l.n[q] > 0 {
				if !l.fresh[q] {
					var s [latN]float64
					x := s[:l.n[q]]
					copy(x, l.v[q][:l.n[q]])
					slices.Sort(x)
					l.med[q], l.fresh[q] = x[len(x)/2], true
				}
				return l.med[q]
			}
		}
	}
	return 0
}

// prequalPick is the replica (index in m.svcs) request r's attempt goes
// to at service nd: the pool's choice among the n candidates (cand nil:
// all of nd's replicas; else their indices within nd), or one at random
// when it has none. Then the pick's probes go out to distinct random
// candidates; their answers (the replica's requests in flight and its
// recent median latency at that RIF) join the pool at once, for the picks that follow: a
// probe costs no server work and no time, and what makes it stale is
// its age and reuse. Draws come from the Probe stream of r's entity.
func (m *model) prequalPick(nd *node, cand []uint16, n int, r *request, hop uint8) int {
	pq, now := nd.pq, m.now
	key := m.src.Key(rng.Probe, m.entity(r))
	base := drawIndex(r.ord, r.rs.Attempt)<<16 | uint64(hop)<<8
	var elig func(int) bool
	if pq.cand = cand; cand != nil {
		elig = pq.elig
	}
	j, ok := pq.pool.Pick(now, elig)
	if !ok {
		j = at(cand, int(rng.Float64(key, base|0xff)*float64(n)))
	}
	k := pq.whole
	if pq.frac > 0 && rng.Float64(key, base|0xfe) < pq.frac {
		k++
	}
	k = min(k, n)
	var sent [64]int
	for i, d := 0, uint64(0); i < k; d++ {
		c := at(cand, int(rng.Float64(key, base|d)*float64(n)))
		if slices.Contains(sent[:i], c) && d < 0xf0 {
			continue // without replacement
		}
		sent[i] = c
		i++
		b := &m.svcs[int(nd.first)+c]
		rif := b.outstanding()
		pq.pool.Add(policy.Probe{Replica: c, RIF: rif, Latency: pq.estimate(c, rif), At: now})
	}
	return int(nd.first) + j
}
