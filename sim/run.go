package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Options tune a run without changing its results, except Branches,
// which make it a different trajectory from the same start.
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
	// Watch, when set, is called at the end of every metrics interval with
	// the state of the run; returning true stops the run there (Result:
	// Complete false, Watched true, StoppedAt the time of the call).
	Watch func(WatchState) bool
	// WatchEvery, when above 0, calls Watch every WatchEvery ns of virtual
	// time (at WatchEvery, 2·WatchEvery, ...) instead of at interval ends,
	// so that branch points can be finer than the metrics interval. A
	// watch point is an event of its own: Events counts it, so a copy
	// (Branches) must be run with the same WatchEvery as its parent.
	WatchEvery int64
	// Branches re-seed the run's random streams at the given points, in
	// order of After (see Branch): a copy of a run from the state it had
	// there, with new randomness.
	Branches []Branch
	// Tilt, when set, multiplies the Poisson arrival rate on a window and
	// reports the likelihood ratio in Result.Tilt (importance sampling;
	// see ArrivalTilt). It changes the run's law, as Branches do.
	Tilt *ArrivalTilt

	// tails, in tests, tracks each replica's time at each number of
	// requests queued or in service (Result.tails), from tailsFrom on.
	tails     int
	tailsFrom int64
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
	// Services, when the scenario is a service graph, holds each
	// service's series and summary, in the order of scenario.Services.
	Services []ServiceResult
	// MeanLatencyS is the mean latency of the external requests that
	// succeeded, in seconds (NaN when none did).
	MeanLatencyS float64
	// tails: with Options.tails, each replica's time at each number of
	// requests queued or in service, up to the end.
	tails [][]int64
	// Complete is false when the run was interrupted; Series then holds the
	// rows up to StoppedAt.
	Complete  bool
	StoppedAt int64
	Watched   bool // stopped by Options.Watch
	// Tilt is the arrival tilt's report (Options.Tilt), nil without one
	// or when the run stopped before the window's end.
	Tilt *TiltReport
}

// ErrInterrupted is returned (wrapped) with a partial Result when the
// context is cancelled during a run.
var ErrInterrupted = errors.New("sim: run interrupted")

// InterruptedError is the error of a run its context stopped before its
// end, saying where (ns of simulated or wall time): it is ErrInterrupted
// (errors.Is) and wraps the context's error, if any.
type InterruptedError struct {
	At, End int64
	Err     error
}

// Error is "sim: run interrupted at 12.000s of 60.000s", then the cause.
func (e *InterruptedError) Error() string {
	s := fmt.Sprintf("%v at %.3fs of %.3fs", ErrInterrupted, float64(e.At)/1e9, float64(e.End)/1e9)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is ErrInterrupted.
func (e *InterruptedError) Is(target error) bool { return target == ErrInterrupted }

// Unwrap is the context's error.
func (e *InterruptedError) Unwrap() error { return e.Err }

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
	m, err := newModel(&rs, rs.Seed)
	if err != nil {
		return nil, err
	}
	if opt.tails > 0 {
		for i := range m.svcs {
			m.svcs[i].tail = make([]int64, opt.tails)
			m.svcs[i].tailFrom = opt.tailsFrom
		}
	}
	if opt.Watch != nil || len(opt.Branches) > 0 {
		if !slices.IsSortedFunc(opt.Branches, func(a, b Branch) int { return cmp.Compare(a.After, b.After) }) {
			return nil, errors.New("sim: Options.Branches must be in order of After")
		}
		m.hooks = &hooks{watch: opt.Watch, branches: opt.Branches, seed: rs.Seed, every: opt.WatchEvery}
	}
	if opt.Tilt != nil {
		if err := m.initTilt(*opt.Tilt); err != nil {
			return nil, err
		}
		m.scheduleTilt()
	}
	m.start()
	if m.hooks != nil && m.hooks.every > 0 {
		m.q.Schedule(m.hooks.every, evWatch, 0, 0)
	}
	if opt.Started != nil {
		opt.Started()
	}
	stopped, err := m.loop(ctx, opt.Progress, opt.Trace)
	m.finish(stopped)
	res := &Result{
		Scenario:    &rs,
		Series:      m.mt.ser,
		Events:      m.mt.events,
		Arrivals:    m.mt.arrivals,
		Fingerprint: m.mt.fp,
		ArrivalHash: m.mt.arrHash,
		Complete:    err == nil && (m.hooks == nil || !m.hooks.stopped),
		StoppedAt:   stopped,
		Watched:     m.hooks != nil && m.hooks.stopped,
	}
	if m.tilt != nil {
		res.Tilt = m.tiltReport(stopped)
	}
	var waitSum float64
	var waitN int64
	for _, b := range m.svcs {
		if b.fleet { // every replica of the entry service
			waitSum += b.waitSum
			waitN += b.waitN
		}
	}
	res.Summary = metrics.Summarise(m.mt.ser, m.params(), &m.mt.all, waitSum, waitN)
	if m.mt.anyOK {
		s := float64(m.mt.lastOK) / 1e9
		res.Summary.LastSuccessS = &s
	}
	if m.occ.on {
		// One row, no workers: the capacity figures do not apply.
		res.Summary.PeakReceivedOverCapacity, res.Summary.Utilisation = nil, nil
		res.Summary.WastedWorkFraction, res.Summary.MeanQueueWaitMS = nil, nil
		res.Summary.FaultLoadOverCapacity, res.Summary.TimeAboveCapacityS = nil, nil
		res.Summary.RecoveryWastedWorkerS, res.Summary.RecoveryWastedFraction = nil, nil
	}
	res.MeanLatencyS = math.NaN()
	if m.mt.latN > 0 {
		res.MeanLatencyS = m.mt.latSum / float64(m.mt.latN) / 1e9
	}
	res.Services = m.services(res.Summary.Offered, stopped)
	if len(res.Services) > 0 {
		res.Summary.EntryService = res.Services[0].Name
	}
	for i := range m.svcs {
		if b := &m.svcs[i]; b.tail != nil {
			b.noteSys(stopped)
			res.tails = append(res.tails, b.tail)
		}
	}
	for gi, gs := range m.mt.gser {
		if len(m.mt.ser.Rows) < len(gs.Rows) {
			gs.Rows = gs.Rows[:len(m.mt.ser.Rows)]
		}
		t := gs.Totals()
		p := m.cl.pols[gi]
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

// GroupSummary is a client group's headline figures (the groups section
// of the run folder's summary, sim/rundir).
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
	start, end, ok := sc.Spike()
	return metrics.Window{Start: start, End: end}, ok
}

func (m *model) params() metrics.Params {
	p := metrics.Params{
		Workers:         int64(m.sc.EntryBackend().TotalWorkers()),
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
		if f.Kind == scenario.FaultOutage {
			p.Outages = append(p.Outages, metrics.Window{Start: int64(f.Start), End: int64(f.End())})
		}
	}
	if m.cn.on {
		p.Connections = true
		if m.be.connCost > 0 {
			p.ConnectCapacityRPS = float64(m.sc.EntryBackend().TotalWorkers()) / (float64(m.be.connCost) / 1e9)
		}
		if m.cn.reconnected >= 0 {
			s := float64(m.cn.reconnected) / 1e9
			p.Reconnected99S = &s
		}
		if m.cn.reconnectedAll >= 0 {
			s := float64(m.cn.reconnectedAll) / 1e9
			p.ReconnectedAllS = &s
		}
		for _, st := range m.cn.state {
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
