package sim

import (
	"slices"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// arrivalProfile is the fleet's rate multiplier: the profile's steps,
// times a recorded rate (clients.arrival.trace) or a cycle when the
// scenario has one. total is the fleet's base rate per second (λ times
// the clients), which a trace's rates are divided by.
func arrivalProfile(a *scenario.Arrival, dur int64, total float64) profile {
	steps := newProfile(a.Profile)
	var base profile
	switch {
	case a.Trace != nil && a.Trace.Rates != nil:
		base = traceProfile(a.Trace, total)
	case a.Cycle != nil:
		base = cycleProfile(a.Cycle, dur)
	default:
		return steps
	}
	if steps.flat {
		return base
	}
	return base.times(&steps)
}

// traceProfile is a recorded rate series as a multiplier of total: held
// between samples (step) or a straight line to the next (linear), the
// last sample held.
func traceProfile(tr *scenario.Trace, total float64) profile {
	r := tr.Rates
	n := len(r.T)
	p := profile{at: slices.Clone(r.T), mult: make([]float64, n)}
	for i, v := range r.Rate {
		p.mult[i] = v * tr.Scale / total
	}
	if tr.Interpolate == scenario.InterpolateLinear {
		p.slope = make([]float64, n)
		for i := range n - 1 {
			p.slope[i] = (p.mult[i+1] - p.mult[i]) / (float64(r.T[i+1]-r.T[i]) / 1e9)
		}
	}
	p.finish()
	return p
}

// cycleProfile is c over [0, dur]: a segment between every two points the
// run passes, the multiplier held from dur on.
func cycleProfile(c *scenario.Cycle, dur int64) profile {
	per, start := int64(c.Period), int64(c.Start)
	at := []int64{0}
	for k := int64(0); k*per-start < dur; k++ {
		for _, pt := range c.Points {
			if t := k*per + int64(pt.At) - start; t > 0 && t < dur {
				at = append(at, t)
			}
		}
	}
	at = append(at, dur)
	p := profile{at: at, mult: make([]float64, len(at)), slope: make([]float64, len(at))}
	for i, t := range at {
		p.mult[i] = cycleAt(c, t)
	}
	for i := range len(at) - 1 {
		p.slope[i] = (p.mult[i+1] - p.mult[i]) / (float64(at[i+1]-at[i]) / 1e9)
	}
	p.finish()
	return p
}

// cycleAt is the cycle's multiplier at run time t: the straight line
// between the points around its phase, wrapping from the last point to
// the first.
func cycleAt(c *scenario.Cycle, t int64) float64 {
	pts := c.Points
	per := int64(c.Period)
	ph := (t + int64(c.Start)) % per
	i, found := slices.BinarySearchFunc(pts, ph, func(p scenario.CyclePoint, t int64) int {
		switch {
		case int64(p.At) < t:
			return -1
		case int64(p.At) > t:
			return 1
		}
		return 0
	})
	if found || len(pts) == 1 {
		return pts[min(i, len(pts)-1)].Multiplier
	}
	// pts[i-1] <= ph < pts[i], wrapping around the period.
	a, b := i-1, i
	ta, tb := int64(0), int64(0)
	if a < 0 {
		a, ta = len(pts)-1, -per
	}
	if b == len(pts) {
		b, tb = 0, per
	}
	x0, x1 := ta+int64(pts[a].At), tb+int64(pts[b].At)
	f := float64(ph-x0) / float64(x1-x0)
	return pts[a].Multiplier + f*(pts[b].Multiplier-pts[a].Multiplier)
}

// times is p multiplied by the flat-segment profile q (profile steps).
func (p *profile) times(q *profile) profile {
	at := append(slices.Clone(p.at), q.at...)
	slices.Sort(at)
	at = slices.Compact(at)
	r := profile{at: at, mult: make([]float64, len(at))}
	if p.slope != nil {
		r.slope = make([]float64, len(at))
	}
	for i, t := range at {
		g := q.rate(t)
		r.mult[i] = p.rate(t) * g
		if r.slope != nil {
			r.slope[i] = p.slope[p.seg(t)] * g
		}
	}
	r.finish()
	return r
}
