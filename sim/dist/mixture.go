package dist

import (
	"errors"
	"fmt"
	"math"
)

// Kind is the distribution of one mixture component.
type Kind uint8

// Component distributions.
const (
	Constant    Kind = iota // always Mean
	Exponential             // mean Mean
	Lognormal               // mean Mean, log-standard-deviation Sigma
)

// Component is one weighted part of a Mixture. Mean is in nanoseconds.
type Component struct {
	Weight float64
	Kind   Kind
	Mean   int64
	Sigma  float64 // Lognormal only
}

// Sample is the component's value for the draws e (standard exponential,
// mean 1) and z (standard normal): Mean; Mean·e; exp(μ + σz) with
// μ = ln(Mean) − σ²/2 so that the mean is exactly Mean.
func (c Component) Sample(e, z float64) int64 {
	switch c.Kind {
	case Exponential:
		return clampNS(math.Round(float64(c.Mean) * e))
	case Lognormal:
		mu := math.Log(float64(c.Mean)) - c.Sigma*c.Sigma/2
		return clampNS(math.Round(math.Exp(mu + c.Sigma*z)))
	}
	return c.Mean
}

// Variance of the component, ns².
func (c Component) Variance() float64 {
	m := float64(c.Mean)
	switch c.Kind {
	case Exponential:
		return m * m
	case Lognormal:
		return m * m * (math.Exp(c.Sigma*c.Sigma) - 1)
	}
	return 0
}

// clampNS keeps a sample inside int64 nanoseconds (2^62 ns is 146 years).
func clampNS(x float64) int64 { return int64(math.Min(x, 1<<62)) }

// Mixture picks component i with probability Weight_i / Σ Weight and
// samples it: e.g. 95% at 100 ms and 5% hanging until a 100 s deadline
// (the SRE book's long-deadline example) is
//
//	{0.95, Constant, 100ms}, {0.05, Constant, 100s}: mean 0.95·0.1 + 0.05·100 = 5.095 s
type Mixture struct {
	comps []Component
	cum   []float64 // cumulative normalised weights; the last is 1
}

// NewMixture checks the components (at least one, weights > 0 and finite,
// means > 0, lognormal σ in (0, 5]) and returns the mixture.
func NewMixture(comps []Component) (*Mixture, error) {
	if len(comps) == 0 {
		return nil, errors.New("dist: a mixture needs at least one component")
	}
	var total float64
	for i, c := range comps {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 1) {
			return nil, fmt.Errorf("dist: component %d: weight must be a finite number > 0, got %v", i, c.Weight)
		}
		if c.Mean <= 0 {
			return nil, fmt.Errorf("dist: component %d: mean must be > 0, got %d ns", i, c.Mean)
		}
		if c.Kind == Lognormal && !(c.Sigma > 0 && c.Sigma <= 5) {
			return nil, fmt.Errorf("dist: component %d: sigma must be in (0, 5], got %v", i, c.Sigma)
		}
		if c.Kind > Lognormal {
			return nil, fmt.Errorf("dist: component %d: unknown kind %d", i, c.Kind)
		}
		total += c.Weight
	}
	m := &Mixture{comps: append([]Component(nil), comps...), cum: make([]float64, len(comps))}
	var acc float64
	for i, c := range comps {
		acc += c.Weight
		m.cum[i] = acc / total
	}
	m.cum[len(m.cum)-1] = 1
	return m, nil
}

// Pick is the index of the component that the uniform draw u in [0, 1)
// selects: the first i with u < cum_i.
func (m *Mixture) Pick(u float64) int {
	for i, c := range m.cum {
		if u < c {
			return i
		}
	}
	return len(m.cum) - 1
}

// Component is component i.
func (m *Mixture) Component(i int) Component { return m.comps[i] }

// Sample is the mixture's value for the draws u (picks the component), e
// and z (sample it; see Component.Sample).
func (m *Mixture) Sample(u, e, z float64) int64 {
	return m.comps[m.Pick(u)].Sample(e, z)
}

// Mean is Σ p_i·mean_i, ns.
func (m *Mixture) Mean() float64 {
	var s, prev float64
	for i, c := range m.comps {
		s += (m.cum[i] - prev) * float64(c.Mean)
		prev = m.cum[i]
	}
	return s
}

// Variance is Σ p_i·(var_i + mean_i²) − mean², ns² (the law of total
// variance).
func (m *Mixture) Variance() float64 {
	var s, prev float64
	for i, c := range m.comps {
		p := m.cum[i] - prev
		prev = m.cum[i]
		s += p * (c.Variance() + float64(c.Mean)*float64(c.Mean))
	}
	mu := m.Mean()
	return s - mu*mu
}
