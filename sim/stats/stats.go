// Package stats holds the statistics that sweeps, map and tune report:
// the mean of a sample with its Student-t confidence interval and the
// t quantiles behind it. It does no I/O and knows nothing of runs; the
// computations are gonum/stat's.
package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Stat is the mean of N values with their standard deviation and the
// two-sided 95% confidence interval of the mean from Student's t with
// N−1 degrees of freedom. SD, Lo and Hi are NaN when N < 2, and Mean too
// when N = 0.
type Stat struct {
	N                int
	Mean, SD, Lo, Hi float64
}

// Describe computes the Stat of xs, every value included (a NaN makes
// the mean NaN).
func Describe(xs []float64) Stat {
	s := Stat{N: len(xs), Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	switch s.N {
	case 0:
		return s
	case 1:
		s.Mean = xs[0]
		return s
	}
	s.Mean, s.SD = stat.MeanStdDev(xs, nil)
	h := TQuantile(0.975, s.N-1) * s.SD / math.Sqrt(float64(s.N))
	s.Lo, s.Hi = s.Mean-h, s.Mean+h
	return s
}

// DescribeKnown is Describe of the values of xs that are not NaN (a run
// that has no value for a metric, such as a recovery time when it did
// not recover, is left out).
func DescribeKnown(xs []float64) Stat {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return Describe(v)
}

// TQuantile is the p quantile of Student's t with df degrees of freedom.
func TQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}
