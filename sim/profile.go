package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// profile is a piecewise-constant arrival-rate multiplier m(t) (1 before
// the first step). Arrivals are generated in operational time
// Λ(t) = ∫₀ᵗ m(s) ds: a client's unit-rate process mapped through Λ⁻¹ is a
// Poisson process of rate λ·m(t), and the same draws give the same
// operational times whatever the profile, which keeps comparisons fair.
type profile struct {
	flat bool
	at   []int64   // segment starts, ns; at[0] = 0
	mult []float64 // multiplier in each segment
	cumS []float64 // Λ(at[k]) in seconds
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
		p.at = append(p.at, int64(s.At))
		p.mult = append(p.mult, s.Multiplier)
	}
	p.cumS = make([]float64, len(p.at))
	for k := 1; k < len(p.at); k++ {
		p.cumS[k] = p.cumS[k-1] + p.mult[k-1]*float64(p.at[k]-p.at[k-1])/1e9
	}
	return p
}

func (p *profile) seg(t int64) int {
	k := 0
	for k+1 < len(p.at) && p.at[k+1] <= t {
		k++
	}
	return k
}

// cum is Λ(t) in seconds.
func (p *profile) cum(t int64) float64 {
	if p.flat {
		return float64(t) / 1e9
	}
	k := p.seg(t)
	return p.cumS[k] + p.mult[k]*float64(t-p.at[k])/1e9
}

// invert is the first time t with Λ(t) >= x, or MaxInt64 if Λ never gets
// there (the rate stays at zero).
func (p *profile) invert(x float64) int64 {
	if p.flat {
		return int64(math.Round(x * 1e9))
	}
	for k := range p.at {
		last := k == len(p.at)-1
		if !last && p.cumS[k+1] < x {
			continue
		}
		if p.mult[k] <= 0 {
			if last {
				return math.MaxInt64
			}
			continue
		}
		t := p.at[k] + int64(math.Round((x-p.cumS[k])/p.mult[k]*1e9))
		return max(t, p.at[k])
	}
	return math.MaxInt64
}
