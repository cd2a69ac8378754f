package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// MapConfig is a metastability map: for every load level, the trigger size
// above which the system no longer recovers.
type MapConfig struct {
	// Load is the field that sets the load and its levels (Steps of them,
	// default 10); Trigger the field that sets the trigger's size or
	// duration, searched over [Lo, Hi].
	Load, Trigger Range
	// Grid is the number of evenly spaced trigger values probed at every
	// load level before bisecting (default 6, at least 2).
	Grid int
	// Resolution: bisection stops when the bracket is this narrow
	// (default (Trigger.Hi − Trigger.Lo)/50).
	Resolution float64
	// Test decides each probe (default Delta 0.25, Alpha 0.05, MaxN 20).
	Test SPRT
	// HorizonS: a run counts as recovered only if the recovery rule
	// finds it recovered at most HorizonS seconds after the trigger ended
	// (0: any time before the run ends).
	HorizonS float64
	// BaseSeed: replication r of every probe uses seed BaseSeed + r.
	BaseSeed uint64
	// Jobs is the number of simulations run in parallel.
	Jobs int
	// Shard, Shards: compute only the load levels whose index % Shards
	// == Shard (Shards 0: all).
	Shard, Shards int
	// Progress, if set, is called after every run with the number done.
	Progress func(runs int)
}

// Probe is the verdict at one (load, trigger) point.
type Probe struct {
	Trigger float64 `json:"trigger"`
	// Phase is "grid" (the first pass) or "bisect".
	Phase string `json:"phase"`
	// N seeds were run; K of them did not recover.
	N int `json:"seeds"`
	K int `json:"no_recovery"`
	// Lo, Hi: the Clopper–Pearson 95% interval of P(no recovery).
	Lo       float64  `json:"ci_lo"`
	Hi       float64  `json:"ci_hi"`
	Decision Decision `json:"decision"`
}

// P is the estimate K/N of P(no recovery).
func (p Probe) P() float64 { return float64(p.K) / float64(p.N) }

// Boundary is a load level's threshold.
type Boundary struct {
	// Kind: "bracketed" (Threshold in [Lo, Hi]), "below" (the smallest
	// trigger probed already does not recover: the threshold is below the
	// range), "above" (the largest trigger still recovers).
	Kind      string  `json:"kind"`
	Threshold float64 `json:"threshold"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
}

// Level is one load level of the map.
type Level struct {
	Index  int     `json:"index"`
	Load   float64 `json:"load"`
	Probes []Probe `json:"probes"` // sorted by trigger
	Runs   int     `json:"runs"`
	// Boundary is where P(no recovery) crosses ½.
	Boundary Boundary `json:"boundary"`
	// NonMonotone, when not empty, says where a larger trigger was found
	// stable after a smaller one was found metastable.
	NonMonotone string `json:"non_monotone,omitempty"`
}

// MapResult is a map (or one shard's part of it).
type MapResult struct {
	Load, Trigger Range
	Levels        []Level `json:"levels"`
	// Notes report non-monotonicity across load levels.
	Notes []string `json:"notes,omitempty"`
	// Rare holds splitting estimates near the boundary (RareAtBoundary).
	Rare []RarePoint `json:"rare,omitempty"`
}

// Runs is the number of simulations behind the map.
func (m *MapResult) Runs() int {
	n := 0
	for _, l := range m.Levels {
		n += l.Runs
	}
	return n
}

// ProbeCount is the number of probes.
func (m *MapResult) ProbeCount() int {
	n := 0
	for _, l := range m.Levels {
		n += len(l.Probes)
	}
	return n
}

// ErrNoRecoveryRule says the scenario has nothing to recover from.
var ErrNoRecoveryRule = errors.New("explore: the recovery rule does not apply to this scenario (no fault and no load spike): a map needs a trigger the system can recover from")

func (c *MapConfig) setDefaults() error {
	if c.Load.Steps == 0 {
		c.Load.Steps = 10
	}
	if c.Grid == 0 {
		c.Grid = 6
	}
	if c.Grid < 2 {
		return configErr("the trigger grid needs at least 2 values, got %d", c.Grid)
	}
	if c.Resolution <= 0 {
		c.Resolution = (c.Trigger.Hi - c.Trigger.Lo) / 50
	}
	if c.Test == (SPRT{}) {
		c.Test = SPRT{Delta: 0.25, Alpha: 0.05, MaxN: 20}
	}
	if !(c.Test.Delta > 0 && c.Test.Delta < 0.5) || !(c.Test.Alpha > 0 && c.Test.Alpha < 0.5) || c.Test.MaxN < 1 {
		return configErr("sequential test needs 0 < delta < 0.5, 0 < alpha < 0.5 and at least one seed, got %+v", c.Test)
	}
	if c.HorizonS < 0 {
		return configErr("the horizon must not be negative, got %gs", c.HorizonS)
	}
	return nil
}

// Map computes the metastability map.
func Map(ctx context.Context, eval Eval, c MapConfig) (*MapResult, error) {
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	r := newRunner(eval, c.Jobs, c.Progress)
	loads := c.Load.Values(c.Load.Steps)
	res := &MapResult{Load: c.Load, Trigger: c.Trigger}
	var idx []int
	for i := range loads {
		if c.Shards == 0 || i%c.Shards == c.Shard {
			idx = append(idx, i)
		}
	}
	res.Levels = make([]Level, len(idx))
	errs := make([]error, len(idx))
	ctx, cancel := context.WithCancel(ctx) // the first error stops the other levels
	defer cancel()
	g := newGroup(ctx)
	for j, i := range idx {
		g.Go(func() {
			lv, err := c.level(ctx, r, i, loads[i])
			res.Levels[j], errs[j] = lv, err
			if err != nil {
				cancel()
			}
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, firstErr(errs)
	}
	res.Notes = LoadNotes(res.Levels, c.Load)
	return res, nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			return e
		}
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// noRecovery applies the recovery rule with the horizon.
func (c *MapConfig) noRecovery(f Figures) (bool, error) {
	if f["recovery.applicable"] != 1 {
		return false, ErrNoRecoveryRule
	}
	rec := f["recovery.recovered"] == 1
	if rec && c.HorizonS > 0 && !(f["recovery.recovery_time_s"] <= c.HorizonS) {
		rec = false
	}
	return !rec, nil
}

// probe runs seeds at (load, trigger) until the sequential test decides.
func (c *MapConfig) probe(ctx context.Context, r *runner, load, trig float64, phase string) (Probe, error) {
	p := Probe{Trigger: trig, Phase: phase}
	sets := []string{c.Load.Set(load), c.Trigger.Set(trig)}
	// The test cannot stop before this many seeds: run them at once.
	first := min(c.Test.MaxN, int(math.Ceil(math.Log((1-c.Test.Alpha)/c.Test.Alpha)/math.Log((0.5+c.Test.Delta)/(0.5-c.Test.Delta)))))
	var vs []Variant
	for s := 0; s < first; s++ {
		vs = append(vs, Variant{Sets: sets, Seed: c.BaseSeed + uint64(s)})
	}
	fs, err := r.all(ctx, vs)
	if err != nil {
		return p, err
	}
	for {
		for _, f := range fs {
			nr, err := c.noRecovery(f)
			if err != nil {
				return p, err
			}
			p.N++
			if nr {
				p.K++
			}
		}
		d, more := c.Test.Decide(p.K, p.N)
		if !more {
			p.Decision = d
			break
		}
		f, err := r.run(ctx, Variant{Sets: sets, Seed: c.BaseSeed + uint64(p.N)})
		if err != nil {
			return p, err
		}
		fs = []Figures{f}
	}
	p.Lo, p.Hi = ClopperPearson(p.K, p.N, 0.05)
	return p, nil
}

func (c *MapConfig) level(ctx context.Context, r *runner, index int, load float64) (Level, error) {
	lv := Level{Index: index, Load: load}
	grid := c.Trigger.Values(c.Grid)
	probes := make([]Probe, len(grid))
	errs := make([]error, len(grid))
	g := newGroup(ctx)
	for i, t := range grid {
		g.Go(func() { probes[i], errs[i] = c.probe(ctx, r, load, t, "grid") })
	}
	g.Wait()
	if err := firstErr(errs); err != nil {
		return lv, err
	}
	// Monotonicity: no stable verdict above a metastable one.
	firstMeta := -1
	for i, p := range probes {
		if p.Decision == Metastable && firstMeta < 0 {
			firstMeta = i
		}
		if p.Decision == Stable && firstMeta >= 0 && lv.NonMonotone == "" {
			lv.NonMonotone = fmt.Sprintf("stable at trigger %s after metastable at %s", c.Trigger.Format(p.Trigger), c.Trigger.Format(probes[firstMeta].Trigger))
		}
	}
	lastStable := -1
	end := len(probes)
	if firstMeta >= 0 {
		end = firstMeta
	}
	var undecided []float64
	for i := 0; i < end; i++ {
		switch probes[i].Decision {
		case Stable:
			lastStable, undecided = i, nil
		case Undecided:
			undecided = append(undecided, probes[i].Trigger)
		}
	}
	switch {
	case firstMeta == 0:
		lv.Boundary = Boundary{Kind: "below", Threshold: math.NaN(), Lo: math.NaN(), Hi: grid[0]}
	case firstMeta < 0 && len(undecided) == 0:
		lv.Boundary = Boundary{Kind: "above", Threshold: math.NaN(), Lo: grid[len(grid)-1], Hi: math.NaN()}
	default:
		lo, hi := c.Trigger.Lo, c.Trigger.Hi
		if lastStable >= 0 {
			lo = grid[lastStable]
		}
		if firstMeta >= 0 {
			hi = grid[firstMeta]
		}
		if len(undecided) > 0 {
			// P is near ½ at these grid points: the boundary is there.
			lv.Boundary = Boundary{Kind: "bracketed", Threshold: (undecided[0] + undecided[len(undecided)-1]) / 2, Lo: lo, Hi: hi}
			break
		}
		thr := math.NaN()
		for hi-lo > c.Resolution {
			mid := c.Trigger.Clamp((lo + hi) / 2)
			if mid <= lo || mid >= hi {
				break // an integer trigger: nothing left between
			}
			p, err := c.probe(ctx, r, load, mid, "bisect")
			if err != nil {
				return lv, err
			}
			probes = append(probes, p)
			if p.Decision == Undecided {
				thr = mid
				break
			}
			if p.Decision == Stable {
				lo = mid
			} else {
				hi = mid
			}
		}
		if math.IsNaN(thr) {
			thr = (lo + hi) / 2
		}
		lv.Boundary = Boundary{Kind: "bracketed", Threshold: thr, Lo: lo, Hi: hi}
	}
	slices.SortStableFunc(probes, func(a, b Probe) int {
		switch {
		case a.Trigger < b.Trigger:
			return -1
		case a.Trigger > b.Trigger:
			return 1
		}
		return 0
	})
	lv.Probes = probes
	for _, p := range probes {
		lv.Runs += p.N
	}
	return lv, nil
}

// LoadNotes reports pairs of load levels whose threshold intervals are
// disjoint in the opposite order to the map's overall trend.
func LoadNotes(levels []Level, load Range) []string {
	type b struct {
		load, lo, hi float64
	}
	var bs []b
	for _, l := range levels {
		lo, hi := l.Boundary.Lo, l.Boundary.Hi
		switch l.Boundary.Kind {
		case "below":
			lo = math.Inf(-1)
		case "above":
			hi = math.Inf(1)
		}
		bs = append(bs, b{l.Load, lo, hi})
	}
	if len(bs) < 2 {
		return nil
	}
	mid := func(x b) float64 {
		if math.IsInf(x.lo, 0) {
			return x.hi
		}
		if math.IsInf(x.hi, 0) {
			return x.lo
		}
		return (x.lo + x.hi) / 2
	}
	down := mid(bs[len(bs)-1]) <= mid(bs[0]) // the threshold falls as load rises
	var notes []string
	for i := 0; i+1 < len(bs); i++ {
		x, y := bs[i], bs[i+1]
		if (down && y.lo > x.hi) || (!down && y.hi < x.lo) {
			notes = append(notes, fmt.Sprintf("the threshold is not monotone in load: at %s it is in [%g, %g], at %s in [%g, %g]",
				load.Format(x.load), x.lo, x.hi, load.Format(y.load), y.lo, y.hi))
		}
	}
	return notes
}

type boundaryJSON struct {
	Kind      string   `json:"kind"`
	Threshold *float64 `json:"threshold"`
	Lo        *float64 `json:"lo"`
	Hi        *float64 `json:"hi"`
}

func optional(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes a bound that does not exist (NaN) as null.
func (b Boundary) MarshalJSON() ([]byte, error) {
	return json.Marshal(boundaryJSON{b.Kind, optional(b.Threshold), optional(b.Lo), optional(b.Hi)})
}

// UnmarshalJSON reads null as NaN.
func (b *Boundary) UnmarshalJSON(data []byte) error {
	var j boundaryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*b = Boundary{Kind: j.Kind, Threshold: orNaN(j.Threshold), Lo: orNaN(j.Lo), Hi: orNaN(j.Hi)}
	return nil
}
