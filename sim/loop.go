package sim

import (
	"context"
	"fmt"
)

// eventNames are the event kinds as TraceEvent names them.
var eventNames = [...]string{
	evArrival: "arrival", evRetry: "retry", evTimeout: "timeout", evWorkerDone: "worker-done",
	evFaultStart: "fault-start", evFaultEnd: "fault-end", evConnect: "connect", evConnectTimeout: "connect-timeout",
	evDeadline: "deadline", evSend: "send", evArrive: "arrive", evAnswer: "answer",
	evConnArrive: "connect-arrive", evConnOK: "connect-ok", evConnRefused: "connect-refused",
	evHedge: "hedge", evOutlierSweep: "outlier-sweep", evHealthCheck: "health-check",
	evScaleTick: "scale-tick", evReplicaReady: "replica-ready", evWatch: "watch", evTiltMark: "tilt-mark",
}

// checkEvery is how many events pass between two looks at the context and
// two progress reports.
const checkEvery = 1 << 16

// loop runs events in time order until the horizon (or until ctx is
// cancelled) and returns the time it stopped at. Each event is routed to
// the part of the model that owns it; events that carry a token or a
// generation are dropped here when it is stale.
func (m *model) loop(ctx context.Context, progress func(now, end int64), trace func(TraceEvent)) (int64, error) {
	done := ctx.Done()
	for {
		e, ok := m.q.Step(m.end)
		if !ok {
			return m.end, nil
		}
		m.now = e.At
		m.mt.events++
		m.mt.mixFP(e)
		if e.At >= m.mt.nextRow {
			m.closeRows(e.At)
			if m.hooks != nil && m.atInterval(e.At) {
				return e.At, nil
			}
		}
		if trace != nil {
			trace(TraceEvent{At: e.At, Kind: eventNames[e.Kind()], ID: e.ID, Aux: e.Aux})
		}
		switch e.Kind() {
		case evArrival:
			m.onArrival(e.At, e.ID)
		case evRetry:
			r := &m.cl.reqs[e.ID]
			if r.state == stBackoff && r.token() == e.Aux {
				m.attempt(e.At, e.ID)
			}
		case evSend:
			r := &m.cl.reqs[e.ID]
			if r.state == stPacing && r.token() == e.Aux {
				m.send(e.At, e.ID)
			}
		case evTimeout:
			if m.waiting(e.ID, e.Aux) {
				m.countR(e.At, &m.cl.reqs[e.ID], timedOut)
				m.outcome(e.At, e.ID, e.Aux, outTimeout, 0)
			}
		case evHedge:
			if r := &m.cl.reqs[e.ID]; r.h1 == 0 && m.waiting(e.ID, e.Aux) {
				m.hedge(e.At, e.ID)
			}
		case evWorkerDone:
			m.onWorkerDone(e.At, e.ID, e.Aux)
		case evArrive:
			m.arrive(e.At, e.ID)
		case evAnswer:
			if m.waiting(e.ID, e.Aux) {
				m.delivered(e.At, e.ID)
			}
		case evOutlierSweep:
			m.onOutlierSweep(e.At, e.ID)
		case evHealthCheck:
			m.onHealthCheck(e.At, e.ID)
		case evFaultStart:
			m.onFaultStart(e.At, m.sc.Faults[e.ID])
		case evFaultEnd:
			m.onFaultEnd(e.At, m.sc.Faults[e.ID])
		case evDeadline:
			// The generation has 24 bits: the deadline time makes sure the
			// slot still holds the request whose deadline this is.
			if r := &m.cl.reqs[e.ID]; r.gen == e.Aux && r.state != stFree && r.dl > 0 && min(r.dl, m.end) == e.At {
				m.onDeadline(e.At, e.ID)
			}
		case evConnect:
			if m.cn.state[e.ID] == csWaiting && m.cn.seq[e.ID] == e.Aux {
				m.connect(e.At, e.ID)
			}
		case evConnArrive:
			m.connectArrive(e.At, e.ID, e.Aux)
		case evScaleTick:
			m.onScaleTick(e.At, e.ID)
		case evReplicaReady:
			m.onReplicaReady(e.At, e.ID, e.Aux)
		case evTiltMark:
			m.tiltMark(e.Aux)
		case evWatch:
			if m.atWatch(e.At) {
				return e.At, nil
			}
		case evConnOK, evConnRefused:
			m.connAnswered(e.At, e.ID, e.Aux, e.Kind() == evConnOK)
		case evConnectTimeout:
			if m.cn.state[e.ID] == csConnecting && m.cn.seq[e.ID] == e.Aux {
				m.mt.row(e.At).ConnectTimeouts++
				m.connectFailed(e.At, e.ID)
			}
		}
		if m.mt.events%checkEvery == 0 {
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
