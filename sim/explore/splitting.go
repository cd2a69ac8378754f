package explore

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/throttlesim/throttlesim/sim/rng"
)

// Path is a simulation that can be copied mid-run, as multilevel splitting
// needs: a progress measure (say, the backend's queue length or the retry
// rate) that must pass a series of levels on the way to the rare event.
//
// A run of the simulator is copied by replay with a branch (sim.Branch):
// Rare splits scenarios that way; Splitting itself is checked on models
// with an exact answer (splitting_test.go).
type Path interface {
	// Clone returns an independent copy in the same state.
	Clone() Path
	// Advance runs the path until its progress reaches level (true) or it
	// ends without reaching it (false). Its random draws are
	// rng.Float64(key, 0), rng.Float64(key, 1), ... .
	Advance(level float64, key uint64) bool
}

// SplittingResult is a fixed-effort multilevel splitting estimate.
type SplittingResult struct {
	P float64 // the estimate of P(reaching the last level)
	// RelErr is the estimated relative standard error,
	// sqrt(Σ (1 − p_k)/(N p_k)) (stages treated as independent, the usual
	// first-order approximation).
	RelErr float64
	Stage  []float64 // the conditional probability of each stage
	Paths  int       // paths advanced in total
	// Levels are the levels used (Rare: without the final "no recovery"
	// stage), PilotPaths the paths the pilot that chose them ran.
	Levels     []float64
	PilotPaths int
}

// ErrExtinct says no path reached some level: the estimate is 0 and the
// levels are too far apart for the effort (or the event is impossible).
var ErrExtinct = errors.New("explore: splitting: no path reached a level; use closer levels or more paths per level")

// Splitting estimates P(a fresh path reaches levels[last]) by fixed-effort
// multilevel splitting (Garvels 2000; Cérou and Guyader 2007): n paths
// start fresh and run to levels[0]; then, for each next level, n paths
// start from copies of the entrance states of the previous stage, chosen
// round-robin, and run on with their own random streams. The estimate is
// the product of the stages' fractions, unbiased for fixed levels.
func Splitting(start func() Path, levels []float64, n int, seed uint64) (SplittingResult, error) {
	return splitting(start, levels, n, seed, 1)
}

// splitting is Splitting with the paths of a stage advanced on jobs
// goroutines; the result does not depend on jobs.
func splitting(start func() Path, levels []float64, n int, seed uint64, jobs int) (SplittingResult, error) {
	var res SplittingResult
	if n < 1 || len(levels) == 0 {
		return res, fmt.Errorf("explore: splitting needs at least one level and one path per stage, got %d levels, %d paths", len(levels), n)
	}
	for i := 1; i < len(levels); i++ {
		if !(levels[i] > levels[i-1]) {
			return res, fmt.Errorf("explore: splitting levels must increase, got %v", levels)
		}
	}
	var entrances []Path
	res.P = 1
	v := 0.0
	for k, l := range levels {
		paths := make([]Path, n)
		ok := make([]bool, n)
		stage(n, jobs, func(i int) {
			var p Path
			if k == 0 {
				p = start()
			} else {
				p = entrances[i%len(entrances)].Clone()
			}
			ok[i] = p.Advance(l, stageKey(seed, k, i))
			paths[i] = p
		})
		res.Paths += n
		if err := pathErr(paths); err != nil {
			return res, err
		}
		var next []Path
		for i, p := range paths {
			if ok[i] {
				next = append(next, p)
			}
		}
		pk := float64(len(next)) / float64(n)
		res.Stage = append(res.Stage, pk)
		res.P *= pk
		if len(next) == 0 {
			return res, ErrExtinct
		}
		v += (1 - pk) / (float64(n) * pk)
		entrances = next
	}
	res.RelErr = math.Sqrt(v)
	return res, nil
}

// stage runs path(i) for i in [0, n) on at most jobs goroutines and waits
// for all of them.
func stage(n, jobs int, path func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			path(i)
		}()
	}
	wg.Wait()
}

// stageKey names the random streams of path i at stage k.
func stageKey(seed uint64, k, i int) uint64 {
	return rng.Mix(rng.Mix(seed) ^ rng.Mix(uint64(k)<<32|uint64(i)))
}
