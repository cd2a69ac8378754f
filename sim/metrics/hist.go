package metrics

import "math/bits"

// Histogram is a log-linear histogram of non-negative int64 values
// (nanoseconds): each power of two is split into 32 sub-buckets, so a
// quantile is reported within about 1.6% of the true value (half a
// sub-bucket). Values below 32 are exact.
type Histogram struct {
	counts [64 * subBuckets]uint32
	n      uint64
}

const subBits = 5
const subBuckets = 1 << subBits

func bucketOf(v int64) int {
	if v < subBuckets {
		if v < 0 {
			v = 0
		}
		return int(v)
	}
	e := bits.Len64(uint64(v)) - subBits - 1 // v >> e is in [32, 64)
	return (e+1)*subBuckets + int(uint64(v)>>e) - subBuckets
}

// lowerBound and width of bucket i, the inverse of bucketOf.
func bucketRange(i int) (lo, width int64) {
	if i < subBuckets {
		return int64(i), 1
	}
	e := i/subBuckets - 1
	m := int64(i%subBuckets + subBuckets)
	return m << e, int64(1) << e
}

// Add records one value.
func (h *Histogram) Add(v int64) {
	h.counts[bucketOf(v)]++
	h.n++
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Reset empties the histogram.
func (h *Histogram) Reset() {
	if h.n == 0 {
		return
	}
	clear(h.counts[:])
	h.n = 0
}

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// Quantile returns the q-quantile (0 < q <= 1): the midpoint of the bucket
// holding the ceil(q·n)-th smallest value. ok is false when empty.
func (h *Histogram) Quantile(q float64) (v float64, ok bool) {
	if h.n == 0 {
		return 0, false
	}
	rank := uint64(q*float64(h.n) + 0.999999999)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			lo, w := bucketRange(i)
			return float64(lo) + float64(w-1)/2, true
		}
	}
	return 0, false // unreachable
}

// Quantiles sets out[i] to the qs[i]-quantile, as Quantile would, in one
// pass over the buckets; qs must be ascending (q = 1 is the largest
// value's bucket midpoint: the maximum within the same 1.6%). It returns
// false, leaving out alone, when the histogram is empty.
func (h *Histogram) Quantiles(qs, out []float64) bool {
	if h.n == 0 {
		return false
	}
	j := 0
	rank := func(q float64) uint64 {
		r := uint64(q*float64(h.n) + 0.999999999)
		return min(max(r, 1), h.n)
	}
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += uint64(c)
		for j < len(qs) && seen >= rank(qs[j]) {
			lo, w := bucketRange(i)
			out[j] = float64(lo) + float64(w-1)/2
			j++
		}
		if j == len(qs) {
			break
		}
	}
	return true
}
