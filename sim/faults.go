package sim

import (
	"sort"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// scheduleFaults puts the start and end of every fault that starts at 0
// (atZero) or later (!atZero) on the calendar, in time order whatever the
// file's order: at an instant where one fault ends and the next starts,
// the end is scheduled first and so runs first (faults do not overlap).
func (m *model) scheduleFaults(atZero bool) {
	order := make([]int, len(m.sc.Faults))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.sc.Faults[order[a]].Start < m.sc.Faults[order[b]].Start })
	for _, i := range order {
		f := m.sc.Faults[i]
		if (f.Start == 0) != atZero {
			continue
		}
		m.q.Schedule(int64(f.Start), evFaultStart, uint32(i), 0)
		if f.Duration > 0 {
			m.q.Schedule(int64(f.End()), evFaultEnd, uint32(i), 0)
		}
	}
}

// faultPools are the replicas fault f hits: every replica of its
// service, or the one it names.
func (m *model) faultPools(f scenario.Fault) []pool {
	nd := m.nodes[m.sc.FaultService(f)]
	reps := m.svcs[nd.first : nd.first+nd.n]
	if f.Replica != nil {
		return reps[*f.Replica : *f.Replica+1]
	}
	return reps
}

func (m *model) onFaultStart(now int64, f scenario.Fault) {
	reps := m.faultPools(f)
	for i := range reps {
		m.faultStart(now, f, &reps[i])
	}
}

func (m *model) faultStart(now int64, f scenario.Fault, b *pool) {
	switch f.Kind {
	case scenario.FaultOutage:
		b.down, b.blackhole, b.faultRA = true, f.Mode == scenario.OutageBlackhole, int64(f.RetryAfter)
		b.lastOutage = now
		b.capacityChanged(now, 0)
		// The server dies: work in progress and queued work are lost. With
		// "refuse" the clients see their connections reset (unavailable);
		// with "blackhole" they hear nothing and time out.
		for w := range b.workers {
			wk := &b.workers[w]
			if wk.busy {
				switch wk.kind {
				case wkServe, wkWait:
					m.bwork(b, wk.group, wk.start, now, false)
					m.lost(b, now, wk.slot, wk.token, wk.group)
				case wkReject:
					b.ser.AddWasted(wk.start, now)
				case wkHandshake:
					b.ser.AddHandshakeWasted(wk.start, now)
					m.handshakeLost(b, now, wk.slot, wk.token)
				}
			}
			wk.gen = (wk.gen + 1) & genMask
			wk.busy = false
		}
		b.queueChanged(now)
		for b.queue.n > 0 {
			j := b.queue.pop()
			if j.slot&handshakeFlag != 0 {
				m.handshakeLost(b, now, j.slot&^handshakeFlag, j.token)
				continue
			}
			m.lost(b, now, j.slot, j.token, j.group)
		}
		m.killFrames(b, now)
		b.adm.Overhead = 0
		b.busy = 0
		b.freeW = b.freeW[:0]
		for i := len(b.workers) - 1; i >= 0; i-- {
			b.freeW = append(b.freeW, uint32(i))
		}
		if m.cn.on {
			// Its connections close; clients notice at once.
			m.closeConns(now, b)
		}
	case scenario.FaultCapacity:
		b.capFault, b.capFrac = true, f.Fraction
		b.capacityChanged(now, b.effLimit())
	case scenario.FaultDisconnect:
		m.disconnectFault(now, f)
	case scenario.FaultSlowdown:
		b.slowOn, b.slowStart, b.slowFactor = true, f.AppliesTo != scenario.SlowArrival, f.Factor
		b.setAdjust()
		if f.ServiceTime != nil {
			b.slow = newSampler(*f.ServiceTime)
		}
	}
}

// lost is an attempt whose work an outage of b destroyed.
func (m *model) lost(b *pool, now int64, slot, tok uint32, group uint8) {
	b.rows.add(b, now, group, lostOutage)
	if !b.blackhole {
		m.answer(now, slot, tok, outUnavailable, b.faultRA)
	}
}

func (m *model) onFaultEnd(now int64, f scenario.Fault) {
	reps := m.faultPools(f)
	for i := range reps {
		m.faultEnd(now, f, &reps[i])
	}
}

func (m *model) faultEnd(now int64, f scenario.Fault, b *pool) {
	if f.Kind == scenario.FaultOutage {
		b.down, b.blackhole, b.faultRA = false, false, 0
	}
	if f.Kind == scenario.FaultSlowdown {
		b.slowOn = false
		b.setAdjust()
	}
	b.capFault = false
	m.checkReconnected(now)
	b.capacityChanged(now, b.effLimit())
	for b.busy < b.limit && (b.queue.n > 0 || b.adm.Overhead > 0) {
		m.dispatch(b, now, b.takeWorker())
	}
}
