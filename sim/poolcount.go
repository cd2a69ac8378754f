package sim

import (
	"unsafe"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// The counters a service counts into (meter.add), beside the client-side
// ones of meter.go.
const (
	received        = counter(unsafe.Offsetof(metrics.Row{}.Received))
	accepted        = counter(unsafe.Offsetof(metrics.Row{}.Accepted))
	rejected        = counter(unsafe.Offsetof(metrics.Row{}.Rejected))
	unanswered      = counter(unsafe.Offsetof(metrics.Row{}.Unanswered))
	shed            = counter(unsafe.Offsetof(metrics.Row{}.Shed))
	degraded        = counter(unsafe.Offsetof(metrics.Row{}.Degraded))
	queueTimeouts   = counter(unsafe.Offsetof(metrics.Row{}.QueueTimeouts))
	failedOutage    = counter(unsafe.Offsetof(metrics.Row{}.FailedOutage))
	lostOutage      = counter(unsafe.Offsetof(metrics.Row{}.LostOutage))
	served          = counter(unsafe.Offsetof(metrics.Row{}.Served))
	errored         = counter(unsafe.Offsetof(metrics.Row{}.Errors))
	cancelled       = counter(unsafe.Offsetof(metrics.Row{}.Cancelled))
	deadlineDropped = counter(unsafe.Offsetof(metrics.Row{}.DeadlineDropped))
)

// add adds one to counter f in pool b's row at now and, when b is the
// entry service and the fleet has client groups, in the row of group grp
// (the client group of the attempt counted); mt is b.rows. Every count a
// service makes goes through it, so a group sees every count of its
// attempts. Its common case (the entry service of a solo fleet, now in
// the row of the latest look-up) is one compare and one add, inlined: it
// is a method of the meter, not of the pool, because one more pointer
// load would put it over the inliner's budget.
func (mt *meter) add(b *pool, now int64, grp uint8, f counter) {
	if uint64(now-mt.rowStart) < mt.soloLen {
		*(*int64)(unsafe.Add(mt.cur, f))++
	} else {
		b.countAt(now, grp, f)
	}
}

// countAt is meter.add's general case.
func (b *pool) countAt(now int64, grp uint8, f counter) {
	if !b.fleet {
		*f.in(b.cur.row(b.ser, now))++
		return
	}
	*f.in(b.rows.row(now))++
	if s := b.rows.gseries(grp); s != nil {
		*f.in(&s.Rows[s.Index(now)])++
	}
}

// noFastPath is the meter of every service but the entry (pool.rows): its
// soloLen is 0, so add takes the general path. Nothing writes it.
var noFastPath meter

// bwork accounts worker time [from, to) of service b spent on an attempt
// of group grp, useful or wasted, into b's series and, when b is the entry
// service and the fleet has client groups, into the group's.
func (m *model) bwork(b *pool, grp uint8, from, to int64, useful bool) {
	var g *metrics.Series
	if b.fleet {
		g = m.mt.gseries(grp)
	}
	if useful {
		b.ser.AddUseful(from, to)
		if g != nil {
			g.AddUseful(from, to)
		}
		return
	}
	b.ser.AddWasted(from, to)
	if g != nil {
		g.AddWasted(from, to)
	}
}
