package dist

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Within is how a Histogram spreads a bucket's observations between its
// bounds.
type Within uint8

// Rules for sampling within a bucket.
const (
	Uniform    Within = iota // uniform between the bucket's bounds
	LogUniform               // uniform in log(x) between the bucket's bounds (the first bucket, from 0, stays uniform)
)

// Histogram is a distribution given by a Prometheus histogram's cumulative
// buckets: count_k observations were <= le_k. Bucket k holds
// count_k − count_{k−1} observations between le_{k−1} and le_k; the first
// bucket starts at 0 (service times are not negative), and the +Inf
// bucket, if it holds observations, between the last finite bound and a
// cap the caller states. Sampling is the inverse CDF of that piecewise
// density at one uniform draw, so a histogram is as deterministic as any
// other distribution here and costs one draw.
type Histogram struct {
	q    []float64 // cumulative probabilities at the bounds; q[0] = 0, q[last] = 1
	lo   []float64 // bucket k's lower bound, ns (lo[0] = 0)
	hi   []float64 // and its upper bound, ns
	logu bool
	mean float64 // ns
	m2   float64 // E[X²], ns²
}

// NewHistogram is the distribution of the cumulative buckets (le_k in ns,
// increasing, the last possibly +Inf; count_k non-decreasing, total > 0).
// infCap (ns) is the upper bound given to the +Inf bucket: required (> the
// last finite bound) when that bucket holds observations, ignored
// otherwise. A bucket without observations is never drawn.
func NewHistogram(le, count []float64, within Within, infCap float64) (*Histogram, error) {
	if len(le) != len(count) || len(le) == 0 {
		return nil, errors.New("dist: a histogram needs at least one bucket, each with a bound (le) and a cumulative count")
	}
	if within > LogUniform {
		return nil, fmt.Errorf("dist: unknown within-bucket rule %d", within)
	}
	n := len(le)
	if !math.IsInf(le[n-1], 1) {
		return nil, fmt.Errorf("dist: a histogram must end with the +Inf bucket (the total count), got le %v last", le[n-1])
	}
	var prevLe, prevC float64
	for k := range n {
		if math.IsNaN(le[k]) || le[k] < 0 || (k > 0 && !(le[k] > prevLe)) {
			return nil, fmt.Errorf("dist: bucket %d: bounds (le) must be >= 0 and increase, got %v after %v", k, le[k], prevLe)
		}
		if math.IsNaN(count[k]) || math.IsInf(count[k], 0) || count[k] < prevC {
			return nil, fmt.Errorf("dist: bucket %d (le %v): cumulative counts must be finite and must not decrease, got %v after %v", k, le[k], count[k], prevC)
		}
		prevLe, prevC = le[k], count[k]
	}
	total := count[n-1]
	if !(total > 0) {
		return nil, errors.New("dist: a histogram needs observations: the +Inf bucket's count is 0")
	}
	h := &Histogram{logu: within == LogUniform, q: []float64{0}}
	lo, below := 0.0, 0.0
	for k := range n {
		up := le[k]
		if math.IsInf(up, 1) {
			if count[k] == below {
				break // nothing above the last finite bound
			}
			if !(infCap > lo) || math.IsInf(infCap, 0) {
				return nil, fmt.Errorf("dist: the +Inf bucket holds %v observations above %v ns: give a finite cap above %v ns for them (inf_cap)", count[k]-below, lo, lo)
			}
			up = infCap
		}
		h.lo, h.hi = append(h.lo, lo), append(h.hi, up)
		h.q = append(h.q, count[k]/total)
		lo, below = up, count[k]
	}
	h.q[len(h.q)-1] = 1
	for k := range h.lo {
		p := h.q[k+1] - h.q[k]
		m, m2 := h.moments(k)
		h.mean += p * m
		h.m2 += p * m2
	}
	return h, nil
}

// logBucket tells whether bucket k is spread log-uniformly: with the rule,
// a lower bound > 0 and an upper bound above it.
func (h *Histogram) logBucket(k int) bool {
	return h.logu && h.lo[k] > 0 && h.hi[k] > h.lo[k]
}

// moments are E[X] and E[X²] within bucket k: (a+b)/2 and (a²+ab+b²)/3
// uniform; (b−a)/ln(b/a) and (b²−a²)/(2 ln(b/a)) log-uniform.
func (h *Histogram) moments(k int) (m, m2 float64) {
	a, b := h.lo[k], h.hi[k]
	if h.logBucket(k) {
		l := math.Log(b / a)
		return (b - a) / l, (b*b - a*a) / (2 * l)
	}
	return (a + b) / 2, (a*a + a*b + b*b) / 3
}

// Sample is the value for the uniform draw u in [0, 1): the bucket k with
// q_k <= u < q_{k+1}, and within it the fraction f = (u − q_k)/(q_{k+1} − q_k)
// of the way from its lower to its upper bound, linearly (a + f(b − a)) or
// in log (a·(b/a)^f).
func (h *Histogram) Sample(u float64) int64 {
	k := sort.Search(len(h.lo), func(i int) bool { return h.q[i+1] > u })
	k = min(k, len(h.lo)-1)
	f := (u - h.q[k]) / (h.q[k+1] - h.q[k])
	f = min(max(f, 0), 1)
	a, b := h.lo[k], h.hi[k]
	var x float64
	if h.logBucket(k) {
		x = a * math.Pow(b/a, f)
	} else {
		x = a + f*(b-a)
	}
	return clampNS(math.Round(x))
}

// Mean is the mean of the piecewise density, ns: Σ p_k·E[X | bucket k].
func (h *Histogram) Mean() float64 { return h.mean }

// Variance of the piecewise density, ns².
func (h *Histogram) Variance() float64 { return math.Max(h.m2-h.mean*h.mean, 0) }

// Buckets is the number of buckets drawn from (the +Inf bucket counts when
// it holds observations).
func (h *Histogram) Buckets() int { return len(h.lo) }
