package metrics

import "math"

// MSER5 is the truncation point of White's MSER-5 warm-up rule (White
// 1997; Hoad, Robinson & Davies 2010): the series is averaged in batches of
// 5, and the cut d (in batches) minimises the squared standard error of the
// remaining batch means, Σ(z − mean)² / (n − d)², searched over the first
// half of the batches. It returns the cut in original observations.
func MSER5(xs []float64) int {
	const b = 5
	n := len(xs) / b
	if n < 4 {
		return 0
	}
	z := make([]float64, n)
	for i := range z {
		var s float64
		for _, x := range xs[i*b : (i+1)*b] {
			s += x
		}
		z[i] = s / b
	}
	// Suffix sums give every candidate's statistic in O(n).
	sum, sumSq := make([]float64, n+1), make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		sum[i] = sum[i+1] + z[i]
		sumSq[i] = sumSq[i+1] + z[i]*z[i]
	}
	best, bestD := math.Inf(1), 0
	for d := 0; d <= n/2; d++ {
		m := float64(n - d)
		mean := sum[d] / m
		ss := sumSq[d] - m*mean*mean
		if v := ss / (m * m); v < best {
			best, bestD = v, d
		}
	}
	return bestD * b
}
