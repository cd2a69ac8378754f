package explore

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
)

// TuneConfig is a parameter search: minimise (or maximise) a metric over
// Params, subject to Constraints, across Scenarios scenarios at once.
type TuneConfig struct {
	Params      []Range
	Scenarios   int    // number of scenarios the Eval knows (default 1)
	Objective   string // a metric name
	Maximize    bool
	Constraints []Constraint
	// Worst: the objective of a candidate is, per seed, its worst value
	// over the scenarios (else the mean over them). Constraints must hold
	// in every scenario either way.
	Worst bool
	// Budget is the number of simulations the search may use (the final
	// comparison included, for which 2×Final×FinalSeeds×Scenarios runs
	// are kept; default 200). Sensitivity runs are extra.
	Budget int
	// Final is how many of the best candidates get the final paired
	// comparison (default 3), with FinalSeeds seeds each (default 10).
	Final, FinalSeeds int
	// Sensitivity: points per parameter in the sensitivity scan around
	// the optimum (0: no scan), each with SensitivitySeeds seeds
	// (default 4).
	Sensitivity, SensitivitySeeds int
	// Strict: a constraint holds only when it is met with confidence (the
	// one-sided 95% bound of its mean on the unfavourable side meets it);
	// else it holds unless it is violated with confidence (the bound on
	// the favourable side breaches it), so a breach within noise passes.
	Strict   bool
	BaseSeed uint64
	Jobs     int
	Progress func(runs int)
}

// Candidate is one evaluated parameter vector.
type Candidate struct {
	Values []float64
	Round  int // the search round that proposed it
	// Seeds run so far (in every scenario).
	Seeds int
	// obj[s] is the aggregated objective of seed s; cons[i][sc][s] the
	// value of constraint i in scenario sc with seed s.
	obj  []float64
	cons [][][]float64
	figs [][]Figures // [scenario][seed]
}

// Objective is the candidate's objective over its seeds.
func (c *Candidate) Objective() Stat { return Describe(c.obj) }

// ConstraintMean is constraint i's worst mean over the scenarios.
func (c *Candidate) ConstraintMean(i int, k Constraint) float64 {
	w := math.NaN()
	for _, xs := range c.cons[i] {
		if len(xs) == 0 {
			continue
		}
		m := Describe(xs).Mean
		if slices.ContainsFunc(xs, math.IsNaN) {
			m = math.Inf(1)
			if !k.AtMost {
				m = math.Inf(-1)
			}
		}
		if math.IsNaN(w) || (k.AtMost && m > w) || (!k.AtMost && m < w) {
			w = m
		}
	}
	return w
}

// Feasible reports whether every constraint holds in every scenario. By
// default a constraint holds unless it is violated with confidence: the
// candidate is rejected only when the one-sided 95% Student-t bound of
// the constraint's mean on the favourable side lies on the wrong side of
// the limit (a mean just past the limit with a wide spread is a breach
// within noise, and passes). With strict, it holds only when met with
// confidence: the bound on the unfavourable side must meet the limit.
// With fewer than two seeds the mean decides by default, and nothing is
// shown under strict; a candidate that ran no seed is not known to be
// feasible, so it is not.
func (c *Candidate) Feasible(ks []Constraint, strict bool) bool {
	return c.Seeds > 0 && c.violation(ks, strict) == 0
}

// Feasible is x.Feasible under the configuration's constraints and rule.
func (c TuneConfig) Feasible(x *Candidate) bool { return x.Feasible(c.Constraints, c.Strict) }

// Standing is how a candidate stands against one constraint (in its worst
// scenario), by the mean and the one-sided 95% bounds of its seeds.
type Standing int

const (
	// Met: met with confidence (the bound on the unfavourable side meets
	// the limit). Feasible under either rule.
	Met Standing = iota
	// MetWithinNoise: the mean meets the limit, but not with confidence
	// (or from fewer than two seeds). Feasible by default, not under
	// strict.
	MetWithinNoise
	// BreachWithinNoise: the mean is past the limit, but not with
	// confidence. Feasible by default, not under strict.
	BreachWithinNoise
	// Violated: past the limit with confidence, or without a value where
	// the constraint applies. Feasible under neither rule.
	Violated
)

func (s Standing) String() string {
	switch s {
	case Met:
		return "met"
	case MetWithinNoise:
		return "met within noise"
	case BreachWithinNoise:
		return "breach within noise"
	}
	return "violated"
}

// Holds is whether a constraint with this standing holds under the rule.
func (s Standing) Holds(strict bool) bool {
	if strict {
		return s == Met
	}
	return s != Violated
}

// Standing is constraint i's standing in the candidate's worst scenario
// (Met when it applies to none).
func (c *Candidate) Standing(i int, k Constraint) Standing {
	w := Met
	for _, xs := range c.cons[i] {
		if len(xs) == 0 {
			continue
		}
		w = max(w, standing(xs, k))
	}
	return w
}

func standing(xs []float64, k Constraint) Standing {
	if slices.ContainsFunc(xs, math.IsNaN) {
		return Violated
	}
	dir := 1.0 // the favourable side
	if k.AtMost {
		dir = -1
	}
	fav, unfav := oneSided(xs, dir), oneSided(xs, -dir)
	switch {
	case math.IsNaN(fav) || k.violation(fav) > 0:
		return Violated
	case k.violation(Describe(xs).Mean) > 0:
		return BreachWithinNoise
	case len(xs) < 2 || k.violation(unfav) > 0:
		return MetWithinNoise
	}
	return Met
}

// violation sums, over constraints and scenarios, how far the confidence
// bound is past the constraint's bound, relative to the bound's size: the
// bound on the favourable side by default, on the unfavourable side under
// strict (where fewer than two seeds show nothing: a violation of 1).
func (c *Candidate) violation(ks []Constraint, strict bool) float64 {
	v := 0.0
	for i, k := range ks {
		for _, xs := range c.cons[i] {
			if len(xs) == 0 {
				continue // does not apply to this scenario
			}
			if slices.ContainsFunc(xs, math.IsNaN) {
				v++ // no value where it applies (e.g. did not recover): not met
				continue
			}
			dir := 1.0 // the bound on the favourable side
			if k.AtMost {
				dir = -1
			}
			if strict {
				if len(xs) < 2 {
					v++
					continue
				}
				dir = -dir
			}
			b := oneSided(xs, dir)
			if math.IsNaN(b) {
				v += 1 // a constraint metric without a value: not met
				continue
			}
			v += k.violation(b) / math.Max(math.Abs(k.Bound), 1e-9)
		}
	}
	return v
}

func (c *Candidate) key() string { return valuesKey(c.Values) }

func valuesKey(vs []float64) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(v, 'g', 10, 64))
	}
	return b.String()
}

// TuneResult is the search's outcome.
type TuneResult struct {
	Candidates []*Candidate // every candidate evaluated, in order of proposal
	// Best and RunnerUp after the final comparison (RunnerUp nil with a
	// single candidate); Best is the least-violating candidate when
	// Infeasible.
	Best, RunnerUp *Candidate
	// Diff is RunnerUp − Best of the objective, paired by seed, with its
	// 95% interval; Significant when the interval excludes 0.
	Diff        Stat
	Significant bool
	Infeasible  bool
	Runs        int // simulations of the search and final comparison
	// Sensitivity[i] is the scan of parameter i around Best (others
	// fixed): values and the objective at each.
	Sensitivity     [][]SensPoint
	SensitivityRuns int
}

// SensPoint is one point of a sensitivity scan.
type SensPoint struct {
	Value     float64
	Objective Stat
	Feasible  bool
}

func (c *TuneConfig) setDefaults() error {
	if len(c.Params) == 0 {
		return configErr("nothing to tune: give at least one --param PATH=a..b")
	}
	for _, p := range c.Params {
		if !(p.Hi > p.Lo) {
			return configErr("--param %s: empty range [%g, %g]", p.Path, p.Lo, p.Hi)
		}
		if p.Integer && math.Floor(p.Hi) < math.Ceil(p.Lo) {
			return configErr("--param %s: no whole number in [%g, %g]", p.Path, p.Lo, p.Hi)
		}
		if math.IsNaN(p.Step) || p.Step < 0 || math.IsInf(p.Step, 0) {
			return configErr("--param %s: the step must be above 0, got %g", p.Path, p.Step)
		}
		if p.Step > p.Hi-p.Lo {
			return configErr("--param %s: the step %g is wider than the range [%g, %g]", p.Path, p.Step, p.Lo, p.Hi)
		}
		if p.Integer && p.Step != math.Floor(p.Step) {
			return configErr("--param %s: the field is an integer; give a whole step, not %g", p.Path, p.Step)
		}
		if p.stepped() && gridCount(p.Lo, p.Hi, p.Grid()) == 0 {
			return configErr("--param %s: no multiple of the step %g in [%g, %g]", p.Path, p.Grid(), p.Lo, p.Hi)
		}
	}
	if err := CheckMetric(c.Objective); err != nil {
		return configErr("objective: %w", err)
	}
	for _, k := range c.Constraints {
		if err := CheckMetric(k.Metric); err != nil {
			return configErr("constraint %s: %w", k, err)
		}
	}
	if c.Scenarios == 0 {
		c.Scenarios = 1
	}
	if c.Budget == 0 {
		c.Budget = 200
	}
	if c.Final == 0 {
		c.Final = 3
	}
	if c.FinalSeeds == 0 {
		c.FinalSeeds = 10
	}
	if c.SensitivitySeeds == 0 {
		c.SensitivitySeeds = 4
	}
	if c.FinalSeeds < 2 {
		return configErr("the final comparison needs at least 2 seeds, got %d", c.FinalSeeds)
	}
	if min := c.Final * c.FinalSeeds * c.Scenarios; c.Budget < 3*min {
		return configErr("a budget of %d runs is too small: the final comparison takes up to 2×%d×%d×%d = %d, and the search needs as much again; give --budget %d or more",
			c.Budget, c.Final, c.FinalSeeds, c.Scenarios, 2*min, 3*min)
	}
	return nil
}

type tuner struct {
	c     *TuneConfig
	r     *runner
	cands map[string]*Candidate
	order []*Candidate
}

// better orders candidates: feasible ones by objective, then infeasible
// ones by violation.
func (t *tuner) better(a, b *Candidate) bool {
	va, vb := a.violation(t.c.Constraints, t.c.Strict), b.violation(t.c.Constraints, t.c.Strict)
	if (va == 0) != (vb == 0) {
		return va == 0
	}
	if va > 0 && va != vb {
		return va < vb
	}
	oa, ob := a.Objective().Mean, b.Objective().Mean
	if t.c.Maximize {
		oa, ob = -oa, -ob
	}
	if oa != ob {
		return oa < ob
	}
	return a.key() < b.key()
}

func (t *tuner) sort(cs []*Candidate) {
	slices.SortStableFunc(cs, func(a, b *Candidate) int {
		if t.better(a, b) {
			return -1
		}
		if t.better(b, a) {
			return 1
		}
		return 0
	})
}

// candidate is the candidate at vals, each snapped to its parameter's
// grid first (Range.Snap): the values evaluated are the values reported.
func (t *tuner) candidate(vals []float64, round int) *Candidate {
	for i := range vals {
		vals[i] = t.c.Params[i].Snap(vals[i])
	}
	k := valuesKey(vals)
	if c, ok := t.cands[k]; ok {
		return c
	}
	c := &Candidate{Values: vals, Round: round, cons: make([][][]float64, len(t.c.Constraints)), figs: make([][]Figures, t.c.Scenarios)}
	for i := range c.cons {
		c.cons[i] = make([][]float64, t.c.Scenarios)
	}
	t.cands[k] = c
	t.order = append(t.order, c)
	return c
}

func (t *tuner) sets(vals []float64) []string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = t.c.Params[i].Set(v)
	}
	return s
}

// evaluate brings every candidate to n seeds (common random numbers: seed
// BaseSeed+s for every candidate and scenario).
func (t *tuner) evaluate(ctx context.Context, cs []*Candidate, n int) error {
	type job struct {
		c      *Candidate
		sc, sd int
	}
	var jobs []job
	var vs []Variant
	for _, c := range cs {
		for s := c.Seeds; s < n; s++ {
			for sc := 0; sc < t.c.Scenarios; sc++ {
				jobs = append(jobs, job{c, sc, s})
				vs = append(vs, Variant{Scenario: sc, Sets: t.sets(c.Values), Seed: t.c.BaseSeed + uint64(s)})
			}
		}
	}
	fs, err := t.r.all(ctx, vs)
	if err != nil {
		return err
	}
	for i, j := range jobs {
		j.c.figs[j.sc] = append(j.c.figs[j.sc], fs[i])
	}
	for _, c := range cs {
		for s := c.Seeds; s < n; s++ {
			agg := math.NaN()
			sum, m := 0.0, 0
			for sc := 0; sc < t.c.Scenarios; sc++ {
				x, ok := Value(c.figs[sc][s], t.c.Objective)
				if !ok {
					continue
				}
				if math.IsNaN(x) { // no value (e.g. did not recover): the worst
					x = math.Inf(1)
					if t.c.Maximize {
						x = math.Inf(-1)
					}
				}
				sum, m = sum+x, m+1
				worse := (!t.c.Maximize && x > agg) || (t.c.Maximize && x < agg)
				if math.IsNaN(agg) || worse {
					agg = x
				}
			}
			if m == 0 {
				return configErr("the objective %s does not apply to any of the scenarios (the recovery rule needs a fault or a load spike)", t.c.Objective)
			}
			if !t.c.Worst {
				agg = sum / float64(m)
			}
			c.obj = append(c.obj, agg)
			for i, k := range t.c.Constraints {
				for sc := 0; sc < t.c.Scenarios; sc++ {
					if x, ok := Value(c.figs[sc][s], k.Metric); ok {
						c.cons[i][sc] = append(c.cons[i][sc], x)
					}
				}
			}
		}
		c.Seeds = max(c.Seeds, n)
	}
	return nil
}

// Value is a metric of a run, and whether it applies: the recovery
// figures do not apply to a run the recovery rule does not apply to (no
// fault and no load spike). A figure that applies but has no value (NaN:
// recovery time of a run that did not recover) counts as the worst value
// in an objective and as a violation in a constraint.
func Value(f Figures, metric string) (float64, bool) {
	rec := strings.HasPrefix(metric, "recovery.") && metric != "recovery.applicable" || metric == "recovery_s" || metric == "recovered"
	if rec && f["recovery.applicable"] == 0 {
		return math.NaN(), false
	}
	return f[metric], true
}

// design proposes the candidates of a round inside box: a grid for one or
// two parameters, a Halton sequence for more; integer parameters, and
// parameters with a step, take every value when there are few.
func (t *tuner) design(box []Range, round int) []*Candidate {
	d := len(box)
	var pts [][]float64
	if d <= 2 {
		per := 9
		if d == 2 {
			per = 5
		}
		axes := make([][]float64, d)
		for i, b := range box {
			axes[i] = b.Values(per)
			// An integer parameter (or one with a step) with few values
			// takes every one: a grid rounded to integers skips some
			// (1..10 in 9 steps never tries 5).
			p := t.c.Params[i]
			if g := p.Grid(); p.stepped() {
				if n := gridCount(b.Lo, b.Hi, g); n > 0 && n <= allValues[d-1] {
					axes[i] = axes[i][:0]
					for k := gridIndex(b.Lo, g, false); k <= gridIndex(b.Hi, g, true); k++ {
						axes[i] = append(axes[i], onGrid(k, g))
					}
				}
			}
		}
		pts = [][]float64{{}}
		for _, ax := range axes {
			var next [][]float64
			for _, p := range pts {
				for _, v := range ax {
					next = append(next, append(slices.Clone(p), v))
				}
			}
			pts = next
		}
	} else {
		primes := []float64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
		for i := 1; i <= 16; i++ {
			p := make([]float64, d)
			for j := range p {
				p[j] = box[j].Lo + (box[j].Hi-box[j].Lo)*halton(i, primes[j%len(primes)])
			}
			pts = append(pts, p)
		}
	}
	var out []*Candidate
	seen := map[string]bool{}
	for _, p := range pts {
		c := t.candidate(p, round)
		if !seen[c.key()] {
			seen[c.key()] = true
			out = append(out, c)
		}
	}
	return out
}

// allValues[d-1] is how many values an integer (or stepped) parameter may
// have in a d-parameter grid for the design to take all of them: 25 alone (the
// grid of one parameter has 9 points, so this costs at most 16 more
// candidates), 5 in a 2-parameter grid (its grid already has 5 per axis).
var allValues = [2]int{25, 5}

func halton(i int, b float64) float64 {
	f, r := 1.0, 0.0
	for x := float64(i); x > 0; x = math.Floor(x / b) {
		f /= b
		r += f * math.Mod(x, b)
	}
	return r
}

// Tune runs the search: rounds of a space-filling design followed by
// successive halving (2 seeds each, then the best third gets twice as
// many, until one is left or 8 seeds), each round zooming in to a box
// half as wide around the best so far, until the budget left is what the
// final comparison needs or every continuous box is 1/64 of its range;
// then the best Final candidates among those that won a halving rung get
// FinalSeeds seeds each and are compared with paired intervals.
func Tune(ctx context.Context, eval Eval, c TuneConfig) (*TuneResult, error) {
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	t := &tuner{c: &c, r: newRunner(eval, c.Jobs, c.Progress), cands: map[string]*Candidate{}}
	finalCost := c.Final * c.FinalSeeds * c.Scenarios
	box := slices.Clone(c.Params)
	for round := 0; ; round++ {
		cs := t.design(box, round)
		// The cost of this round's first rung, for candidates not yet run.
		cost := 0
		for _, x := range cs {
			cost += max(0, 2-x.Seeds) * c.Scenarios
		}
		// narrow: every continuous box is down to 1/64 of its range and
		// every integer (or stepped) box to 3 values (which a grid
		// covers). An integer box wider than that still has values
		// between the grid's points to try, so it keeps the search going;
		// when a round proposes nothing new, cost is 0 and the search ends.
		narrow := true
		for i, p := range c.Params {
			if p.stepped() {
				if gridCount(box[i].Lo, box[i].Hi, p.Grid()) > 3 {
					narrow = false
				}
			} else if box[i].Hi-box[i].Lo > (p.Hi-p.Lo)/64 {
				narrow = false
			}
		}
		if round > 0 && (cost == 0 || narrow || t.r.runs+cost > c.Budget-2*finalCost) {
			break
		}
		for seeds := 2; ; seeds *= 2 {
			if err := t.evaluate(ctx, cs, seeds); err != nil {
				return nil, err
			}
			t.sort(cs)
			keep := (len(cs) + 2) / 3
			if keep <= 1 || seeds >= 8 {
				break
			}
			more := 0
			for _, x := range cs[:keep] {
				more += max(0, 2*seeds-x.Seeds) * c.Scenarios
			}
			if t.r.runs+more > c.Budget-2*finalCost {
				break
			}
			cs = cs[:keep]
		}
		// Zoom: a box two grid steps wide around the best so far.
		all := slices.Clone(t.order)
		t.sort(all)
		best := all[0]
		for i, p := range c.Params {
			w := (box[i].Hi - box[i].Lo) / 4
			g := p.Grid()
			if p.stepped() {
				w = math.Max(g, math.Floor(w/g)*g)
			}
			box[i].Lo = math.Max(p.Lo, best.Values[i]-w)
			box[i].Hi = math.Min(p.Hi, best.Values[i]+w)
			if p.stepped() {
				box[i].Lo, box[i].Hi = onGrid(gridIndex(box[i].Lo, g, false), g), onGrid(gridIndex(box[i].Hi, g, true), g)
			}
		}
	}
	// Final comparison: the best Final candidates get FinalSeeds seeds;
	// one that more seeds show to be infeasible (or worse) drops out and
	// the next comes in, while the budget lasts.
	// Only candidates that won a halving rung (4 seeds or more) compete,
	// so that the budget is not spent on ones that looked good on 2 seeds.
	var top []*Candidate
	for {
		var all []*Candidate
		for _, x := range t.order {
			if x.Seeds >= min(4, c.FinalSeeds) {
				all = append(all, x)
			}
		}
		if len(all) == 0 {
			all = slices.Clone(t.order)
		}
		t.sort(all)
		top = all[:min(c.Final, len(all))]
		need := 0
		for _, x := range top {
			need += max(0, c.FinalSeeds-x.Seeds) * c.Scenarios
		}
		if need == 0 {
			break
		}
		// Within the budget, the best first.
		var fit []*Candidate
		left := c.Budget - t.r.runs
		for _, x := range top {
			if n := max(0, c.FinalSeeds-x.Seeds) * c.Scenarios; n > 0 && n <= left {
				fit, left = append(fit, x), left-n
			}
		}
		if len(fit) == 0 {
			break
		}
		if err := t.evaluate(ctx, fit, c.FinalSeeds); err != nil {
			return nil, err
		}
	}
	// Report among the candidates with the final number of seeds.
	var done []*Candidate
	for _, x := range t.order {
		if x.Seeds >= c.FinalSeeds {
			done = append(done, x)
		}
	}
	t.sort(done)
	if len(done) > 0 {
		top = done[:min(c.Final, len(done))]
	}
	res := &TuneResult{Candidates: t.order, Best: top[0], Runs: t.r.runs}
	res.Infeasible = !c.Feasible(res.Best)
	if len(top) > 1 {
		// The runner-up is the next feasible candidate when the chosen
		// one is feasible and there is one; else simply the next.
		res.RunnerUp = top[1]
		if !res.Infeasible {
			for _, x := range top[1:] {
				if c.Feasible(x) {
					res.RunnerUp = x
					break
				}
			}
		}
		n := min(len(top[0].obj), len(res.RunnerUp.obj))
		d := make([]float64, n)
		for s := 0; s < n; s++ {
			d[s] = res.RunnerUp.obj[s] - top[0].obj[s]
		}
		res.Diff = Describe(d)
		res.Significant = res.Diff.Lo > 0 || res.Diff.Hi < 0
	}
	if c.Sensitivity > 1 {
		before := t.r.runs
		for i, p := range c.Params {
			var scan []SensPoint
			for _, v := range p.Values(c.Sensitivity) {
				vals := slices.Clone(res.Best.Values)
				vals[i] = v
				x := t.candidate(vals, -1)
				if err := t.evaluate(ctx, []*Candidate{x}, max(c.SensitivitySeeds, x.Seeds)); err != nil {
					return nil, err
				}
				scan = append(scan, SensPoint{Value: x.Values[i], Objective: x.Objective(), Feasible: c.Feasible(x)})
			}
			res.Sensitivity = append(res.Sensitivity, scan)
		}
		res.SensitivityRuns = t.r.runs - before
		res.Candidates = t.order
	}
	return res, nil
}
