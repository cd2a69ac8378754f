package sim

import (
	"math"
	"unsafe"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// fleet is the clients: per-client arrival state, the request slots, and
// the request-policy stack of each client group. Per-client state is kept
// in slices indexed by client id; a request lives in a reusable slot.
type fleet struct {
	ord       []uint32 // per client: application requests issued so far
	lambda    float64  // per-client base rate, per second
	constant  bool
	once      bool    // arrival process once: one request per client
	fixed     bool    // once or replay: arrivals drawn from nothing
	replay    []int64 // process replay: request i at replay[i], by client i mod the clients
	atStart   bool    // poisson with first_at_start: one request at the start, then the stream
	prof      profile
	cur       int  // the profile's segment at the latest arrival handled (one for the fleet, see cumNear)
	shared    bool // called from several goroutines (live mode's Arrivals): cur is not used
	reqs      []request
	freeSlots []uint32
	pols      []cpol  // request policies, one per client group
	cgroup    []uint8 // client → group, when there is more than one
}

// Request states.
const (
	stFree uint8 = iota
	stInFlight
	stBackoff
	stPacing // waiting for the rate limiter
)

// request is one application request, from arrival to success or failure.
// Slots are reused; gen changes on every reuse so that events still
// pending for an earlier use are recognised as stale.
type request struct {
	arrival int64 // when the application issued it
	// rs is the request's state that the policy stack's decisions read and
	// update (attempt number, backoff, budget charge, breaker generation,
	// hedging).
	rs     stack.Request
	client uint32
	ord    uint32 // the client's request ordinal: names its random draws
	gen    uint32 // 24 bits used
	frame  uint32 // the caller's frame (edge != 0)
	// In a service graph: the edge of a call a service makes (0: an
	// external client's request), and frame, the frame waiting for it.
	edge  uint16
	state uint8
	// With a network: the answer on its way back (outcome, and its
	// retry-after or, for an occ read, the version read), and which half
	// of an occ attempt is in flight (0 the read, 1 the write).
	ansOut uint8
	phase  uint8
	// rep is the pool (replica) the current attempt went to, rep1 the
	// first copy's while a hedge is out: what outlier detection blames
	// (set only for services with more than one replica).
	rep    uint8
	rep1   uint8
	ansVal int64
	dl     int64 // absolute deadline (0: none), unclamped
}

func (r *request) token() uint32 { return r.gen<<8 | uint32(r.rs.Attempt) }

func (cl *fleet) init(sc *scenario.Scenario, src *rng.Source) error {
	n := sc.Clients.Count
	cl.ord = make([]uint32, n)
	cl.lambda = sc.PerClientRate()
	cl.constant = sc.Clients.Arrival.Process == scenario.ArrivalConstant
	cl.once = sc.Clients.Arrival.Process == scenario.ArrivalOnce
	cl.atStart = sc.Clients.Arrival.FirstAtStart
	cl.prof = arrivalProfile(&sc.Clients.Arrival, int64(sc.Duration), cl.lambda*float64(n))
	if tr := sc.Clients.Arrival.Trace; tr != nil && sc.Clients.Arrival.Process == scenario.ArrivalReplay {
		cl.replay = tr.Times
	}
	cl.fixed = cl.once || cl.replay != nil
	for _, g := range sc.Clients.ResolvedGroups() {
		p, err := buildStack(g, uint64(g.Start), src)
		if err != nil {
			return err
		}
		cl.pols = append(cl.pols, p)
	}
	if len(cl.pols) > 1 {
		cl.cgroup = make([]uint8, n)
		for gi, p := range cl.pols {
			for c := p.start; c < p.start+p.n; c++ {
				cl.cgroup[c] = uint8(gi)
			}
		}
	}
	return nil
}

// groupOf is the group of client c (0 when the fleet is one group).
func (cl *fleet) groupOf(c uint32) uint8 {
	if cl.cgroup == nil {
		return 0
	}
	return cl.cgroup[c]
}

// pol is the policy stack of client c.
func (cl *fleet) pol(c uint32) *cpol {
	if cl.cgroup == nil {
		return &cl.pols[0]
	}
	return &cl.pols[cl.cgroup[c]]
}

func (cl *fleet) alloc() uint32 {
	if n := len(cl.freeSlots); n > 0 {
		s := cl.freeSlots[n-1]
		cl.freeSlots = cl.freeSlots[:n-1]
		return s
	}
	cl.reqs = append(cl.reqs, request{})
	return uint32(len(cl.reqs) - 1)
}

// release frees slot for the next request. Its generation changes, so
// that events still pending for this request find a different token. The
// generation has 24 bits: a slot that has served 2^24 requests is retired
// instead of wrapping around to a token that a stale timer could still
// carry (a one-client fleet reuses one slot for every request).
func (cl *fleet) release(slot uint32) {
	r := &cl.reqs[slot]
	r.state = stFree
	r.gen++
	if r.gen >= 1<<24 {
		return // retired: stays free, and every check on it fails
	}
	cl.freeSlots = append(cl.freeSlots, slot)
}

// onArrival is client c issuing its next application request.
func (m *model) onArrival(now int64, c uint32) {
	cl := &m.cl
	n := cl.ord[c]
	cl.ord[c] = n + 1
	m.mt.arrivals++
	m.mt.arrHash += rng.Mix(uint64(now)*0x9e3779b97f4a7c15 ^ uint64(c))
	if next := m.nextArrival(c, n+1, now); next < m.end {
		m.q.Schedule(next, evArrival, c, 0)
	}
	m.mt.count(now, c, offered)
	slot := cl.alloc()
	r := &cl.reqs[slot]
	r.arrival, r.rs, r.client, r.ord, r.edge, r.dl = now, stack.Request{}, c, n, 0, 0
	p := cl.pol(c)
	p.OnRequest(now, int(c-p.start))
	if dl := p.Deadline(); dl > 0 {
		r.dl = sat(now, dl)
		m.q.Schedule(m.after(now, dl), evDeadline, slot, r.gen)
	}
	m.attempt(now, slot)
}

// attempt sends the next attempt of request slot through the policy stack.
func (m *model) attempt(now int64, slot uint32) {
	r := &m.cl.reqs[slot]
	r.rs.Attempt++
	if r.rs.Attempt > 1 {
		m.countR(now, r, retries)
	}
	if m.cn.on && m.cn.state[r.client] != csConnected {
		m.drop(now, slot, dropNoConn)
		return
	}
	pl, local := m.polOf(r)
	switch pl.Admit(now, int(local), m.draw(r), &r.rs) {
	case stack.DropThrottle:
		m.drop(now, slot, dropThrottle)
		return
	case stack.DropBreaker:
		m.drop(now, slot, dropBreaker)
		return
	}
	// The client rate limiter delays the send, never drops it.
	if wait := pl.Pace(now, int(local)); wait > 0 {
		m.countR(now, r, paced)
		if r.edge == 0 {
			m.mt.row(now).PacedWaitNS += wait
		}
		r.state = stPacing
		m.q.Schedule(m.after(now, wait), evSend, slot, r.token())
		return
	}
	m.send(now, slot)
}

// drop ends request slot without success, counted by why.
func (m *model) drop(now int64, slot uint32, why counter) {
	m.countR(now, &m.cl.reqs[slot], why)
	m.done(now, slot, false)
}

// done ends request slot: its slot is freed and, for a call a service
// made, the frame waiting for it learns the result.
func (m *model) done(now int64, slot uint32, ok bool) {
	r := &m.cl.reqs[slot]
	edge, f := r.edge, r.frame
	m.cl.release(slot)
	if edge != 0 {
		m.childDone(now, f, ok)
	}
}

// sat is t + d, saturating at the largest time.
func sat(t, d int64) int64 {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// entity names the random streams of request r: its client's for an
// external request, its edge's for a call a service makes (whose ordinal
// is the edge's call counter).
func (m *model) entity(r *request) uint64 {
	if r.edge == 0 {
		return uint64(r.client)
	}
	return uint64(r.edge) << 40
}

// draw names the random draws of request r's current attempt.
func (m *model) draw(r *request) stack.Draw {
	return stack.Draw{Stream: m.entity(r), N: drawIndex(r.ord, r.rs.Attempt)}
}

// polOf is the policy stack of request r and the index of r's policy
// instances in it.
func (m *model) polOf(r *request) (*cpol, uint32) {
	if r.edge == 0 {
		p := m.cl.pol(r.client)
		return p, r.client - p.start
	}
	return &m.edges[r.edge-1].pol, 0
}

// countR counts one for request r: an external request in the fleet's
// (and its group's) rows, a service's call in the callee's rows. Its
// common case is meter.count's, one compare and one add (with no calls
// between services every request is an external one); countR itself is
// just over the inlining budget.
func (m *model) countR(now int64, r *request, f counter) {
	if uint64(now-m.mt.rowStart) < m.mt.soloLen {
		*(*int64)(unsafe.Add(m.mt.cur, f))++
	} else {
		m.countRAt(now, r, f)
	}
}

// countRAt is countR's general case.
func (m *model) countRAt(now int64, r *request, f counter) {
	if r.edge == 0 {
		m.mt.countAt(now, r.client, f)
		return
	}
	b := &m.svcs[m.nodes[m.edges[r.edge-1].to].first] // the replicas share the service's rows
	b.countAt(now, 0, f)                              // never the entry service (calls form no cycle): its own row
}

// send puts the current attempt of slot on the wire.
func (m *model) send(now int64, slot uint32) {
	r := &m.cl.reqs[slot]
	if m.cn.on && m.cn.state[r.client] != csConnected {
		// The connection went away while the rate limiter held the attempt.
		m.breakerResult(now, r, outUnavailable)
		m.drop(now, slot, dropNoConn)
		return
	}
	m.countR(now, r, attempts)
	r.state = stInFlight
	r.phase = 0
	tok := r.token()
	pl, _ := m.polOf(r)
	var dl int64
	if pl.propagate { // the attempt carries its deadline: its timeout, or the request's if sooner
		dl = r.dl
		if to := pl.Timeout(); to > 0 && (dl == 0 || sat(now, to) < dl) {
			dl = sat(now, to)
		}
	}
	ni := m.entry
	if r.edge != 0 {
		ni = m.edges[r.edge-1].to
	}
	b := m.be
	if nd := &m.nodes[ni]; nd.n > 1 {
		if r.edge == 0 && m.cn.rep != nil {
			b = &m.svcs[m.cn.rep[r.client]] // the replica its connection is with
		} else {
			b = m.pick(ni, r, 0)
		}
		r.rep1, r.rep = r.rep, uint8(b.idx)
		nd.picks[b.idx-nd.first]++
	} else if r.edge != 0 {
		b = &m.svcs[nd.first]
	}
	id := m.drawOf(r, 0)
	if m.net.on {
		var svc int64
		if !m.occ.on {
			svc = m.serviceTime(b, id) // named by the attempt: the same draw whenever it is taken
		}
		m.post(now, slot, tok, svc, false, b.idx, dl, 0, id)
	} else {
		m.accept(b, now, slot, tok, m.serviceTime(b, id), m.cl.groupOf(r.client), dl, 0, id)
	}
	// Arm the timeout only if the backend did not answer at once: an
	// immediate answer would leave a stale timer in the queue.
	if to := pl.Timeout(); to > 0 && m.waiting(slot, tok) {
		m.q.Schedule(m.after(now, to), evTimeout, slot, tok)
	}
	if h := pl.Hedge(); h != nil && r.rs.Attempt == 1 && m.waiting(slot, tok) {
		m.q.Schedule(m.after(now, h.Delay()), evHedge, slot, tok)
	}
}

// hedge sends a copy of request slot's first attempt, still unanswered.
func (m *model) hedge(now int64, slot uint32) {
	r := &m.cl.reqs[slot]
	r.rs.H1, r.rs.HLive = r.rs.Attempt, 3
	r.rs.Attempt++
	m.countR(now, r, hedges)
	m.send(now, slot)
}

// outcome handles the answer (or timeout) tok of request slot.
func (m *model) outcome(now int64, slot, tok uint32, out uint8, retryAfter int64) {
	r := &m.cl.reqs[slot]
	if m.guarded {
		m.lbResult(now, r, tok, out)
	}
	pl, local := m.polOf(r)
	pl.Result(now, int(local), stack.Outcome(out), &r.rs, m.draw(r))
	if h := pl.Hedge(); h != nil && out == outOK && (r.rs.Attempt == 1 || r.rs.H1 == 1) {
		h.Observe(now - r.arrival) // a request answered on its first try, hedged or not
	}
	if r.rs.H1 != 0 { // a hedge and the first copy are both out
		if out != outOK {
			if tok == r.token() {
				r.rs.HLive &^= 2
			} else {
				r.rs.HLive &^= 1
			}
			if r.rs.HLive != 0 {
				return // the other copy may still succeed
			}
		} else if pl.Hedge().CancelLoser() {
			loser := r.gen<<8 | uint32(r.rs.H1)
			if tok != r.token() {
				loser = r.token()
			}
			if r.rs.HLive == 3 {
				m.cancelled[uint64(slot)<<32|uint64(loser)] = struct{}{}
			}
		}
		r.rs.H1 = 0
	}
	if out == outOK {
		m.countR(now, r, succeeded)
		if r.edge == 0 {
			m.mt.success(now, now-r.arrival)
		} else {
			m.nodes[m.edges[r.edge-1].to].called(now - r.arrival)
		}
		m.done(now, slot, true)
		return
	}
	if !pl.Retries(stack.Outcome(out)) { // NextRetry's first test, without the call (R1's every rejection)
		m.drop(now, slot, failed)
		return
	}
	d, v := pl.NextRetry(now, int(local), stack.Outcome(out), retryAfter, &r.rs, m.draw(r))
	switch v {
	case stack.GiveUp:
		m.drop(now, slot, failed)
		return
	case stack.BudgetRefused:
		m.countR(now, r, failed)
		m.drop(now, slot, budgetRefused)
		return
	}
	if r.dl > 0 && now+d >= r.dl {
		// The retry would start after the deadline: give up now.
		m.countR(now, r, failed)
		m.drop(now, slot, deadlineExceeded)
		return
	}
	r.state = stBackoff
	m.q.Schedule(m.after(now, d), evRetry, slot, r.token())
}

// onDeadline is request slot's overall deadline passing while it is still
// under way: the client gives it up, and an attempt in flight is abandoned.
func (m *model) onDeadline(now int64, slot uint32) {
	r := &m.cl.reqs[slot]
	if r.state == stInFlight || r.state == stPacing {
		m.breakerResult(now, r, outTimeout) // the client gave up the call
	}
	m.countR(now, r, failed)
	m.drop(now, slot, deadlineExceeded)
}

// breakerResult gives the breaker of r's client the result of r's current
// attempt (and nothing else: the client gave the attempt up, or it never
// left).
func (m *model) breakerResult(now int64, r *request, out uint8) {
	pl, local := m.polOf(r)
	pl.BreakerResult(now, int(local), stack.Outcome(out), &r.rs, m.draw(r))
}

// waiting reports whether the client still waits for this attempt.
func (m *model) waiting(slot, token uint32) bool {
	r := &m.cl.reqs[slot]
	if r.state != stInFlight {
		return false
	}
	if r.rs.H1 == 0 {
		return r.token() == token
	}
	return (token == r.token() && r.rs.HLive&2 != 0) || (token == r.gen<<8|uint32(r.rs.H1) && r.rs.HLive&1 != 0)
}
