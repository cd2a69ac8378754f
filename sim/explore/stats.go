package explore

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/throttlesim/throttlesim/sim/stats"
)

// ClopperPearson is the exact (conservative) two-sided confidence interval
// of a binomial proportion with k successes in n trials at confidence
// 1−alpha: the alpha/2 and 1−alpha/2 quantiles of Beta(k, n−k+1) and
// Beta(k+1, n−k) (Clopper and Pearson, Biometrika 1934).
func ClopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}

// Decision is the verdict of a sequential test on P(no recovery) at one
// probe.
type Decision int

// The three verdicts.
const (
	Undecided  Decision = iota // the seed cap was reached first: P is near ½
	Stable                     // P(no recovery) < ½
	Metastable                 // P(no recovery) > ½
)

// String names the verdict.
func (d Decision) String() string {
	return [...]string{"undecided", "stable", "metastable"}[d]
}

// SPRT is Wald's sequential probability ratio test of H0: p = ½ − Delta
// against H1: p = ½ + Delta for a Bernoulli p (here P(no recovery)), with
// error probabilities Alpha (deciding Metastable when p ≤ ½ − Delta) and
// Alpha again (deciding Stable when p ≥ ½ + Delta), truncated at MaxN
// observations. Wald's thresholds A = (1−α)/α and B = α/(1−α) bound both
// errors by about α (exactly by α/(1−α)); inside the indifference zone
// (½ ± Delta) either verdict is acceptable. With Delta = 0.25 and
// α = 0.05, three agreeing seeds decide (log 19 / log 3 = 2.7).
type SPRT struct {
	Delta, Alpha float64
	MaxN         int
}

// Decide returns the verdict after k "no recovery" outcomes in n seeds, or
// Undecided with more = true while the test should go on.
func (t SPRT) Decide(k, n int) (d Decision, more bool) {
	p0, p1 := 0.5-t.Delta, 0.5+t.Delta
	llr := float64(k)*math.Log(p1/p0) + float64(n-k)*math.Log((1-p1)/(1-p0))
	switch {
	case llr >= math.Log((1-t.Alpha)/t.Alpha):
		return Metastable, false
	case llr <= math.Log(t.Alpha/(1-t.Alpha)):
		return Stable, false
	case n >= t.MaxN:
		return Undecided, false
	}
	return Undecided, true
}

// Stat is the mean of N values with a two-sided 95% Student-t interval
// (package stats, where it is computed).
type Stat = stats.Stat

// Describe computes a Stat; NaN values are left out (stats.DescribeKnown).
func Describe(xs []float64) Stat { return stats.DescribeKnown(xs) }

// oneSided is the one-sided 95% bound of the mean on the side of dir
// (dir > 0: upper, < 0: lower); with fewer than two values, the mean.
func oneSided(xs []float64, dir float64) float64 {
	s := Describe(xs)
	if s.N < 2 {
		return s.Mean
	}
	h := stats.TQuantile(0.95, s.N-1) * s.SD / math.Sqrt(float64(s.N))
	if s.SD == 0 {
		h = 0
	}
	return s.Mean + math.Copysign(h, dir)
}

// ConfigError is a search configuration that cannot work (an empty range,
// an unknown metric, a budget too small): the caller's mistake, not the
// simulation's. The command line reports it as a usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return "explore: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(format string, args ...any) error {
	return &ConfigError{fmt.Errorf(format, args...)}
}
