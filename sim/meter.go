package sim

import (
	"math"
	"unsafe"

	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// meter is the measurement of one run: the fleet's per-interval rows
// (client and backend counts), per-group rows when the fleet has several
// client groups, latency histograms, the trajectory fingerprint and the
// arrival hash.
type meter struct {
	ser      *metrics.Series
	hist     metrics.Histogram // current interval
	all      metrics.Histogram
	histRow  int   // the row whose latency histogram is open
	rowStart int64 // [rowStart, rowEnd) is histRow's time span, once known
	rowEnd   int64
	cur      unsafe.Pointer // &ser.Rows[histRow], valid in [rowStart, rowEnd) (a counter's offset is added to it)
	soloLen  uint64         // rowEnd − rowStart when solo, else 0: count's and countR's fast path
	nextRow  int64          // start of the row after the one being filled
	rowIdx   int
	gser     []*metrics.Series // per-group counters (more than one group)
	cgroup   []uint8           // client → group (more than one group): fleet.cgroup
	solo     bool              // one group and no calls between services: count's fast path applies
	lastOK   int64             // when the latest success completed
	anyOK    bool
	latSum   float64 // of the successes' latencies, ns
	latN     int64
	fp       uint64 // trajectory fingerprint
	arrHash  uint64 // order-independent hash of every (client, arrival time)
	events   uint64
	arrivals uint64
}

func (mt *meter) init(sc *scenario.Scenario, groups int, cgroup []uint8) {
	mt.cgroup = cgroup
	iv, n := int64(sc.Metrics.Interval), sc.Intervals()
	if groups > 1 {
		for range groups {
			mt.gser = append(mt.gser, metrics.NewSeries(iv, n))
		}
	}
	mt.ser = metrics.NewSeries(iv, n)
	mt.nextRow = iv
	mt.fp = 0xcbf29ce484222325
}

// row returns the fleet's metrics row of time t and closes the latency
// histogram of earlier rows. The common case, t in the row of the latest
// call, is small enough to be inlined.
func (mt *meter) row(t int64) *metrics.Row {
	if t < mt.rowEnd && t >= mt.rowStart {
		return (*metrics.Row)(mt.cur)
	}
	return mt.rowAt(t)
}

// rowAt is row when t is outside the row of the latest call.
func (mt *meter) rowAt(t int64) *metrics.Row {
	i := mt.ser.Index(t)
	if i != mt.histRow {
		mt.flushHist(i)
	}
	mt.rowStart = int64(i) * mt.ser.Interval
	mt.rowEnd = mt.rowStart + mt.ser.Interval
	if i == len(mt.ser.Rows)-1 {
		mt.rowEnd = math.MaxInt64
	}
	mt.cur = unsafe.Pointer(&mt.ser.Rows[i])
	if mt.solo {
		mt.soloLen = uint64(mt.rowEnd - mt.rowStart)
	}
	return &mt.ser.Rows[i]
}

// flushHist writes the open latency histogram's quantiles into its row
// and opens row next's.
func (mt *meter) flushHist(next int) {
	if mt.histRow < len(mt.ser.Rows) {
		r := &mt.ser.Rows[mt.histRow]
		r.SetLatency(&mt.hist)
		// Rows skipped without any completion get NaN too.
		for i := mt.histRow + 1; i < next && i < len(mt.ser.Rows); i++ {
			mt.ser.Rows[i].SetLatency(nil)
		}
	}
	mt.hist.Reset()
	mt.histRow = next
	mt.cur = nil // row's fast path returns the row of histRow
	if next < len(mt.ser.Rows) {
		mt.cur = unsafe.Pointer(&mt.ser.Rows[next])
	}
}

// success records a request that succeeded at now after latency lat.
func (mt *meter) success(now, lat int64) {
	mt.lastOK, mt.anyOK = now, true
	mt.latSum += float64(lat)
	mt.latN++
	mt.hist.Add(lat)
	mt.all.Add(lat)
}

// gseries is group g's series, or nil when the fleet is one group.
func (mt *meter) gseries(g uint8) *metrics.Series {
	if mt.gser == nil {
		return nil
	}
	return mt.gser[g]
}

// count adds one to counter f in the fleet's row at now and, when the
// fleet has client groups, in client c's group row. Its common case (one
// group, now in the row of the latest call) is inlined into the caller.
func (mt *meter) count(now int64, c uint32, f counter) {
	if uint64(now-mt.rowStart) < mt.soloLen { // rowStart ≤ now < rowEnd, solo
		*(*int64)(unsafe.Add(mt.cur, f))++
	} else {
		mt.countAt(now, c, f)
	}
}

// countAt is count's general case.
func (mt *meter) countAt(now int64, c uint32, f counter) {
	*f.in(mt.row(now))++
	if mt.gser != nil {
		s := mt.gser[mt.cgroup[c]]
		*f.in(&s.Rows[s.Index(now)])++
	}
}

// counter names a counter of metrics.Row by its offset in the row. A
// selector function would do the same, but its indirect call keeps count
// and countR from being inlined, and R1 counts several times per request
// (docs/performance.md).
type counter uintptr

// in is counter f of row r.
func (f counter) in(r *metrics.Row) *int64 {
	return (*int64)(unsafe.Add(unsafe.Pointer(r), f))
}

// The counters that count and countR add to.
const (
	offered          = counter(unsafe.Offsetof(metrics.Row{}.Offered))
	succeeded        = counter(unsafe.Offsetof(metrics.Row{}.Succeeded))
	failed           = counter(unsafe.Offsetof(metrics.Row{}.Failed))
	retries          = counter(unsafe.Offsetof(metrics.Row{}.Retries))
	attempts         = counter(unsafe.Offsetof(metrics.Row{}.Attempts))
	dropNoConn       = counter(unsafe.Offsetof(metrics.Row{}.DropNoConn))
	dropThrottle     = counter(unsafe.Offsetof(metrics.Row{}.DropThrottle))
	dropBreaker      = counter(unsafe.Offsetof(metrics.Row{}.DropBreaker))
	paced            = counter(unsafe.Offsetof(metrics.Row{}.Paced))
	budgetRefused    = counter(unsafe.Offsetof(metrics.Row{}.BudgetRefused))
	deadlineExceeded = counter(unsafe.Offsetof(metrics.Row{}.DeadlineExceeded))
	timedOut         = counter(unsafe.Offsetof(metrics.Row{}.TimedOut))
	hedges           = counter(unsafe.Offsetof(metrics.Row{}.Hedges))
)

// closeRows records the end-of-interval samples of every row that ends at
// or before t.
func (m *model) closeRows(t int64) {
	mt := &m.mt
	for mt.nextRow <= t && mt.rowIdx < len(mt.ser.Rows) {
		mt.ser.Rows[mt.rowIdx].Connected = int64(m.cn.connected)
		mt.rowIdx++
		mt.nextRow += mt.ser.Interval
	}
}

// finish closes the measurement at time stop.
func (m *model) finish(stop int64) {
	m.closeRows(stop)
	m.finishScalers(stop)
	for i := range m.svcs {
		b := &m.svcs[i]
		b.queueChanged(stop)
		b.capacityChanged(stop, b.limit)
		b.adm.Finish(stop)
	}
	for i := range m.nodes {
		if g := m.nodes[i].g; g != nil {
			g.account(stop)
		}
	}
	// Work still in progress counts up to the horizon, as wasted or useful
	// cannot be known yet: it is left out of both (and of utilisation's
	// numerator), which the docs state.
	m.mt.flushHist(m.mt.ser.Index(stop-1) + 1)
	if stop < m.end {
		m.mt.ser.Rows = m.mt.ser.Rows[:m.mt.ser.Index(stop-1)+1]
	}
}

// mixFP folds event e into the trajectory fingerprint.
func (mt *meter) mixFP(e engine.Event) {
	const prime = 0x100000001b3
	h := mt.fp
	h = (h ^ uint64(e.At)) * prime
	h = (h ^ (uint64(e.Kind())<<32 | uint64(e.ID))) * prime
	h = (h ^ uint64(e.Aux)) * prime
	mt.fp = h
}

// rowCursor finds a series' row for a time, remembering the last one so
// that most look-ups need no division.
type rowCursor struct {
	start, end int64
	i          int
}

func (c *rowCursor) row(s *metrics.Series, t int64) *metrics.Row {
	if t >= c.end || t < c.start {
		c.i = s.Index(t)
		c.start = int64(c.i) * s.Interval
		c.end = c.start + s.Interval
		if c.i == len(s.Rows)-1 {
			c.end = math.MaxInt64
		}
	}
	return &s.Rows[c.i]
}
