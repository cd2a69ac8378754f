package scenario

import (
	"fmt"
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// MaxBusinessPriority is the least important business priority a request
// can carry (0 is the most important).
const MaxBusinessPriority = 7

// Priority is the DAGOR business priority of a fleet's or a group's
// requests (0 the most important, up to 7): Level for every request, or,
// with Levels, a level drawn per request (level i with probability
// Levels[i] / Σ Levels). Calls a service makes carry the priority of the
// request it serves.
type Priority struct {
	Level  int       `yaml:"level" json:"level"`
	Levels []float64 `yaml:"levels" json:"levels,omitempty"`
}

func (p *Priority) setDefaults() { *p = Priority{} }

// PriorityShedding is DAGOR's overload control at a service
// (overload-control.md §3.6): arrivals less important than the admission
// level are refused at once (at the price of a rejection, with
// retry_after); once per window the level moves so that (1 − alpha) of
// the requests admitted in the last window are admitted if their mean
// queueing time exceeded queue_time, (1 + beta) if not. A request's
// priority is its business priority (Priority), then a user priority in
// 0..user_levels−1, a hash of its client that changes every hour.
type PriorityShedding struct {
	Window         Duration `yaml:"window" json:"window"`
	WindowRequests int      `yaml:"window_requests" json:"window_requests"`
	QueueTime      Duration `yaml:"queue_time" json:"queue_time"`
	Alpha          float64  `yaml:"alpha" json:"alpha"`
	Beta           float64  `yaml:"beta" json:"beta"`
	UserLevels     int      `yaml:"user_levels" json:"user_levels"`
}

// DAGOR's window, thresholds and steps from the Breakwater artifact's
// DAGOR baseline and Tencent's summaries (overload-control.md §3.6; the
// 20 ms and the 128 user levels are unverified against the paper).
func (p *PriorityShedding) setDefaults() {
	*p = PriorityShedding{Window: Duration(time.Second), WindowRequests: 2000, QueueTime: Duration(20 * time.Millisecond),
		Alpha: 0.05, Beta: 0.01, UserLevels: 128}
}

// Settings is the policy configuration of p.
func (p *PriorityShedding) Settings() policy.DAGORSettings {
	return policy.DAGORSettings{Window: int64(p.Window), WindowRequests: p.WindowRequests, QueueTime: int64(p.QueueTime), Alpha: p.Alpha, Beta: p.Beta}
}

// priority checks a fleet's or group's priority under path p.
func (v *validator) priority(p string, pr *Priority) {
	if pr == nil {
		return
	}
	v.check(pr.Level >= 0 && pr.Level <= MaxBusinessPriority, p+".level", "must be in 0..%d (0 the most important), got %d", MaxBusinessPriority, pr.Level)
	v.check(len(pr.Levels) <= MaxBusinessPriority+1, p+".levels", "at most %d weights (levels 0..%d), got %d", MaxBusinessPriority+1, MaxBusinessPriority, len(pr.Levels))
	sum := 0.0
	for i, w := range pr.Levels {
		v.check(w >= 0, p+".levels", "weight %d must be >= 0, got %g", i, w)
		sum += w
	}
	v.check(len(pr.Levels) == 0 || sum > 0, p+".levels", "the weights must not all be 0")
}

// priorityShedding checks a backend's priority_shedding under path p.
func (v *validator) priorityShedding(p string, ps *PriorityShedding) {
	if ps == nil {
		return
	}
	p += ".priority_shedding"
	v.check(ps.Window > 0, p+".window", "must be > 0, got %s", ps.Window)
	v.check(ps.WindowRequests >= 1, p+".window_requests", "must be >= 1, got %d", ps.WindowRequests)
	v.check(ps.QueueTime > 0, p+".queue_time", "must be > 0, got %s", ps.QueueTime)
	v.check(ps.Alpha > 0 && ps.Alpha < 1, p+".alpha", "must be in (0, 1), got %g", ps.Alpha)
	v.check(ps.Beta > 0, p+".beta", "must be > 0, got %g", ps.Beta)
	v.check(ps.UserLevels >= 1 && ps.UserLevels <= 1024, p+".user_levels", "must be in 1..1024, got %d", ps.UserLevels)
}

// validatePriorities checks the fleet's and groups' priorities.
func (v *validator) validatePriorities(s *Scenario) {
	v.priority("clients.priority", s.Clients.Priority)
	for i, g := range s.Clients.Groups {
		v.priority(fmt.Sprintf("clients.groups.%d.priority", i), g.Priority)
	}
}

// GroupPriorities is each resolved group's priority (a group without one
// takes the fleet's; nil: level 0), in the order of ResolvedGroups.
func (c *Clients) GroupPriorities() []*Priority {
	if len(c.Groups) == 0 {
		return []*Priority{c.Priority}
	}
	out := make([]*Priority, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = c.Priority
		if g.Priority != nil {
			out[i] = g.Priority
		}
	}
	return out
}
