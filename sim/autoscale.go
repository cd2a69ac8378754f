package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Autoscaling (backend.autoscale, a service's autoscale): a service with
// an autoscaler has max_replicas pools from the start; the autoscaler
// keeps some of them running. Callers pick only among the ready ones
// (node.act). A replica is in one of five states:
//
//	stopped      no capacity, no work
//	pending      decided, provisioning: no capacity, no work (yet)
//	warming      ready: takes work with warm_capacity of its workers
//	ready        takes work with all its workers
//	draining     scaled in: takes no new work, finishes what it holds, then stops
//
// A periodic event (evScaleTick, every sample_interval) samples the
// metric on the replicas taking work and, every period, asks the
// decision rule (policy.Autoscaler) for a replica count. A scale-up
// starts stopped pools (or, when there is none, ones still draining:
// the machine is reused, its drain goes on meanwhile) and schedules their
// readiness (evReplicaReady) after the provisioning delay. A scale-in
// cancels pending replicas first, then drains the replicas that became
// ready last. Nothing here runs without an autoscaler: a node without
// one has as == nil and its pool's full capacity never changes.

// Replica states.
const (
	rsStopped uint8 = iota
	rsPending
	rsWarming
	rsReady
	rsDraining
)

// scaler is one service's autoscaler.
type scaler struct {
	pol    *policy.Autoscaler
	metric scenario.AutoscaleMetric
	cfg    scenario.Autoscale

	st  []uint8  // per replica (pool nd.first+i)
	gen []uint32 // per replica: readiness events of an older decision are stale

	si       int64 // sample interval, ns
	every    int   // samples per period
	nWin     int   // samples per window
	ring     []sample
	head, n  int // ring: oldest at head, n held
	ticks    int
	lastWS   []float64 // per replica: waitSum and waitN at the last sample
	lastWN   []int64
	desired  int // the count the autoscaler wants: ready + warming + pending
	ser      *metrics.Series
	lastAcct int64
	accReady int // replicas taking work since lastAcct
	accWant  int // desired since lastAcct
}

// sample is one sample of the metric over the replicas taking work: the
// sum of their values and how many there were (queue_time: the total wait
// of the requests that started service, and how many).
type sample struct {
	num float64
	den float64
}

// initScaler gives node ni (pools reps, the first replicas of them
// running) its autoscaler.
func (m *model) initScaler(ni int, nd *node, a *scenario.Autoscale, replicas int, ser *metrics.Series) error {
	pol, err := policy.NewAutoscaler(a.Policy())
	if err != nil {
		return err
	}
	n := int(nd.n)
	s := &scaler{pol: pol, metric: a.Metric, cfg: *a,
		st: make([]uint8, n), gen: make([]uint32, n), lastWS: make([]float64, n), lastWN: make([]int64, n),
		si: int64(a.SampleInterval), every: int(a.Period / a.SampleInterval), nWin: int(a.Window / a.SampleInterval),
		desired: replicas, accReady: replicas, accWant: replicas, ser: ser}
	s.ring = make([]sample, int((a.Window+a.MetricLag)/a.SampleInterval))
	ser.Autoscaled = true
	nd.act = nd.act[:0]
	for i := range n {
		b := &m.svcs[int(nd.first)+i]
		if i < replicas {
			s.st[i] = rsReady
			nd.act = append(nd.act, uint16(int(nd.first)+i))
			continue
		}
		b.full, b.limit = 0, 0 // before any capacity is accounted
	}
	pol.Start(0, replicas)
	nd.as = s
	return nil
}

// startScalers schedules every autoscaler's first sample.
func (m *model) startScalers() {
	for i := range m.nodes {
		if s := m.nodes[i].as; s != nil {
			m.q.Schedule(m.after(0, s.si), evScaleTick, uint32(i), 0)
		}
	}
}

// onScaleTick samples node ni's metric and, every period, decides.
func (m *model) onScaleTick(now int64, ni uint32) {
	nd := &m.nodes[ni]
	s := nd.as
	m.q.Schedule(m.after(now, s.si), evScaleTick, ni, 0)
	s.take(m, nd)
	// Replicas emptied by an outage while draining stop here (the others
	// stop when their last worker goes idle, in dispatch).
	for i, st := range s.st {
		if st == rsDraining || st == rsPending {
			if b := &m.svcs[int(nd.first)+i]; b.draining {
				m.drained(b, now)
			}
		}
	}
	s.ticks++
	if s.ticks%s.every != 0 {
		return
	}
	pending := 0
	for _, st := range s.st {
		if st == rsPending {
			pending++
		}
	}
	in := policy.Sample{Ready: len(nd.act), Pending: pending}
	var num, den float64
	lag := len(s.ring) - s.nWin // the newest samples a decision cannot see yet
	for k := 0; k < s.n-lag; k++ {
		x := s.ring[(s.head+k)%len(s.ring)]
		num += x.num
		den += x.den
	}
	if den > 0 {
		in.Metric, in.Valid = num/den, true
	}
	want := s.pol.Decide(now, s.desired, in)
	m.scaleTo(now, nd, want)
}

// take appends one sample of the replicas taking work now; the ring keeps
// window + metric_lag of them.
func (s *scaler) take(m *model, nd *node) {
	var x sample
	for _, p := range nd.act {
		b := &m.svcs[p]
		switch s.metric {
		case scenario.MetricUtilization:
			// The share of the workers it runs now (a warming replica
			// runs warm_capacity of them; an outage none).
			if b.limit > 0 {
				x.num += min(1, float64(b.busy)/float64(b.limit))
			}
			x.den++
		case scenario.MetricConcurrency:
			x.num += float64(b.outstanding())
			x.den++
		}
	}
	if s.metric == scenario.MetricQueueTime {
		for i := range s.st {
			b := &m.svcs[int(nd.first)+i]
			if s.st[i] == rsWarming || s.st[i] == rsReady {
				x.num += (b.waitSum - s.lastWS[i]) / 1e9
				x.den += float64(b.waitN - s.lastWN[i])
			}
			s.lastWS[i], s.lastWN[i] = b.waitSum, b.waitN
		}
	}
	if s.n == len(s.ring) {
		s.head = (s.head + 1) % len(s.ring)
		s.n--
	}
	s.ring[(s.head+s.n)%len(s.ring)] = x
	s.n++
}

// scaleTo makes node nd's desired replica count want.
func (m *model) scaleTo(now int64, nd *node, want int) {
	s := nd.as
	if want == s.desired {
		return
	}
	m.accountReplicas(now, nd)
	defer m.accountReplicas(now, nd)
	for ; s.desired < want; s.desired++ {
		i := s.find(rsStopped)
		if i < 0 {
			i = s.find(rsDraining)
		}
		if i < 0 {
			break // cannot happen: desired < max_replicas leaves a pool
		}
		s.st[i] = rsPending
		s.gen[i]++
		m.q.Schedule(m.after(now, int64(s.cfg.Provisioning)), evReplicaReady, uint32(int(nd.first)+i), s.gen[i]<<1)
	}
	for ; s.desired > want; s.desired-- {
		if i := s.findLast(rsPending); i >= 0 {
			s.gen[i]++ // its readiness event is stale now
			s.st[i] = rsStopped
			if m.svcs[int(nd.first)+i].draining {
				s.st[i] = rsDraining
			}
			continue
		}
		// The replica that became ready last stops taking work.
		p := nd.act[len(nd.act)-1]
		nd.act = nd.act[:len(nd.act)-1]
		i := int(p) - int(nd.first)
		s.st[i] = rsDraining
		b := &m.svcs[p]
		b.draining = true
		if m.cn.rep != nil && b.fleet {
			m.closeConns(now, b) // its clients reconnect to the others, by their reconnect policy
		}
		m.drained(b, now)
	}
}

func (s *scaler) find(st uint8) int {
	for i, x := range s.st {
		if x == st {
			return i
		}
	}
	return -1
}

func (s *scaler) findLast(st uint8) int {
	for i := len(s.st) - 1; i >= 0; i-- {
		if s.st[i] == st {
			return i
		}
	}
	return -1
}

// onReplicaReady: pool p's provisioning (aux bit 0 clear) or warm-up (bit
// 0 set) is over, unless a later decision made the event stale.
func (m *model) onReplicaReady(now int64, p uint32, aux uint32) {
	b := &m.svcs[p]
	nd := &m.nodes[b.node]
	s := nd.as
	i := int(p) - int(nd.first)
	if s.gen[i] != aux>>1 {
		return
	}
	if aux&1 != 0 {
		if s.st[i] == rsWarming {
			s.st[i] = rsReady
			m.setFull(b, now, len(b.workers))
		}
		return
	}
	if s.st[i] != rsPending {
		return
	}
	m.accountReplicas(now, nd)
	b.draining = false
	full := len(b.workers)
	s.st[i] = rsReady
	if s.cfg.Warmup > 0 {
		s.st[i] = rsWarming
		full = max(1, int(math.Round(float64(full)*s.cfg.WarmCapacity)))
		m.q.Schedule(m.after(now, int64(s.cfg.Warmup)), evReplicaReady, p, s.gen[i]<<1|1)
	}
	m.setFull(b, now, full)
	nd.act = append(nd.act, uint16(p))
	m.accountReplicas(now, nd)
}

// drained stops draining pool b once it holds no work.
func (m *model) drained(b *pool, now int64) {
	if b.busy > 0 || b.queue.n > 0 || b.adm.Overhead > 0 {
		return
	}
	b.draining = false
	nd := &m.nodes[b.node]
	if i := int(b.idx) - int(nd.first); nd.as.st[i] == rsDraining {
		nd.as.st[i] = rsStopped
	}
	m.setFull(b, now, 0)
}

// setFull sets the workers pool b runs outside faults to n, and lets
// them take queued work.
func (m *model) setFull(b *pool, now int64, n int) {
	b.full = n
	if l := b.effLimit(); l != b.limit {
		b.capacityChanged(now, l)
	}
	for b.busy < b.limit && (b.queue.n > 0 || b.adm.Overhead > 0) {
		m.dispatch(b, now, b.takeWorker())
	}
}

// accountReplicas accounts node nd's replica counts up to now, then
// takes the counts that hold from now on: call it before and after a
// change.
func (m *model) accountReplicas(now int64, nd *node) {
	s := nd.as
	if now > s.lastAcct {
		s.ser.AddReplicas(s.lastAcct, now, int64(s.accReady), int64(s.accWant))
		s.lastAcct = now
	}
	s.accReady, s.accWant = len(nd.act), s.desired
}

// finishScalers accounts every autoscaler's counts up to stop.
func (m *model) finishScalers(stop int64) {
	for i := range m.nodes {
		if nd := &m.nodes[i]; nd.as != nil {
			m.accountReplicas(stop, nd)
		}
	}
}
