package sim

import (
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// conns is the clients' side of persistent connections; without
// clients.connection, on is false and the slices are nil.
type conns struct {
	on        bool
	state     []uint8
	rep       []uint16 // the replica (pool) each client's connection is with or goes to; nil with one replica (m.be)
	fail      []uint16 // consecutive failed connection attempts
	seq       []uint32 // changes on every connection state change: stale events
	prev      []int64  // previous reconnect wait (decorrelated jitter only)
	connected int      // clients connected (as the clients see it)
	timeout   int64
	rc        policy.Reconnect
	// reconnect tracking: when 99% of the fleet is connected again after the
	// last connection-closing fault
	faultEnd       int64
	reconnected    int64 // ns after faultEnd until 99% were connected, or -1
	reconnectedAll int64 // ... until all were, or -1
}

// Connection states of a client.
const (
	csIdle       uint8 = iota // not started yet, or no connection model
	csWaiting                 // disconnected, a connection attempt is scheduled
	csConnecting              // handshake in flight
	csConnected
)

func (cn *conns) init(sc *scenario.Scenario) error {
	c := sc.Clients.Connection
	if c == nil {
		return nil
	}
	rc, err := buildReconnect(c.Reconnect)
	if err != nil {
		return err
	}
	n := sc.Clients.Count
	cn.on = true
	cn.state = make([]uint8, n)
	cn.fail = make([]uint16, n)
	cn.seq = make([]uint32, n)
	cn.timeout = int64(c.ConnectTimeout)
	cn.rc = rc
	if rc.Backoff.Jitter == policy.Decorrelated {
		cn.prev = make([]int64, n)
	}
	cn.reconnected, cn.reconnectedAll = -1, -1
	for _, f := range sc.Faults {
		if f.Kind == scenario.FaultOutage || f.Kind == scenario.FaultDisconnect {
			cn.faultEnd = max(cn.faultEnd, int64(f.End()))
		}
	}
	return nil
}

// Persistent connections (clients.connection): a client sends requests
// only while connected. Losing the connection (an outage, a disconnect
// fault) starts the reconnect policy; each connection attempt is a
// handshake that costs the backend worker time (connect_cost) and may be
// refused, rejected, lost or timed out, after which the client waits and
// tries again.

// With a network (scenario.Network) the handshake crosses it both ways:
// the client's hello reaches the backend after one delay (evConnArrive),
// and the backend's answer (evConnOK, evConnRefused) reaches the client
// after another. Each is drawn from the client's network stream at its
// connection sequence number, apart from the requests' draws.

// connect starts a connection attempt of client c.
func (m *model) connect(now int64, c uint32) {
	m.cn.state[c] = csConnecting
	m.cn.seq[c]++
	seq := m.cn.seq[c]
	if m.cn.rep != nil {
		m.cn.rep[c] = m.connTarget(c, seq)
	}
	m.mt.row(now).ConnectAttempts++
	if m.net.on {
		m.q.Schedule(m.after(now, m.connDelay(c, seq, 0)), evConnArrive, c, seq)
	} else {
		m.connectArrive(now, c, seq)
	}
	if m.cn.state[c] == csConnecting && m.cn.seq[c] == seq {
		m.q.Schedule(m.after(now, m.cn.timeout), evConnectTimeout, c, seq)
	}
}

// connDelay is the one-way delay of client c's handshake seq: its hello
// (dir 0) or the answer (dir 1).
func (m *model) connDelay(c, seq uint32, dir uint64) int64 {
	return m.delay(c, 1<<62|uint64(seq)<<1|dir)
}

// connRefused tells client c that handshake seq failed: at once, or after
// the answer's delay with a network. It counts as a failed connection
// attempt when the client gets it while still waiting (one that gave up
// first has counted as a connect timeout).
func (m *model) connRefused(now int64, c, seq uint32) {
	if m.net.on {
		m.q.Schedule(m.after(now, m.connDelay(c, seq, 1)), evConnRefused, c, seq)
		return
	}
	if m.cn.state[c] == csConnecting && m.cn.seq[c] == seq {
		m.mt.row(now).ConnectsFailed++
		m.connectFailed(now, c)
	}
}

// connAnswered is an answer to handshake seq reaching client c over the
// network. A success the client still waits for connects it; the work of
// one it gave up on (its connect timeout came first) is wasted.
func (m *model) connAnswered(now int64, c, seq uint32, ok bool) {
	waiting := m.cn.state[c] == csConnecting && m.cn.seq[c] == seq
	if !ok {
		if waiting {
			m.mt.row(now).ConnectsFailed++
			m.connectFailed(now, c)
		}
		return
	}
	done := now - m.connDelay(c, seq, 1) // the same draw as when it was sent
	b := m.cpool(c)
	if !waiting || b.lastOutage > done {
		// Given up, or an outage started while the answer travelled (it
		// may be over by now): the outage closed the new connection, and
		// the client tries again.
		b.held--
		b.ser.AddHandshakeWasted(done-b.connCost, done)
		if waiting {
			m.mt.row(now).ConnectsFailed++
			m.connectFailed(now, c)
		}
		return
	}
	b.ser.AddHandshakeUseful(done-b.connCost, done)
	m.connected1(now, c)
}

// connectArrive is the backend receiving a handshake.
func (m *model) connectArrive(now int64, c, seq uint32) {
	row := m.mt.row(now)
	b := m.cpool(c)
	if b.down {
		if !b.blackhole {
			m.connRefused(now, c, seq)
		}
		return
	}
	row.ConnectsRcvd++
	if b.connLimit > 0 && b.held >= b.connLimit || b.draining {
		m.refuseConnect(now, c, seq)
		return
	}
	if b.busy < b.limit {
		w := b.takeWorker()
		m.handshakeOn(b, now, w, c, seq)
		return
	}
	if b.queue.n < b.adm.QueueLimit() {
		b.queueChanged(now)
		b.queue.push(job{slot: c | handshakeFlag, token: seq, at: now, svc: b.connCost})
		return
	}
	m.refuseConnect(now, c, seq)
}

// refuseConnect rejects a handshake (connection limit, or no room), at the
// price of a rejection; with the accept backlog full it goes unanswered and
// the client times out.
func (m *model) refuseConnect(now int64, c, seq uint32) {
	row := m.mt.row(now)
	if b := m.cpool(c); !m.rejected(b, now, b.adm.Refuse(b.load())) {
		row.ConnectsUnanswered++
		return
	}
	m.connRefused(now, c, seq)
}

func (m *model) handshakeOn(b *pool, now int64, w, c, seq uint32) {
	wk := &b.workers[w]
	wk.start, wk.slot, wk.token, wk.kind = now, c, seq, wkHandshake
	m.q.Schedule(m.after(now, b.connCost), evWorkerDone, w, wk.gen|uint32(b.idx)<<24)
}

// startHandshake gives a queued handshake to worker w; false when the job
// was skipped (its client has given up and cancel_timed_out is set).
func (m *model) startHandshake(b *pool, now int64, w uint32, j job) bool {
	c := j.slot &^ handshakeFlag
	if b.cancel && !(m.cn.state[c] == csConnecting && m.cn.seq[c] == j.token) {
		return false // skipped: its client gave up (already counted as a connect timeout)
	}
	m.handshakeOn(b, now, w, c, j.token)
	return true
}

// handshakeDone is the backend finishing a handshake that started at start.
func (m *model) handshakeDone(b *pool, now int64, c, seq uint32, start int64) {
	if m.cn.state[c] != csConnecting || m.cn.seq[c] != seq {
		b.ser.AddHandshakeWasted(start, now) // the client gave up: wasted
		return
	}
	if b.connLimit > 0 && b.held >= b.connLimit || b.draining {
		// Full, or scaled in while the handshake waited: refused.
		b.ser.AddHandshakeWasted(start, now)
		m.connRefused(now, c, seq)
		return
	}
	b.held++
	if m.net.on { // the client learns when the answer arrives (connAnswered)
		m.q.Schedule(m.after(now, m.connDelay(c, seq, 1)), evConnOK, c, seq)
		return
	}
	b.ser.AddHandshakeUseful(start, now)
	m.connected1(now, c)
}

// connected1 is client c connected: it may send again.
func (m *model) connected1(now int64, c uint32) {
	m.mt.row(now).ConnectsOK++
	m.cn.state[c] = csConnected
	m.cn.seq[c]++
	m.cn.fail[c] = 0
	if m.cn.prev != nil {
		m.cn.prev[c] = 0
	}
	m.cn.connected++
	m.checkReconnected(now)
	if m.cl.once && m.cl.ord[c] == 0 {
		m.q.Schedule(now, evArrival, c, 0) // its one request, now that it can send it
	}
}

// handshakeLost: an outage killed the handshake of client c.
func (m *model) handshakeLost(b *pool, now int64, c, seq uint32) {
	if b.blackhole || m.cn.state[c] != csConnecting || m.cn.seq[c] != seq {
		return // blackhole: the client times out
	}
	m.connRefused(now, c, seq)
}

// connectFailed schedules the next attempt after a failed one.
func (m *model) connectFailed(now int64, c uint32) {
	m.cn.state[c] = csWaiting
	m.cn.seq[c]++
	if m.cn.fail[c] < 1<<16-1 {
		m.cn.fail[c]++
	}
	var prev int64
	if m.cn.prev != nil {
		prev = m.cn.prev[c]
	}
	u, uw := m.reconnectDraws(c)
	d := max(m.cn.rc.AfterFailure(int(m.cn.fail[c]), prev, u, uw), minReconnectWait)
	if m.cn.prev != nil {
		m.cn.prev[c] = d
	}
	m.q.Schedule(m.after(now, d), evConnect, c, m.cn.seq[c])
}

// minReconnectWait is the shortest wait between two connection attempts of
// one client: a wait of 0 (a jittered backoff that draws 0, say) against a
// refusing backend would otherwise loop at one instant forever.
const minReconnectWait = int64(1e6) // 1 ms

// reconnectDraws are the backoff-jitter and jitter-window draws for client
// c's next wait, named by its connection sequence number (which grows with
// every state change).
func (m *model) reconnectDraws(c uint32) (u, uw float64) {
	key := m.src.Key(rng.Reconnect, uint64(c))
	n := uint64(m.cn.seq[c])
	return rng.Float64(key, n), rng.Float64(key, n|1<<63)
}

// disconnect closes client c's connection and schedules the first
// reconnect attempt.
func (m *model) disconnect(now int64, c uint32) {
	m.cn.connected--
	m.cpool(c).held--
	m.cn.state[c] = csWaiting
	m.cn.seq[c]++
	m.cn.fail[c] = 0
	if m.cn.prev != nil {
		m.cn.prev[c] = 0
	}
	_, uw := m.reconnectDraws(c)
	m.mt.row(now).Disconnects++
	m.q.Schedule(m.after(now, m.cn.rc.First(uw)), evConnect, c, m.cn.seq[c])
}

// disconnectFault closes each connection with probability f.Fraction.
func (m *model) disconnectFault(now int64, f scenario.Fault) {
	key := m.src.Key(rng.Fault, uint64(f.Start))
	for c := range m.cn.state {
		if m.cn.state[c] == csConnected && rng.Float64(key, uint64(c)) < f.Fraction {
			m.disconnect(now, uint32(c))
		}
	}
}

// checkReconnected records when 99% and when all of the fleet are
// connected again after the last connection-closing fault.
func (m *model) checkReconnected(now int64) {
	if !m.cn.on || m.cn.reconnectedAll >= 0 || now < m.cn.faultEnd || m.cn.faultEnd == 0 {
		return
	}
	if m.cn.reconnected < 0 && m.cn.connected*100 >= 99*len(m.cn.state) {
		m.cn.reconnected = now - m.cn.faultEnd
	}
	if m.cn.connected == len(m.cn.state) {
		m.cn.reconnectedAll = now - m.cn.faultEnd
	}
}

// initConnReplicas: with clients.connection and an entry service of
// several replicas, each client's connection is with one replica, chosen
// when it connects (connTarget); its requests go there, and an outage or a
// scale-in of that replica closes it.
func (m *model) initConnReplicas() {
	if !m.cn.on || m.nodes[m.entry].n == 1 {
		return
	}
	m.cn.rep = make([]uint16, len(m.cn.state))
	for c := range m.cn.rep {
		m.cn.rep[c] = m.be.idx
	}
}

// cpool is the replica client c's connection is with, or is being set up
// with.
func (m *model) cpool(c uint32) *pool {
	if m.cn.rep == nil {
		return m.be
	}
	return &m.svcs[m.cn.rep[c]]
}

// connTarget is the replica that connection attempt seq of client c goes
// to, among those taking work, by the entry service's balancing policy
// applied to connections held (as an L4 balancer would): in turn (round
// robin), the fewest (least outstanding), one at random (random), or the
// fewer of two random picks (p2c, peak EWMA).
func (m *model) connTarget(c, seq uint32) uint16 {
	nd := &m.nodes[m.entry]
	key := m.src.Key(rng.Route, uint64(c)|1<<37)
	return uint16(m.balance(nd, nd.act, len(nd.act), 0, byHeld, key, uint64(seq)<<1))
}

// closeConns closes every connection held with replica b (an outage, a
// scale-in); without per-replica connections, every connection.
func (m *model) closeConns(now int64, b *pool) {
	for c := range m.cn.state {
		if m.cn.state[c] == csConnected && (m.cn.rep == nil || m.cn.rep[c] == b.idx) {
			m.disconnect(now, uint32(c))
		}
	}
}
