package sim

import (
	"math"

	svcdist "github.com/throttlesim/throttlesim/sim/dist"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
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
	qlimit   int
	qtimeout int64
	overhead int64 // rejection work items waiting for a worker
	backlog  int64 // the most that may wait (backend.accept_backlog)
	rejCost  int64
	rejectRA int64 // retry-after sent with overload rejections (dontRetry: "do not retry")
	cancel   bool
	errRate  float64 // share of served attempts answered with an error
	svc      sampler
	// server-side overload control (backend.queue.discipline, rate_limit)
	lifo          bool // newest first
	adaptive      bool // newest first while more than lifoThreshold wait
	lifoThreshold int
	codel         *policy.CoDel
	rateLimit     *policy.TokenBucket
	conc          *concLimit // backend.concurrency_limit (limiter.go)
	dagor         *shedder   // backend.priority_shedding (priority.go)
	perConc       int64      // ns of service time added per request in service (dist concurrency)

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

	// In a service graph (graph.go): which service this is, and what it
	// does after its local work.
	idx      uint16
	fleet    bool      // ser is the fleet's series (the entry service): rows through the meter
	cur      rowCursor // else: the row being filled
	name     string
	calls    []uint16 // edges of its calls, in order
	parallel bool
	join     scenario.Join
	joinK    int
	blocking bool
	fwd      []route
	node     uint16 // the service it is a replica of
	// tail[k], when tracked (tests), is the time with exactly k requests
	// queued or in service (k capped at len−1), up to lastSys.
	tail     []int64
	lastSys  int64
	tailFrom int64 // the warm-up: time before it is not counted
	// peak EWMA (Finagle PeakEwma), when its service balances by it: cost
	// in ns, when it was last updated
	ewma      bool
	ewmaCost  float64
	ewmaStamp int64
}

// job is an attempt (or, with handshakeFlag set in slot, a connection
// handshake of client slot&^handshakeFlag) waiting in the backend queue.
type job struct {
	slot, token uint32
	at, svc     int64 // enqueued at; its service time
	dl          int64 // the attempt's deadline when its caller sends it (0: none)
	group       uint8 // the client group of the attempt, for per-group metrics
	hop         uint8 // forwarding hops before this service
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
}

// genMask keeps a worker generation in the 24 bits an event's Aux has for
// it (the service index takes the top 8).
const genMask = 1<<24 - 1

func (b *pool) init(be scenario.Backend, conns bool, ser *metrics.Series) {
	b.workers = make([]worker, be.Workers)
	b.freeW = make([]uint32, be.Workers)
	for i := range b.freeW {
		b.freeW[i] = uint32(be.Workers - 1 - i)
	}
	b.limit, b.full = be.Workers, be.Workers
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
	b.svc = newSampler(be.Service)
	switch be.Queue.Discipline {
	case scenario.QueueLIFO:
		b.lifo = true
	case scenario.QueueAdaptiveLIFO:
		b.adaptive, b.lifoThreshold = true, be.Queue.LIFOThreshold
	case scenario.QueueCoDel:
		b.codel = policy.NewCoDel(int64(be.Queue.CoDelTarget), int64(be.Queue.CoDelInterval))
	}
	if rl := be.RateLimit; rl != nil {
		b.rateLimit = policy.NewTokenBucket(float64(rl.Rate), rl.Burst)
	}
	if be.Service.Dist == scenario.ServiceConcurrency {
		b.perConc = int64(be.Service.PerConcurrent) // × the others in service, in serve
	}
	if conns {
		b.connCost = int64(be.Connections.ConnectCost)
		b.connLimit = be.Connections.Limit
	}
	b.lastOutage = -1
	b.ser = ser
}

// svcDraw names the service-time draw of one attempt at one service: the
// stream key of its client (or edge) and the draw index of its request
// ordinal, attempt number and hop. It is taken while the attempt is its
// request's current one and travels with the attempt (job, msg), so that a
// draw made later, a slowdown's replacement at arrival or at the start of
// service, is still the attempt's own when the client has given up on it
// and its request slot holds a later attempt or another request.
type svcDraw struct{ key, n uint64 }

// drawOf names the service-time draw of r's current attempt after hop
// forwarding hops.
func (m *model) drawOf(r *request, hop uint8) svcDraw {
	return svcDraw{m.src.Key(rng.Service, m.entity(r)), drawIndex(r.ord, r.rs.Attempt) | uint64(hop)<<56}
}

// serviceTime is the service time at b of the attempt id names: named by
// the attempt, so it is the same draw whenever it is taken.
func (m *model) serviceTime(b *pool, id svcDraw) int64 {
	return b.svc.sample(id.key, id.n)
}

// sampler draws service times from one scenario distribution.
type sampler struct {
	d   dist
	mix *svcdist.Mixture   // dist mixture
	emp *svcdist.Empirical // dist empirical
}

func newSampler(sv scenario.Service) sampler {
	var s sampler
	s.d.mean = float64(sv.Mean)
	switch sv.Dist {
	case scenario.ServiceConstant, scenario.ServiceConcurrency:
		s.d.kind = distConstant
	case scenario.ServiceExponential:
		s.d.kind = distExponential
	case scenario.ServiceLognormal:
		s.d.kind = distLognormal
		s.d.sigma = sv.Sigma
		s.d.mu = math.Log(s.d.mean) - s.d.sigma*s.d.sigma/2 // so that the mean is d.mean
	case scenario.ServiceMixture:
		s.mix, _ = sv.Mixture() // validated
	case scenario.ServiceEmpirical:
		s.emp = sv.Empirical // read by scenario.Load; validated
	}
	return s
}

// mixPick marks the draw index of a mixture's component choice: bit 48,
// above drawIndex's 40 bits and below the hop (bits 56 on).
const mixPick = 1 << 48

// sample is draw n of stream key as a service time.
func (s *sampler) sample(key, n uint64) int64 {
	switch {
	case s.mix != nil:
		// The component is picked by a draw of its own, then drawn from
		// the attempt's usual service draw.
		c := s.mix.Component(s.mix.Pick(rng.Float64(key, n|mixPick)))
		switch c.Kind {
		case svcdist.Exponential:
			return c.Sample(rng.Exp(key, n), 0)
		case svcdist.Lognormal:
			return c.Sample(0, rng.Normal(key, n))
		}
		return c.Mean
	case s.emp != nil:
		return s.emp.Sample(rng.Float64(key, n))
	}
	return s.d.sample(key, n)
}

// slowed is the service time at b of the attempt id names, whose usual
// service time is svc, under the slowdown in progress: svc × factor, or
// the replacement distribution's draw for the attempt (the same draw as
// its usual one). The attempt is named by id, not by its request slot: at
// arrival over a network or at the start of service the slot may hold a
// later attempt or another request.
func (m *model) slowed(b *pool, id svcDraw, svc int64) int64 {
	if b.slowFactor > 0 {
		return int64(math.Min(math.Round(float64(svc)*b.slowFactor), 1<<62))
	}
	return b.slow.sample(id.key, id.n)
}

// brow is b's metrics row at now. Its common case (the entry service of
// a solo fleet, now in the row of the latest call) is inlined.
func (m *model) brow(b *pool, now int64) *metrics.Row {
	if b.fleet && uint64(now-m.mt.rowStart) < m.mt.soloLen {
		return (*metrics.Row)(m.mt.cur)
	}
	return m.browAt(b, now)
}

// browAt is brow's general case.
func (m *model) browAt(b *pool, now int64) *metrics.Row {
	if b.fleet {
		return m.mt.row(now)
	}
	return b.cur.row(b.ser, now)
}

// brows are b's row at now and group grp's (a scratch row unless b is
// the entry service and the fleet has groups). Its common case (the entry
// service of a solo fleet, now in the row of the latest call) returns at
// once.
func (m *model) brows(b *pool, now int64, grp uint8) (row, g *metrics.Row) {
	if b.fleet && uint64(now-m.mt.rowStart) < m.mt.soloLen {
		return (*metrics.Row)(m.mt.cur), &m.mt.sink
	}
	return m.browsAt(b, now, grp)
}

// browsAt is brows's general case.
func (m *model) browsAt(b *pool, now int64, grp uint8) (row, g *metrics.Row) {
	if b.fleet {
		return m.mt.rows(now, grp)
	}
	return b.cur.row(b.ser, now), &m.mt.sink
}

// bgrow is group grp's row at now when b is the entry service and the
// fleet has groups, else nil.
func (m *model) bgrow(b *pool, now int64, grp uint8) *metrics.Row {
	if !b.fleet {
		return nil
	}
	return m.mt.growG(now, grp)
}

// bgser is group grp's series when b is the entry service and the fleet
// has groups, else nil.
func (m *model) bgser(b *pool, grp uint8) *metrics.Series {
	if !b.fleet {
		return nil
	}
	return m.mt.gseries(grp)
}

// refusedInOutage handles an attempt (or occ message) arriving while the
// backend is down: counted, and refused unless the outage is a
// blackhole. It reports whether the backend was down.
func (m *model) refusedInOutage(b *pool, now int64, row, g *metrics.Row, slot, tok uint32) bool {
	if !b.down {
		return false
	}
	row.FailedOutage++
	g.FailedOutage++
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
	row, g := m.brows(b, now, grp)
	if m.refusedInOutage(b, now, row, g, slot, tok) {
		return
	}
	row.Received++
	g.Received++
	if b.rateLimit != nil && !b.rateLimit.Allow(now) || b.dagor != nil && !m.dagorAdmit(b, now, slot, grp) ||
		b.conc != nil && !m.concAdmit(b, now) {
		// Refused by the server's rate limit, priority shedding or
		// concurrency limit, at the price of a rejection.
		row.Shed++
		if !m.chargeReject(b, now) {
			row.Unanswered++
			g.Unanswered++
			return
		}
		row.Rejected++
		g.Rejected++
		m.answer(now, slot, tok, outRejected, b.rejectRA)
		return
	}
	if b.slowOn && !b.slowStart {
		svc = m.slowed(b, id, svc) // applies_to: arrival
	}
	if b.busy < b.limit {
		row.Accepted++
		g.Accepted++
		b.waitN++
		m.serve(b, now, b.takeWorker(), slot, tok, svc, grp, dl, hop, now, id)
		return
	}
	if b.queue.n < b.qlimit {
		row.Accepted++
		g.Accepted++
		b.queueChanged(now)
		b.queue.push(job{slot: slot, token: tok, at: now, svc: svc, group: grp, dl: dl, hop: hop, id: id})
		return
	}
	if !m.chargeReject(b, now) {
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

func (m *model) serve(b *pool, now int64, w uint32, slot, tok uint32, svc int64, group uint8, dl int64, hop uint8, arrived int64, id svcDraw) {
	if b.slowOn && b.slowStart {
		svc = m.slowed(b, id, svc) // applies_to: start
	}
	if b.perConc != 0 {
		svc += b.perConc * int64(b.busy-1) // the others in service now (busy counts w)
	}
	wk := &b.workers[w]
	wk.start, wk.slot, wk.token, wk.kind, wk.group, wk.dl, wk.hop, wk.arrived = now, slot, tok, wkServe, group, dl, hop, arrived
	m.q.Schedule(m.after(now, svc), evWorkerDone, w, wk.gen|uint32(b.idx)<<24)
}

// chargeReject puts one rejection's worth of work on the workers: at once
// if one is free, else into the accept backlog, which workers empty ahead of
// the queue. When the backlog is full the backend cannot even say no: the
// arrival is dropped unanswered (as a kernel drops connections beyond its
// listen backlog) and chargeReject returns false.
func (m *model) chargeReject(b *pool, now int64) bool {
	if b.rejCost == 0 {
		return true
	}
	if b.busy < b.limit {
		m.rejectWork(b, now, b.takeWorker())
		return true
	}
	if b.overhead >= b.backlog {
		return false
	}
	b.overhead++
	return true
}

func (m *model) rejectWork(b *pool, now int64, w uint32) {
	wk := &b.workers[w]
	wk.start, wk.kind = now, wkReject
	m.q.Schedule(m.after(now, b.rejCost), evWorkerDone, w, wk.gen|uint32(b.idx)<<24)
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
		if b.ewma {
			b.observe(now, float64(now-wk.arrived), m.nodes[b.node].tau)
		}
		if b.conc != nil {
			m.concSample(b, now, now-wk.arrived, b.outstanding(), false)
		}
		row := m.brow(b, now)
		row.Served++
		g := m.bgser(b, wk.group)
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
			key := m.src.Key(rng.Service, m.entity(r))
			if rng.Float64(key, drawIndex(r.ord, r.rs.Attempt)|uint64(wk.hop)<<56|1<<62) < b.errRate {
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
		if len(b.calls) > 0 {
			if m.startCalls(b, now, w) {
				return // blocking: the worker waits for the calls
			}
			break
		}
		b.ser.AddUseful(wk.start, now)
		if g != nil {
			g.AddUseful(wk.start, now)
		}
		if len(b.fwd) > 0 && m.forward(b, now, wk) {
			break
		}
		m.answer(now, wk.slot, wk.token, outOK, 0)
	}
	m.dispatch(b, now, w)
}

// dispatch gives free worker w its next work: pending rejection work
// first, then the head of the queue; or lets it idle.
func (m *model) dispatch(b *pool, now int64, w uint32) {
	if b.busy > b.limit { // capacity was cut while it worked
		b.idle(w)
		return
	}
	for {
		if b.overhead > 0 {
			b.overhead--
			m.rejectWork(b, now, w)
			return
		}
		if b.queue.n == 0 {
			b.idle(w)
			if b.draining {
				m.drained(b, now)
			}
			return
		}
		b.queueChanged(now)
		var j job
		if b.lifo || b.adaptive && b.queue.n > b.lifoThreshold {
			j = b.queue.popBack()
		} else {
			j = b.queue.pop()
		}
		if j.slot&handshakeFlag != 0 {
			if m.startHandshake(b, now, w, j) {
				return
			}
			continue
		}
		// CoDel (the queue has stood above its target delay for an
		// interval) and the queue timeout reject a request when it
		// reaches a worker.
		if codel := b.codel != nil && b.codel.Drop(now, now-j.at, b.queue.n); codel || b.qtimeout > 0 && now-j.at > b.qtimeout {
			if codel {
				m.brow(b, now).Shed++
			}
			if b.conc != nil {
				m.concSample(b, now, now-j.at, b.outstanding()+1, true)
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
				m.brow(b, now).Cancelled++
				continue
			}
		}
		if j.dl > 0 && now >= j.dl {
			// Its caller's deadline has passed: nobody waits for the
			// answer, and the service knows it.
			m.brow(b, now).DeadlineDropped++
			continue
		}
		if b.cancel && !m.waiting(j.slot, j.token) {
			m.brow(b, now).Cancelled++
			if g := m.bgrow(b, now, j.group); g != nil {
				g.Cancelled++
			}
			continue
		}
		b.waitSum += float64(now - j.at)
		b.waitN++
		m.serve(b, now, w, j.slot, j.token, j.svc, j.group, j.dl, j.hop, j.at, j.id)
		return
	}
}

// timeOutQueued rejects queued job j as a queue timeout; it reports
// whether worker w took the rejection work.
func (m *model) timeOutQueued(b *pool, now int64, w uint32, j job) bool {
	m.brow(b, now).QueueTimeouts++
	if g := m.bgrow(b, now, j.group); g != nil {
		g.QueueTimeouts++
	}
	m.answer(now, j.slot, j.token, outRejected, b.rejectRA)
	if b.rejCost > 0 {
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
