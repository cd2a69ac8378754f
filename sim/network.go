package sim

import (
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// network is the path between the clients and the backend
// (scenario.Network). Without one (on false) messages arrive at once.
// Each message draws its own one-way delay from its client's network
// stream, named by what it is (see netDelay and connDelay).
type network struct {
	on      bool
	delay   dist
	msgs    []msg
	freeMsg []uint32
}

// msg is a request (or the write of an occ attempt) crossing the network
// to the backend. It carries what the backend needs even if the client
// has given the attempt up and its slot is reused by then: the backend
// still does the work.
type msg struct {
	slot, tok uint32
	val       int64 // pool: the attempt's service time; occ write: the version read
	dl        int64 // the deadline the attempt carries (0: none)
	svc       uint16
	group     uint8
	hop       uint8   // forwarding hops before the service it goes to
	write     bool    // occ: the write half of the attempt
	id        svcDraw // pool: names the attempt's service-time draw
}

func (nw *network) init(n *scenario.Network) {
	if n == nil {
		return
	}
	nw.on = true
	nw.delay = dist{mean: float64(n.Delay.Mean), sd: float64(n.Delay.SD)}
	switch n.Delay.Dist {
	case scenario.DelayExponential:
		nw.delay.kind = distExponential
	case scenario.DelayNormal:
		nw.delay.kind = distNormal
	default:
		nw.delay.kind = distConstant
	}
}

// netDelay is the one-way delay of message no (0 the request or occ read,
// 1 its answer, 2 the occ write, 3 its answer) of r's current attempt,
// after hop forwarding hops.
func (m *model) netDelay(r *request, no uint64, hop uint8) int64 {
	return m.net.delay.sample(m.src.Key(rng.Network, m.entity(r)), drawIndex(r.ord, r.rs.Attempt)<<2|no|uint64(hop)<<50)
}

// delay is draw n of client c's network stream as a one-way delay.
func (m *model) delay(c uint32, n uint64) int64 {
	return m.net.delay.sample(m.src.Key(rng.Network, uint64(c)), n)
}

// post sends a message for the current attempt of slot to the backend: the
// request (the occ read) or, with write set, the occ write carrying the
// version read in val; for a pool backend val is the attempt's service time
// and id names its draw.
func (m *model) post(now int64, slot, tok uint32, val int64, write bool, svc uint16, dl int64, hop uint8, id svcDraw) {
	nw := &m.net
	r := &m.cl.reqs[slot]
	var i uint32
	if k := len(nw.freeMsg); k > 0 {
		i = nw.freeMsg[k-1]
		nw.freeMsg = nw.freeMsg[:k-1]
	} else {
		i = uint32(len(nw.msgs))
		nw.msgs = append(nw.msgs, msg{})
	}
	nw.msgs[i] = msg{slot: slot, tok: tok, val: val, group: m.cl.groupOf(r.client), write: write, svc: svc, dl: dl, hop: hop, id: id}
	no := uint64(0)
	if write {
		no = 2
	}
	m.q.Schedule(m.after(now, m.netDelay(r, no, hop)), evArrive, i, 0)
}

// arrive is message i reaching the backend.
func (m *model) arrive(now int64, i uint32) {
	mg := m.net.msgs[i]
	m.net.freeMsg = append(m.net.freeMsg, i)
	if m.occ.on {
		m.occArrive(now, mg)
	} else {
		m.accept(&m.svcs[mg.svc], now, mg.slot, mg.tok, mg.val, mg.group, mg.dl, mg.hop, mg.id)
	}
}

// answer is the backend answering attempt tok of slot: at once without a
// network, else after the answer's delay. An answer to an attempt the
// client has given up is never delivered, so it is not sent.
func (m *model) answer(now int64, slot, tok uint32, out uint8, val int64) {
	if !m.waiting(slot, tok) {
		return
	}
	if len(m.cancelled) > 0 {
		delete(m.cancelled, uint64(slot)<<32|uint64(tok))
	}
	if !m.net.on {
		m.outcome(now, slot, tok, out, val)
		return
	}
	r := &m.cl.reqs[slot]
	r.ansOut, r.ansVal = out, val
	m.q.Schedule(m.after(now, m.netDelay(r, 1+2*uint64(r.phase), 0)), evAnswer, slot, tok)
}

// delivered handles an answer that reached a client still waiting for it.
func (m *model) delivered(now int64, slot uint32) {
	r := &m.cl.reqs[slot]
	if m.occ.on && r.phase == 0 && r.ansOut == outOK {
		// The read came back with the version: write with it.
		r.phase = 1
		m.post(now, slot, r.token(), r.ansVal, true, m.be.idx, 0, 0, svcDraw{})
		return
	}
	m.outcome(now, slot, r.token(), r.ansOut, r.ansVal)
}
