package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// compareOptions are compare's arguments and flags.
type compareOptions struct {
	force      bool     // replace an existing results folder
	dirs       []string // the run folders compared
	out, title string
	baseline   string   // a run folder (among the compared, or added first) or a label
	thresholds []string // --threshold, added to each run's scenario's
}

// newCompareCmd builds `throttlesim compare`; runF replaces the run
// function in tests (nil: the real one).
func newCompareCmd(e *env, runF func(context.Context, *env, *compareOptions) error) *cobra.Command {
	o := &compareOptions{}
	if runF == nil {
		runF = compareRun
	}
	cmd := &cobra.Command{
		Use:   "compare DIR...",
		Short: "Overlay the results of several runs in one chart set",
		Long: `Compare reads the results folders of earlier runs (throttlesim run) and
writes the charts over time and the tables a sweep writes, one point per
folder: compare_*.png, sweep.csv, runs.csv and report.html, which starts
with a verdict and the fields in which the scenarios differ. --baseline
RUN prints every other run's figures against RUN's, as a ratio and a
difference marked better or worse. Each run's thresholds, and every
--threshold, are checked on each run; a failed one makes the exit code 99.
An existing results folder is refused unless --force replaces it.

More: docs/cli.md, "throttlesim sweep, compare, merge".`,
		Example: `  throttlesim compare results/outage results/outage-no-policy --out results/compare
  throttlesim compare --baseline results/outage-no-policy results/outage results/outage-k1.1`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one results folder")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dirs = args
			return runF(cmd.Context(), e, o)
		},
	}
	addOutFlag(cmd, &o.out, filepath.Join("results", "compare"), "folder for the comparison")
	addForceFlag(cmd.Flags(), &o.force)
	cmd.Flags().StringVar(&o.title, "title", "", "chart title (default: the runs' names, or their number when more than two)")
	cmd.Flags().StringVar(&o.baseline, "baseline", "", "print ratios and differences against this run (a folder or a run's label)")
	addThresholdFlag(cmd.Flags(), &o.thresholds)
	return cmd
}

// baselineIndex finds RUN among the folders or labels; -1 if it is not.
func baselineIndex(run string, dirs, labels []string) int {
	for i, d := range dirs {
		if filepath.Clean(d) == filepath.Clean(run) {
			return i
		}
	}
	for i, l := range labels {
		if l == run {
			return i
		}
	}
	return -1
}

func compareRun(ctx context.Context, e *env, o *compareOptions) error {
	dirs, out, title := o.dirs, filepath.Clean(o.out), o.title
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	extra, err := parseThresholds(o.thresholds)
	if err != nil {
		return err
	}
	if o.baseline != "" && baselineIndex(o.baseline, dirs, nil) < 0 {
		if _, err := os.Stat(filepath.Join(o.baseline, rundir.SummaryFile)); err == nil {
			dirs = append([]string{o.baseline}, dirs...) // a run not among the compared: compare it too
		}
	}
	var runs []*sweep.RunData
	count := map[string]int{}
	for _, d := range dirs {
		run, err := sweep.ReadRun(d)
		if err != nil {
			return err
		}
		runs = append(runs, run)
		count[run.Doc.Scenario.Name]++
	}
	var pts []sweep.PointData
	var names []string
	for i, run := range runs {
		label := run.Doc.Scenario.Name
		if count[label] > 1 { // runs of one scenario: name them by folder
			label = filepath.Base(filepath.Clean(dirs[i]))
		}
		run.Spec = sweep.RunSpec{Index: i, Point: i, Seed: run.Doc.Scenario.Seed}
		run.Key = "-"
		pts = append(pts, sweep.PointData{Label: label, Runs: []sweep.RunData{*run}})
		names = append(names, label)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if title == "" {
		title = strings.Join(names, " vs ")
		if len(names) > 2 {
			title = fmt.Sprintf("%d runs compared", len(names))
		}
	}
	c := report.Comparison{Name: title, Points: pts, Baseline: -1, NoFigures: true}
	manifest := map[string]any{"title": title, "runs": dirs, "labels": names}
	if o.baseline != "" {
		if c.Baseline = baselineIndex(o.baseline, dirs, names); c.Baseline < 0 {
			return usageError{fmt.Errorf("--baseline %s: not a run folder nor the label of a compared run (the labels are %s)", o.baseline, strings.Join(names, ", "))}
		}
		c.Paired = true // one run per point: paired.csv holds the plain differences
		manifest["baseline"] = names[c.Baseline]
	}
	verdicts, err := pointVerdicts(pts, extra)
	if err != nil {
		return err
	}
	var scen []report.Text
	for i, run := range runs {
		y, err := report.ScenarioYAML(run.Doc.Scenario)
		if err != nil {
			return err
		}
		scen = append(scen, report.Text{Label: names[i] + " (" + dirs[i] + "): every field as run, defaults included", Body: y, Folded: true})
	}
	facts := []report.Fact{{Name: "runs", Value: fmt.Sprint(len(pts))}}
	if c.Baseline >= 0 {
		facts = append(facts, report.Fact{Name: "baseline", Value: names[c.Baseline]})
	}
	if err := writeComparison(ctx, tmp, "compare", c, verdicts, scen, facts); err != nil {
		return err
	}
	// compare.json names what was compared (and marks the folder as ours).
	manifestJSON, _ := json.MarshalIndent(manifest, "", "  ")
	if err := resultdir.WriteFile(filepath.Join(tmp, rundir.CompareFile), append(manifestJSON, '\n')); err != nil {
		return err
	}
	if err := resultdir.Replace(tmp, out); err != nil {
		return writeError(out, err)
	}
	if !e.quiet {
		fmt.Fprintf(e.stdout, "compared %d runs\n", len(pts))
		printVerdict(e.stdout, report.CompareVerdict(pts, c.Baseline))
		if c.Baseline >= 0 {
			printBaseline(e.stdout, report.Paired(pts, c.Baseline))
		}
		for _, pv := range verdicts {
			printVerdicts(e.stdout, "thresholds, "+pv.Label, pv.Verdicts)
		}
		fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	}
	return pointsVerdictError(verdicts)
}

// mergeOptions are merge's arguments and flags.
type mergeOptions struct {
	force      bool // replace an existing results folder
	shards     []string
	out        string
	thresholds []string
}

// newMergeCmd builds `throttlesim merge`; runF replaces the run function
// in tests (nil: the real one).
func newMergeCmd(e *env, runF func(context.Context, *env, *mergeOptions) error) *cobra.Command {
	o := &mergeOptions{}
	if runF == nil {
		runF = mergeRun
	}
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Combine the shards of a sweep into the sweep's results",
		Long: `Merge combines sweep shards (throttlesim sweep --shard i/n) into exactly the
folder an unsharded sweep writes, byte for byte. Every shard must come from the
same sweep (identical sweep.json) and together they must hold every run.
An existing results folder is refused unless --force replaces it.`,
		Example: `  throttlesim sweep scenarios/k-sweep.yaml --shard 0/2 --out results/k-sweep-shard0   # on one machine
  throttlesim sweep scenarios/k-sweep.yaml --shard 1/2 --out results/k-sweep-shard1   # on another
  throttlesim merge --out results/k-sweep results/k-sweep-shard*`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one shard folder")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return usageError{errors.New("--out DIR is required")}
			}
			o.shards = args
			return runF(cmd.Context(), e, o)
		},
	}
	addOutFlag(cmd, &o.out, "", "the merged sweep folder")
	addForceFlag(cmd.Flags(), &o.force)
	addThresholdFlag(cmd.Flags(), &o.thresholds)
	return cmd
}

func mergeRun(ctx context.Context, e *env, o *mergeOptions) error {
	shards, out, thresholds := o.shards, filepath.Clean(o.out), o.thresholds
	// Merging a sweep's shards again (after a requeued shard) replaces
	// that sweep's own earlier merge: not a surprise, so no --force.
	if err := checkOut(out, o.force || sameSweep(out, shards)); err != nil {
		return err
	}
	extra, err := parseThresholds(thresholds)
	if err != nil {
		return err
	}
	work := out + ".incomplete"
	plan, err := sweep.Merge(shards, work)
	if err != nil {
		return err
	}
	agg, err := aggregateSweep(ctx, work, plan, extra)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "throttlesim: interrupted while aggregating; the merged runs are in %s\n", work)
			return reportedError{exitInterrupted}
		}
		return err
	}
	if err := resultdir.Replace(work, out); err != nil {
		return writeError(out, err)
	}
	if !e.quiet {
		fmt.Fprintf(e.stdout, "merged %d shards: %d runs\n", len(shards), len(plan.Runs()))
		printVerdict(e.stdout, agg.verdict)
		for _, pv := range agg.verdicts {
			printVerdicts(e.stdout, "thresholds, "+pv.Label, pv.Verdicts)
		}
		fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	}
	return pointsVerdictError(agg.verdicts)
}

// sameSweep reports whether the folder out holds a merge of the sweep the
// shards are of: its sweep.json is the first shard's, byte for byte.
func sameSweep(out string, shards []string) bool {
	if len(shards) == 0 {
		return false
	}
	a, err := os.ReadFile(filepath.Join(out, rundir.SweepFile))
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(shards[0], rundir.SweepFile))
	return err == nil && bytes.Equal(a, b)
}
