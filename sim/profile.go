package sim

import (
	"math"
	"slices"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// profile is a piecewise-linear arrival-rate multiplier m(t) (1 before
// the first step): m(t) = mult[k] + slope[k]·(t − at[k]) on segment k.
// Arrivals are generated in operational time Λ(t) = ∫₀ᵗ m(s) ds: a
// client's unit-rate process mapped through Λ⁻¹ is a Poisson process of
// rate λ·m(t), and the same draws give the same operational times whatever
// the profile, which keeps comparisons fair. On a flat segment Λ is linear
// and its inverse one division; on a sloped one (a ramp, a cycle, a
// linearly interpolated trace) Λ is quadratic and inverted exactly.
// Segments are found by binary search: a day of one-second samples costs
// 17 comparisons per arrival and no memory per client.
type profile struct {
	flat  bool
	at    []int64   // segment starts, ns; at[0] = 0, increasing
	mult  []float64 // multiplier at each segment's start
	slope []float64 // its change per second in each segment; nil: every segment flat
	cumS  []float64 // Λ(at[k]) in seconds
}

func newProfile(steps []scenario.Step) profile {
	if len(steps) == 0 {
		return profile{flat: true}
	}
	p := profile{at: []int64{0}, mult: []float64{1}}
	for _, s := range steps {
		if int64(s.At) == 0 {
			p.mult[0] = s.Multiplier
			continue
		}
		if s.Ramp {
			if p.slope == nil {
				p.slope = make([]float64, len(p.at))
			}
			k := len(p.at) - 1
			p.slope[k] = (s.Multiplier - p.mult[k]) / (float64(int64(s.At)-p.at[k]) / 1e9)
		}
		p.at = append(p.at, int64(s.At))
		p.mult = append(p.mult, s.Multiplier)
		if p.slope != nil {
			p.slope = append(p.slope, 0)
		}
	}
	p.finish()
	return p
}

// finish computes Λ at every segment's start.
func (p *profile) finish() {
	p.cumS = make([]float64, len(p.at))
	for k := 1; k < len(p.at); k++ {
		p.cumS[k] = p.cumS[k-1] + p.mult[k-1]*float64(p.at[k]-p.at[k-1])/1e9
		if p.slope != nil && p.slope[k-1] != 0 {
			dt := float64(p.at[k]-p.at[k-1]) / 1e9
			p.cumS[k] += p.slope[k-1] * dt * dt / 2
		}
	}
}

// seg is the segment holding t >= 0.
func (p *profile) seg(t int64) int {
	k, found := slices.BinarySearch(p.at, t)
	if !found {
		k--
	}
	return max(k, 0)
}

// rate is m(t).
func (p *profile) rate(t int64) float64 {
	if p.flat {
		return 1
	}
	k := p.seg(t)
	m := p.mult[k]
	if p.slope != nil {
		m += p.slope[k] * float64(t-p.at[k]) / 1e9
	}
	return m
}

// cum is Λ(t) in seconds.
func (p *profile) cum(t int64) float64 {
	if p.flat {
		return float64(t) / 1e9
	}
	k := p.seg(t)
	c := p.cumS[k] + p.mult[k]*float64(t-p.at[k])/1e9
	if p.slope != nil && p.slope[k] != 0 {
		dt := float64(t-p.at[k]) / 1e9
		c += p.slope[k] * dt * dt / 2
	}
	return c
}

// invert is the first time t with Λ(t) >= x, or MaxInt64 if Λ never gets
// there (the rate stays at zero).
func (p *profile) invert(x float64) int64 {
	if p.flat {
		return int64(math.Round(x * 1e9))
	}
	last := len(p.at) - 1
	// The first segment whose end reaches x: for k >= 1, Λ(at[k]) < x, so
	// the rate is positive somewhere in it, unless it is the last.
	k, _ := slices.BinarySearch(p.cumS[1:], x)
	if x <= 0 {
		// Λ(0) = 0 already reaches x: the first moment the rate is positive.
		for k = 0; k < last && p.mult[k] <= 0 && (p.slope == nil || p.slope[k] <= 0); k++ {
		}
	}
	var s float64
	if p.slope != nil {
		s = p.slope[k]
	}
	if s == 0 {
		if p.mult[k] <= 0 {
			return math.MaxInt64 // the last segment, at zero rate
		}
		t := p.at[k] + int64(math.Round((x-p.cumS[k])/p.mult[k]*1e9))
		return max(t, p.at[k])
	}
	// Λ(at[k] + τ) = cumS[k] + m·τ + s·τ²/2 = x, with m + s·τ >= 0 over
	// the segment: τ = 2d / (m + √(m² + 2sd)), the stable root.
	d := x - p.cumS[k]
	if d <= 0 {
		return p.at[k]
	}
	m := p.mult[k]
	disc := m*m + 2*s*d
	if disc < 0 || m+math.Sqrt(disc) <= 0 {
		return math.MaxInt64 // a falling last segment that reaches zero first
	}
	tau := 2 * d / (m + math.Sqrt(disc))
	return p.at[k] + int64(math.Round(tau*1e9))
}
