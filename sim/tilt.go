package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// ArrivalTilt runs a scenario with its Poisson arrival rate multiplied by
// a factor on the window [From, Until) (ns) and reports the likelihood
// ratio of the arrivals (Result.Tilt), for importance sampling: the
// expectation of any function of the run under the scenario is the
// expectation under the tilt of that function times exp(LogLR). Only the
// arrival process is changed; every other draw keeps its law.
//
// The window is cut into len(Factors) slots of equal length, slot j
// tilted by Factors[j] (one factor: the whole window). For a Poisson
// process of intensity λ(t), tilted to f_j·λ(t) in slot j, with N_j
// arrivals there and Λ_j = ∫λ(t)dt over it, the ratio is
// Π_j f_j^−N_j · exp((f_j − 1)·Λ_j).
type ArrivalTilt struct {
	From, Until int64
	Factors     []float64
}

// TiltReport is what a tilted run saw in its window, per slot.
type TiltReport struct {
	Arrivals []uint64  // N_j: arrivals in slot j
	Expected []float64 // Λ_j: arrivals expected there without the tilt
	LogLR    float64   // log of the likelihood ratio
}

// ErrTiltNotPoisson says the scenario's arrivals are not a Poisson process
// the tilt can reweight.
var ErrTiltNotPoisson = errors.New("sim: an arrival tilt needs Poisson arrivals")

// tiltState is the tilt of a run: its slots and what it counted.
type tiltState struct {
	ArrivalTilt
	bounds   []int64   // slot j is [bounds[j], bounds[j+1])
	expected []float64 // Λ_j
	marks    []uint64  // arrivals handled before each bound that has passed
}

// initTilt checks the tilt, computes each Λ_j from the scenario's own
// profile and the clients' start times, and replaces the profile with the
// tilted one. Called after newModel, before start.
func (m *model) initTilt(t ArrivalTilt) error {
	ar := m.sc.Clients.Arrival
	switch {
	case ar.Process == scenario.ArrivalConstant || ar.Process == scenario.ArrivalOnce:
		return fmt.Errorf("%w, not %q", ErrTiltNotPoisson, ar.Process)
	case len(t.Factors) == 0:
		return errors.New("sim: an arrival tilt needs at least one factor")
	case t.From < 0 || t.Until <= t.From:
		return fmt.Errorf("sim: an arrival tilt needs 0 <= from < until, got [%d, %d) ns", t.From, t.Until)
	case t.Until > m.end:
		return fmt.Errorf("sim: the arrival tilt's window ends at %.3fs, after the run's end (%.3fs)", float64(t.Until)/1e9, float64(m.end)/1e9)
	case int64(len(t.Factors)) > t.Until-t.From:
		return fmt.Errorf("sim: %d tilt slots in a window of %d ns", len(t.Factors), t.Until-t.From)
	}
	for _, f := range t.Factors {
		if !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("sim: an arrival tilt's factors must be above 0, got %g", f)
		}
	}
	s := len(t.Factors)
	bounds := make([]int64, s+1)
	for j := range bounds {
		bounds[j] = t.From + (t.Until-t.From)*int64(j)/int64(s)
	}
	cl := &m.cl
	lam := make([]float64, s) // Σ over clients of ∫ m(t) dt over slot j from their start, in s
	for c := range cl.ord {
		st := m.startTime(uint32(c))
		if cl.atStart && st >= t.From && st < t.Until {
			return fmt.Errorf("%w: with first_at_start, client %d starts (and sends at once) inside the tilt's window, at %.3fs", ErrTiltNotPoisson, c, float64(st)/1e9)
		}
		for j := range s {
			if from := max(st, bounds[j]); from < bounds[j+1] {
				lam[j] += cl.prof.cum(bounds[j+1]) - cl.prof.cum(from)
			}
		}
	}
	for j := range lam {
		lam[j] *= cl.lambda
	}
	m.tilt = &tiltState{ArrivalTilt: t, bounds: bounds, expected: lam}
	cl.prof = cl.prof.tilted(bounds, t.Factors)
	return nil
}

// scheduleTilt puts a mark on the calendar at every slot bound before the
// horizon (Aux: the bound's index); the horizon itself needs none.
func (m *model) scheduleTilt() {
	for j, b := range m.tilt.bounds {
		if b < m.end {
			m.q.Schedule(b, evTiltMark, 0, uint32(j))
		}
	}
}

// tilted is p with its multiplier times f[j] on [bounds[j], bounds[j+1]).
func (p *profile) tilted(bounds []int64, f []float64) profile {
	points := []int64{0}
	if !p.flat {
		points = slices.Clone(p.at)
	}
	points = append(points, bounds...)
	slices.Sort(points)
	points = slices.Compact(points)
	q := profile{at: points, mult: make([]float64, len(points))}
	if p.slope != nil {
		q.slope = make([]float64, len(points))
	}
	for i, at := range points {
		m, s := p.rate(at), 0.0
		if p.slope != nil {
			s = p.slope[p.seg(at)]
		}
		if at >= bounds[0] && at < bounds[len(bounds)-1] {
			j, found := slices.BinarySearch(bounds, at)
			if !found {
				j--
			}
			m, s = m*f[j], s*f[j]
		}
		q.mult[i] = m
		if q.slope != nil {
			q.slope[i] = s
		}
	}
	q.finish()
	return q
}

// tiltMark handles the mark at bound j: the arrivals handled before it. An
// arrival at the very nanosecond of a mark counts on the side its
// scheduling order puts it (a measure-zero event for continuous arrival
// times).
func (m *model) tiltMark(j uint32) {
	t := m.tilt
	if int(j) == len(t.marks) {
		t.marks = append(t.marks, m.mt.arrivals)
	}
}

// tiltReport finishes the report at the end of a run; nil if the run
// stopped before Until (the window's arrivals are not all known).
func (m *model) tiltReport(stopped int64) *TiltReport {
	t := m.tilt
	if stopped < t.Until {
		return nil
	}
	marks := t.marks
	if len(marks) < len(t.bounds) { // Until is the horizon: every arrival before it was handled
		marks = append(slices.Clone(marks), m.mt.arrivals)
	}
	r := &TiltReport{Arrivals: make([]uint64, len(t.Factors)), Expected: slices.Clone(t.expected)}
	for j, f := range t.Factors {
		r.Arrivals[j] = marks[j+1] - marks[j]
		r.LogLR += -float64(r.Arrivals[j])*math.Log(f) + (f-1)*t.expected[j]
	}
	return r
}
