package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Measures are the progress measures a RareConfig can split on, each read
// from sim.WatchState at the end of every metrics interval.
var Measures = map[string]func(sim.WatchState) float64{
	// requests queued or in service at the service the clients call
	"in_system": func(s sim.WatchState) float64 { return float64(s.InSystem) },
	// the clients' application requests not finished yet
	"outstanding": func(s sim.WatchState) float64 { return float64(s.Outstanding) },
	// attempts whose client gave up waiting, in the interval just closed
	"timed_out": func(s sim.WatchState) float64 {
		if s.Row == nil {
			return 0
		}
		return float64(s.Row.TimedOut)
	},
}

// MeasureNames lists the progress measures, sorted.
func MeasureNames() []string {
	var ns []string
	for n := range Measures {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// RareConfig estimates a small P(no recovery) at one point of a map by
// multilevel splitting on a progress measure (Method "split": Rare) or by
// importance sampling of the arrivals (Method "tilt", the default in
// RareAtBoundary: Tilt, with Measure as the pilot's score, FromS to
// UntilS as the tilt's window and Paths as the estimate's runs).
type RareConfig struct {
	Method string
	// UntilS ends the tilt's window, SlotS is its slots' length; Factor
	// fixes every slot's factor (0: chosen by cross-entropy). Tilt only.
	UntilS, SlotS, Factor float64
	// Measure names the progress measure (Measures); Levels are its
	// increasing levels, or nil to choose them by a pilot (below). The
	// last stage of the splitting is "does not recover" (the recovery
	// rule, with HorizonS as in MapConfig), so a collapse is assumed to
	// pass every level first: levels must stay below what a collapsed run
	// holds (the pilot stops raising them once collapses are common; the
	// brute-force check in the tests and the doc shows where that holds).
	Measure string
	Levels  []float64
	// P0 is the fraction of paths the pilot lets through each level it
	// chooses (default 0.2).
	P0 float64
	// FromS: levels count only from this virtual time (s) on, typically
	// the trigger's start, so the warm-up does not count as progress.
	FromS    float64
	HorizonS float64
	// Paths per stage (default 100; with Method "tilt", runs of the
	// estimate, default 1,000), Seed names the paths' streams, Jobs the
	// simulations run in parallel.
	Paths int
	Seed  uint64
	Jobs  int
}

// ErrTooRare says the pilot chose its maximum number of levels without
// making collapses common: P is below about P0^12, or the measure does not
// lead to the collapse.
var ErrTooRare = errors.New("explore: splitting pilot: the collapse is too rare for the pilot (or the measure does not lead to it)")

// ErrUnknownMeasure is returned for a Measure not in Measures.
var ErrUnknownMeasure = fmt.Errorf("explore: unknown progress measure")

// Rare estimates P(no recovery) of the scenario that parse returns (a
// fresh copy on every call: runs go in parallel) by fixed-effort
// multilevel splitting. Paths are copied mid-run by replay: a copy
// re-runs its parent's seed and branches (sim.Branch) up to the point
// where the parent passed the level, then draws new numbers.
func Rare(ctx context.Context, parse func() (*scenario.Scenario, error), c RareConfig) (SplittingResult, error) {
	meas, ok := Measures[c.Measure]
	if !ok {
		return SplittingResult{}, configErr("%w %q (have %s)", ErrUnknownMeasure, c.Measure, strings.Join(MeasureNames(), ", "))
	}
	if c.Paths == 0 {
		c.Paths = 100
	}
	if c.P0 == 0 {
		c.P0 = 0.2
	}
	if !(c.P0 > 0 && c.P0 < 1) || c.Paths < 2 {
		return SplittingResult{}, configErr("splitting needs 0 < p0 < 1 and at least 2 paths per stage, got p0 %g, %d paths", c.P0, c.Paths)
	}
	start := func() *simPath {
		return &simPath{ctx: ctx, parse: parse, meas: meas, from: int64(c.FromS * 1e9), horizonS: c.HorizonS}
	}
	levels := slices.Clone(c.Levels)
	pilotPaths := 0
	if levels == nil {
		var err error
		levels, pilotPaths, err = pilot(start, c.Paths, c.P0, rng.Mix(c.Seed^0x9e3779b97f4a7c15), max(c.Jobs, 1))
		if err != nil {
			return SplittingResult{Paths: pilotPaths}, err
		}
	}
	res, err := splitting(func() Path { return start() }, append(levels, math.Inf(1)), c.Paths, c.Seed, max(c.Jobs, 1))
	res.Levels = levels
	res.PilotPaths = pilotPaths
	return res, err
}

// maxStages bounds the pilot: P0^maxStages is far below anything a map
// needs (0.2^12 ≈ 4·10⁻⁹).
const maxStages = 12

// pilot chooses splitting levels adaptively (Cérou and Guyader 2007):
// n paths run to the end from the current entrances recording their
// measure; the next level is the value that a fraction p0 of them
// reach, and the survivors enter there. It stops once at least a
// fraction p0 of the paths does not recover: the last stage is then
// "no recovery". The levels are then used by an independent fixed-level
// splitting, whose estimate is unbiased for them.
func pilot(start func() *simPath, n int, p0 float64, seed uint64, jobs int) ([]float64, int, error) {
	var levels []float64
	var entrances []*simPath
	total := 0
	for k := 0; ; k++ {
		if k == maxStages {
			return nil, total, fmt.Errorf("%w: %d levels chosen and collapses are still rarer than p0 = %g", ErrTooRare, k, p0)
		}
		paths := make([]*simPath, n)
		tr := make([]trail, n)
		stage(n, jobs, func(i int) {
			var p *simPath
			if k == 0 {
				p = start()
			} else {
				p = entrances[i%len(entrances)].Clone().(*simPath)
			}
			tr[i] = p.record(stageKey(seed, k, i))
			paths[i] = p
		})
		total += n
		collapsed := 0
		maxes := make([]float64, 0, n)
		lowest := math.Inf(1) // the lowest maximum of a collapsed path
		for i, p := range paths {
			if p.err != nil {
				return nil, total, p.err
			}
			if tr[i].noRecovery {
				collapsed++
				lowest = min(lowest, tr[i].max())
			}
			maxes = append(maxes, tr[i].max())
		}
		if float64(collapsed) >= p0*float64(n) {
			return levels, total, nil
		}
		slices.Sort(maxes)
		l := maxes[min(n-1, int(math.Floor((1-p0)*float64(n))))]
		if len(levels) > 0 && l <= levels[len(levels)-1] {
			// Ties at the quantile: the next value above the last level.
			i, _ := slices.BinarySearch(maxes, math.Nextafter(levels[len(levels)-1], math.Inf(1)))
			if i == n {
				return nil, total, ErrExtinct
			}
			l = maxes[i]
		}
		if l >= lowest {
			// The quantile is a collapse's value: a level there would
			// sit inside the collapse; the last stage is the collapse.
			return levels, total, nil
		}
		levels = append(levels, l)
		entrances = entrances[:0:0]
		for i, p := range paths {
			if at, ok := tr[i].first(l); ok {
				q := p.Clone().(*simPath)
				q.at = at
				entrances = append(entrances, q)
			}
		}
	}
}

// trail is what a recorded path saw: its measure at each interval's end
// from its entrance on, with the event count there, and its verdict.
type trail struct {
	events     []uint64
	values     []float64
	noRecovery bool
}

func (t trail) max() float64 {
	m := math.Inf(-1)
	for _, v := range t.values {
		m = max(m, v)
	}
	return m
}

// first is the branch point where the measure first reached l.
func (t trail) first(l float64) (uint64, bool) {
	for i, v := range t.values {
		if v >= l {
			return t.events[i], true
		}
	}
	return 0, false
}

// record runs the path from its entrance to the end with the streams of
// key, recording its measure.
func (p *simPath) record(key uint64) trail {
	var tr trail
	res, err := p.run(key, func(st sim.WatchState) bool {
		if st.Events >= p.at && st.Now >= p.from {
			tr.events = append(tr.events, st.Events)
			tr.values = append(tr.values, p.meas(st))
		}
		return false
	})
	if err != nil {
		p.err = err
		return tr
	}
	tr.noRecovery, p.err = p.verdict(res)
	return tr
}

// run runs the path's next stretch with the streams of key (branch) and
// the watch given (nil: to the end).
func (p *simPath) run(key uint64, watch func(sim.WatchState) bool) (*sim.Result, error) {
	if err := p.ctx.Err(); err != nil { // interrupted: the paths still queued end at once
		return nil, fmt.Errorf("%w: %w", sim.ErrInterrupted, err)
	}
	p.branch(key)
	sc, err := p.parse()
	if err != nil {
		return nil, err
	}
	sc.Seed = p.seed
	sc.Sweep = nil
	return sim.Run(p.ctx, sc, sim.Options{Branches: p.branches, Watch: watch})
}

// branch starts the path's next stretch with the streams of key: a fresh
// path takes its seed from key, a copy branches where its parent entered.
func (p *simPath) branch(key uint64) {
	if !p.started {
		p.started = true
		p.seed = rng.Mix(key)
		return
	}
	p.branches = append(p.branches, sim.Branch{After: p.at, Salt: key})
}

// verdict applies the recovery rule (and horizon) to a finished run.
func (p *simPath) verdict(res *sim.Result) (bool, error) { return collapsed(res, p.horizonS) }

// collapsed is a finished run's "did not recover" by the recovery rule,
// with the map's horizon (MapConfig.HorizonS).
func collapsed(res *sim.Result, horizonS float64) (bool, error) {
	mc := MapConfig{HorizonS: horizonS}
	return mc.noRecovery(NewFigures(&res.Summary, res.Scenario.Duration.Seconds()))
}

// simPath is a run of the simulator as a splitting path: its seed, the
// branches it took, and where it entered its last level.
type simPath struct {
	ctx      context.Context
	parse    func() (*scenario.Scenario, error)
	meas     func(sim.WatchState) float64
	from     int64
	horizonS float64

	started  bool
	seed     uint64
	branches []sim.Branch
	at       uint64 // events handled when the path entered its level
	err      error
}

func (p *simPath) Clone() Path {
	c := *p
	c.branches = slices.Clone(p.branches)
	return &c
}

// Advance runs the path on from its entrance state with the streams of
// key. A level of +Inf is the last stage: the run goes to its end and the
// answer is "it did not recover".
func (p *simPath) Advance(level float64, key uint64) bool {
	if p.err != nil {
		return false
	}
	final := math.IsInf(level, 1)
	var watch func(sim.WatchState) bool
	if !final {
		watch = func(st sim.WatchState) bool {
			if st.Events < p.at || st.Now < p.from || p.meas(st) < level {
				return false
			}
			p.at = st.Events
			return true
		}
	}
	res, err := p.run(key, watch)
	if err != nil {
		p.err = err
		return false
	}
	if !final {
		return res.Watched
	}
	nr, err := p.verdict(res)
	if err != nil {
		p.err = err
		return false
	}
	return nr
}

// pathErr is the first error a path met, for paths that can fail.
func pathErr(ps []Path) error {
	for _, p := range ps {
		if sp, ok := p.(*simPath); ok && sp.err != nil {
			return sp.err
		}
	}
	return nil
}

// RarePoint is a splitting estimate of P(no recovery) at one grid probe
// of a map where the map's seeds saw no collapse.
type RarePoint struct {
	Load    float64 `json:"load"`
	Trigger float64 `json:"trigger"`
	// K of N: what the map's seeds saw there.
	K int `json:"map_no_recovery"`
	N int `json:"map_seeds"`
	// Method is "split" (Result) or "tilt" (Tilt).
	Method string      `json:"method"`
	Tilt   *TiltResult `json:"tilt,omitempty"`
	// P, RelErr, Lo, Hi: the estimate, its relative standard error and
	// an approximate 95% interval P·exp(∓1.96·RelErr) (the log of a
	// product of stage fractions is close to normal); Err says why there
	// is no estimate (extinct: too rare for the effort).
	Result SplittingResult `json:"splitting"`
	// P is the estimate of either method.
	P   float64 `json:"p_no_recovery"`
	Lo  float64 `json:"ci_lo"`
	Hi  float64 `json:"ci_hi"`
	Err string  `json:"error,omitempty"`
	// Warning flags an estimate that few runs carry (tilt: an effective
	// sample size under 10 or a relative error above 1/2): importance
	// sampling then tends to fall short of P, its interval with it.
	Warning string `json:"warning,omitempty"`
}

// RareAtBoundary estimates P(no recovery) by splitting (Rare) below each
// load level's boundary, where the map can only say "less than about
// 1/seeds": at the grid probes without a collapse, from the largest
// trigger down, at most points of them per level, stopping early once P
// is below 10⁻⁶ or the splitting dies out. The estimates are appended to
// m.Rare. With triggers given (at), it estimates at those at every load
// level instead, all of them. parse returns the scenario with the given
// overrides (a fresh copy on each call). An extinct splitting is
// recorded, not returned as an error.
func RareAtBoundary(ctx context.Context, parse func(sets []string) (*scenario.Scenario, error), m *MapResult, c RareConfig, points int, at []float64) error {
	if c.P0 == 0 {
		c.P0 = 0.2
	}
	if c.Method == "" {
		c.Method = "tilt"
	}
	if c.Method != "tilt" && c.Method != "split" {
		return configErr("unknown rare-event method %q (want tilt or split)", c.Method)
	}
	for _, l := range m.Levels {
		var cands []Probe
		for _, p := range l.Probes {
			if p.K == 0 && p.Phase == "grid" {
				cands = append(cands, p)
			}
		}
		slices.SortFunc(cands, func(a, b Probe) int { return cmp.Compare(b.Trigger, a.Trigger) })
		cands = cands[:min(points, len(cands))]
		if len(at) > 0 {
			cands = cands[:0]
			for _, x := range at {
				pr := Probe{Trigger: x}
				if i := slices.IndexFunc(l.Probes, func(p Probe) bool { return p.Trigger == x }); i >= 0 {
					pr = l.Probes[i] // what the map's seeds saw there
				}
				cands = append(cands, pr)
			}
		}
		for _, pr := range cands {
			sets := []string{m.Load.Set(l.Load), m.Trigger.Set(pr.Trigger)}
			rp := RarePoint{Load: l.Load, Trigger: pr.Trigger, K: pr.K, N: pr.N, Method: c.Method}
			pf := func() (*scenario.Scenario, error) { return parse(sets) }
			if err := rarePoint(ctx, pf, c, &rp); err != nil {
				return err
			}
			m.Rare = append(m.Rare, rp)
			if len(at) == 0 && (rp.Err != "" || rp.P < 1e-6) {
				break
			}
		}
	}
	return nil
}

// rarePoint estimates one point with c's method into rp; an estimate that
// fails for want of effort is recorded in rp.Err, not returned.
func rarePoint(ctx context.Context, parse func() (*scenario.Scenario, error), c RareConfig, rp *RarePoint) error {
	if c.Method == "tilt" {
		res, err := Tilt(ctx, parse, TiltConfig{Measure: c.Measure, FromS: c.FromS, UntilS: c.UntilS, SlotS: c.SlotS, Factor: c.Factor,
			HorizonS: c.HorizonS, Paths: c.Paths, Seed: c.Seed, Jobs: c.Jobs})
		rp.Tilt = &res
		switch {
		case errors.Is(err, ErrNoCollapse):
			rp.Err = fmt.Sprintf("no collapse in %d runs at factors %s (P too small for this many runs)", res.Paths, FactorRange(res.Factors))
		case errors.Is(err, ErrTiltStuck):
			rp.Err = "cross-entropy pilot stuck: " + strings.TrimPrefix(err.Error(), ErrTiltStuck.Error()+": ") +
				"; P is likely far smaller than the pilot can reach (a factor can be given by hand)"
		case err != nil:
			return err
		default:
			rp.P = res.P
			rp.Lo, rp.Hi = max(0, res.P-1.96*res.SE), min(1, res.P+1.96*res.SE)
			if res.ESS < 10 || res.RelErr > 0.5 {
				rp.Warning = fmt.Sprintf("unreliable: %.1f runs' worth of weight (ESS) carry it, relative error %.2f; likely too low (a window closer around the trigger may help)", res.ESS, res.RelErr)
			}
		}
		return nil
	}
	res, err := Rare(ctx, parse, c)
	rp.Result = res
	switch {
	case errors.Is(err, ErrExtinct):
		rp.Err = "extinct: no path reached a level (P too small for this many paths)"
	case errors.Is(err, ErrTooRare):
		rp.Err = fmt.Sprintf("too rare: below about %.0e, or the measure does not lead to collapse", math.Pow(c.P0, maxStages))
	case err != nil:
		return err
	default:
		rp.P = res.P
		rp.Lo, rp.Hi = res.P*math.Exp(-1.96*res.RelErr), min(1, res.P*math.Exp(1.96*res.RelErr))
	}
	return nil
}
