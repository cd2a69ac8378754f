package sim

import (
	"context"

	"github.com/throttlesim/throttlesim/sim/engine"
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
		e, ok := m.q.Step(engine.Time(m.end))
		if !ok {
			return m.end, nil
		}
		now := int64(e.At) // the model's time from here on
		m.now = now
		m.mt.events++
		m.mt.mixFP(e)
		if now >= m.mt.nextRow {
			m.closeRows(now)
			if m.hooks != nil && m.atInterval(now) {
				return now, nil
			}
		}
		if trace != nil {
			trace(TraceEvent{At: now, Kind: eventNames[e.Kind()], ID: e.ID, Aux: e.Aux})
		}
		switch e.Kind() {
		case evArrival:
			m.onArrival(now, e.ID)
		case evRetry:
			r := &m.cl.reqs[e.ID]
			if r.state == stBackoff && r.token() == e.Aux {
				m.attempt(now, e.ID)
			}
		case evSend:
			r := &m.cl.reqs[e.ID]
			if r.state == stPacing && r.token() == e.Aux {
				m.send(now, e.ID)
			}
		case evTimeout:
			if m.waiting(e.ID, e.Aux) {
				m.countR(now, &m.cl.reqs[e.ID], timedOut)
				m.outcome(now, e.ID, e.Aux, outTimeout, 0)
			}
		case evHedge:
			if r := &m.cl.reqs[e.ID]; r.rs.H1 == 0 && m.waiting(e.ID, e.Aux) {
				m.hedge(now, e.ID)
			}
		case evWorkerDone:
			m.onWorkerDone(now, e.ID, e.Aux)
		case evArrive:
			m.arrive(now, e.ID)
		case evAnswer:
			if m.waiting(e.ID, e.Aux) {
				m.delivered(now, e.ID)
			}
		case evOutlierSweep:
			m.onOutlierSweep(now, e.ID)
		case evHealthCheck:
			m.onHealthCheck(now, e.ID)
		case evFaultStart:
			m.onFaultStart(now, m.sc.Faults[e.ID])
		case evFaultEnd:
			m.onFaultEnd(now, m.sc.Faults[e.ID])
		case evDeadline:
			// The generation has 24 bits: the deadline time makes sure the
			// slot still holds the request whose deadline this is.
			if r := &m.cl.reqs[e.ID]; r.gen == e.Aux && r.state != stFree && r.dl > 0 && min(r.dl, m.end) == now {
				m.onDeadline(now, e.ID)
			}
		case evConnect:
			if m.cn.state[e.ID] == csWaiting && m.cn.seq[e.ID] == e.Aux {
				m.connect(now, e.ID)
			}
		case evConnArrive:
			m.connectArrive(now, e.ID, e.Aux)
		case evScaleTick:
			m.onScaleTick(now, e.ID)
		case evReplicaReady:
			m.onReplicaReady(now, e.ID, e.Aux)
		case evTiltMark:
			m.tiltMark(e.Aux)
		case evWatch:
			if m.atWatch(now) {
				return now, nil
			}
		case evConnOK, evConnRefused:
			m.connAnswered(now, e.ID, e.Aux, e.Kind() == evConnOK)
		case evConnectTimeout:
			if m.cn.state[e.ID] == csConnecting && m.cn.seq[e.ID] == e.Aux {
				m.mt.row(now).ConnectTimeouts++
				m.connectFailed(now, e.ID)
			}
		}
		if m.mt.events%checkEvery == 0 {
			if progress != nil {
				progress(now, m.end)
			}
			if done != nil {
				select {
				case <-done:
					return now, &InterruptedError{At: now, End: m.end, Err: ctx.Err()}
				default:
				}
			}
		}
	}
}
