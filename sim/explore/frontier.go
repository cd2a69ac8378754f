package explore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// A search in rounds. Map's bisection and Tune's halving are sequential:
// which runs come next depends on the figures of those before. To run a
// search as a chain of batch jobs, each job replays the search with the
// runs already made (known) and asks it which runs it needs next: the
// frontier. The search's goroutines are followed (spawn, wait, and the
// runner's Eval calls): when every one of them waits for a run that is not
// known, nothing else can happen, and the runs they wait for are the
// frontier. Given the known runs, every goroutine's path is a function of
// their figures, so the frontier is the same set on every machine and in
// every order of the goroutines; sorted, it is a plan the shards of a
// round share out (i mod n) without talking to each other. Replayed with
// every run known, the search is the search run in one go: the same
// results, byte for byte.

// Known looks up a run already made.
type Known func(v Variant) (Figures, bool, error)

// frontier follows a replay's goroutines. active counts those that are
// not waiting; when it falls to 0 every goroutine waits for an unknown run
// (or for another goroutine that does) and quiet is closed.
type frontier struct {
	known  Known
	mu     sync.Mutex
	active int
	needed []Variant
	quiet  chan struct{}
	closed bool
}

type frontierKey struct{}

func frontierOf(ctx context.Context) *frontier {
	f, _ := ctx.Value(frontierKey{}).(*frontier)
	return f
}

// leaveLocked marks one goroutine as waiting; the caller holds mu.
func (f *frontier) leaveLocked() {
	f.active--
	if f.active == 0 && !f.closed {
		f.closed = true
		close(f.quiet)
	}
}

// group is a sync.WaitGroup that a replay can follow: a goroutine waiting
// on it is not active, and is active again the moment its last child ends
// (counted in the same step, so the count never falls to 0 in between).
type group struct {
	f       *frontier
	wg      sync.WaitGroup
	n       int
	waiting bool
	done    chan struct{}
}

func newGroup(ctx context.Context) *group { return &group{f: frontierOf(ctx)} }

// Go runs fn in a new goroutine of the group.
func (g *group) Go(fn func()) {
	if g.f == nil {
		g.wg.Go(fn)
		return
	}
	g.f.mu.Lock()
	g.f.active++
	g.n++
	g.f.mu.Unlock()
	go func() {
		defer func() {
			g.f.mu.Lock()
			defer g.f.mu.Unlock()
			g.n--
			if g.n == 0 && g.waiting {
				g.f.active++ // the waiter wakes: active before this one leaves
				close(g.done)
			}
			g.f.leaveLocked()
		}()
		fn()
	}()
}

// Wait waits for every goroutine of the group.
func (g *group) Wait() {
	if g.f == nil {
		g.wg.Wait()
		return
	}
	g.f.mu.Lock()
	if g.n == 0 {
		g.f.mu.Unlock()
		return
	}
	g.waiting, g.done = true, make(chan struct{})
	g.f.leaveLocked()
	g.f.mu.Unlock()
	<-g.done
}

// await is the runner's Eval in a replay: a known run's figures, or, for
// an unknown one, its place in the frontier and a wait that ends only
// when the replay is stopped.
func (f *frontier) await(ctx context.Context, v Variant) (Figures, error) {
	fig, ok, err := f.known(v)
	if err != nil || ok {
		return fig, err
	}
	f.mu.Lock()
	f.needed = append(f.needed, v)
	f.leaveLocked()
	f.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

// NextRuns replays search (a call of Map or Tune with the ctx it is given)
// with only the known runs and returns the runs it needs next, sorted by
// scenario, sets and seed and without repeats; none when the search needs
// no more (it then ran to the end on known runs alone). search's own error
// is returned when it fails on known runs.
func NextRuns(ctx context.Context, known Known, search func(ctx context.Context) error) ([]Variant, error) {
	f := &frontier{known: known, active: 1, quiet: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.WithValue(ctx, frontierKey{}, f))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- search(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
		return nil, nil
	case <-f.quiet:
		cancel()
		<-done // it unwinds with ctx's error
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	vs := slices.Clone(f.needed)
	slices.SortFunc(vs, compareVariants)
	return slices.CompactFunc(vs, func(a, b Variant) bool { return compareVariants(a, b) == 0 }), nil
}

func compareVariants(a, b Variant) int {
	if c := cmp.Compare(a.Scenario, b.Scenario); c != 0 {
		return c
	}
	if c := slices.Compare(a.Sets, b.Sets); c != 0 {
		return c
	}
	return cmp.Compare(a.Seed, b.Seed)
}

// RunShare runs the runs of vs whose index is i mod n, jobs at a time,
// with eval (which keeps them: the kept-runs folder's wrapper, say). It
// stops at the first error and returns how many runs were this shard's.
func RunShare(ctx context.Context, eval Eval, vs []Variant, shard, shards, jobs int) (int, error) {
	if shards < 1 || shard < 0 || shard >= shards {
		return 0, fmt.Errorf("shard %d of %d: expected 0 <= shard < shards", shard, shards)
	}
	var mine []Variant
	for i, v := range vs {
		if i%shards == shard {
			mine = append(mine, v)
		}
	}
	_, err := newRunner(eval, jobs, nil).all(ctx, mine)
	return len(mine), err
}
