package sim

import (
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Priority shedding (backend.priority_shedding, DAGOR): requests carry a
// business priority from their client group (fixed, or drawn per request)
// and a user priority hashed from their client; calls a service makes
// carry the business priority of the request it serves (in its frame).
// Nothing here runs unless some service sheds by priority.

// Entities of the priority draws in the Route stream, apart from every
// client's, call's and concurrency limit's.
const (
	userPrioEntity = 1 << 41 // the user priority: a client's hash, per hour
	bizPrioEntity  = 1 << 42 // a request's business priority, when drawn
)

// prioState is the fleet's priorities, per client group.
type prioState struct {
	level []int       // fixed business priority of each group
	cum   [][]float64 // or cumulative weights of a drawn one (nil: fixed)
}

// initPriorities builds the fleet's priorities, once, for the services
// that shed by priority (their admission holds the DAGOR state).
func (m *model) initPriorities(sc *scenario.Scenario) {
	if m.prio != nil {
		return
	}
	m.prio = &prioState{}
	for _, p := range sc.Clients.GroupPriorities() {
		var lv int
		var cum []float64
		if p != nil {
			lv = p.Level
			if len(p.Levels) > 0 {
				s := 0.0
				for _, w := range p.Levels {
					s += w
					cum = append(cum, s)
				}
				for i := range cum {
					cum[i] /= s
				}
			}
		}
		m.prio.level = append(m.prio.level, lv)
		m.prio.cum = append(m.prio.cum, cum)
	}
}

// business is request r's business priority (grp its client group).
func (m *model) business(r *request, grp uint8) uint8 {
	if r.edge != 0 {
		return m.frames[r.frame].prio // inherited from the request being served
	}
	cum := m.prio.cum[grp]
	if cum == nil {
		return uint8(m.prio.level[grp])
	}
	u := rng.Float64(m.src.Key(rng.Route, bizPrioEntity|uint64(r.client)), uint64(r.ord))
	for i, c := range cum {
		if u < c {
			return uint8(i)
		}
	}
	return uint8(len(cum) - 1)
}

// priority is the compound priority of the attempt in slot (of group grp)
// arriving at b at now, for b's priority shedding: its business priority,
// then the user priority, a hash of its client that changes every hour.
func (m *model) priority(b *pool, now int64, slot uint32, grp uint8) int {
	r := &m.cl.reqs[slot]
	ul := b.adm.UserLevels()
	u := rng.Uint64(m.src.Key(rng.Route, userPrioEntity|uint64(r.client)), uint64(now/3600e9)) % uint64(ul)
	return int(m.business(r, grp))*ul + int(u)
}
