package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// TiltConfig estimates a small P(no recovery) by importance sampling: the
// runs draw their arrivals at f_j times the scenario's rate in slot j of a
// window around the trigger (sim.ArrivalTilt), and each collapse counts
// with the likelihood ratio of its arrivals, which makes the mean exact
// for any factors. The factors are chosen by the cross-entropy method
// (Rubinstein and Kroese 2004, "The Cross-Entropy Method"; de Boer et al.
// 2005, "A Tutorial on the Cross-Entropy Method", Ann. Oper. Res. 134):
// pilot rounds move each slot's factor to the rate that best explains the
// arrivals there of the runs that came closest to collapse (their weighted
// maximum-likelihood rate), until collapses are common, and the estimate
// comes from fresh runs at those factors. A slot whose arrivals do not
// matter keeps a factor near 1, so a generous window costs little; one
// factor over a long window would add the likelihood-ratio noise of every
// arrival in it.
//
// Why not splitting alone: on a retry storm triggered by a spike the
// collapse is decided by how many arrivals the spike brings in a second
// or two; level splitting on the queue passes its levels early in the
// spike, when a high queue says little, and dies out below P ≈ 10⁻³
// (docs/experiments/metastability-map.md measures both).
type TiltConfig struct {
	// Measure names the score the pilot ranks runs by (Measures): its
	// largest value at an interval end from FromS on.
	Measure string
	// The tilt's window, typically from the trigger's start to a few
	// seconds after its end: the arrivals that decide the collapse.
	FromS, UntilS float64
	// SlotS is the length of a slot (default 1 s; at most 64 slots). Each
	// slot's factor is estimated from the pilot's runs, so more slots fit
	// the collapses more closely but with more noise: on rare.yaml's map
	// (docs/experiments/metastability-map.md) 250 ms slots over a 5 s
	// window fell short of brute force by a factor of 2.6, 1 s slots and a
	// single factor did not.
	SlotS float64
	// Factor, if above 0, is the factor of every slot; 0 chooses them by
	// cross-entropy.
	Factor   float64
	HorizonS float64
	// Paths are the runs of the estimate (default 1,000); PilotPaths the
	// runs of each cross-entropy round (default 200); Rho the fraction of
	// them its elite keeps (default 0.1).
	Paths, PilotPaths int
	Rho               float64
	Seed              uint64
	Jobs              int
}

// TiltResult is an importance-sampling estimate of P(no recovery).
type TiltResult struct {
	// P is the mean of 1{no recovery}·LR over the runs; SE its standard
	// error (the runs are independent); RelErr = SE/P.
	P, SE, RelErr float64
	Factors       []float64
	// Collapsed: runs of the estimate that did not recover; ESS the
	// effective sample size of their weights, (Σw)²/Σw².
	Collapsed int
	ESS       float64
	Paths     int
	// Pilot is the cross-entropy rounds: the factor each used and the
	// fraction of its runs that collapsed. PilotPaths counts their runs.
	Pilot      []TiltRound `json:"pilot,omitempty"`
	PilotPaths int
}

// TiltRound is one cross-entropy round.
type TiltRound struct {
	Factors   []float64 `json:"factors"`
	Collapsed float64   `json:"collapsed"`
	// Elite: the score a run needed to count among the closest (nil when
	// the collapses were enough on their own).
	Elite *float64 `json:"elite,omitempty"`
}

// ErrNoCollapse says no run of the estimate collapsed: P is 0 as far as
// these runs can tell, which says only that it is small.
var ErrNoCollapse = errors.New("explore: importance sampling: no run collapsed")

// ErrTiltStuck says the cross-entropy pilot stopped making progress.
var ErrTiltStuck = errors.New("explore: cross-entropy pilot: no progress towards collapse")

// tiltSample is what one tilted run gives the estimator.
type tiltSample struct {
	event    bool      // did not recover
	score    float64   // how close it came (the measure's maximum)
	n, lam   []float64 // arrivals in each slot, and expected without the tilt
	logLR    float64
	runError error
}

// Tilt estimates P(no recovery) of the scenario that parse returns (a
// fresh copy on every call: runs go in parallel).
func Tilt(ctx context.Context, parse func() (*scenario.Scenario, error), c TiltConfig) (TiltResult, error) {
	meas, ok := Measures[c.Measure]
	if !ok {
		return TiltResult{}, configErr("%w %q (have %s)", ErrUnknownMeasure, c.Measure, strings.Join(MeasureNames(), ", "))
	}
	if !(c.UntilS > c.FromS) || c.FromS < 0 {
		return TiltResult{}, configErr("the tilt's window needs 0 <= from < until, got from %gs, until %gs", c.FromS, c.UntilS)
	}
	from, until := int64(math.Round(c.FromS*1e9)), int64(math.Round(c.UntilS*1e9))
	if c.SlotS == 0 {
		c.SlotS = 1
	}
	if !(c.SlotS > 0) || math.IsInf(c.SlotS, 0) {
		return TiltResult{}, configErr("the tilt's slot must be above 0 s, got %g", c.SlotS)
	}
	slots := min(64, max(1, int(math.Ceil((c.UntilS-c.FromS)/c.SlotS-1e-9))))
	sample := func(f []float64, key uint64) tiltSample {
		if err := ctx.Err(); err != nil { // interrupted: the runs still queued end at once
			return tiltSample{runError: fmt.Errorf("%w: %w", sim.ErrInterrupted, err)}
		}
		sc, err := parse()
		if err != nil {
			return tiltSample{runError: err}
		}
		sc.Seed = rng.Mix(key)
		sc.Sweep = nil
		score := math.Inf(-1)
		res, err := sim.Run(ctx, sc, sim.Options{
			Tilt: &sim.ArrivalTilt{From: from, Until: until, Factors: f},
			Watch: func(st sim.WatchState) bool {
				if st.Now >= from {
					score = max(score, meas(st))
				}
				return false
			},
		})
		if err != nil {
			return tiltSample{runError: err}
		}
		if res.Tilt == nil {
			return tiltSample{runError: fmt.Errorf("explore: the run stopped before the tilt's window ended (%.3fs)", c.UntilS)}
		}
		nr, err := collapsed(res, c.HorizonS)
		n := make([]float64, len(res.Tilt.Arrivals))
		for j, x := range res.Tilt.Arrivals {
			n[j] = float64(x)
		}
		return tiltSample{event: nr, score: score, n: n, lam: res.Tilt.Expected, logLR: res.Tilt.LogLR, runError: err}
	}
	return tiltEstimate(sample, slots, c)
}

// tiltEstimate is Tilt on any sampler: sample(f, key) is one independent
// run with the slots' factors f and streams key.
func tiltEstimate(sample func(f []float64, key uint64) tiltSample, slots int, c TiltConfig) (TiltResult, error) {
	if c.Paths == 0 {
		c.Paths = 1000
	}
	if c.PilotPaths == 0 {
		c.PilotPaths = 200
	}
	if c.Rho == 0 {
		c.Rho = 0.1
	}
	switch {
	case c.Paths < 2 || c.PilotPaths < 10:
		return TiltResult{}, configErr("importance sampling needs at least 2 runs and 10 per pilot round, got %d and %d", c.Paths, c.PilotPaths)
	case !(c.Rho > 0 && c.Rho < 1):
		return TiltResult{}, configErr("the elite fraction must be in (0, 1), got %g", c.Rho)
	case c.Factor < 0 || math.IsNaN(c.Factor) || math.IsInf(c.Factor, 0):
		return TiltResult{}, configErr("the tilt factor must be 0 (chosen by cross-entropy) or above, got %g", c.Factor)
	}
	jobs := max(c.Jobs, 1)
	run := func(f []float64, n int, seed uint64, round int) ([]tiltSample, error) {
		out := make([]tiltSample, n)
		stage(n, jobs, func(i int) { out[i] = sample(f, stageKey(seed, round, i)) })
		for _, s := range out {
			if s.runError != nil {
				return nil, s.runError
			}
		}
		return out, nil
	}
	var res TiltResult
	f := make([]float64, slots)
	if c.Factor > 0 {
		for j := range f {
			f[j] = c.Factor
		}
	} else {
		var err error
		if f, err = crossEntropy(run, slots, c, &res); err != nil {
			return res, err
		}
	}
	res.Factors = f
	xs, err := run(f, c.Paths, rng.Mix(c.Seed), 0)
	if err != nil {
		return res, err
	}
	res.Paths = len(xs)
	var sum, sum2 float64
	for _, s := range xs {
		if s.event {
			w := math.Exp(s.logLR)
			sum += w
			sum2 += w * w
			res.Collapsed++
		}
	}
	n := float64(len(xs))
	res.P = sum / n
	res.SE = math.Sqrt(max(sum2/n-res.P*res.P, 0) / (n - 1))
	if res.Collapsed == 0 {
		return res, fmt.Errorf("%w (%d runs at factors %s)", ErrNoCollapse, len(xs), FactorRange(f))
	}
	res.RelErr = res.SE / res.P
	res.ESS = sum * sum / sum2
	return res, nil
}

// crossEntropy chooses the slots' factors: rounds of PilotPaths runs,
// each moving every slot's factor to the weighted maximum-likelihood rate
// of its elite runs there: the top Rho by score, until a round has
// max(5, Rho·PilotPaths/4) collapses; from then on the elite is the
// collapses alone, whose update gives the factors that best explain the
// collapses themselves (the last step of the multilevel cross-entropy
// method, whose elite is the rare set), repeated twice more at the factors
// it gives (more collapses, less noise per slot). When the elite score
// does not rise, the next round's elite is half as large (down to 2 runs), the modified
// cross-entropy method's remedy (Homem-de-Mello and Rubinstein 2002);
// after 2 rounds in a row without a rise (a score that hardly depends on
// the window's arrivals), the factors are raised by a quarter per round
// instead, until collapses are common. Any factors give an unbiased
// estimate; the pilot only looks for ones with a small variance. It gives
// up after 20 rounds.
func crossEntropy(run func(f []float64, n int, seed uint64, round int) ([]tiltSample, error), slots int, c TiltConfig, res *TiltResult) ([]float64, error) {
	const rounds = 20
	f := make([]float64, slots)
	for j := range f {
		f[j] = 1
	}
	seed := rng.Mix(c.Seed ^ 0x2545f4914f6cdd1d)
	best, flat := math.Inf(-1), 0
	rho := c.Rho
	need := max(5, int(math.Ceil(c.Rho*float64(c.PilotPaths)/4)))
	refined := 0
	for r := range rounds {
		xs, err := run(f, c.PilotPaths, seed, r+1)
		res.PilotPaths += len(xs)
		if err != nil {
			return nil, err
		}
		var events int
		scores := make([]float64, len(xs))
		for i, s := range xs {
			if s.event {
				events++
			}
			scores[i] = s.score
		}
		top := max(2, int(math.Ceil(rho*float64(len(xs)))))
		round := TiltRound{Factors: slices.Clone(f), Collapsed: float64(events) / float64(len(xs))}
		var elite []tiltSample
		if events >= need {
			for _, s := range xs {
				if s.event {
					elite = append(elite, s)
				}
			}
		} else {
			slices.Sort(scores)
			cut := scores[len(scores)-min(top, len(scores))]
			round.Elite = &cut
			if cut > best {
				best, flat = cut, 0
			} else {
				flat++
				rho /= 2
			}
			for _, s := range xs {
				if s.event || s.score >= cut {
					elite = append(elite, s)
				}
			}
		}
		res.Pilot = append(res.Pilot, round)
		// Weighted MLE of each slot's factor: Σ w·N_j / Σ w·Λ_j, w the
		// likelihood ratios (scaled by the largest, which cancels).
		lmax := math.Inf(-1)
		for _, s := range elite {
			lmax = max(lmax, s.logLR)
		}
		next := make([]float64, slots)
		for j := range next {
			var num, den float64
			for _, s := range elite {
				w := math.Exp(s.logLR - lmax)
				num += w * s.n[j]
				den += w * s.lam[j]
			}
			next[j] = 1 // no arrivals expected there: nothing to tilt
			if den > 0 && num > 0 {
				next[j] = num / den
			}
			if events < need && flat >= 2 {
				next[j] = max(next[j], f[j]*1.25)
			}
		}
		if events >= need {
			// The first rounds that reach the collapses see few of them;
			// two more at the factors they give, with many collapses,
			// settle each slot's factor (their noise would otherwise add
			// to the estimate's variance, slot by slot).
			if refined++; refined == 3 {
				return next, nil
			}
		}
		f = next
	}
	if refined > 0 { // the rounds ran out while refining: the factors are usable
		return f, nil
	}
	return nil, fmt.Errorf("%w: %d rounds of %d runs without %d collapses in one (last factors %s, best elite score %g)", ErrTiltStuck, rounds, c.PilotPaths, need, FactorRange(f), best)
}

// FactorRange describes the slots' factors: one value, or the smallest
// and the largest with the number of slots.
func FactorRange(f []float64) string {
	if len(f) == 0 {
		return "none"
	}
	lo, hi := slices.Min(f), slices.Max(f)
	if len(f) == 1 || lo == hi {
		return strconv.FormatFloat(lo, 'g', 4, 64)
	}
	return fmt.Sprintf("%.4g–%.4g over %d slots", lo, hi, len(f))
}
