package sim

import (
	"slices"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// What takes replicas out of a service's rotation, and what each caller
// sees: outlier detection (policy.Outlier, fed the results callers see),
// active health checks (policy.Health, at an interval) and deterministic
// subsetting. A service with none of them has no guard and pick takes
// its plain path.
//
// The balancer of a service is one, shared by all its callers (as the
// rest of pick's state is): outlier detection counts every caller's
// results against a replica, like one Envoy in front of the service. The
// replica of an attempt is the one picked when it was sent; forwarding
// hops (services[].forward) pick their replica but do not feed its
// detector, whose results only the first hop's caller sees.

// lbGuard is a service's outlier detection, health checks and subsetting.
type lbGuard struct {
	od     *policy.Outlier // nil: no outlier detection
	odMask uint8           // outcomes that count as failures
	hc     *policy.Health  // nil: no health checks
	unejct bool            // a passed check returns an ejected replica
	subset int             // replicas each caller sees (0: all)
	out    []bool          // replica out of rotation (ejected or unhealthy)
	nOut   int
	ser    *metrics.Series // the service's: replicas_out is accounted into it
	since  int64           // when nOut last changed
}

// newGuard builds node nd's guard from its backend section, or nil when
// it has none (or one replica, where there is nothing to choose).
func newGuard(be scenario.Backend, reps int, ser *metrics.Series) (*lbGuard, error) {
	if reps < 2 || (be.OutlierDetection == nil && be.HealthCheck == nil && be.Subset == 0) {
		return nil, nil
	}
	g := &lbGuard{subset: be.Subset, out: make([]bool, reps), ser: ser}
	if g.subset >= reps {
		g.subset = 0 // every caller sees every replica anyway
	}
	if od := be.OutlierDetection; od != nil {
		o, err := policy.NewOutlier(od.OutlierConfig(), reps)
		if err != nil {
			return nil, err
		}
		g.od, g.odMask = o, outcomeMask(od.FailureOutcomes)
	}
	if hc := be.HealthCheck; hc != nil {
		h, err := policy.NewHealth(hc.HealthConfig(), reps)
		if err != nil {
			return nil, err
		}
		g.hc, g.unejct = h, hc.UnejectOnPass
	}
	return g, nil
}

// scheduleGuards puts every guard's first sweep and check on the calendar.
func (m *model) scheduleGuards() {
	for i := range m.nodes {
		g := m.nodes[i].g
		if g == nil {
			continue
		}
		if g.od != nil {
			m.q.Schedule(m.after(0, g.od.Config().Interval), evOutlierSweep, uint32(i), 0)
		}
		if g.hc != nil {
			m.q.Schedule(m.after(0, g.hc.Config().Interval), evHealthCheck, uint32(i), 0)
		}
	}
}

// refresh recomputes at now which replicas are out of rotation.
func (g *lbGuard) refresh(now int64) {
	g.account(now)
	g.nOut = 0
	for j := range g.out {
		g.out[j] = (g.od != nil && g.od.Ejected(j)) || (g.hc != nil && g.hc.Unhealthy(j))
		if g.out[j] {
			g.nOut++
		}
	}
}

// account adds the replicas out of rotation since the last change to the
// service's series.
func (g *lbGuard) account(now int64) {
	g.ser.AddOut(g.since, now, int64(g.nOut))
	g.since = now
}

// lbResult feeds the outcome of attempt tok of r to the outlier detector
// of the service it went to.
func (m *model) lbResult(now int64, r *request, tok uint32, out uint8) {
	ni := m.entry
	if r.edge != 0 {
		ni = m.edges[r.edge-1].to
	}
	nd := &m.nodes[ni]
	g := nd.g
	if g == nil || g.od == nil {
		return
	}
	p := r.rep
	if tok != r.token() {
		p = r.rep1 // the first copy of a hedged request
	}
	j := int(p) - int(nd.first)
	if g.od.Result(now, j, g.odMask&(1<<out) != 0) {
		g.refresh(now)
	}
}

// onOutlierSweep is the outlier detector's interval timer of node ni.
func (m *model) onOutlierSweep(now int64, ni uint32) {
	g := m.nodes[ni].g
	if g.od.Sweep(now) {
		g.refresh(now)
	}
	m.q.Schedule(m.after(now, g.od.Config().Interval), evOutlierSweep, ni, 0)
}

// onHealthCheck checks every replica of node ni: a replica in an outage
// (refusing or black-holed) fails, any other passes. The check's own
// latency is not modelled: its result is known at once.
func (m *model) onHealthCheck(now int64, ni uint32) {
	nd := &m.nodes[ni]
	g := nd.g
	reps := m.svcs[nd.first : nd.first+nd.n]
	for j := range reps {
		pass := !reps[j].down
		g.hc.Check(j, pass)
		if pass && g.unejct && g.od != nil && g.od.Ejected(j) {
			g.od.Uneject(j)
		}
	}
	g.refresh(now)
	m.q.Schedule(m.after(now, g.hc.Config().Interval), evHealthCheck, ni, 0)
}

// candidates are the replicas (indices into the node's) that request r
// may go to: its caller's subset (of the ready replicas, under an
// autoscaler), less those out of rotation, unless fewer than half would
// be left (Envoy's panic threshold, default 50%:
// then the balancer ignores health). nil means every replica.
func (m *model) candidates(nd *node, ni uint16, r *request) []uint16 {
	g := nd.g
	if g.subset == 0 && g.nOut == 0 {
		return nil
	}
	all := m.lbBuf[:0]
	if g.subset > 0 {
		all = m.subsetOf(all, nd, ni, r)
	} else {
		for j := range nd.n {
			all = append(all, j)
		}
	}
	if len(nd.act) < int(nd.n) {
		// An autoscaler holds replicas back: only the ready ones count,
		// for the panic threshold too (3 ready with 2 ejected is panic).
		k := 0
		for _, j := range all {
			if slices.Contains(nd.act, j+nd.first) {
				all[k] = j
				k++
			}
		}
		if all = all[:k]; k == 0 {
			m.lbBuf = all
			return nil // none of the subset is ready: pick among every ready one
		}
	}
	if g.nOut == 0 {
		m.lbBuf = all
		return all
	}
	m.lbBuf = all
	in := m.lbIn[:0]
	for _, j := range all {
		if !g.out[j] {
			in = append(in, j)
		}
	}
	m.lbIn = in
	if 2*len(in) < len(all) {
		return all // panic mode
	}
	return in
}

// subsetOf appends to dst the subset of node nd's replicas r's caller
// sees: deterministic subsetting (SRE book ch. 20). Callers are taken in
// rounds of n/k; each round shuffles the replicas with its own draws and
// gives its i-th caller the i-th k of them, so within a round no replica
// is in two subsets, and over rounds the callers per replica differ by
// at most one (when k divides n). The caller is the client, or for a
// call the calling replica.
func (m *model) subsetOf(dst []uint16, nd *node, ni uint16, r *request) []uint16 {
	k := nd.g.subset
	n := int(nd.n)
	caller := uint64(r.client)
	kind := uint64(0)
	if r.edge != 0 {
		caller, kind = uint64(m.frames[r.frame].svc), 1
	}
	count := uint64(n / k)
	round, id := caller/count, int(caller%count)
	perm := m.permBuf[:0]
	for j := range uint16(n) {
		perm = append(perm, j)
	}
	m.permBuf = perm
	key := m.src.Key(rng.Subset, uint64(ni)<<48|kind<<47|round)
	// A Fisher–Yates shuffle from the front, only as far as this
	// caller's k.
	for i := 0; i < (id+1)*k; i++ {
		j := i + int(rng.Float64(key, uint64(i))*float64(n-i))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return append(dst, perm[id*k:(id+1)*k]...)
}

// at is candidate j: replica j itself when every replica is a candidate.
func at(cand []uint16, j int) int {
	if cand == nil {
		return j
	}
	return int(cand[j])
}
