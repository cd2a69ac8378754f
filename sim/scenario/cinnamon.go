package scenario

import (
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// PIDShedding is a PID load shedder at a service in the style of Uber's
// Cinnamon (policy.PIDShedder; docs/policies.md): once per interval a PID
// controller on the mean queueing time (set point queue_time) sets the
// share of arrivals to reject, and the least important priorities that
// arrived in the last interval carry it. A request's priority is its
// business priority (Priority), then a user priority in
// 0..user_levels−1, a hash of its client that changes every hour, as for
// priority_shedding. Cinnamon's auto-tuned in-flight limit (a modified
// TCP-Vegas) is the backend's concurrency_limit with kind vegas, set
// beside it.
type PIDShedding struct {
	Interval   Duration `yaml:"interval" json:"interval"`
	QueueTime  Duration `yaml:"queue_time" json:"queue_time"`
	Kp         float64  `yaml:"kp" json:"kp"`
	Ki         float64  `yaml:"ki" json:"ki"`
	Kd         float64  `yaml:"kd" json:"kd"`
	UserLevels int      `yaml:"user_levels" json:"user_levels"`
}

// The defaults are ours (policy.PIDShedderDefaults); 128 user levels as
// priority_shedding's, which is also the number of cohorts we recall
// Cinnamon's first post giving (not verified in the text we could read).
func (p *PIDShedding) setDefaults() {
	d := policy.PIDShedderDefaults()
	*p = PIDShedding{Interval: Duration(d.Interval), QueueTime: Duration(d.QueueTime), Kp: d.Kp, Ki: d.Ki, Kd: d.Kd, UserLevels: 128}
}

// Settings is the policy configuration of p.
func (p *PIDShedding) Settings() policy.PIDShedderSettings {
	return policy.PIDShedderSettings{Interval: int64(p.Interval), QueueTime: int64(p.QueueTime), Kp: p.Kp, Ki: p.Ki, Kd: p.Kd}
}

// pidShedding checks backend p's pid_shedding.
func (v *validator) pidShedding(p string, b Backend) {
	ps := b.PIDShedding
	if ps == nil {
		return
	}
	p += ".pid_shedding"
	v.check(b.PriorityShedding == nil, p, "cannot be set with priority_shedding: choose one priority shedder")
	v.check(ps.Interval >= Duration(time.Millisecond), p+".interval", "must be >= 1ms, got %s", ps.Interval)
	v.check(ps.QueueTime > 0, p+".queue_time", "must be > 0, got %s", ps.QueueTime)
	v.check(ps.Kp >= 0, p+".kp", "must be >= 0, got %g", ps.Kp)
	v.check(ps.Ki >= 0, p+".ki", "must be >= 0, got %g", ps.Ki)
	v.check(ps.Kd >= 0, p+".kd", "must be >= 0, got %g", ps.Kd)
	v.check(ps.Kp+ps.Ki+ps.Kd > 0, p+".ki", "at least one gain must be > 0")
	v.check(ps.UserLevels >= 1 && ps.UserLevels <= 1024, p+".user_levels", "must be in 1..1024, got %d", ps.UserLevels)
}
