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
	// Long profiles (a recorded day) have an index: tIdx[j] is the segment
	// of time j·tW and xIdx[j] the first segment whose end reaches
	// Λ = j·xW, so a look-up searches the one or two segments between two
	// entries. nil below indexFrom segments.
	tIdx []int32
	tInv float64 // 1/tW, the index's buckets per ns
	xIdx []int32
	xInv float64 // 1/xW
}

// indexFrom is the number of segments from which a profile is indexed.
const indexFrom = 64

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
	n := len(p.at)
	if n < indexFrom {
		return
	}
	tW := max(1, p.at[n-1]/int64(n-1))
	p.tInv = 1 / float64(tW)
	p.tIdx = make([]int32, p.at[n-1]/tW+2)
	k := 0
	for j := range p.tIdx {
		for k < n-1 && p.at[k+1] <= int64(j)*tW {
			k++
		}
		p.tIdx[j] = int32(k)
	}
	if total := p.cumS[n-1]; total > 0 {
		// Four entries per segment on average: where the rate is a fifth of
		// its mean, a look-up still steps through about one segment.
		xW := total / float64(4*(n-1))
		p.xInv = 1 / xW
		p.xIdx = make([]int32, 4*(n-1)+1)
		k = 0
		for j := range p.xIdx {
			for k < n-1 && p.cumS[k+1] < float64(j)*xW {
				k++
			}
			p.xIdx[j] = int32(k)
		}
	}
}

// seg is the segment holding t >= 0.
func (p *profile) seg(t int64) int {
	if p.tIdx != nil {
		n := len(p.at)
		if t >= p.at[n-1] {
			return n - 1
		}
		// From the index entry (t·tInv may round across a bucket's edge:
		// step back if it starts after t), a step or two forward (none on
		// evenly spaced samples).
		k := int(p.tIdx[min(int(float64(max(t, 0))*p.tInv), len(p.tIdx)-1)])
		for k > 0 && p.at[k] > t {
			k--
		}
		for i := 0; p.at[k+1] <= t; i++ {
			if k++; i == walk {
				j, found := slices.BinarySearch(p.at[k:], t)
				if !found {
					j--
				}
				return k + j
			}
		}
		return k
	}
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
	return p.cumIn(p.seg(t), t)
}

// cumNear is cum for a time at or a little after the previous call's:
// *cur holds the segment found then. The simulator handles arrivals in
// time order, so it is almost always the same segment or the next.
func (p *profile) cumNear(t int64, cur *int) float64 {
	k := *cur
	if k >= len(p.at) || p.at[k] > t {
		k = p.seg(t)
	} else if k+1 < len(p.at) && p.at[k+1] <= t {
		if k++; k+1 < len(p.at) && p.at[k+1] <= t {
			k = p.seg(t)
		}
	}
	*cur = k
	return p.cumIn(k, t)
}

// cumIn is Λ(t) for t in segment k.
func (p *profile) cumIn(k int, t int64) float64 {
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
	k := p.reach(x)
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

// reach is the first segment k whose end reaches x (Λ(at[k+1]) >= x), or
// the last.
func (p *profile) reach(x float64) int {
	if p.xIdx == nil || !(x > 0) {
		k, _ := slices.BinarySearch(p.cumS[1:], x)
		return k
	}
	last := len(p.at) - 1
	if x > p.cumS[last] {
		return last
	}
	// From the index entry (x/xW may round across a bucket's edge: step
	// back if its segment already reaches x), a step or two forward.
	k := int(p.xIdx[min(int(x*p.xInv), len(p.xIdx)-1)])
	for k > 0 && p.cumS[k] >= x {
		k--
	}
	for i := 0; p.cumS[k+1] < x; i++ {
		if k++; i == walk {
			j, _ := slices.BinarySearch(p.cumS[k+1:], x)
			return k + j
		}
	}
	return k
}

// walk is how many segments a look-up steps through from its index entry
// before it searches the rest by halves.
const walk = 8
