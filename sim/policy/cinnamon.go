package policy

import (
	"errors"
	"fmt"
)

// ErrPIDShedderSettings is wrapped by NewPIDShedder's errors.
var ErrPIDShedderSettings = errors.New("policy: bad PID shedding (Cinnamon) settings")

// PIDShedderSettings configures the PID load shedder. Zero fields take
// the defaults below, all of them our choice (Uber's posts publish no
// gains, interval or set point): an update every 200 ms, a queueing-time
// set point of 20 ms, Kp = 0.05, Ki = 0.2 /s, Kd = 0 (chosen by hand on
// TestPIDShedderHoldsQueueTime's M/M/10 at 2× its capacity).
type PIDShedderSettings struct {
	Interval   int64 // ns between controller updates
	QueueTime  int64 // ns: the set point of the interval's mean queueing time
	Kp, Ki, Kd float64
}

// PIDShedderDefaults is the settings a zero field takes.
func PIDShedderDefaults() PIDShedderSettings {
	return PIDShedderSettings{Interval: 200e6, QueueTime: 20e6, Kp: 0.05, Ki: 0.2}
}

// maxErr bounds the normalised error above: a queue far past the set
// point counts as 10 set points (our choice; bounded at 1, the intervals'
// waits above twice the set point were under-counted and the run's mean
// wait settled near twice the set point).
const maxErr = 10

// PIDShedder is a load shedder in the style of Uber's Cinnamon (Uber
// Engineering blog, "Cinnamon: Using Century Old Tech to Build a Mean
// Load Shedder" and "PID Controller for Cinnamon", 2023): requests carry a
// priority (smaller is more important); a PID controller sets the share
// of arrivals to reject, and the rejection threshold is placed on the
// distribution of the priorities that arrived, so that the least
// important requests carry the rejections. Once per Interval:
//
//	e      := clamp((mean queueing time of the interval − QueueTime) / QueueTime, −1, 10)
//	I      := clamp(I + Ki·e·dt, 0, 1)            (dt in seconds; clamped: anti-windup)
//	reject := clamp(Kp·e + I + Kd·(e − e_prev)/dt, 0, 1)
//	level  := the least important p with Σ arrivals[q ≤ p] ≤ (1 − reject)·Σ arrivals
//
// and an arrival is admitted when its priority is at most level (every
// priority while reject is 0). The error's normalisation, its clamp, the
// anti-windup and the level rule are ours; the posts describe the
// controller's input (the state of the request queue), its output (a
// rejection share mapped onto the cumulative distribution of priorities)
// and not its formula. Queueing time comes from the caller as running
// totals, as DAGOR's does.
type PIDShedder struct {
	s        PIDShedderSettings
	hist     []int64 // arrivals by priority in the interval
	last     []int64 // the previous interval's, which the level is placed on
	level    int
	reject   float64
	integ    float64
	prevErr  float64
	start    int64
	w0       float64
	n0       int64
	started  bool
	hadError bool
}

// NewPIDShedder is the shedder over priorities 0..levels−1; zero settings
// take PIDShedderDefaults. It starts admitting everything.
func NewPIDShedder(s PIDShedderSettings, levels int) (*PIDShedder, error) {
	d := PIDShedderDefaults()
	if s.Interval == 0 {
		s.Interval = d.Interval
	}
	if s.QueueTime == 0 {
		s.QueueTime = d.QueueTime
	}
	if s.Kp == 0 && s.Ki == 0 && s.Kd == 0 {
		s.Kp, s.Ki, s.Kd = d.Kp, d.Ki, d.Kd
	}
	switch {
	case levels < 1:
		return nil, fmt.Errorf("%w: needs at least one priority level, got %d", ErrPIDShedderSettings, levels)
	case s.Interval < 0 || s.QueueTime < 0:
		return nil, fmt.Errorf("%w: needs interval > 0 and queue_time > 0", ErrPIDShedderSettings)
	case s.Kp < 0 || s.Ki < 0 || s.Kd < 0:
		return nil, fmt.Errorf("%w: gains must be >= 0, got kp %g, ki %g, kd %g", ErrPIDShedderSettings, s.Kp, s.Ki, s.Kd)
	}
	return &PIDShedder{s: s, hist: make([]int64, levels), last: make([]int64, levels), level: levels - 1}, nil
}

// Level is the admission level: priorities up to it are admitted.
func (p *PIDShedder) Level() int { return p.level }

// Reject is the share of arrivals the controller asks to reject.
func (p *PIDShedder) Reject() float64 { return p.reject }

// Admit decides on an arrival of priority prio at now; waitSum and waitN
// are the caller's running totals of queueing time (ns) and of requests
// that started processing.
func (p *PIDShedder) Admit(now int64, prio int, waitSum float64, waitN int64) bool {
	if !p.started {
		p.started, p.start, p.w0, p.n0 = true, now, waitSum, waitN
	}
	if dt := now - p.start; dt >= p.s.Interval {
		p.update(float64(dt)/1e9, waitSum, waitN)
		p.start, p.w0, p.n0 = now, waitSum, waitN
	}
	prio = min(max(prio, 0), len(p.hist)-1)
	p.hist[prio]++
	return prio <= p.level
}

// update runs the controller at the end of an interval of dt seconds.
func (p *PIDShedder) update(dt, waitSum float64, waitN int64) {
	e := -1.0 // nothing started service: no queueing seen
	if n := waitN - p.n0; n > 0 {
		e = ((waitSum-p.w0)/float64(n) - float64(p.s.QueueTime)) / float64(p.s.QueueTime)
		e = min(max(e, -1), maxErr)
	}
	p.integ = min(max(p.integ+p.s.Ki*e*dt, 0), 1)
	d := 0.0
	if p.hadError {
		d = p.s.Kd * (e - p.prevErr) / dt
	}
	p.prevErr, p.hadError = e, true
	p.reject = min(max(p.s.Kp*e+p.integ+d, 0), 1)
	p.last, p.hist = p.hist, p.last
	clear(p.hist)
	p.level = levelFor(p.last, p.reject)
}

// levelFor is the least important priority whose cumulative arrivals in
// hist stay within the share 1 − reject of all of them (every priority
// when reject is 0 or nothing arrived; −1, rejecting all, when even the
// most important priority's arrivals exceed it).
func levelFor(hist []int64, reject float64) int {
	var total int64
	for _, c := range hist {
		total += c
	}
	if reject <= 0 || total == 0 {
		return len(hist) - 1
	}
	keep := (1 - reject) * float64(total)
	level, cum := -1, int64(0)
	for q, c := range hist {
		cum += c
		if float64(cum) > keep+1e-9 {
			break
		}
		level = q
	}
	return level
}
