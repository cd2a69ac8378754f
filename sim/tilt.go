package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// ArrivalTilt runs a scenario with its Poisson arrival rate multiplied by
// Factor on [From, Until) (ns) and reports the likelihood ratio of the
// arrivals (Result.Tilt), for importance sampling: the expectation of any
// function of the run under the scenario is the expectation under the
// tilt of that function times exp(LogLR). Only the arrival process is
// changed; every other draw keeps its law.
//
// For a Poisson process of intensity λ(t) on the window, tilted to
// f·λ(t), with N arrivals in the window and Λ = ∫λ(t)dt over it, the
// ratio is f^−N · exp((f − 1)·Λ).
type ArrivalTilt struct {
	From, Until int64
	Factor      float64
}

// TiltReport is what a tilted run saw in its window.
type TiltReport struct {
	Arrivals uint64  // N: arrivals in [From, Until)
	Expected float64 // Λ: arrivals expected there without the tilt
	LogLR    float64 // log of the likelihood ratio
}

// ErrTiltNotPoisson says the scenario's arrivals are not a Poisson process
// the tilt can reweight.
var ErrTiltNotPoisson = errors.New("sim: an arrival tilt needs Poisson arrivals")

// tiltState is the tilt of a run: its window and what it counted.
type tiltState struct {
	ArrivalTilt
	expected float64
	atFrom   uint64 // arrivals handled before From
	closed   bool   // the mark at Until ran
	rep      TiltReport
}

// initTilt checks the tilt, computes Λ from the scenario's own profile and
// the clients' start times, and replaces the profile with the tilted one.
// Called after newModel, before start.
func (m *model) initTilt(t ArrivalTilt) error {
	ar := m.sc.Clients.Arrival
	switch {
	case ar.Process == scenario.ArrivalConstant || ar.Process == scenario.ArrivalOnce:
		return fmt.Errorf("%w, not %q", ErrTiltNotPoisson, ar.Process)
	case !(t.Factor > 0) || math.IsInf(t.Factor, 0):
		return fmt.Errorf("sim: an arrival tilt's factor must be above 0, got %g", t.Factor)
	case t.From < 0 || t.Until <= t.From:
		return fmt.Errorf("sim: an arrival tilt needs 0 <= from < until, got [%d, %d) ns", t.From, t.Until)
	}
	t.Until = min(t.Until, m.end)
	if t.Until <= t.From {
		return fmt.Errorf("sim: the arrival tilt's window starts at %.3fs, at or after the run's end", float64(t.From)/1e9)
	}
	cl := &m.cl
	var lam float64 // Σ over clients of ∫ m(t) dt over the window from their start, in s
	for c := range cl.ord {
		s := m.startTime(uint32(c))
		if cl.atStart && s >= t.From && s < t.Until {
			return fmt.Errorf("%w: with first_at_start, client %d starts (and sends at once) inside the tilt's window, at %.3fs", ErrTiltNotPoisson, c, float64(s)/1e9)
		}
		from := max(s, t.From)
		if from < t.Until {
			lam += cl.prof.cum(t.Until) - cl.prof.cum(from)
		}
	}
	m.tilt = &tiltState{ArrivalTilt: t, expected: lam * cl.lambda}
	cl.prof = cl.prof.tilted(t.From, t.Until, t.Factor)
	return nil
}

// tilted is p with its multiplier times f on [from, until).
func (p *profile) tilted(from, until int64, f float64) profile {
	points := []int64{0}
	if !p.flat {
		points = slices.Clone(p.at)
	}
	points = append(points, from, until)
	slices.Sort(points)
	points = slices.Compact(points)
	steps := make([]scenario.Step, 0, len(points))
	for _, at := range points {
		m := 1.0
		if !p.flat {
			m = p.mult[p.seg(at)]
		}
		if at >= from && at < until {
			m *= f
		}
		steps = append(steps, scenario.Step{At: scenario.Duration(at), Multiplier: m})
	}
	return newProfile(steps)
}

// tiltMark handles the tilt's marks at From (Aux 0) and Until (Aux 1):
// the arrivals handled before each. An arrival at the very nanosecond of
// a mark counts on the side its scheduling order puts it (a measure-zero
// event for continuous arrival times).
func (m *model) tiltMark(aux uint32) {
	t := m.tilt
	if aux == 0 {
		t.atFrom = m.mt.arrivals
		return
	}
	t.rep.Arrivals = m.mt.arrivals - t.atFrom
	t.closed = true
}

// tiltReport finishes the report at the end of a run; nil if the run
// stopped before Until (the window's arrivals are not all known).
func (m *model) tiltReport(stopped int64) *TiltReport {
	t := m.tilt
	r := t.rep
	if stopped < t.Until {
		return nil
	}
	if !t.closed { // Until is the horizon: every arrival before it was handled
		r.Arrivals = m.mt.arrivals - t.atFrom
	}
	r.Expected = t.expected
	r.LogLR = -float64(r.Arrivals)*math.Log(t.Factor) + (t.Factor-1)*t.expected
	return &r
}
