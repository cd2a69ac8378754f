package policy

import (
	"errors"
	"fmt"
	"math"
)

// ErrDAGORSettings is wrapped by NewDAGOR's errors.
var ErrDAGORSettings = errors.New("policy: bad priority shedding (DAGOR) settings")

func dagorErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrDAGORSettings}, a...)...)
}

// DAGORSettings configures DAGOR's priority shedding. Zero fields take the
// defaults of overload-control.md §3.6: windows of 1 s or 2000 requests,
// overload when the mean queueing time passes 20 ms, α = 5%, β = 1%.
type DAGORSettings struct {
	Window         int64   // ns
	WindowRequests int     // a window also ends after this many arrivals
	QueueTime      int64   // ns: overloaded when the window's mean queueing time exceeds it
	Alpha, Beta    float64 // admitted share cut by α when overloaded, raised by β when not
}

// DAGOR is WeChat's overload control at one service (Zhou et al.,
// "Overload Control for Scaling WeChat Microservices", SoCC 2018, §4):
// requests carry a compound priority, smaller is more important (the
// business priority, then the user priority); the service admits those
// at or above its admission level and moves the level once per window:
//
//	overloaded := mean queueing time of the window > QueueTime
//	target     := admitted · (1 − α) if overloaded, else admitted · (1 + β)
//	level      := the least important p with Σ arrivals[q ≤ p] ≤ target
//
// (never below the most important priority that arrived: shedding that
// one too would leave nothing admitted to go by, and the level could not
// rise again). A window ends after Window or
// WindowRequests arrivals, whichever first. Queueing time comes from the
// caller as running totals (the sum of waits and their count, of
// requests that started processing), so DAGOR needs no hook of its own.
type DAGOR struct {
	s        DAGORSettings
	hist     []int64 // arrivals by priority in the window
	level    int
	start    int64
	n        int
	admitted int64
	w0       float64 // wait totals at the window's start
	n0       int64
	started  bool
}

// NewDAGOR is DAGOR over priorities 0..levels−1; zero settings take the
// defaults. It starts admitting everything.
func NewDAGOR(s DAGORSettings, levels int) (*DAGOR, error) {
	if s.Window == 0 {
		s.Window = 1e9
	}
	if s.WindowRequests == 0 {
		s.WindowRequests = 2000
	}
	if s.QueueTime == 0 {
		s.QueueTime = 20e6
	}
	if s.Alpha == 0 {
		s.Alpha = 0.05
	}
	if s.Beta == 0 {
		s.Beta = 0.01
	}
	switch {
	case levels < 1:
		return nil, dagorErr("dagor needs at least one priority level, got %d", levels)
	case s.Window < 0 || s.WindowRequests < 1 || s.QueueTime < 0:
		return nil, dagorErr("dagor needs window > 0, window_requests >= 1 and queue_time > 0")
	case s.Alpha < 0 || s.Alpha >= 1 || s.Beta < 0:
		return nil, dagorErr("dagor needs alpha in (0, 1) and beta > 0, got %g and %g", s.Alpha, s.Beta)
	}
	return &DAGOR{s: s, hist: make([]int64, levels), level: levels - 1}, nil
}

// Level is the admission level: priorities up to it are admitted.
func (d *DAGOR) Level() int { return d.level }

// Admit decides on an arrival of priority prio at now; waitSum and waitN
// are the caller's running totals of queueing time (ns) and of requests
// that started processing.
func (d *DAGOR) Admit(now int64, prio int, waitSum float64, waitN int64) bool {
	if !d.started {
		d.started, d.start, d.w0, d.n0 = true, now, waitSum, waitN
	}
	if now-d.start >= d.s.Window || d.n >= d.s.WindowRequests {
		d.adjust(waitSum, waitN)
		d.start, d.w0, d.n0 = now, waitSum, waitN
	}
	prio = min(max(prio, 0), len(d.hist)-1)
	d.n++
	d.hist[prio]++
	if prio > d.level {
		return false
	}
	d.admitted++
	return true
}

// adjust closes a window: it moves the level and clears the counts.
func (d *DAGOR) adjust(waitSum float64, waitN int64) {
	overloaded := false
	if n := waitN - d.n0; n > 0 {
		overloaded = (waitSum-d.w0)/float64(n) > float64(d.s.QueueTime)
	}
	target := float64(d.admitted) * (1 + d.s.Beta)
	if overloaded {
		target = float64(d.admitted) * (1 - d.s.Alpha)
	}
	level, cum, first := 0, int64(0), -1
	for p, c := range d.hist {
		if c > 0 && first < 0 {
			first = p
		}
		cum += c
		if float64(cum) > target+1e-9*math.Abs(target) {
			break
		}
		level = p
	}
	if first >= 0 {
		level = max(level, first)
	} else {
		level = d.level // no arrivals: nothing to go by
	}
	d.level = level
	clear(d.hist)
	d.n, d.admitted = 0, 0
}
