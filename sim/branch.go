package sim

import (
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
)

// Branch re-seeds a run's random streams part-way through, which is how a
// run is copied mid-run: replaying the same scenario and seed reaches the
// same state at the same point (a run is deterministic), and from there
// the copy draws fresh numbers. Multilevel splitting (sim/explore) restarts
// paths from the states where they passed a level this way.
//
// The state at a branch point is the state at the end of a metrics
// interval (or at a watch point of Options.WatchEvery), as a Watch saw it:
// After is the WatchState.Events of that call.
type Branch struct {
	After uint64 // events handled before the branch point
	Salt  uint64 // the new streams are those of seed Mix(seed ^ Mix(Salt))
}

// WatchState is what a Watch sees at the end of each metrics interval (or
// at each watch point of Options.WatchEvery).
type WatchState struct {
	Now    int64  // the virtual time (ns) of the event that closed the interval
	Events uint64 // events handled so far; a Branch at this point has After = Events
	// InSystem is the number of requests queued or in service at the
	// service the clients call (all its replicas).
	InSystem int
	// Outstanding is the number of application requests the clients have
	// not finished yet (waiting for an answer, backing off or paced).
	Outstanding int
	Row         *metrics.Row // the last interval closed
}

// hooks are the optional calls of Options.Watch and Options.Branches at
// interval ends or, with Options.WatchEvery, at watch events; nil in
// ordinary runs, so they cost one nil check per interval.
type hooks struct {
	watch    func(WatchState) bool
	branches []Branch
	seed     uint64
	every    int64 // Options.WatchEvery
	stopped  bool
}

// atInterval runs at each interval's end, before the event that closed it
// is handled: it applies a branch that falls here and, without
// WatchEvery, asks the watch whether to stop.
func (m *model) atInterval(now int64) bool {
	return m.atPoint(now, m.hooks.every == 0)
}

// atWatch handles a watch event of Options.WatchEvery and schedules the
// next one.
func (m *model) atWatch(now int64) bool {
	if m.atPoint(now, true) {
		return true
	}
	if next := now + m.hooks.every; next < m.end {
		m.q.Schedule(next, evWatch, 0, 0)
	}
	return false
}

// atPoint applies a branch that falls at this point (the current event
// counted, not handled yet) and, if watch, asks the watch whether to stop.
func (m *model) atPoint(now int64, watch bool) bool {
	h := m.hooks
	handled := m.mt.events - 1 // the current event is counted but not handled yet
	for len(h.branches) > 0 && h.branches[0].After <= handled {
		h.seed = rng.Mix(h.seed ^ rng.Mix(h.branches[0].Salt))
		m.src = rng.New(h.seed)
		h.branches = h.branches[1:]
	}
	if !watch || h.watch == nil {
		return false
	}
	st := WatchState{Now: now, Events: handled, Outstanding: m.cl.outstanding()}
	for i := range m.svcs {
		if m.svcs[i].fleet {
			st.InSystem += m.svcs[i].outstanding()
		}
	}
	if m.mt.rowIdx > 0 {
		st.Row = &m.mt.ser.Rows[m.mt.rowIdx-1]
	}
	if h.watch(st) {
		h.stopped = true
		return true
	}
	return false
}

// outstanding counts the external clients' requests not finished yet (a
// scan of the slots: only watches call it, once per interval).
func (cl *fleet) outstanding() int {
	n := 0
	for i := range cl.reqs {
		if r := &cl.reqs[i]; r.state != stFree && r.edge == 0 {
			n++
		}
	}
	return n
}
