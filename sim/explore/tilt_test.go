package explore

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/throttlesim/throttlesim/sim/rng"
)

// poissonSampler is the estimator's model with an exact answer: N is
// Poisson with mean f·lam (arrivals of a unit window at rate f·lam), the
// "collapse" is N >= k, the score is N.
func poissonSampler(lam float64, k int) func(f float64, key uint64) tiltSample {
	return func(f float64, key uint64) tiltSample {
		n, t := 0, 0.0
		for i := uint64(0); ; i++ {
			t += rng.Exp(key, i) / (f * lam)
			if t >= 1 {
				break
			}
			n++
		}
		x := float64(n)
		return tiltSample{event: n >= k, score: x, n: x, lam: lam, logLR: -x*math.Log(f) + (f-1)*lam}
	}
}

// The cross-entropy tilt finds P(N >= k) for a Poisson count of mean 100
// at 1.7·10⁻³, 1.4·10⁻⁵ and 2·10⁻⁸, where plain Monte Carlo with the same
// 1,000 runs sees nothing below the first.
// Each estimate must be within 4 of its own standard errors of the exact
// tail, and its relative error below 15% (the optimal tilt's relative
// error per run is a few units, so 1,000 runs give well under that): a
// wrong likelihood ratio or a biased pilot fails the first, a useless
// tilt the second.
func TestTiltFindsPoissonTails(t *testing.T) {
	const lam = 100
	for _, k := range []int{131, 145, 160} {
		exact := distuv.Poisson{Lambda: lam}.Survival(float64(k) - 0.5)
		for seed := uint64(1); seed <= 3; seed++ {
			res, err := tiltEstimate(poissonSampler(lam, k), TiltConfig{Seed: seed, Jobs: 2})
			if err != nil {
				t.Fatalf("k=%d seed %d: %v", k, seed, err)
			}
			if d := math.Abs(res.P - exact); d > 4*res.SE {
				t.Errorf("k=%d seed %d: P %.3g ± %.2g, exact %.3g (%.1f SE off)", k, seed, res.P, res.SE, exact, d/res.SE)
			}
			if res.RelErr > 0.15 {
				t.Errorf("k=%d seed %d: relative error %.2f, want below 0.15 (factor %.3f, %d collapsed)", k, seed, res.RelErr, res.Factor, res.Collapsed)
			}
			if seed == 1 {
				t.Logf("k=%d: exact %.3g, estimate %.3g ± %.2g, factor %.3f, %d pilot rounds", k, exact, res.P, res.SE, res.Factor, len(res.Pilot))
			}
		}
	}
}

func TestTiltErrors(t *testing.T) {
	// Nothing can collapse: the pilot's scores stop rising.
	flat := func(f float64, key uint64) tiltSample { return tiltSample{score: 1, n: 1, lam: 1} }
	if _, err := tiltEstimate(flat, TiltConfig{Seed: 1}); !errors.Is(err, ErrTiltStuck) {
		t.Errorf("an event that never happens: %v, want ErrTiltStuck", err)
	}
	// A factor given and no collapse at it.
	if _, err := tiltEstimate(poissonSampler(100, 400), TiltConfig{Factor: 1, Paths: 50, Seed: 1}); !errors.Is(err, ErrNoCollapse) {
		t.Errorf("no collapse at the factor given: %v, want ErrNoCollapse", err)
	}
	var ce *ConfigError
	for _, c := range []TiltConfig{{Factor: -1}, {Rho: 1.5}, {Paths: 1}, {PilotPaths: 3}} {
		if _, err := tiltEstimate(flat, c); !errors.As(err, &ce) {
			t.Errorf("%+v: %v, want a ConfigError", c, err)
		}
	}
}
