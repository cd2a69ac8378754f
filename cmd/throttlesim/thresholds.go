package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/sweep"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

// exitThresholds is the exit code of a run, sweep or comparison whose
// results were written but failed a threshold (k6 uses the same code).
const exitThresholds = 99

// thresholdsFailed says results were written and some thresholds failed.
type thresholdsFailed struct{ failed, total int }

// ExitCode is exitThresholds.
func (e thresholdsFailed) ExitCode() int { return exitThresholds }

func (e thresholdsFailed) Error() string {
	return fmt.Sprintf("%d of %d threshold%s failed", e.failed, e.total, plural(e.total))
}

func addThresholdFlag(f *pflag.FlagSet, p *[]string) {
	f.StringArrayVar(p, "threshold", nil, "fail (exit code 99) unless METRIC OP VALUE holds, e.g. 'recovery_s<=120' (repeatable; adds to the scenario's thresholds:)")
}

// parseThresholds parses --threshold flags before anything runs.
func parseThresholds(flags []string) ([]threshold.Threshold, error) {
	var ts []threshold.Threshold
	for _, s := range flags {
		t, err := threshold.Parse(s)
		if err != nil {
			return nil, usageError{fmt.Errorf("--threshold %w", err)}
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// printVerdicts prints one line per threshold, ✓ or ✗, under a heading.
func printVerdicts(w io.Writer, heading string, vs []threshold.Verdict) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s\n", heading)
	width := 0
	for _, v := range vs {
		width = max(width, len(v.Threshold.String()))
	}
	for _, v := range vs {
		fmt.Fprintf(w, "    %s %-*s  %s\n", report.Mark(v), width, v.Threshold, report.Outcome(v))
	}
}

// verdictError is nil when every verdict passed.
func verdictError(vs []threshold.Verdict) error {
	if n := report.Failed(vs); n > 0 {
		return thresholdsFailed{n, len(vs)}
	}
	return nil
}

// pointVerdicts checks every point's thresholds.
func pointVerdicts(pts []sweep.PointData, extra []threshold.Threshold) ([]report.PointVerdicts, error) {
	var out []report.PointVerdicts
	for _, pt := range pts {
		vs, err := report.CheckPoint(pt, extra)
		if err != nil {
			return nil, err
		}
		if len(vs) > 0 {
			out = append(out, report.PointVerdicts{Label: pt.Label, Verdicts: vs})
		}
	}
	return out, nil
}

// pointsVerdictError is nil when every point passed every threshold.
func pointsVerdictError(pvs []report.PointVerdicts) error {
	failed, total := 0, 0
	for _, pv := range pvs {
		failed += report.Failed(pv.Verdicts)
		total += len(pv.Verdicts)
	}
	if failed > 0 {
		return thresholdsFailed{failed, total}
	}
	return nil
}
