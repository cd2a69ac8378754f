package sim

import (
	"math"

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
	nextRow  int64 // start of the row after the one being filled
	rowIdx   int
	gser     []*metrics.Series // per-group counters (more than one group)
	sink     metrics.Row       // where group counts go when the fleet is one group
	lastOK   int64             // when the latest success completed
	anyOK    bool
	latSum   float64 // of the successes' latencies, ns
	latN     int64
	fp       uint64 // trajectory fingerprint
	arrHash  uint64 // order-independent hash of every (client, arrival time)
	events   uint64
	arrivals uint64
}

func (mt *meter) init(sc *scenario.Scenario, groups int) {
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
// histogram of earlier rows.
func (mt *meter) row(t int64) *metrics.Row {
	if t < mt.rowEnd && t >= mt.rowStart { // the common case: no division
		return &mt.ser.Rows[mt.histRow]
	}
	i := mt.ser.Index(t)
	if i != mt.histRow {
		mt.flushHist(i)
	}
	mt.rowStart = int64(i) * mt.ser.Interval
	mt.rowEnd = mt.rowStart + mt.ser.Interval
	if i == len(mt.ser.Rows)-1 {
		mt.rowEnd = math.MaxInt64
	}
	return &mt.ser.Rows[i]
}

// flushHist writes the open latency histogram's quantiles into its row
// and opens row next's.
func (mt *meter) flushHist(next int) {
	if mt.histRow < len(mt.ser.Rows) {
		r := &mt.ser.Rows[mt.histRow]
		r.LatencyP50, r.LatencyP99 = math.NaN(), math.NaN()
		if v, ok := mt.hist.Quantile(0.5); ok {
			r.LatencyP50 = v
		}
		if v, ok := mt.hist.Quantile(0.99); ok {
			r.LatencyP99 = v
		}
		// Rows skipped without any completion get NaN too.
		for i := mt.histRow + 1; i < next && i < len(mt.ser.Rows); i++ {
			mt.ser.Rows[i].LatencyP50, mt.ser.Rows[i].LatencyP99 = math.NaN(), math.NaN()
		}
	}
	mt.hist.Reset()
	mt.histRow = next
}

// success records a request that succeeded at now after latency lat.
func (mt *meter) success(now, lat int64) {
	mt.lastOK, mt.anyOK = now, true
	mt.latSum += float64(lat)
	mt.latN++
	mt.hist.Add(lat)
	mt.all.Add(lat)
}

// growG is group g's metrics row at time t, or nil when the fleet is one
// group.
func (mt *meter) growG(t int64, g uint8) *metrics.Row {
	if mt.gser == nil {
		return nil
	}
	s := mt.gser[g]
	return &s.Rows[s.Index(t)]
}

// gseries is group g's series, or nil when the fleet is one group.
func (mt *meter) gseries(g uint8) *metrics.Series {
	if mt.gser == nil {
		return nil
	}
	return mt.gser[g]
}

// rows are the fleet's metrics row at now and group grp's (a scratch row
// when the fleet is one group).
func (mt *meter) rows(now int64, grp uint8) (row, g *metrics.Row) {
	row, g = mt.row(now), mt.growG(now, grp)
	if g == nil {
		g = &mt.sink
	}
	return row, g
}

// grow is the per-group metrics row of client c at time t (a scratch row
// when the fleet is one group).
func (m *model) grow(t int64, c uint32) *metrics.Row {
	if m.mt.gser == nil {
		return &m.mt.sink
	}
	s := m.mt.gser[m.cl.cgroup[c]]
	return &s.Rows[s.Index(t)]
}

// count adds one to the counter that field picks in the fleet's row at
// now and, when the fleet has client groups, in client c's group row.
func (m *model) count(now int64, c uint32, field func(*metrics.Row) *int64) {
	*field(m.mt.row(now))++
	if m.mt.gser != nil {
		*field(m.grow(now, c))++
	}
}

// Counter selectors for count.
func offered(r *metrics.Row) *int64          { return &r.Offered }
func succeeded(r *metrics.Row) *int64        { return &r.Succeeded }
func failed(r *metrics.Row) *int64           { return &r.Failed }
func retries(r *metrics.Row) *int64          { return &r.Retries }
func attempts(r *metrics.Row) *int64         { return &r.Attempts }
func dropNoConn(r *metrics.Row) *int64       { return &r.DropNoConn }
func dropThrottle(r *metrics.Row) *int64     { return &r.DropThrottle }
func dropBreaker(r *metrics.Row) *int64      { return &r.DropBreaker }
func paced(r *metrics.Row) *int64            { return &r.Paced }
func budgetRefused(r *metrics.Row) *int64    { return &r.BudgetRefused }
func deadlineExceeded(r *metrics.Row) *int64 { return &r.DeadlineExceeded }
func timedOut(r *metrics.Row) *int64         { return &r.TimedOut }
func hedges(r *metrics.Row) *int64           { return &r.Hedges }

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
		if b.conc != nil {
			b.ser.AddLimit(b.conc.last, stop, int64(b.conc.cur))
		}
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
