package explore

import (
	"context"
	"fmt"
	"sync"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Variant is one simulation a search asks for: scenario number Scenario
// (of those it was given) with the overrides Sets, run with Seed.
type Variant struct {
	Scenario int
	Sets     []string
	Seed     uint64
}

// Eval runs one variant and returns its figures. It must be a pure
// function of the variant (the searches rely on that for determinism) and
// safe to call from several goroutines.
type Eval func(ctx context.Context, v Variant) (Figures, error)

// Source is a scenario file's content, with the overrides every variant
// gets (--set) before its own.
type Source struct {
	File string
	Data []byte
	Sets []string
}

// SimEval runs variants of the sources with sim.Run.
func SimEval(srcs []Source) Eval {
	return func(ctx context.Context, v Variant) (Figures, error) {
		src := srcs[v.Scenario]
		sets := append(append([]string{}, src.Sets...), v.Sets...)
		sc, err := scenario.Parse(src.Data, src.File, sets)
		if err != nil {
			return nil, err
		}
		sc.Seed = v.Seed
		sc.Sweep = nil
		res, err := sim.Run(ctx, sc, sim.Options{})
		if err != nil {
			return nil, err
		}
		return NewFigures(&res.Summary, sc.Duration.Seconds()), nil
	}
}

// CheckSources parses every source with each of the override lists in
// probes, so that a bad path or value is reported before any run.
func CheckSources(srcs []Source, probes ...[]string) error {
	for _, s := range srcs {
		for _, p := range probes {
			if _, err := scenario.Parse(s.Data, s.File, append(append([]string{}, s.Sets...), p...)); err != nil {
				return err
			}
		}
	}
	return nil
}

// runner limits the number of simulations in flight and counts them.
type runner struct {
	eval     Eval
	sem      chan struct{}
	mu       sync.Mutex
	runs     int
	progress func(runs int)
}

func newRunner(e Eval, jobs int, progress func(int)) *runner {
	return &runner{eval: e, sem: make(chan struct{}, max(jobs, 1)), progress: progress}
}

func (r *runner) run(ctx context.Context, v Variant) (Figures, error) {
	if f := frontierOf(ctx); f != nil {
		// A replay (NextRuns): known runs only, no limit (nothing runs).
		fig, err := f.await(ctx, v)
		if err != nil {
			return nil, err
		}
		r.count()
		return fig, nil
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f, err := func() (Figures, error) {
		defer func() { <-r.sem }()
		return r.eval(ctx, v)
	}()
	if err != nil {
		return nil, fmt.Errorf("%v (seed %d): %w", v.Sets, v.Seed, err)
	}
	r.count()
	return f, nil
}

func (r *runner) count() {
	r.mu.Lock()
	r.runs++
	if r.progress != nil {
		r.progress(r.runs)
	}
	r.mu.Unlock()
}

// all runs every variant in parallel and returns the figures in order.
func (r *runner) all(ctx context.Context, vs []Variant) ([]Figures, error) {
	out := make([]Figures, len(vs))
	errs := make([]error, len(vs))
	g := newGroup(ctx)
	for i, v := range vs {
		g.Go(func() { out[i], errs[i] = r.run(ctx, v) })
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
