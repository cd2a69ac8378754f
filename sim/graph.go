package sim

import (
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// A service graph (scenario.Services): several pools, the calls between
// them and the frames that wait for calls. A call a service makes is a
// request like an external client's, on an edge with its own policy
// stack (one instance per edge: the calling service is one client), so
// retries, budgets, breakers and throttles at every hop run the same code
// as the clients'. A scenario with only a backend is a one-node graph and
// takes none of these paths.

// edge is one call a service makes while serving a request.
type edge struct {
	from, to    uint16
	probability float64
	pol         cpol
	seq         uint32 // calls made: the ordinal that names a call's draws
}

// route is one forwarding edge.
type route struct {
	to uint16 // a node
	p  float64
}

// node is one service: its replicas (pools svcs[first:first+n]), how
// callers pick among them, and the latency of the calls made to it.
type node struct {
	first, n uint16
	act      []uint16 // the pools callers pick among: all n, or an autoscaler's ready ones
	as       *scaler  // its autoscaler (autoscale.go), or nil
	lb       lbKind
	rr       uint32   // round robin's next pick
	tau      float64  // peak EWMA decay, ns
	ewma     bool     // its replicas track peak EWMA (lb peak_ewma, several replicas)
	pq       *prequal // lb prequal with several replicas: its probe pool (balance.go), else nil
	// what the service does after a replica's local work
	name     string
	calls    []uint16 // edges of its calls, in order
	parallel bool
	join     joinKind
	joinK    int
	blocking bool
	fwd      []route
	hist     metrics.Histogram
	latSum   float64
	latN     int64
	picks    []int64  // per replica: attempts callers sent it (first hop)
	g        *lbGuard // outlier detection, health checks, subsetting (nil: none)
}

// frame is a request being served by a service while its calls are
// outstanding.
type frame struct {
	svc       uint16
	w         uint32 // the worker held (blocking), or noWorker
	wgen      uint32
	slot, tok uint32 // the attempt being served
	client    uint32 // its root client (for group attribution)
	ord       uint32 // names the call draws: the served attempt's ordinal
	attempt   uint8
	pedge     uint16 // the served attempt's edge (0: an external request)
	dl        int64  // the deadline the attempt carried (0: none)
	start     int64  // when the worker started (blocking)
	group     uint8
	next      uint16 // sequential: the next call to consider
	open      uint16 // calls made and not finished
	total     uint16 // calls made (parallel)
	ok, fail  uint16
	need      uint16
	issuing   bool
	done      bool
	dead      bool  // its service crashed: the result goes nowhere
	prio      uint8 // the business priority of the request served (priority shedding)
}

const noWorker = ^uint32(0)

// initGraph builds the services (each a node of one or more replica
// pools), edges and routes of a scenario; a scenario with a backend is one
// node. The entry node's series is the fleet's; the replicas of a node
// share its series.
func (m *model) initGraph(sc *scenario.Scenario) error {
	nodes := sc.Nodes()
	entry := sc.EntryIndex()
	total := 0
	for _, nd := range nodes {
		total += nd.Pools()
	}
	m.svcs = make([]pool, total)
	m.nodes = make([]node, len(nodes))
	k := 0
	for i, nd := range nodes {
		ser := m.mt.ser
		if i != entry {
			ser = metrics.NewSeries(int64(sc.Metrics.Interval), sc.Intervals())
		}
		reps := nd.Pools()
		g, err := newGuard(nd.Backend, reps, ser)
		if err != nil {
			return err
		}
		m.nodes[i] = node{first: uint16(k), n: uint16(reps), lb: lbKinds[nd.LB], tau: float64(nd.EWMADecay), picks: make([]int64, reps), g: g}
		m.guarded = m.guarded || (g != nil && g.od != nil)
		for j := range reps {
			m.nodes[i].act = append(m.nodes[i].act, uint16(k+j))
		}
		var calls []uint16
		for _, c := range nd.Calls {
			// The call's entity, as m.entity names its attempts' draws.
			ent := uint64(len(m.edges)+1) << 40
			p, err := buildStack(scenario.GroupSpec{Name: nd.Name + "→" + c.To, Count: 1, Policies: c.Policies}, ent, &m.src)
			if err != nil {
				return err
			}
			p.propagate = nd.PropagateDeadline
			p.margin = int64(nd.DeadlineMargin)
			calls = append(calls, uint16(len(m.edges)))
			m.edges = append(m.edges, edge{from: uint16(i), to: uint16(sc.ServiceIndex(c.To)), probability: c.Probability, pol: p})
		}
		var fwd []route
		for _, r := range nd.Forward {
			fwd = append(fwd, route{to: uint16(sc.ServiceIndex(r.To)), p: r.Probability})
		}
		sn := &m.nodes[i]
		sn.name, sn.calls, sn.fwd = nd.Name, calls, fwd
		sn.parallel, sn.joinK, sn.blocking = nd.CallMode == scenario.CallParallel, nd.JoinK, nd.Blocking
		sn.join = joinKinds[nd.Join]
		sn.ewma = nd.LB == scenario.LBPeakEWMA && reps > 1
		if nd.LB == scenario.LBPrequal && reps > 1 {
			if sn.pq, err = newPrequal(nd.Prequal, reps); err != nil {
				return err
			}
		}
		for range reps {
			b := &m.svcs[k]
			if err := b.init(nd.Backend, i == entry && sc.Clients.Connection != nil, ser, m.src.Key(rng.Route, concLimitEntity|uint64(k))); err != nil {
				return err
			}
			b.idx, b.node, b.fleet = uint16(k), uint16(i), i == entry
			b.leaf = len(calls) == 0 && len(fwd) == 0 && !sn.ewma && sn.pq == nil
			b.rows = &noFastPath
			if b.fleet {
				b.rows = &m.mt
			}
			if b.adm.Prioritized() {
				m.initPriorities(sc)
			}
			k++
		}
		if nd.Autoscale != nil {
			if err := m.initScaler(i, &m.nodes[i], nd.Autoscale, nd.Replicas, ser); err != nil {
				return err
			}
		}
	}
	m.entry = uint16(entry)
	m.be = &m.svcs[m.nodes[entry].first]
	m.scheduleGuards()
	return nil
}

// called records the latency of a call to node nd that succeeded.
func (nd *node) called(lat int64) {
	nd.hist.Add(lat)
	nd.latSum += float64(lat)
	nd.latN++
}

// pick is the replica of node ni that request r's current attempt (after
// hop forwarding hops) goes to, by the node's load-balancing policy.
// Outstanding requests are the replica's own count of requests queued or
// in service (what a balancer sees with no network and no abandoned work).
func (m *model) pick(ni uint16, r *request, hop uint8) *pool {
	nd := &m.nodes[ni]
	if nd.n == 1 {
		return &m.svcs[nd.first]
	}
	// The candidates: every replica (cand nil), or with a guard the
	// caller's subset less the replicas out of rotation (outlier.go).
	var cand []uint16
	n := int(nd.n)
	if nd.g != nil {
		if cand = m.candidates(nd, ni, r); cand != nil {
			n = len(cand)
		}
	}
	if len(nd.act) < int(nd.n) { // an autoscaler holds replicas back (autoscale.go)
		cand = m.ready(nd, cand)
		n = len(cand)
	}
	if nd.pq != nil {
		return &m.svcs[m.prequalPick(nd, cand, n, r, hop)]
	}
	key := m.src.Key(rng.Route, m.entity(r)|1<<38)
	return &m.svcs[m.balance(nd, cand, n, int(nd.first), byOutstanding, key, drawIndex(r.ord, r.rs.Attempt)<<16|uint64(hop)<<8)]
}

// outstanding is the requests queued at or in service in b.
func (b *pool) outstanding() int { return b.busy + b.queue.n }

// ewmaPenalty is peak EWMA's load of a replica with requests but no
// latency observed yet (Finagle's Penalty = MaxLong >> 16).
const ewmaPenalty = float64(math.MaxInt64 >> 16)

// observe feeds one latency (ns) into b's peak EWMA (Finagle's
// PeakEwma.observe): a peak is adopted at once, otherwise the cost decays
// towards the sample with time constant tau.
func (b *pool) observe(now int64, rtt, tau float64) {
	w := math.Exp(-float64(now-b.ewmaStamp) / tau)
	if rtt > b.ewmaCost {
		b.ewmaCost = rtt
	} else {
		b.ewmaCost = b.ewmaCost*w + rtt*(1-w)
	}
	b.ewmaStamp = now
}

// ewmaLoad is peak EWMA's load of b: cost × (outstanding + 1), the cost
// decayed to now first.
func (b *pool) ewmaLoad(now int64, tau float64) float64 {
	b.observe(now, 0, tau)
	if b.ewmaCost == 0 && b.outstanding() > 0 {
		return ewmaPenalty + float64(b.outstanding())
	}
	return b.ewmaCost * float64(b.outstanding()+1)
}

// startCalls begins the calls of the attempt worker w of b has just done
// the local work of. It reports whether the worker stays busy waiting
// for them (blocking); otherwise the caller frees it.
func (m *model) startCalls(b *pool, nd *node, now int64, w uint32) bool {
	wk := &b.workers[w]
	r := &m.cl.reqs[wk.slot]
	fi := m.newFrame()
	f := &m.frames[fi]
	*f = frame{svc: b.idx, w: noWorker, slot: wk.slot, tok: wk.token, client: r.client, ord: r.ord, attempt: r.rs.Attempt, pedge: r.edge,
		dl: wk.dl, start: wk.start, group: wk.group}
	if m.prio != nil {
		f.prio = m.business(r, wk.group)
	}
	if nd.blocking {
		f.w, f.wgen = w, wk.gen
		wk.kind, wk.frame = wkWait, fi
	} else {
		m.bwork(b, wk.group, wk.start, now, true) // the local work; the caller still waits
	}
	if !nd.parallel {
		m.nextCall(now, fi)
	} else {
		f.issuing = true
		for i, e := range nd.calls {
			if m.takeCall(fi, i, e) {
				m.frames[fi].total++
				m.frames[fi].open++
				m.call(now, fi, e)
			}
		}
		f = &m.frames[fi]
		f.issuing = false
		switch nd.join {
		case joinAny:
			f.need = min(1, f.total)
		case joinFirst:
			f.need = min(uint16(nd.joinK), f.total)
		default:
			f.need = f.total
		}
		m.checkJoin(now, fi)
	}
	return nd.blocking
}

// takeCall draws whether call i (edge e) of frame fi is made.
func (m *model) takeCall(fi uint32, i int, e uint16) bool {
	p := m.edges[e].probability
	if p >= 1 {
		return true
	}
	f := &m.frames[fi]
	key := m.src.Key(rng.Route, uint64(f.pedge)<<40|uint64(f.client))
	return rng.Float64(key, drawIndex(f.ord, f.attempt)<<8|uint64(i)) < p
}

func (m *model) newFrame() uint32 {
	if n := len(m.freeFrames); n > 0 {
		fi := m.freeFrames[n-1]
		m.freeFrames = m.freeFrames[:n-1]
		return fi
	}
	m.frames = append(m.frames, frame{})
	return uint32(len(m.frames) - 1)
}

// nextCall makes the next call of a sequential frame that its draw takes,
// or finishes the frame when none is left.
func (m *model) nextCall(now int64, fi uint32) {
	f := &m.frames[fi]
	nd := &m.nodes[m.svcs[f.svc].node]
	for int(f.next) < len(nd.calls) {
		i := int(f.next)
		f.next++
		e := nd.calls[i]
		if m.takeCall(fi, i, e) {
			f.open++
			m.call(now, fi, e)
			return
		}
	}
	m.finishFrame(now, fi, true)
}

// call makes one call on edge e for frame fi: a new request of the edge's
// policy stack.
func (m *model) call(now int64, fi uint32, e uint16) {
	ed := &m.edges[e]
	f := &m.frames[fi]
	cl := &m.cl
	slot := cl.alloc()
	r := &cl.reqs[slot]
	r.arrival, r.rs, r.client, r.ord = now, stack.Request{}, f.client, ed.seq
	r.edge, r.frame, r.dl = e+1, fi, 0
	ed.seq++
	p := &ed.pol
	if dl := p.Deadline(); dl > 0 {
		r.dl = sat(now, dl)
	}
	if p.propagate && f.dl > 0 {
		if d := f.dl - p.margin; r.dl == 0 || d < r.dl {
			r.dl = d
		}
	}
	m.countR(now, r, offered)
	if r.dl > 0 && r.dl <= now {
		// No time left: fail at once, without sending.
		m.countR(now, r, failed)
		m.drop(now, slot, deadlineExceeded)
		return
	}
	p.OnRequest(now, 0)
	if r.dl > 0 {
		m.q.Schedule(m.after(now, r.dl-now), evDeadline, slot, r.gen)
	}
	m.attempt(now, slot)
}

// childDone is a call of frame fi ending, with success or not.
func (m *model) childDone(now int64, fi uint32, ok bool) {
	f := &m.frames[fi]
	f.open--
	if f.done {
		if f.open == 0 {
			m.freeFrames = append(m.freeFrames, fi)
		}
		return
	}
	if ok {
		f.ok++
	} else {
		f.fail++
	}
	if !m.nodes[m.svcs[f.svc].node].parallel {
		if !ok {
			m.finishFrame(now, fi, false)
			return
		}
		m.nextCall(now, fi)
		return
	}
	if !f.issuing {
		m.checkJoin(now, fi)
	}
}

// checkJoin finishes a parallel frame once its join is decided.
func (m *model) checkJoin(now int64, fi uint32) {
	f := &m.frames[fi]
	switch {
	case f.ok >= f.need:
		m.finishFrame(now, fi, true)
	case f.fail > f.total-f.need:
		m.finishFrame(now, fi, false)
	}
}

// finishFrame answers the attempt frame fi served (success when its calls
// succeeded, else an error) and frees its worker when it holds one.
func (m *model) finishFrame(now int64, fi uint32, ok bool) {
	f := &m.frames[fi]
	f.done = true
	if !f.dead {
		b := &m.svcs[f.svc]
		out := outError
		if ok {
			out = outOK
		}
		if f.w != noWorker {
			m.bwork(b, f.group, f.start, now, ok && m.waiting(f.slot, f.tok))
		}
		if !ok {
			b.rows.add(b, now, f.group, errored)
		}
		w, wgen, slot, tok := f.w, f.wgen, f.slot, f.tok
		if f.open == 0 {
			m.freeFrames = append(m.freeFrames, fi)
		}
		m.answer(now, slot, tok, out, 0)
		if w != noWorker && b.workers[w].gen == wgen && b.workers[w].kind == wkWait {
			m.dispatch(b, now, w)
		}
		return
	}
	if f.open == 0 {
		m.freeFrames = append(m.freeFrames, fi)
	}
}

// killFrames: an outage of b loses every request b is waiting on calls
// for. Blocking frames' attempts were lost with their workers; the others
// are lost here.
func (m *model) killFrames(b *pool, now int64) {
	for fi := range m.frames {
		f := &m.frames[fi]
		if f.svc != b.idx || f.done || f.dead {
			continue
		}
		f.dead = true
		if f.w == noWorker {
			m.lost(b, now, f.slot, f.tok, f.group)
		}
	}
}

// forward hands the attempt worker wk of b has served on to the next
// service its routing draw picks; false when it leaves the system.
func (m *model) forward(nd *node, now int64, wk *worker) bool {
	r := &m.cl.reqs[wk.slot]
	u := rng.Float64(m.src.Key(rng.Route, m.entity(r)|1<<39), drawIndex(r.ord, r.rs.Attempt)<<8|uint64(wk.hop))
	for _, rt := range nd.fwd {
		if u < rt.p {
			hop := wk.hop + 1
			to := m.pick(rt.to, r, hop)
			id := m.drawOf(r, hop)
			if m.net.on { // the hop crosses the network
				m.post(now, wk.slot, wk.token, m.serviceTime(to, id), false, to.idx, wk.dl, hop, id)
				return true
			}
			m.accept(to, now, wk.slot, wk.token, m.serviceTime(to, id), wk.group, wk.dl, hop, id)
			return true
		}
		u -= rt.p
	}
	return false
}

// ready restricts the candidates of pick (cand, replica indices within
// the node; nil: all) to the replicas an autoscaler has ready (nd.act,
// pool indices). If none of cand is ready, every ready replica is.
func (m *model) ready(nd *node, cand []uint16) []uint16 {
	out := m.actBuf[:0]
	if cand == nil {
		for _, a := range nd.act {
			out = append(out, a-nd.first)
		}
	} else {
		for _, c := range cand {
			if slices.Contains(nd.act, c+nd.first) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return m.ready(nd, nil)
		}
	}
	m.actBuf = out
	return out
}
