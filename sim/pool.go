package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// pool is the worker-pool backend (backend.kind pool): Workers servers, a
// bounded FIFO queue, service times from a distribution, rejections that
// cost worker time, an accept backlog, the connections it holds, and its
// fault state. All of its state is here, so a run could hold several;
// events name a worker by index and carry its generation, so work lost in
// an outage is recognised when its completion event comes.
type pool struct {
	workers  []worker
	freeW    []uint32
	busy     int
	limit    int // workers available now
	queue    jobRing
	qlimit   int
	qtimeout int64
	overhead int64 // rejection work items waiting for a worker
	backlog  int64 // the most that may wait (backend.accept_backlog)
	rejCost  int64
	rejectRA int64 // retry-after sent with overload rejections (dontRetry: "do not retry")
	cancel   bool
	errRate  float64 // share of served attempts answered with an error
	svc      dist
	perConc  int64 // ns of service time added per request in service (dist concurrency)

	// connections (clients.connection)
	connCost  int64
	connLimit int
	held      int // connections held: connected, plus those whose "connected" is on its way (network)

	// faults
	down       bool  // in an outage
	blackhole  bool  // the outage does not answer
	faultRA    int64 // retry-after sent with refusals in an outage
	lastOutage int64 // when the latest outage started (-1: none yet)

	// accounting of time-weighted figures into ser
	ser     *metrics.Series
	lastQ   int64 // time of the last queue-length change
	lastCap int64 // time of the last capacity change
}

// job is an attempt (or, with handshakeFlag set in slot, a connection
// handshake of client slot&^handshakeFlag) waiting in the backend queue.
type job struct {
	slot, token uint32
	at, svc     int64 // enqueued at; its service time
	group       uint8 // the client group of the attempt, for per-group metrics
}

const handshakeFlag = 1 << 31

// What a worker is doing.
const (
	wkServe     uint8 = iota // serving an attempt (slot, token)
	wkReject                 // rejection work (parsing and saying no)
	wkHandshake              // a connection handshake of client slot, sequence token
)

// worker is one backend server.
type worker struct {
	start       int64
	slot, token uint32
	gen         uint32
	kind        uint8
	busy        bool
	group       uint8 // the client group of the attempt being served
}

func (b *pool) init(be scenario.Backend, conns bool, ser *metrics.Series) {
	b.workers = make([]worker, be.Workers)
	b.freeW = make([]uint32, be.Workers)
	for i := range b.freeW {
		b.freeW[i] = uint32(be.Workers - 1 - i)
	}
	b.limit = be.Workers
	b.qlimit = be.Queue.Limit
	b.queue.init(min(be.Queue.Limit, 1<<16))
	b.qtimeout = int64(be.Queue.Timeout)
	b.rejCost = int64(be.RejectCost)
	b.backlog = int64(be.AcceptBacklog)
	b.rejectRA = int64(be.RetryAfter)
	if be.DontRetry {
		b.rejectRA = dontRetry
	}
	b.cancel = be.CancelTimedOut
	b.errRate = be.ErrorRate
	b.svc.mean = float64(be.Service.Mean)
	switch be.Service.Dist {
	case scenario.ServiceConstant:
		b.svc.kind = distConstant
	case scenario.ServiceExponential:
		b.svc.kind = distExponential
	case scenario.ServiceConcurrency:
		b.svc.kind = distConstant // plus perConc × the others in service, in serve
		b.perConc = int64(be.Service.PerConcurrent)
	case scenario.ServiceLognormal:
		b.svc.kind = distLognormal
		b.svc.sigma = be.Service.Sigma
		b.svc.mu = math.Log(b.svc.mean) - b.svc.sigma*b.svc.sigma/2 // so that the mean is svc.mean
	}
	if conns {
		b.connCost = int64(be.Connections.ConnectCost)
		b.connLimit = be.Connections.Limit
	}
	b.lastOutage = -1
	b.ser = ser
}

// serviceTime is the service time of r's current attempt: named by the
// attempt, so it is the same draw whenever it is taken.
func (m *model) serviceTime(r *request) int64 {
	return m.be.svc.sample(m.src.Key(rng.Service, uint64(r.client)), drawIndex(r.ord, r.attempt))
}

// refusedInOutage handles an attempt (or occ message) arriving while the
// backend is down: counted, and refused unless the outage is a
// blackhole. It reports whether the backend was down.
func (m *model) refusedInOutage(now int64, row, g *metrics.Row, slot, tok uint32) bool {
	if !m.be.down {
		return false
	}
	row.FailedOutage++
	g.FailedOutage++
	if !m.be.blackhole {
		m.answer(now, slot, tok, outUnavailable, m.be.faultRA)
	}
	return true
}

// receive is an attempt reaching the pool backend at once (no network).
func (m *model) receive(now int64, slot, tok uint32) {
	r := &m.cl.reqs[slot]
	m.accept(now, slot, tok, m.serviceTime(r), m.cl.groupOf(r.client))
}

// accept is the pool backend taking in attempt tok of slot, which needs
// svc of service, from a client of group grp.
func (m *model) accept(now int64, slot, tok uint32, svc int64, grp uint8) {
	b := &m.be
	row, g := m.mt.rows(now, grp)
	if m.refusedInOutage(now, row, g, slot, tok) {
		return
	}
	row.Received++
	g.Received++
	if b.busy < b.limit {
		row.Accepted++
		g.Accepted++
		m.mt.waitN++
		m.serve(now, b.takeWorker(), slot, tok, svc, grp)
		return
	}
	if b.queue.n < b.qlimit {
		row.Accepted++
		g.Accepted++
		b.queueChanged(now)
		b.queue.push(job{slot: slot, token: tok, at: now, svc: svc, group: grp})
		return
	}
	if !m.chargeReject(now) {
		row.Unanswered++
		g.Unanswered++
		return
	}
	row.Rejected++
	g.Rejected++
	m.answer(now, slot, tok, outRejected, b.rejectRA)
}

func (b *pool) takeWorker() uint32 {
	n := len(b.freeW)
	w := b.freeW[n-1]
	b.freeW = b.freeW[:n-1]
	b.busy++
	b.workers[w].busy = true
	return w
}

func (m *model) serve(now int64, w uint32, slot, tok uint32, svc int64, group uint8) {
	b := &m.be
	if b.perConc != 0 {
		svc += b.perConc * int64(b.busy-1) // the others in service now (busy counts w)
	}
	wk := &b.workers[w]
	wk.start, wk.slot, wk.token, wk.kind, wk.group = now, slot, tok, wkServe, group
	m.q.Schedule(m.after(now, svc), evWorkerDone, w, wk.gen)
}

// chargeReject puts one rejection's worth of work on the workers: at once
// if one is free, else into the accept backlog, which workers empty ahead of
// the queue. When the backlog is full the backend cannot even say no: the
// arrival is dropped unanswered (as a kernel drops connections beyond its
// listen backlog) and chargeReject returns false.
func (m *model) chargeReject(now int64) bool {
	b := &m.be
	if b.rejCost == 0 {
		return true
	}
	if b.busy < b.limit {
		m.rejectWork(now, b.takeWorker())
		return true
	}
	if b.overhead >= b.backlog {
		return false
	}
	b.overhead++
	return true
}

func (m *model) rejectWork(now int64, w uint32) {
	wk := &m.be.workers[w]
	wk.start, wk.kind = now, wkReject
	m.q.Schedule(m.after(now, m.be.rejCost), evWorkerDone, w, wk.gen)
}

func (m *model) onWorkerDone(now int64, w uint32, gen uint32) {
	b := &m.be
	wk := &b.workers[w]
	if wk.gen != gen {
		return // the work was lost in an outage
	}
	switch wk.kind {
	case wkReject:
		b.ser.AddWasted(wk.start, now)
	case wkHandshake:
		m.handshakeDone(now, wk.slot, wk.token, wk.start)
	default:
		row := m.mt.row(now)
		row.Served++
		g := m.mt.gseries(wk.group)
		if g != nil {
			g.Rows[g.Index(now)].Served++
		}
		if !m.waiting(wk.slot, wk.token) {
			b.ser.AddWasted(wk.start, now)
			if g != nil {
				g.AddWasted(wk.start, now)
			}
			break
		}
		if b.errRate > 0 {
			r := &m.cl.reqs[wk.slot]
			key := m.src.Key(rng.Service, uint64(r.client))
			if rng.Float64(key, drawIndex(r.ord, r.attempt)|1<<62) < b.errRate {
				// An independent backend failure: the work produced an
				// error, not a result.
				row.Errors++
				b.ser.AddWasted(wk.start, now)
				if g != nil {
					g.Rows[g.Index(now)].Errors++
					g.AddWasted(wk.start, now)
				}
				m.answer(now, wk.slot, wk.token, outError, 0)
				break
			}
		}
		b.ser.AddUseful(wk.start, now)
		if g != nil {
			g.AddUseful(wk.start, now)
		}
		m.answer(now, wk.slot, wk.token, outOK, 0)
	}
	m.dispatch(now, w)
}

// dispatch gives free worker w its next work: pending rejection work
// first, then the head of the queue; or lets it idle.
func (m *model) dispatch(now int64, w uint32) {
	b := &m.be
	if b.busy > b.limit { // capacity was cut while it worked
		b.idle(w)
		return
	}
	for {
		if b.overhead > 0 {
			b.overhead--
			m.rejectWork(now, w)
			return
		}
		if b.queue.n == 0 {
			b.idle(w)
			return
		}
		b.queueChanged(now)
		j := b.queue.pop()
		if j.slot&handshakeFlag != 0 {
			if m.startHandshake(now, w, j) {
				return
			}
			continue
		}
		if b.qtimeout > 0 && now-j.at > b.qtimeout {
			m.mt.row(now).QueueTimeouts++
			if g := m.mt.growG(now, j.group); g != nil {
				g.QueueTimeouts++
			}
			m.answer(now, j.slot, j.token, outRejected, b.rejectRA)
			if b.rejCost > 0 {
				m.rejectWork(now, w)
				return
			}
			continue
		}
		if b.cancel && !m.waiting(j.slot, j.token) {
			m.mt.row(now).Cancelled++
			if g := m.mt.growG(now, j.group); g != nil {
				g.Cancelled++
			}
			continue
		}
		m.mt.waitSum += float64(now - j.at)
		m.mt.waitN++
		m.serve(now, w, j.slot, j.token, j.svc, j.group)
		return
	}
}

func (b *pool) idle(w uint32) {
	b.workers[w].busy = false
	b.busy--
	b.freeW = append(b.freeW, w)
}

// queueChanged accounts the queue length up to now, before it changes.
func (b *pool) queueChanged(now int64) {
	b.ser.AddQueueArea(b.lastQ, now, int64(b.queue.n))
	b.lastQ = now
}

// capacityChanged accounts the capacity up to now and sets it to limit.
func (b *pool) capacityChanged(now int64, limit int) {
	b.ser.AddCapacity(b.lastCap, now, int64(b.limit))
	b.lastCap = now
	b.limit = limit
}

// jobRing is the backend's FIFO queue: a growable ring buffer.
type jobRing struct {
	buf     []job
	head, n int
}

func (r *jobRing) init(c int) { r.buf = make([]job, max(c, 16)) }

func (r *jobRing) push(j job) {
	if r.n == len(r.buf) {
		nb := make([]job, 2*len(r.buf))
		k := copy(nb, r.buf[r.head:])
		copy(nb[k:], r.buf[:r.head])
		r.buf, r.head = nb, 0
	}
	i := r.head + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.buf[i] = j
	r.n++
}

func (r *jobRing) pop() job {
	j := r.buf[r.head]
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return j
}
