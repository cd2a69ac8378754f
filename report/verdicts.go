package report

import (
	"fmt"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

// Thresholds are a scenario's own thresholds followed by extra ones (from
// the command line), without repeats.
func Thresholds(sc *scenario.Scenario, extra []threshold.Threshold) ([]threshold.Threshold, error) {
	var own []threshold.Threshold
	if sc != nil {
		var err error
		if own, err = threshold.ParseAll(sc.Thresholds); err != nil {
			return nil, fmt.Errorf("scenario %s: thresholds: %w", sc.Name, err)
		}
	}
	var out []threshold.Threshold
	seen := map[threshold.Threshold]bool{}
	for _, t := range append(own, extra...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckPoint checks the point's thresholds (its scenario's, from its
// first run, and extra) on every one of its runs.
func CheckPoint(pt sweep.PointData, extra []threshold.Threshold) ([]threshold.Verdict, error) {
	var sc *scenario.Scenario
	if len(pt.Runs) > 0 {
		sc = pt.Runs[0].Doc.Scenario
	}
	ts, err := Thresholds(sc, extra)
	if err != nil {
		return nil, err
	}
	ss := make([]*metrics.Summary, len(pt.Runs))
	for i := range pt.Runs {
		ss[i] = &pt.Runs[i].Doc.Summary
	}
	var vs []threshold.Verdict
	for _, t := range ts {
		vs = append(vs, t.Check(ss...))
	}
	return vs, nil
}

// Mark is ✓ for a threshold met, ✗ for one failed.
func Mark(v threshold.Verdict) string {
	if v.OK() {
		return "✓"
	}
	return "✗"
}

// Outcome says in words what the verdict found: the value of a single
// run, or how many runs of a point passed and the worst value.
func Outcome(v threshold.Verdict) string {
	return outcome(v, v.Threshold.Metric, func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) })
}

// PageOutcome is Outcome for a page: the figure by its name for people
// (MetricLabel), its value as the page shows it (Show).
func PageOutcome(v threshold.Verdict) string {
	name := v.Threshold.Metric
	return outcome(v, MetricLabel(name), func(x float64) string { return Show(name, x) })
}

func outcome(v threshold.Verdict, name string, format func(float64) string) string {
	worst := "no value"
	if v.Worst != nil {
		worst = format(*v.Worst)
	}
	switch {
	case v.Runs == 0:
		return "no runs"
	case v.Runs == 1 && v.Missing == 1:
		if v.Threshold.Metric == "recovery_s" {
			return "no " + name + ": the run did not recover (or had no fault)"
		}
		return "no " + name + " in this run"
	case v.Runs == 1:
		return name + " = " + worst
	}
	s := fmt.Sprintf("%d of %d runs pass", v.Passed, v.Runs)
	if v.Missing > 0 {
		s += fmt.Sprintf(", %d without a value", v.Missing)
	}
	if v.Worst != nil {
		s += "; worst " + name + " = " + worst
	}
	return s
}

// Failed counts the verdicts that failed.
func Failed(vs []threshold.Verdict) int {
	n := 0
	for _, v := range vs {
		if !v.OK() {
			n++
		}
	}
	return n
}
