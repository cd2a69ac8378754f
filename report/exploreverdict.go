package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/explore"
)

// MapVerdict says where a map's boundary lies, in a sentence or two: the
// trigger size above which it stops recovering at the lightest and the
// heaviest load where the boundary was bracketed, and the loads at which
// it recovers from every trigger probed, or from none.
func MapVerdict(doc *explore.MapDoc) []string {
	r := doc.Result
	if r == nil || len(r.Levels) == 0 {
		return nil
	}
	o := doc.TriggerOrigin
	trig := shifted(r.Trigger, o)
	tname := cmp.Or(doc.TriggerLabel, ParamLabel(r.Trigger.Path))
	tname, _, _ = strings.Cut(tname, " (") // the unit is on the values
	load := func(x float64) string { return r.Load.Short(x) }
	var inRange []explore.Level
	var always, never []explore.Level // recovers from every trigger; from none
	nonMono := 0
	for _, l := range r.Levels {
		switch l.Boundary.Kind {
		case "above":
			always = append(always, l)
		case "below":
			never = append(never, l)
		default:
			inRange = append(inRange, l)
		}
		if l.NonMonotone != "" {
			nonMono++
		}
	}
	var out []string
	within := horizonText(doc.HorizonS)
	at := func(l explore.Level) string {
		b := l.Boundary
		return bracketed(b.Threshold-o, b.Lo-o, b.Hi-o, trig.Unit)
	}
	switch n := len(inRange); {
	case n == 1:
		out = append(out, fmt.Sprintf("At %s it stops recovering%s once the %s passes %s.", load(inRange[0].Load), within, tname, at(inRange[0])))
	case n > 1:
		a, z := inRange[0], inRange[n-1]
		out = append(out, fmt.Sprintf("It stops recovering%s once the %s passes %s at %s, and %s at %s.",
			within, tname, at(a), load(a.Load), at(z), load(z.Load)))
	}
	var rest []string
	if len(always) > 0 {
		rest = append(rest, fmt.Sprintf("at %s it recovers from every %s up to %s", loadList(always, load), tname, trig.Short(r.Trigger.Hi-o)))
	}
	if len(never) > 0 {
		rest = append(rest, fmt.Sprintf("at %s it does not recover even from %s", loadList(never, load), trig.Short(r.Trigger.Lo-o)))
	}
	if len(rest) > 0 {
		s := strings.Join(rest, "; ")
		out = append(out, strings.ToUpper(s[:1])+s[1:]+".")
	}
	if nonMono > 0 {
		out = append(out, fmt.Sprintf("At %d load level%s the chance of no recovery did not rise with the trigger: read its boundary with care.", nonMono, plural(nonMono)))
	}
	return out
}

// loadList names the loads of levels: one, two, or the first and last of
// a run of them.
func loadList(ls []explore.Level, load func(float64) string) string {
	switch len(ls) {
	case 1:
		return load(ls[0].Load)
	case 2:
		return load(ls[0].Load) + " and " + load(ls[1].Load)
	}
	return fmt.Sprintf("the %d loads from %s to %s", len(ls), load(ls[0].Load), load(ls[len(ls)-1].Load))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// objectiveName is a tuning's metric for people: "recovery.recovery_time_s"
// is "recovery time (s after the fault)".
func objectiveName(m string) string {
	return MetricLabel(strings.TrimPrefix(m, "recovery."))
}

// metricKey is the Show/MetricLabel key of a tuning's metric.
func metricKey(m string) string { return strings.TrimPrefix(m, "recovery.") }

// candidateText is a candidate's values with human names:
// "max attempts = 3".
func candidateText(cfg explore.TuneConfig, x *explore.Candidate) string {
	var parts []string
	for _, s := range cfg.Sets(x) {
		path, v, _ := strings.Cut(s, "=")
		parts = append(parts, ParamLabel(path)+" = "+v)
	}
	return strings.Join(parts, ", ")
}

// TuneVerdict says what a tuning chose, by how much it beats the
// runner-up and whether that matters (the paired difference's 95%
// interval excludes 0), or that no candidate met the constraints.
func TuneVerdict(cfg explore.TuneConfig, res *explore.TuneResult) []string {
	if res == nil || res.Best == nil {
		return nil
	}
	key, name := metricKey(cfg.Objective), objectiveName(cfg.Objective)
	o := res.Best.Objective()
	if res.Infeasible {
		return []string{fmt.Sprintf("No candidate meets the constraints; the closest is %s (%s %s).", candidateText(cfg, res.Best), name, Show(key, o.Mean))}
	}
	goal := "lowest"
	if cfg.Maximize {
		goal = "highest"
	}
	out := []string{fmt.Sprintf("Chosen: %s, the %s %s among the candidates that meet the constraints: %s [%s, %s] over %d seeds.",
		candidateText(cfg, res.Best), goal, name, Show(key, o.Mean), Show(key, o.Lo), Show(key, o.Hi), res.Best.Seeds)}
	if res.RunnerUp == nil {
		return out
	}
	d := res.Diff
	diff := func(x float64) string {
		if percentMetric(key) {
			return strconv.FormatFloat(100*x, 'g', 3, 64) + " points"
		}
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	by := diff(math.Abs(d.Mean))
	// rel is the difference as a share of the value (in %), or for a
	// percent metric its size in points: under 1 either way is negligible.
	rel := math.NaN()
	if percentMetric(key) {
		rel = 100 * math.Abs(d.Mean)
	} else if o.Mean != 0 && !math.IsNaN(d.Mean) {
		rel = 100 * math.Abs(d.Mean/o.Mean)
		by += " (" + strconv.FormatFloat(rel, 'g', 2, 64) + "% of its value)"
	}
	ci := fmt.Sprintf("[%s, %s]", diff(d.Lo), diff(d.Hi))
	ru := candidateText(cfg, res.RunnerUp)
	switch {
	case res.Significant && rel < 1:
		out = append(out, fmt.Sprintf("It beats the runner-up, %s, by %s: real (paired by seed, %s at 95%% excludes 0) but under %s, so in practice either will do.", ru, by, ci, negligible(key)))
	case res.Significant:
		out = append(out, fmt.Sprintf("It beats the runner-up, %s, by %s (paired by seed, %s at 95%%): the choice matters.", ru, by, ci))
	default:
		out = append(out, fmt.Sprintf("The runner-up, %s, differs by %s, within noise (paired by seed, %s at 95%% includes 0): either will do.", ru, by, ci))
	}
	return out
}

// negligible names the size under which a real difference does not
// matter: 1% of the value, or 1 point of a percent metric.
func negligible(key string) string {
	if percentMetric(key) {
		return "1 point"
	}
	return "1%"
}
