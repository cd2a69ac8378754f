package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/admission"
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
	full     int // workers available outside faults (all, unless an autoscaler stopped or is warming the replica)
	capFault bool
	capFrac  float64 // a capacity fault in progress: limit is full × capFrac
	draining bool    // scaled in: stops once it holds no work (autoscale.go)
	queue    jobRing
	adm      admission.Admission // what to admit, queue, reject, and take next (queue discipline, rate limit, concurrency limit, priority shedding)
	rejectRA int64               // retry-after sent with overload rejections (dontRetry: "do not retry")
	cancel   bool
	errRate  float64 // share of served attempts answered with an error
	svc      sampler
	perConc  int64   // ns of service time added per request in service (dist concurrency)
	degrade  float64 // graceful degradation: the share of the service time of a degraded response (0: none)
	adjust   bool    // serve adjusts service times: a slowdown at start, perConc or degrade (setAdjust)

	// a slowdown fault in progress
	slowOn     bool
	slowStart  bool    // applies_to: start (else arrival)
	slowFactor float64 // × the service time, or
	slow       sampler // a replacement distribution (slowFactor 0)

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
	waitSum float64
	waitN   int64

	// In a service graph (graph.go): which replica this is, of which
	// service (what it does after its local work is the service's: node).
	idx   uint16
	node  uint16    // the service it is a replica of
	leaf  bool      // its service neither calls, forwards nor tracks peak EWMA: onWorkerDone need not look at the node
	fleet bool      // ser is the fleet's series (the entry service): rows through the meter
	rows  *meter    // the fleet's meter when fleet, else noFastPath (meter.add)
	cur   rowCursor // else: the row being filled
	// tail[k], when tracked (tests), is the time with exactly k requests
	// queued or in service (k capped at len−1), up to lastSys.
	tail     []int64
	lastSys  int64
	tailFrom int64 // the warm-up: time before it is not counted
	// peak EWMA (Finagle PeakEwma), when its service balances by it: cost
	// in ns, when it was last updated
	ewmaCost  float64
	ewmaStamp int64
}

// job is an attempt (or, with handshakeFlag set in slot, a connection
// handshake of client slot&^handshakeFlag) waiting in the backend queue.
type job struct {
	slot, token uint32
	at, svc     int64  // enqueued at; its service time
	dl          int64  // the attempt's deadline when its caller sends it (0: none)
	group       uint8  // the client group of the attempt, for per-group metrics
	hop         uint8  // forwarding hops before this service
	rif         uint32 // requests queued or in service when it arrived (lb prequal's latency by RIF; fits the padding)
	id          svcDraw
}

const handshakeFlag = 1 << 31

// What a worker is doing.
const (
	wkServe     uint8 = iota // serving an attempt (slot, token)
	wkReject                 // rejection work (parsing and saying no)
	wkHandshake              // a connection handshake of client slot, sequence token
	wkWait                   // blocking: waiting for the downstream calls of frame
)

// worker is one backend server.
type worker struct {
	start       int64
	arrived     int64 // when the attempt being served reached the pool
	dl          int64 // the attempt's deadline (0: none)
	slot, token uint32
	gen         uint32 // 24 bits: the event's Aux carries the service above them
	frame       uint32 // wkWait: the frame of its calls
	kind        uint8
	busy        bool
	group       uint8 // the client group of the attempt being served
	hop         uint8
	rif         uint32 // requests queued or in service when the attempt arrived (fits the padding)
}

// genMask keeps a worker generation in the 24 bits an event's Aux has for
// it (the service index takes the top 8).
const genMask = 1<<24 - 1

// concLimitEntity names a replica's concurrency-limit draws in the Route
// stream, apart from every client's and call's entity (its admission
// value draws them).
const concLimitEntity = 1 << 40

func (b *pool) init(be scenario.Backend, conns bool, ser *metrics.Series, limitKey uint64) error {
	b.workers = make([]worker, be.Workers)
	b.freeW = make([]uint32, be.Workers)
	for i := range b.freeW {
		b.freeW[i] = uint32(be.Workers - 1 - i)
	}
	b.limit, b.full = be.Workers, be.Workers
	b.queue.init(min(be.Queue.Limit, 1<<16))
	b.rejectRA = int64(be.RetryAfter)
	if be.DontRetry {
		b.rejectRA = dontRetry
	}
	b.cancel = be.CancelTimedOut
	b.errRate = be.ErrorRate
	b.svc = newSampler(be.Service)
	if be.Service.Dist == scenario.ServiceConcurrency {
		b.perConc = int64(be.Service.PerConcurrent) // × the others in service, in serve
	}
	if conns {
		b.connCost = int64(be.Connections.ConnectCost)
		b.connLimit = be.Connections.Limit
	}
	b.lastOutage = -1
	b.ser = ser
	var err error
	b.adm, err = admission.New(be, limitKey, ser)
	if b.degrade = b.adm.DegradeFraction(); b.degrade != 0 {
		ser.Degrading = true
	}
	b.setAdjust()
	return err
}

// load is what b's admission reads of its state.
func (b *pool) load() admission.Load {
	return admission.Load{Busy: b.busy, Limit: b.limit, Queued: b.queue.n, WaitSum: b.waitSum, WaitN: b.waitN}
}

// refusedInOutage handles an attempt (or occ message) of a client of group
// grp arriving while the backend is down: counted, and refused unless the
// outage is a blackhole. It reports whether the backend was down.
func (m *model) refusedInOutage(b *pool, now int64, grp uint8, slot, tok uint32) bool {
	if !b.down {
		return false
	}
	b.rows.add(b, now, grp, failedOutage)
	if !b.blackhole {
		m.answer(now, slot, tok, outUnavailable, b.faultRA)
	}
	return true
}

// accept is service b taking in attempt tok of slot, which needs svc of
// service, from a client of group grp, with deadline dl, after hop
// forwarding hops; id names its service-time draw.
func (m *model) accept(b *pool, now int64, slot, tok uint32, svc int64, grp uint8, dl int64, hop uint8, id svcDraw) {
	if b.tail != nil {
		b.noteSys(now)
	}
	if m.refusedInOutage(b, now, grp, slot, tok) {
		return
	}
	b.rows.add(b, now, grp, received)
	prio := 0
	if b.adm.Prioritized() {
		prio = m.priority(b, now, slot, grp)
	}
	v, sh := b.adm.Arrive(now, b.load(), prio)
	if sh {
		// Refused by the server's rate limit, priority shedding or
		// concurrency limit, at the price of a rejection.
		b.rows.add(b, now, grp, shed)
	}
	switch v {
	case admission.Serve:
		if b.slowOn && !b.slowStart {
			svc = m.slowed(b, id, svc) // applies_to: arrival
		}
		b.rows.add(b, now, grp, accepted)
		b.waitN++
		w := b.takeWorker()
		b.workers[w].rif = uint32(b.outstanding() - 1)
		m.serve(b, now, w, slot, tok, svc, grp, dl, hop, now, id)
	case admission.Queue:
		if b.slowOn && !b.slowStart {
			svc = m.slowed(b, id, svc) // applies_to: arrival
		}
		b.rows.add(b, now, grp, accepted)
		b.queueChanged(now)
		b.queue.push(job{slot: slot, token: tok, at: now, svc: svc, group: grp, dl: dl, hop: hop, rif: uint32(b.outstanding()), id: id})
	default:
		if !m.rejected(b, now, v) {
			b.rows.add(b, now, grp, unanswered)
			return
		}
		b.rows.add(b, now, grp, rejected)
		m.answer(now, slot, tok, outRejected, b.rejectRA)
	}
}

func (b *pool) takeWorker() uint32 {
	n := len(b.freeW)
	w := b.freeW[n-1]
	b.freeW = b.freeW[:n-1]
	b.busy++
	b.workers[w].busy = true
	return w
}

func (m *model) serve(b *pool, now int64, w uint32, slot, tok uint32, svc int64, group uint8, dl int64, hop uint8, arrived int64, id svcDraw) {
	if b.adjust {
		svc = m.adjusted(b, now, svc, group, id)
	}
	wk := &b.workers[w]
	wk.start, wk.slot, wk.token, wk.kind, wk.group, wk.dl, wk.hop, wk.arrived = now, slot, tok, wkServe, group, dl, hop, arrived
	m.q.Schedule(m.after(now, svc), evWorkerDone, w, wk.gen|uint32(b.idx)<<24)
}

// adjusted is the service time svc of a request of group grp starting
// service at b now after what serve's adjust stands for: a slowdown
// applying at the start, dist concurrency's time per other request in
// service, then graceful degradation.
func (m *model) adjusted(b *pool, now, svc int64, grp uint8, id svcDraw) int64 {
	if b.slowOn && b.slowStart {
		svc = m.slowed(b, id, svc) // applies_to: start
	}
	if b.perConc != 0 {
		svc += b.perConc * int64(b.busy-1) // the others in service now (busy counts w)
	}
	if b.degrade != 0 && b.adm.Degrade(b.load()) {
		svc = int64(float64(svc) * b.degrade) // a cheaper response (backend.degrade)
		b.rows.add(b, now, grp, degraded)
	}
	return svc
}

// setAdjust notes whether serve must adjust service times (adjusted):
// called when a setting it reads changes.
func (b *pool) setAdjust() {
	b.adjust = b.slowOn && b.slowStart || b.perConc != 0 || b.degrade != 0
}

// rejected carries out the admission's verdict v on a refusal: a
// rejection's work on a free worker now (RejectWork), in the accept
// backlog or free (Reject); it reports false when the backlog was full and
// the arrival goes unanswered.
func (m *model) rejected(b *pool, now int64, v admission.Verdict) bool {
	switch v {
	case admission.RejectWork:
		m.rejectWork(b, now, b.takeWorker())
	case admission.Unanswered:
		return false
	}
	return true
}

func (m *model) rejectWork(b *pool, now int64, w uint32) {
	wk := &b.workers[w]
	wk.start, wk.kind = now, wkReject
	m.q.Schedule(m.after(now, b.adm.RejectCost()), evWorkerDone, w, wk.gen|uint32(b.idx)<<24)
}

func (m *model) onWorkerDone(now int64, w uint32, aux uint32) {
	b := &m.svcs[aux>>24]
	wk := &b.workers[w]
	if wk.gen != aux&genMask {
		return // the work was lost in an outage
	}
	if b.tail != nil {
		b.noteSys(now)
	}
	switch wk.kind {
	case wkReject:
		b.ser.AddWasted(wk.start, now)
	case wkHandshake:
		m.handshakeDone(b, now, wk.slot, wk.token, wk.start)
	default:
		var nd *node
		if !b.leaf {
			if nd = &m.nodes[b.node]; nd.ewma {
				b.observe(now, float64(now-wk.arrived), nd.tau)
			} else if nd.pq != nil {
				nd.pq.observe(int(b.idx-nd.first), int(wk.rif), float64(now-wk.arrived))
			}
		}
		if b.adm.Limited() {
			b.adm.Sample(now, now-wk.arrived, b.outstanding(), false)
		}
		b.rows.add(b, now, wk.group, served)
		if !m.waiting(wk.slot, wk.token) {
			m.bwork(b, wk.group, wk.start, now, false)
			break
		}
		if b.errRate > 0 {
			r := &m.cl.reqs[wk.slot]
			key := m.src.Key(rng.Service, m.entity(r))
			if rng.Float64(key, drawIndex(r.ord, r.rs.Attempt)|uint64(wk.hop)<<56|1<<62) < b.errRate {
				// An independent backend failure: the work produced an
				// error, not a result.
				b.rows.add(b, now, wk.group, errored)
				m.bwork(b, wk.group, wk.start, now, false)
				m.answer(now, wk.slot, wk.token, outError, 0)
				break
			}
		}
		if !b.leaf && len(nd.calls) > 0 {
			if m.startCalls(b, nd, now, w) {
				return // blocking: the worker waits for the calls
			}
			break
		}
		m.bwork(b, wk.group, wk.start, now, true)
		if !b.leaf && len(nd.fwd) > 0 && m.forward(nd, now, wk) {
			break
		}
		m.answer(now, wk.slot, wk.token, outOK, 0)
	}
	m.dispatch(b, now, w)
}

// dispatch gives free worker w its next work: pending rejection work
// first, then the head of the queue; or lets it idle.
func (m *model) dispatch(b *pool, now int64, w uint32) {
	for {
		var j job
		switch b.adm.Next(b.load()) {
		case admission.TakeReject:
			m.rejectWork(b, now, w)
			return
		case admission.Cut:
			b.idle(w)
			return
		case admission.Idle:
			b.idle(w)
			if b.draining {
				m.drained(b, now)
			}
			return
		case admission.TakeTail:
			b.queueChanged(now)
			j = b.queue.popBack()
		default:
			b.queueChanged(now)
			j = b.queue.pop()
		}
		if j.slot&handshakeFlag != 0 {
			if m.startHandshake(b, now, w, j) {
				return
			}
			continue
		}
		// CoDel and the queue timeout reject a request when it reaches
		// a worker.
		if ex := b.adm.Expire(now, now-j.at, b.queue.n); ex != admission.Keep {
			if ex == admission.Shed {
				b.rows.add(b, now, j.group, shed)
			}
			if b.adm.Limited() {
				b.adm.Sample(now, now-j.at, b.outstanding()+1, true)
			}
			if m.timeOutQueued(b, now, w, j) {
				return
			}
			continue
		}
		if len(m.cancelled) > 0 {
			if _, ok := m.cancelled[uint64(j.slot)<<32|uint64(j.token)]; ok {
				// A hedged copy whose twin has already succeeded.
				delete(m.cancelled, uint64(j.slot)<<32|uint64(j.token))
				b.rows.add(b, now, j.group, cancelled)
				continue
			}
		}
		if j.dl > 0 && now >= j.dl {
			// Its caller's deadline has passed: nobody waits for the
			// answer, and the service knows it.
			b.rows.add(b, now, j.group, deadlineDropped)
			continue
		}
		if b.cancel && !m.waiting(j.slot, j.token) {
			b.rows.add(b, now, j.group, cancelled)
			continue
		}
		b.waitSum += float64(now - j.at)
		b.waitN++
		b.workers[w].rif = j.rif
		m.serve(b, now, w, j.slot, j.token, j.svc, j.group, j.dl, j.hop, j.at, j.id)
		return
	}
}

// timeOutQueued rejects queued job j as a queue timeout; it reports
// whether worker w took the rejection work.
func (m *model) timeOutQueued(b *pool, now int64, w uint32, j job) bool {
	b.rows.add(b, now, j.group, queueTimeouts)
	m.answer(now, j.slot, j.token, outRejected, b.rejectRA)
	if b.adm.RejectCost() > 0 {
		m.rejectWork(b, now, w)
		return true
	}
	return false
}

func (b *pool) idle(w uint32) {
	b.workers[w].busy = false
	b.busy--
	b.freeW = append(b.freeW, w)
}

// effLimit is the workers b runs now: none in an outage, a share of its
// full count in a capacity fault, else its full count.
func (b *pool) effLimit() int {
	switch {
	case b.down:
		return 0
	case b.capFault:
		return int(math.Round(float64(b.full) * b.capFrac))
	}
	return b.full
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

// popBack takes the newest job (LIFO).
func (r *jobRing) popBack() job {
	i := r.head + r.n - 1
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.n--
	return r.buf[i]
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

// noteSys accounts the time since the last change at the number of
// requests queued or in service now, before it changes.
func (b *pool) noteSys(now int64) {
	k := min(b.outstanding(), len(b.tail)-1)
	if from := max(b.lastSys, b.tailFrom); now > from { // after the warm-up only
		b.tail[k] += now - from
	}
	b.lastSys = now
}
