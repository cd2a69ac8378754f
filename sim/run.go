package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Options tune a run without changing its results.
type Options struct {
	// Seed overrides the scenario's seed when non-nil.
	Seed *uint64
	// Progress, when set, is called now and then with the virtual time
	// reached and the horizon, both in nanoseconds.
	Progress func(now, end int64)
	// Trace, when set, is called with every event before it is handled
	// (for debugging and tests; it slows the run down).
	Trace func(TraceEvent)
	// Started, when set, is called once the model is built and the initial
	// events are scheduled, just before the event loop (benchmarks use it to
	// time set-up and loop apart).
	Started func()
}

// TraceEvent is one event of the trajectory. ID and Aux depend on the kind:
// a client ("arrival", "connect", "connect-timeout"), a request slot and
// attempt token ("retry", "timeout"), a worker and its generation
// ("worker-done"), or a fault index ("fault-start", "fault-end").
type TraceEvent struct {
	At      int64
	Kind    string
	ID, Aux uint32
}

var eventNames = [...]string{
	evArrival: "arrival", evRetry: "retry", evTimeout: "timeout", evWorkerDone: "worker-done",
	evFaultStart: "fault-start", evFaultEnd: "fault-end", evConnect: "connect", evConnectTimeout: "connect-timeout",
	evDeadline: "deadline", evSend: "send", evArrive: "arrive", evAnswer: "answer",
	evConnArrive: "connect-arrive", evConnOK: "connect-ok", evConnRefused: "connect-refused",
}

// Result is the outcome of one run.
type Result struct {
	Scenario    *scenario.Scenario // as resolved, seed included
	Series      *metrics.Series
	Summary     metrics.Summary
	Events      uint64 // events processed
	Arrivals    uint64 // application requests issued
	Fingerprint uint64 // hash over every event's (time, kind, id, aux)
	// ArrivalHash is an order-independent hash over every (client, arrival
	// time): equal across policies, because arrivals never depend on them.
	ArrivalHash uint64
	// Groups, when the scenario has client groups, holds each group's name,
	// series (client-side counts, the backend's counts of its attempts and
	// their service time) and summary.
	Groups []GroupResult
	// Complete is false when the run was interrupted; Series then holds the
	// rows up to StoppedAt.
	Complete  bool
	StoppedAt int64
}

// ErrInterrupted is returned (wrapped) with a partial Result when the
// context is cancelled during a run.
var ErrInterrupted = errors.New("sim: run interrupted")

// Run simulates the scenario, which must be valid (scenario.Load validates;
// a scenario built in code should call Validate first).
func Run(ctx context.Context, sc *scenario.Scenario, opt Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	rs := *sc
	if opt.Seed != nil {
		rs.Seed = *opt.Seed
	}
	m := newModel(&rs, rs.Seed)
	m.start()
	if opt.Started != nil {
		opt.Started()
	}
	stopped, err := m.loop(ctx, opt.Progress, opt.Trace)
	m.finish(stopped)
	res := &Result{
		Scenario:    &rs,
		Series:      m.ser,
		Events:      m.events,
		Arrivals:    m.arrivals,
		Fingerprint: m.fp,
		ArrivalHash: m.arrHash,
		Complete:    err == nil,
		StoppedAt:   stopped,
	}
	res.Summary = metrics.Summarise(m.ser, m.params(), &m.all, m.waitSum, m.waitN)
	if m.anyOK {
		s := float64(m.lastOK) / 1e9
		res.Summary.LastSuccessS = &s
	}
	if m.occ {
		// One row, no workers: the capacity figures do not apply.
		res.Summary.PeakReceivedOverCapacity, res.Summary.Utilisation = nil, nil
		res.Summary.WastedWorkFraction, res.Summary.MeanQueueWaitMS = nil, nil
	}
	for gi, gs := range m.gser {
		if len(m.ser.Rows) < len(gs.Rows) {
			gs.Rows = gs.Rows[:len(m.ser.Rows)]
		}
		t := gs.Totals()
		p := m.pols[gi]
		res.Groups = append(res.Groups, GroupResult{Name: p.name, Series: gs, Summary: GroupSummary{
			Name: p.name, Clients: int(p.n), Offered: t.Offered, Succeeded: t.Succeeded, Failed: t.Failed,
			DropThrottle: t.DropThrottle, DropBreaker: t.DropBreaker, DropNoConn: t.DropNoConn,
			Attempts: t.Attempts, Retries: t.Retries, DeadlineExceeded: t.DeadlineExceeded, BudgetRefused: t.BudgetRefused,
			Received: t.Received, Rejected: t.Rejected + t.QueueTimeouts, Unanswered: t.Unanswered,
			FailedOutage: t.FailedOutage, TimedOut: t.TimedOut, Served: t.Served, Errors: t.Errors,
			WastedWorkFraction: metrics.Ratio(t.WastedNS, t.UsefulNS+t.WastedNS),
			SuccessRatio:       metrics.Ratio(t.Succeeded, t.Offered),
			LocalDropRate:      metrics.Ratio(t.DropThrottle+t.DropBreaker+t.DropNoConn, t.Offered),
			Amplification:      metrics.Ratio(t.Attempts, t.Offered),
		}})
	}
	return res, err
}

// GroupResult is one client group's share of a run.
type GroupResult struct {
	Name    string
	Series  *metrics.Series // client-side counts, backend counts of its attempts, their worker time
	Summary GroupSummary
}

// GroupSummary is a client group's headline figures (summary.json groups).
type GroupSummary struct {
	Name             string `json:"name"`
	Clients          int    `json:"clients"`
	Offered          int64  `json:"offered"`
	Succeeded        int64  `json:"succeeded"`
	Failed           int64  `json:"failed"`
	DropThrottle     int64  `json:"dropped_throttle"`
	DropBreaker      int64  `json:"dropped_breaker"`
	DropNoConn       int64  `json:"dropped_no_connection"`
	Attempts         int64  `json:"attempts"`
	Retries          int64  `json:"retries"`
	DeadlineExceeded int64  `json:"deadline_exceeded"`
	BudgetRefused    int64  `json:"budget_refused"`
	// Backend figures of the group's attempts (rejected includes queue
	// timeouts); wasted_work_fraction covers the service of its attempts,
	// not the rejection work, which the backend does not attribute.
	Received           int64    `json:"backend_received"`
	Rejected           int64    `json:"backend_rejected"`
	Unanswered         int64    `json:"backend_unanswered"`
	FailedOutage       int64    `json:"failed_outage"`
	TimedOut           int64    `json:"timed_out"`
	Served             int64    `json:"served"`
	Errors             int64    `json:"errors"`
	WastedWorkFraction *float64 `json:"wasted_work_fraction"`
	SuccessRatio       *float64 `json:"success_ratio"`
	LocalDropRate      *float64 `json:"local_drop_rate"`
	Amplification      *float64 `json:"amplification"`
}

// SpikeWindow is the load spike of a scenario without faults, which the
// recovery rule measures from (ok is false when there is none).
func SpikeWindow(sc *scenario.Scenario) (start, end int64, ok bool) {
	if len(sc.Faults) > 0 {
		return 0, 0, false
	}
	w, ok := spikeWindow(sc)
	return w.Start, w.End, ok
}

// spikeWindow is the span of the arrival profile where the multiplier is
// above 1 (from the first such step to the first later step back at or
// below 1, or the end of the run).
func spikeWindow(sc *scenario.Scenario) (metrics.Window, bool) {
	steps := sc.Clients.Arrival.Profile
	for i, st := range steps {
		if st.Multiplier <= 1 {
			continue
		}
		end := int64(sc.Duration)
		for _, nx := range steps[i+1:] {
			if nx.Multiplier <= 1 {
				end = int64(nx.At)
				break
			}
		}
		return metrics.Window{Start: int64(st.At), End: end}, true
	}
	return metrics.Window{}, false
}

func (m *model) params() metrics.Params {
	p := metrics.Params{
		Workers:         int64(m.sc.Backend.Workers),
		CapacityRPS:     m.sc.Capacity(),
		RecoveryWindow:  int64(m.sc.Metrics.RecoveryWindow),
		Baseline:        int64(m.sc.Metrics.Baseline),
		RecoverFraction: m.sc.Metrics.RecoverFraction,
		StayFraction:    m.sc.Metrics.StayFraction,
	}
	if w, ok := spikeWindow(m.sc); ok && len(m.sc.Faults) == 0 {
		// Without faults, a load spike is what the service must recover
		// from: the recovery rule measures from its end.
		p.Faults = append(p.Faults, w)
	}
	for _, f := range m.sc.Faults {
		p.Faults = append(p.Faults, metrics.Window{Start: int64(f.Start), End: int64(f.End())})
		if f.Kind == "outage" {
			p.Outages = append(p.Outages, metrics.Window{Start: int64(f.Start), End: int64(f.End())})
		}
	}
	if m.conn {
		p.Connections = true
		if m.connCost > 0 {
			p.ConnectCapacityRPS = float64(len(m.workers)) / (float64(m.connCost) / 1e9)
		}
		if m.reconnected >= 0 {
			s := float64(m.reconnected) / 1e9
			p.Reconnected99S = &s
		}
		if m.reconnectedAll >= 0 {
			s := float64(m.reconnectedAll) / 1e9
			p.ReconnectedAllS = &s
		}
		for _, st := range m.cstate {
			switch st {
			case csConnected:
				p.ConnectedAtEnd++
			case csWaiting, csConnecting:
				p.RetryingAtEnd++
			}
		}
	}
	return p
}

func (m *model) start() {
	for c := range m.ord {
		at := m.startTime(uint32(c))
		// The first arrival at or after the client's start: the same
		// ordinals and times as without a startup spread.
		var n uint32
		t := m.firstArrival(uint32(c))
		if m.once {
			t = at
		}
		for t < at {
			n++
			t = m.nextArrival(uint32(c), n, t)
		}
		m.ord[c] = n
		// A once client with a connection sends its request when its first
		// connection is up (handshakeDone), not at its start, when it has
		// no connection yet.
		if t < m.end && !(m.once && m.conn) {
			m.q.Schedule(t, evArrival, uint32(c), 0)
		}
		if p := m.pol(uint32(c)); p.limiter != nil && at > 0 {
			p.limiter.Reset(int(uint32(c)-p.start), at) // its limiter is created when it starts
		}
		if m.conn && at < m.end {
			m.cstate[c] = csWaiting
			m.q.Schedule(at, evConnect, uint32(c), 0)
		}
	}
	// Faults in time order, whatever the file's order: at an instant where
	// one fault ends and the next starts, the end is scheduled first and so
	// runs first (faults do not overlap).
	order := make([]int, len(m.sc.Faults))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.sc.Faults[order[a]].Start < m.sc.Faults[order[b]].Start })
	for _, i := range order {
		f := m.sc.Faults[i]
		m.q.Schedule(int64(f.Start), evFaultStart, uint32(i), 0)
		if f.Duration > 0 {
			m.q.Schedule(int64(f.End()), evFaultEnd, uint32(i), 0)
		}
	}
}

func (m *model) firstArrival(c uint32) int64 {
	if m.constant {
		return m.nextArrival(c, 0, 0)
	}
	e := rng.Exp(m.src.Key(rng.Arrival, uint64(c)), 0)
	return m.prof.invert(e / m.lambda)
}

// startTime is when client c starts (clients.startup).
func (m *model) startTime(c uint32) int64 {
	st := m.sc.Clients.Startup
	w := int64(st.Window)
	switch st.Mode {
	case "uniform":
		return int64(rng.Float64(m.src.Key(rng.Startup, uint64(c)), 0) * float64(w))
	case "ramp":
		b := int64(c) * int64(st.Batches) / int64(len(m.ord))
		return b * w / int64(st.Batches)
	}
	return 0
}

const checkEvery = 1 << 16

func (m *model) loop(ctx context.Context, progress func(now, end int64), trace func(TraceEvent)) (int64, error) {
	done := ctx.Done()
	for {
		e, ok := m.q.Peek()
		if !ok || e.At >= m.end {
			return m.end, nil
		}
		m.q.Pop()
		m.events++
		m.mixFP(e)
		if e.At >= m.nextRow {
			m.closeRows(e.At)
		}
		if trace != nil {
			trace(TraceEvent{At: e.At, Kind: eventNames[e.Kind()], ID: e.ID, Aux: e.Aux})
		}
		switch e.Kind() {
		case evArrival:
			m.onArrival(e.At, e.ID)
		case evRetry:
			r := &m.reqs[e.ID]
			if r.state == stBackoff && r.token() == e.Aux {
				m.attempt(e.At, e.ID)
			}
		case evSend:
			r := &m.reqs[e.ID]
			if r.state == stPacing && r.token() == e.Aux {
				m.send(e.At, e.ID)
			}
		case evTimeout:
			r := &m.reqs[e.ID]
			if r.state == stInFlight && r.token() == e.Aux {
				m.row(e.At).TimedOut++
				if g := m.growG(e.At, m.groupOf(r.client)); g != nil {
					g.TimedOut++
				}
				m.outcome(e.At, e.ID, outTimeout, 0)
			}
		case evWorkerDone:
			m.onWorkerDone(e.At, e.ID, e.Aux)
		case evArrive:
			mg := m.msgs[e.ID]
			m.freeMsg = append(m.freeMsg, e.ID)
			if m.occ {
				m.occArrive(e.At, mg)
			} else {
				m.accept(e.At, mg.slot, mg.tok, mg.val, mg.group)
			}
		case evAnswer:
			if m.waiting(e.ID, e.Aux) {
				m.delivered(e.At, e.ID)
			}
		case evFaultStart:
			m.onFaultStart(e.At, m.sc.Faults[e.ID])
		case evFaultEnd:
			m.onFaultEnd(e.At, m.sc.Faults[e.ID])
		case evDeadline:
			// The generation has 24 bits: the arrival time makes sure the
			// slot still holds the request whose deadline this is.
			if r := &m.reqs[e.ID]; r.gen == e.Aux && r.state != stFree && m.after(r.arrival, m.pol(r.client).deadline) == e.At {
				if r.state == stInFlight || r.state == stPacing {
					m.breakerResult(e.At, r, outTimeout) // the client gave up the call
				}
				row := m.row(e.At)
				row.Failed++
				if m.gser != nil {
					m.grow(e.At, r.client).Failed++
				}
				row.DeadlineExceeded++
				if m.gser != nil {
					m.grow(e.At, r.client).DeadlineExceeded++
				}
				m.release(e.ID) // an attempt in flight is abandoned
			}
		case evConnect:
			if m.cstate[e.ID] == csWaiting && m.cseq[e.ID] == e.Aux {
				m.connect(e.At, e.ID)
			}
		case evConnArrive:
			m.connectArrive(e.At, e.ID, e.Aux)
		case evConnOK, evConnRefused:
			m.connAnswered(e.At, e.ID, e.Aux, e.Kind() == evConnOK)
		case evConnectTimeout:
			if m.cstate[e.ID] == csConnecting && m.cseq[e.ID] == e.Aux {
				m.row(e.At).ConnectTimeouts++
				m.connectFailed(e.At, e.ID)
			}
		}
		if m.events%checkEvery == 0 {
			if progress != nil {
				progress(e.At, m.end)
			}
			if done != nil {
				select {
				case <-done:
					return e.At, fmt.Errorf("%w at %.3fs of %.3fs: %w", ErrInterrupted, float64(e.At)/1e9, float64(m.end)/1e9, ctx.Err())
				default:
				}
			}
		}
	}
}

// closeRows records the end-of-interval samples of every row that ends at
// or before t.
func (m *model) closeRows(t int64) {
	for m.nextRow <= t && m.rowIdx < len(m.ser.Rows) {
		m.ser.Rows[m.rowIdx].Connected = int64(m.connected)
		m.rowIdx++
		m.nextRow += m.ser.Interval
	}
}

// finish closes the measurement at time stop.
func (m *model) finish(stop int64) {
	m.closeRows(stop)
	m.queueChanged(stop)
	m.ser.AddCapacity(m.lastCap, stop, int64(m.limit))
	m.lastCap = stop
	// Work still in progress counts up to the horizon, as wasted or useful
	// cannot be known yet: it is left out of both (and of utilisation's
	// numerator), which the docs state.
	m.flushHist(m.ser.Index(stop-1) + 1)
	if stop < m.end {
		m.ser.Rows = m.ser.Rows[:m.ser.Index(stop-1)+1]
	}
}

// row returns the metrics row of time t and closes the latency histogram
// of earlier rows.
func (m *model) row(t int64) *metrics.Row {
	if t < m.rowEnd && t >= m.rowStart { // the common case: no division
		return &m.ser.Rows[m.histRow]
	}
	i := m.ser.Index(t)
	if i != m.histRow {
		m.flushHist(i)
	}
	m.rowStart = int64(i) * m.ser.Interval
	m.rowEnd = m.rowStart + m.ser.Interval
	if i == len(m.ser.Rows)-1 {
		m.rowEnd = math.MaxInt64
	}
	return &m.ser.Rows[i]
}

func (m *model) flushHist(next int) {
	if m.histRow < len(m.ser.Rows) {
		r := &m.ser.Rows[m.histRow]
		r.LatencyP50, r.LatencyP99 = math.NaN(), math.NaN()
		if v, ok := m.hist.Quantile(0.5); ok {
			r.LatencyP50 = v
		}
		if v, ok := m.hist.Quantile(0.99); ok {
			r.LatencyP99 = v
		}
		// Rows skipped without any completion get NaN too.
		for i := m.histRow + 1; i < next && i < len(m.ser.Rows); i++ {
			m.ser.Rows[i].LatencyP50, m.ser.Rows[i].LatencyP99 = math.NaN(), math.NaN()
		}
	}
	m.hist.Reset()
	m.histRow = next
}

// ---- clients ----

func (m *model) onArrival(now int64, c uint32) {
	n := m.ord[c]
	m.ord[c] = n + 1
	m.arrivals++
	m.arrHash += rng.Mix(uint64(now)*0x9e3779b97f4a7c15 ^ uint64(c))
	if next := m.nextArrival(c, n+1, now); next < m.end {
		m.q.Schedule(next, evArrival, c, 0)
	}
	m.row(now).Offered++
	if m.gser != nil {
		m.grow(now, c).Offered++
	}
	slot := m.alloc()
	r := &m.reqs[slot]
	r.arrival, r.prevSleep, r.client, r.ord, r.attempt, r.bo, r.charge = now, 0, c, n, 0, 0, 0
	p := m.pol(c)
	if p.budget != nil {
		p.budget.OnRequest(int((c-p.start)/p.budgetGroup), now)
	}
	if p.deadline > 0 {
		m.q.Schedule(m.after(now, p.deadline), evDeadline, slot, r.gen)
	}
	m.attempt(now, slot)
}

func (m *model) alloc() uint32 {
	if n := len(m.freeSlots); n > 0 {
		s := m.freeSlots[n-1]
		m.freeSlots = m.freeSlots[:n-1]
		return s
	}
	m.reqs = append(m.reqs, request{})
	return uint32(len(m.reqs) - 1)
}

// release frees slot for the next request. Its generation changes, so
// that events still pending for this request find a different token. The
// generation has 24 bits: a slot that has served 2^24 requests is retired
// instead of wrapping around to a token that a stale timer could still
// carry (a one-client fleet reuses one slot for every request).
func (m *model) release(slot uint32) {
	r := &m.reqs[slot]
	r.state = stFree
	r.gen++
	if r.gen >= 1<<24 {
		return // retired: stays free, and every check on it fails
	}
	m.freeSlots = append(m.freeSlots, slot)
}

// attempt sends the next attempt of request slot through the policy stack.
func (m *model) attempt(now int64, slot uint32) {
	r := &m.reqs[slot]
	r.attempt++
	row := m.row(now)
	if r.attempt > 1 {
		row.Retries++
		if m.gser != nil {
			m.grow(now, r.client).Retries++
		}
	}
	if m.conn && m.cstate[r.client] != csConnected {
		row.DropNoConn++
		if m.gser != nil {
			m.grow(now, r.client).DropNoConn++
		}
		m.release(slot)
		return
	}
	pl := m.pol(r.client)
	local := r.client - pl.start
	if pl.throttle != nil {
		id := int(local / pl.groupSize)
		p := pl.throttle.Probability(now, id, pl.tform)
		if pl.countLocal {
			pl.throttle.RecordRequest(now, id)
		}
		if p > 0 && rng.Float64(m.src.Key(rng.Throttle, uint64(r.client)), drawIndex(r.ord, r.attempt)) < p {
			row.DropThrottle++
			if m.gser != nil {
				m.grow(now, r.client).DropThrottle++
			}
			m.release(slot)
			return
		}
		if !pl.countLocal {
			pl.throttle.RecordRequest(now, id)
		}
	}
	// The breaker comes last among the gates that may drop the attempt: a
	// call it admits (possibly a half-open probe) is always sent, so it
	// always gets a result back (an answer, a timeout, or the deadline).
	if pl.breaker != nil && !pl.breaker.Allow(int(local/pl.breakerGroup), now) {
		row.DropBreaker++
		if m.gser != nil {
			m.grow(now, r.client).DropBreaker++
		}
		m.release(slot)
		return
	}
	if pl.limiter != nil {
		// The AWS adaptive rate limiter delays the send, never drops it.
		if wait := pl.limiter.Acquire(int(local), now); wait > 0 {
			row.Paced++
			if m.gser != nil {
				m.grow(now, r.client).Paced++
			}
			row.PacedWaitNS += wait
			r.state = stPacing
			m.q.Schedule(m.after(now, wait), evSend, slot, r.token())
			return
		}
	}
	m.send(now, slot)
}

// send puts the current attempt of slot on the wire.
func (m *model) send(now int64, slot uint32) {
	r := &m.reqs[slot]
	if m.conn && m.cstate[r.client] != csConnected {
		// The connection went away while the rate limiter held the attempt.
		m.breakerResult(now, r, outUnavailable)
		m.row(now).DropNoConn++
		if m.gser != nil {
			m.grow(now, r.client).DropNoConn++
		}
		m.release(slot)
		return
	}
	m.row(now).Attempts++
	if m.gser != nil {
		m.grow(now, r.client).Attempts++
	}
	r.state = stInFlight
	r.phase = 0
	tok := r.token()
	if m.net {
		var svc int64
		if !m.occ {
			svc = m.serviceTime(r) // named by the attempt: the same draw whenever it is taken
		}
		m.post(now, slot, tok, svc, false)
	} else {
		m.receive(now, slot, tok)
	}
	// Arm the timeout only if the backend did not answer at once: an
	// immediate answer would leave a stale timer in the queue.
	if to := m.pol(r.client).timeout; to > 0 && m.waiting(slot, tok) {
		m.q.Schedule(m.after(now, to), evTimeout, slot, tok)
	}
}

// outcome handles the answer (or timeout) of the current attempt of slot.
func (m *model) outcome(now int64, slot uint32, out uint8, retryAfter int64) {
	r := &m.reqs[slot]
	pl := m.pol(r.client)
	local := r.client - pl.start
	if pl.throttle != nil && pl.acceptMask&(1<<out) != 0 {
		pl.throttle.RecordAccept(now, int(local/pl.groupSize))
	}
	if pl.limiter != nil {
		pl.limiter.Update(int(local), now, pl.limiterMask&(1<<out) != 0)
	}
	if pl.budget != nil && (out == outOK || pl.retryMask&(1<<out) != 0) {
		// Only successes and retryable failures count (gRFC A6: "only
		// retryable or non-fatal codes count as failures").
		pl.budget.OnResult(int(local/pl.budgetGroup), now, out == outOK, r.charge)
	}
	m.breakerResult(now, r, out)
	row := m.row(now)
	if out == outOK {
		row.Succeeded++
		if m.gser != nil {
			m.grow(now, r.client).Succeeded++
		}
		lat := now - r.arrival
		m.lastOK, m.anyOK = now, true
		m.hist.Add(lat)
		m.all.Add(lat)
		m.release(slot)
		return
	}
	if pl.retryMask&(1<<out) == 0 || r.attempt >= pl.maxAtt || retryAfter == dontRetry {
		row.Failed++
		if m.gser != nil {
			m.grow(now, r.client).Failed++
		}
		m.release(slot)
		return
	}
	if pl.budget != nil {
		cause := policy.CauseError
		switch out {
		case outTimeout:
			cause = policy.CauseTimeout
		case outRejected:
			cause = policy.CauseThrottle // an overload rejection is throttling
		}
		charge, ok := pl.budget.AllowRetry(int(local/pl.budgetGroup), now, cause)
		if !ok {
			row.Failed++
			if m.gser != nil {
				m.grow(now, r.client).Failed++
			}
			row.BudgetRefused++
			if m.gser != nil {
				m.grow(now, r.client).BudgetRefused++
			}
			m.release(slot)
			return
		}
		r.charge = charge
	}
	var d int64
	if pl.honorRA && pl.exactRA && retryAfter > 0 {
		// gRPC pushback: retry after exactly the server's delay and start
		// the backoff over.
		d, r.bo, r.prevSleep = retryAfter, 0, 0
	} else {
		u := rng.Float64(m.src.Key(rng.Backoff, uint64(r.client)), drawIndex(r.ord, r.attempt))
		d = pl.backoff.Delay(int(r.bo)+1, r.prevSleep, u)
		r.bo++
		r.prevSleep = d
		if pl.honorRA {
			d = policy.HonorRetryAfter(d, retryAfter)
		}
	}
	if pl.deadline > 0 && now+d >= r.arrival+pl.deadline {
		// The retry would start after the deadline: give up now.
		row.Failed++
		if m.gser != nil {
			m.grow(now, r.client).Failed++
		}
		row.DeadlineExceeded++
		if m.gser != nil {
			m.grow(now, r.client).DeadlineExceeded++
		}
		m.release(slot)
		return
	}
	r.state = stBackoff
	m.q.Schedule(m.after(now, d), evRetry, slot, r.token())
}

// dontRetry, as the retry-after of an answer, is the server saying "do not
// retry" (gRPC pushback with a negative delay).
const dontRetry = -1

// breakerResult gives the breaker of r's client the result of r's current
// attempt.
func (m *model) breakerResult(now int64, r *request, out uint8) {
	pl := m.pol(r.client)
	if pl.breaker == nil {
		return
	}
	u := rng.Float64(m.src.Key(rng.Breaker, uint64(r.client)), drawIndex(r.ord, r.attempt))
	pl.breaker.Record(int((r.client-pl.start)/pl.breakerGroup), now, pl.breakerMask&(1<<out) != 0, u)
}

// waiting reports whether the client still waits for this attempt.
func (m *model) waiting(slot, token uint32) bool {
	r := &m.reqs[slot]
	return r.state == stInFlight && r.token() == token
}

// ---- network ----

// post sends a message for the current attempt of slot to the backend: the
// request (the occ read) or, with write set, the occ write carrying the
// version read in val; for a pool backend val is the attempt's service time.
func (m *model) post(now int64, slot, tok uint32, val int64, write bool) {
	r := &m.reqs[slot]
	var i uint32
	if k := len(m.freeMsg); k > 0 {
		i = m.freeMsg[k-1]
		m.freeMsg = m.freeMsg[:k-1]
	} else {
		i = uint32(len(m.msgs))
		m.msgs = append(m.msgs, msg{})
	}
	m.msgs[i] = msg{slot: slot, tok: tok, val: val, group: m.groupOf(r.client), write: write}
	no := uint64(0)
	if write {
		no = 2
	}
	m.q.Schedule(m.after(now, m.netDelay(r, no)), evArrive, i, 0)
}

// answer is the backend answering attempt tok of slot: at once without a
// network, else after the answer's delay. An answer to an attempt the
// client has given up is never delivered, so it is not sent.
func (m *model) answer(now int64, slot, tok uint32, out uint8, val int64) {
	if !m.waiting(slot, tok) {
		return
	}
	if !m.net {
		m.outcome(now, slot, out, val)
		return
	}
	r := &m.reqs[slot]
	r.ansOut, r.ansVal = out, val
	m.q.Schedule(m.after(now, m.netDelay(r, 1+2*uint64(r.phase))), evAnswer, slot, tok)
}

// delivered handles an answer that reached a client still waiting for it.
func (m *model) delivered(now int64, slot uint32) {
	r := &m.reqs[slot]
	if m.occ && r.phase == 0 && r.ansOut == outOK {
		// The read came back with the version: write with it.
		r.phase = 1
		m.post(now, slot, r.token(), r.ansVal, true)
		return
	}
	m.outcome(now, slot, r.ansOut, r.ansVal)
}

// occArrive is a message reaching the occ backend: a read is answered with
// the row's version; a write succeeds if it carries the current version
// (and bumps it), else fails as "error". The backend does this whether or
// not the client still waits for the answer.
func (m *model) occArrive(now int64, mg msg) {
	row, g := m.rows(now, mg.group)
	if m.refusedInOutage(now, row, g, mg.slot, mg.tok) {
		return
	}
	if !mg.write {
		m.answer(now, mg.slot, mg.tok, outOK, m.version)
		return
	}
	row.Received++
	g.Received++
	row.Accepted++
	g.Accepted++
	row.Served++
	g.Served++
	if mg.val != m.version {
		row.Errors++
		g.Errors++
		m.answer(now, mg.slot, mg.tok, outError, 0)
		return
	}
	m.version++
	m.answer(now, mg.slot, mg.tok, outOK, 0)
}

// ---- backend ----

// rows are the fleet's metrics row at now and group grp's (a scratch row
// when the fleet is one group).
func (m *model) rows(now int64, grp uint8) (row, g *metrics.Row) {
	row, g = m.row(now), m.growG(now, grp)
	if g == nil {
		g = &m.sink
	}
	return row, g
}

// refusedInOutage handles an attempt (or occ message) arriving while the
// backend is down: counted, and refused unless the outage is a
// blackhole. It reports whether the backend was down.
func (m *model) refusedInOutage(now int64, row, g *metrics.Row, slot, tok uint32) bool {
	if !m.down {
		return false
	}
	row.FailedOutage++
	g.FailedOutage++
	if !m.blackhole {
		m.answer(now, slot, tok, outUnavailable, m.faultRA)
	}
	return true
}

// receive is an attempt reaching the pool backend at once (no network).
func (m *model) receive(now int64, slot, tok uint32) {
	m.accept(now, slot, tok, m.serviceTime(&m.reqs[slot]), m.groupOf(m.reqs[slot].client))
}

// accept is the pool backend taking in attempt tok of slot, which needs
// svc of service, from a client of group grp.
func (m *model) accept(now int64, slot, tok uint32, svc int64, grp uint8) {
	row, g := m.rows(now, grp)
	if m.refusedInOutage(now, row, g, slot, tok) {
		return
	}
	row.Received++
	g.Received++
	if m.busy < m.limit {
		row.Accepted++
		g.Accepted++
		m.waitN++
		m.serve(now, m.takeWorker(), slot, tok, svc, grp)
		return
	}
	if m.queue.n < m.qlimit {
		row.Accepted++
		g.Accepted++
		m.queueChanged(now)
		m.queue.push(job{slot: slot, token: tok, at: now, svc: svc, group: grp})
		return
	}
	if !m.chargeReject(now) {
		row.Unanswered++
		g.Unanswered++
		return
	}
	row.Rejected++
	g.Rejected++
	m.answer(now, slot, tok, outRejected, m.rejectRA)
}

func (m *model) takeWorker() uint32 {
	n := len(m.freeW)
	w := m.freeW[n-1]
	m.freeW = m.freeW[:n-1]
	m.busy++
	m.workers[w].busy = true
	return w
}

func (m *model) serve(now int64, w uint32, slot, tok uint32, svc int64, group uint8) {
	if m.svcDist == distConcurrency {
		svc += m.perConc * int64(m.busy-1) // the others in service now (busy counts w)
	}
	wk := &m.workers[w]
	wk.start, wk.slot, wk.token, wk.kind, wk.group = now, slot, tok, wkServe, group
	m.q.Schedule(m.after(now, svc), evWorkerDone, w, wk.gen)
}

// chargeReject puts one rejection's worth of work on the workers: at once
// if one is free, else into the accept backlog, which workers empty ahead of
// the queue. When the backlog is full the backend cannot even say no: the
// arrival is dropped unanswered (as a kernel drops connections beyond its
// listen backlog) and chargeReject returns false.
func (m *model) chargeReject(now int64) bool {
	if m.rejCost == 0 {
		return true
	}
	if m.busy < m.limit {
		m.rejectWork(now, m.takeWorker())
		return true
	}
	if m.overhead >= m.backlog {
		return false
	}
	m.overhead++
	return true
}

func (m *model) rejectWork(now int64, w uint32) {
	wk := &m.workers[w]
	wk.start, wk.kind = now, wkReject
	m.q.Schedule(m.after(now, m.rejCost), evWorkerDone, w, wk.gen)
}

func (m *model) onWorkerDone(now int64, w uint32, gen uint32) {
	wk := &m.workers[w]
	if wk.gen != gen {
		return // the work was lost in an outage
	}
	switch wk.kind {
	case wkReject:
		m.ser.AddWasted(wk.start, now)
	case wkHandshake:
		m.handshakeDone(now, wk.slot, wk.token, wk.start)
	default:
		row := m.row(now)
		row.Served++
		g := m.gseries(wk.group)
		if g != nil {
			g.Rows[g.Index(now)].Served++
		}
		if !m.waiting(wk.slot, wk.token) {
			m.ser.AddWasted(wk.start, now)
			if g != nil {
				g.AddWasted(wk.start, now)
			}
			break
		}
		if m.errRate > 0 {
			r := &m.reqs[wk.slot]
			key := m.src.Key(rng.Service, uint64(r.client))
			if rng.Float64(key, drawIndex(r.ord, r.attempt)|1<<62) < m.errRate {
				// An independent backend failure: the work produced an
				// error, not a result.
				row.Errors++
				m.ser.AddWasted(wk.start, now)
				if g != nil {
					g.Rows[g.Index(now)].Errors++
					g.AddWasted(wk.start, now)
				}
				m.answer(now, wk.slot, wk.token, outError, 0)
				break
			}
		}
		m.ser.AddUseful(wk.start, now)
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
	if m.busy > m.limit { // capacity was cut while it worked
		m.idle(w)
		return
	}
	for {
		if m.overhead > 0 {
			m.overhead--
			m.rejectWork(now, w)
			return
		}
		if m.queue.n == 0 {
			m.idle(w)
			return
		}
		m.queueChanged(now)
		j := m.queue.pop()
		if j.slot&handshakeFlag != 0 {
			if m.startHandshake(now, w, j) {
				return
			}
			continue
		}
		if m.qtimeout > 0 && now-j.at > m.qtimeout {
			m.row(now).QueueTimeouts++
			if g := m.growG(now, j.group); g != nil {
				g.QueueTimeouts++
			}
			m.answer(now, j.slot, j.token, outRejected, m.rejectRA)
			if m.rejCost > 0 {
				m.rejectWork(now, w)
				return
			}
			continue
		}
		if m.cancel && !m.waiting(j.slot, j.token) {
			m.row(now).Cancelled++
			if g := m.growG(now, j.group); g != nil {
				g.Cancelled++
			}
			continue
		}
		m.waitSum += float64(now - j.at)
		m.waitN++
		m.serve(now, w, j.slot, j.token, j.svc, j.group)
		return
	}
}

func (m *model) idle(w uint32) {
	m.workers[w].busy = false
	m.busy--
	m.freeW = append(m.freeW, w)
}

func (m *model) queueChanged(now int64) {
	m.ser.AddQueueArea(m.lastQ, now, int64(m.queue.n))
	m.lastQ = now
}

func (m *model) capacityChanged(now int64, limit int) {
	m.ser.AddCapacity(m.lastCap, now, int64(m.limit))
	m.lastCap = now
	m.limit = limit
}

// ---- faults ----

func (m *model) onFaultStart(now int64, f scenario.Fault) {
	switch f.Kind {
	case "outage":
		m.down, m.blackhole, m.faultRA = true, f.Mode == "blackhole", int64(f.RetryAfter)
		m.lastOutage = now
		m.capacityChanged(now, 0)
		// The server dies: work in progress and queued work are lost. With
		// "refuse" the clients see their connections reset (unavailable);
		// with "blackhole" they hear nothing and time out.
		for w := range m.workers {
			wk := &m.workers[w]
			if wk.busy {
				switch wk.kind {
				case wkServe:
					m.ser.AddWasted(wk.start, now)
					if g := m.gseries(wk.group); g != nil {
						g.AddWasted(wk.start, now)
					}
					m.lost(now, wk.slot, wk.token, wk.group)
				case wkReject:
					m.ser.AddWasted(wk.start, now)
				case wkHandshake:
					m.ser.AddHandshakeWasted(wk.start, now)
					m.handshakeLost(now, wk.slot, wk.token)
				}
			}
			wk.gen++
			wk.busy = false
		}
		m.queueChanged(now)
		for m.queue.n > 0 {
			j := m.queue.pop()
			if j.slot&handshakeFlag != 0 {
				m.handshakeLost(now, j.slot&^handshakeFlag, j.token)
				continue
			}
			m.lost(now, j.slot, j.token, j.group)
		}
		m.overhead = 0
		m.busy = 0
		m.freeW = m.freeW[:0]
		for i := len(m.workers) - 1; i >= 0; i-- {
			m.freeW = append(m.freeW, uint32(i))
		}
		if m.conn {
			// Every connection closes; clients notice at once.
			for c := range m.cstate {
				if m.cstate[c] == csConnected {
					m.disconnect(now, uint32(c))
				}
			}
		}
	case "capacity":
		m.capacityChanged(now, int(math.Round(float64(len(m.workers))*f.Fraction)))
	case "disconnect":
		m.disconnectFault(now, f)
	}
}

func (m *model) lost(now int64, slot, tok uint32, group uint8) {
	m.row(now).LostOutage++
	if g := m.growG(now, group); g != nil {
		g.LostOutage++
	}
	if !m.blackhole {
		m.answer(now, slot, tok, outUnavailable, m.faultRA)
	}
}

func (m *model) onFaultEnd(now int64, f scenario.Fault) {
	if f.Kind == "outage" {
		m.down, m.blackhole, m.faultRA = false, false, 0
	}
	m.checkReconnected(now)
	m.capacityChanged(now, len(m.workers))
	for m.busy < m.limit && (m.queue.n > 0 || m.overhead > 0) {
		m.dispatch(now, m.takeWorker())
	}
}

// ---- the backend queue ----

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
