package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Empirical is a distribution given by data: either samples (each equally
// likely: the empirical distribution itself, as a bootstrap draws from
// it) or a quantile table (q_k, v_k) with q_0 = 0 and q_last = 1, read as a
// piecewise-linear inverse CDF (uniform between neighbouring points), the
// shape of a latency histogram's percentiles.
type Empirical struct {
	samples []int64   // sorted; set for samples
	q       []float64 // quantile table: probabilities, increasing from 0 to 1
	v       []float64 // and their values, ns, non-decreasing
}

// FromSamples is the empirical distribution of samples (ns, each >= 0).
func FromSamples(samples []int64) (*Empirical, error) {
	if len(samples) == 0 {
		return nil, errors.New("dist: no samples")
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if s[0] < 0 {
		return nil, fmt.Errorf("dist: a sample is negative (%d ns)", s[0])
	}
	return &Empirical{samples: s}, nil
}

// FromQuantiles is the distribution whose inverse CDF passes through the
// points (q_k, v_k) and is linear between them. q must increase strictly
// from exactly 0 to exactly 1, v (ns, >= 0) must not decrease.
func FromQuantiles(q []float64, v []int64) (*Empirical, error) {
	if len(q) != len(v) || len(q) < 2 {
		return nil, errors.New("dist: a quantile table needs at least two points (quantiles 0 and 1)")
	}
	if q[0] != 0 || q[len(q)-1] != 1 {
		return nil, fmt.Errorf("dist: a quantile table must start at quantile 0 (the minimum) and end at 1 (the maximum), got %v and %v", q[0], q[len(q)-1])
	}
	e := &Empirical{q: slices.Clone(q), v: make([]float64, len(v))}
	for k := range q {
		if k > 0 && !(q[k] > q[k-1]) {
			return nil, fmt.Errorf("dist: quantiles must increase, got %v after %v", q[k], q[k-1])
		}
		if v[k] < 0 || (k > 0 && v[k] < v[k-1]) {
			return nil, fmt.Errorf("dist: values must be >= 0 and must not decrease, got %d ns at quantile %v", v[k], q[k])
		}
		e.v[k] = float64(v[k])
	}
	return e, nil
}

// Sample is the value for the uniform draw u in [0, 1): the
// ⌊u·n⌋-th smallest sample, or the quantile table's inverse CDF at u.
func (e *Empirical) Sample(u float64) int64 {
	if e.samples != nil {
		k := int(u * float64(len(e.samples)))
		return e.samples[min(max(k, 0), len(e.samples)-1)]
	}
	return int64(math.Round(e.Quantile(u)))
}

// Quantile is the inverse CDF at p in [0, 1]: for samples the smallest x
// with F(x) >= p (the ⌈p·n⌉-th smallest, the first for p = 0); for a table,
// linear between its points.
func (e *Empirical) Quantile(p float64) float64 {
	if e.samples != nil {
		k := int(math.Ceil(p*float64(len(e.samples)))) - 1
		return float64(e.samples[min(max(k, 0), len(e.samples)-1)])
	}
	k, found := slices.BinarySearch(e.q, p)
	switch {
	case found:
		return e.v[k]
	case k == 0:
		return e.v[0]
	case k == len(e.q):
		return e.v[len(e.v)-1]
	}
	f := (p - e.q[k-1]) / (e.q[k] - e.q[k-1])
	return e.v[k-1] + f*(e.v[k]-e.v[k-1])
}

// Mean, ns: the samples' mean, or Σ (q_k − q_{k−1})·(v_{k−1} + v_k)/2 for a
// table (the mean of a piecewise-uniform distribution).
func (e *Empirical) Mean() float64 {
	if e.samples != nil {
		var s float64
		for _, x := range e.samples {
			s += float64(x)
		}
		return s / float64(len(e.samples))
	}
	var s float64
	for k := 1; k < len(e.q); k++ {
		s += (e.q[k] - e.q[k-1]) * (e.v[k-1] + e.v[k]) / 2
	}
	return s
}

// Len is the number of samples or table points.
func (e *Empirical) Len() int {
	if e.samples != nil {
		return len(e.samples)
	}
	return len(e.q)
}
