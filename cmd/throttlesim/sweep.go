package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

type sweepOptions struct {
	force       bool // replace an existing results folder
	file        string
	sets, vary  []string
	seeds       int
	seed        uint64
	seedSet     bool
	jobs        int
	independent bool
	title       string // --title: the charts' title instead of the scenario's name
	out         string
	resume      bool
	shard       string
	quiet       bool
	thresholds  []string
	emit        emitOptions
	forward     []string // with --emit: the flags the shards get
}

// newSweepCmd builds `throttlesim sweep`; runF replaces the run function
// in tests (nil: the real one).
func newSweepCmd(e *env, runF func(context.Context, *env, *sweepOptions) error) *cobra.Command {
	o := &sweepOptions{}
	if runF == nil {
		runF = sweepRun
	}
	cmd := &cobra.Command{
		Use:   "sweep FILE",
		Short: "Run a scenario over several values of its fields and seeds, and compare",
		Long: `Sweep runs the scenario in FILE for every point of its sweep: block (or of
--vary) and every seed, in parallel, and compares the points: sweep.csv
(mean and 95% confidence interval of each figure per point), runs.csv,
paired.csv (differences from the baseline point, paired by seed), charts
and report.html. Every point uses the same seeds (common random numbers),
and the results are the same bytes whatever --jobs is. An interrupted
sweep continues with --resume; --shard i/n splits it over machines and
'throttlesim merge' joins the shards. An existing results folder is refused unless --force replaces it.

More: docs/sweeps.md and docs/cli.md, "throttlesim sweep, compare, merge".`,
		Example: `  throttlesim sweep scenarios/k-sweep.yaml
  throttlesim sweep scenarios/outage.yaml --vary clients.throttle.k=1.1,1.5,2,3 --seeds 10
  throttlesim sweep scenarios/k-sweep.yaml --shard 0/4 --out results/k-sweep-shard0`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = seedGiven(cmd)
			o.quiet = e.quiet
			if err := checkEmitFlags(cmd, &o.emit); err != nil {
				return err
			}
			o.forward = forwardedFlags(cmd, "threshold")
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.vary, "vary", nil, "vary a field: path=v1,v2,... (repeatable: a grid); replaces the file's sweep.vary")
	addSetFlag(cmd, &o.sets, "override a field of every point, path=value (repeatable)")
	f.IntVar(&o.seeds, "seeds", 0, "replications per point (default: the file's sweep.seeds, else 5)")
	addSeedFlag(f, &o.seed, 0, "base seed (default: the scenario's seed)")
	addJobsFlag(f, &o.jobs)
	f.BoolVar(&o.independent, "independent-seeds", false, "give every point its own seeds instead of common random numbers")
	f.StringVar(&o.title, "title", "", "chart title: what the sweep shows (default: the scenario's name)")
	addOutFlag(cmd, &o.out, "", "results folder (default results/<name>-sweep, or results/<name> when the name says sweep)")
	addForceFlag(f, &o.force)
	f.BoolVar(&o.resume, "resume", false, "continue an interrupted sweep, skipping finished runs")
	f.StringVar(&o.shard, "shard", "", "run only share i of n (i/n, 0-based), for batch clusters; auto reads the index and count from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, THROTTLESIM_SHARDS) or a Slurm array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT)")
	addThresholdFlag(f, &o.thresholds)
	addEmitFlags(f, &o.emit)
	cmd.RegisterFlagCompletionFunc("vary", completeFieldPath)
	return cmd
}

func parseShard(s string) (int, int, error) { return parseShardEnv(s, osGetenv) }

// parseShardEnv reads --shard: "" (no sharding), "i/n", or "auto" (the batch
// engine's index and count, see shardFromEnv).
func parseShardEnv(s string, getenv func(string) string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	if s == "auto" {
		return shardFromEnv(getenv)
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usageError{fmt.Errorf("--shard %q: expected i/n with 0 <= i < n, e.g. 0/4, or auto", s)}
	}
	return i, n, nil
}

func sweepRun(ctx context.Context, e *env, o *sweepOptions) error {
	shard, shards, err := parseShard(o.shard)
	if err != nil {
		return err
	}
	extra, err := parseThresholds(o.thresholds)
	if err != nil {
		return err
	}
	if shards > 0 && len(extra) > 0 {
		return usageError{errors.New("--threshold with --shard: a shard is not judged; give --threshold to 'throttlesim merge'")}
	}
	if o.jobs < 1 {
		return usageError{fmt.Errorf("--jobs %d: must be at least 1", o.jobs)}
	}
	data, err := os.ReadFile(o.file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such scenario file", o.file)
		}
		return err
	}
	po := sweep.PlanOptions{Sets: o.sets, Vary: o.vary, Seeds: o.seeds, Independent: o.independent, Title: o.title}
	if o.seedSet {
		po.Seed = &o.seed
	}
	plan, err := sweep.NewPlan(o.file, data, po)
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			for _, fe := range errs {
				fmt.Fprintln(e.stderr, fe.Error())
			}
			return reportedError{exitError}
		}
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join("results", plan.Name)
		if !strings.Contains(plan.Name, "sweep") { // not results/k-sweep-sweep
			out += "-sweep"
		}
		if shards > 0 {
			out += fmt.Sprintf("-shard%dof%d", shard, shards)
		}
	}
	out = filepath.Clean(out)
	if o.emit.engine != "" {
		j := emitJob{verb: []string{"sweep"}, mergeVerb: []string{"merge"}, file: o.file, data: data, forward: o.forward, out: out, units: len(plan.Runs()), unit: "runs"}
		for _, t := range o.thresholds {
			j.mergeArgs = append(j.mergeArgs, "--threshold="+t)
		}
		return emitRun(e, &o.emit, j)
	}
	work := out + ".incomplete"
	inPlace := false
	if _, werr := os.Stat(work); werr != nil && o.resume {
		if _, err := os.Stat(out); err == nil {
			// Resume a finished sweep in place: nothing to run, the
			// outputs rewritten from its own runs. Intended, so not
			// refused as a replacement.
			work, inPlace = out, true
		}
	}
	if err := checkOut(out, o.force || inPlace); err != nil {
		return err
	}
	if _, werr := os.Stat(out + ".incomplete"); werr == nil && !o.resume {
		return fmt.Errorf("%s exists: an earlier sweep was interrupted there; continue it with --resume, or delete it", work)
	}
	if err := sweep.WritePlan(work, plan); err != nil {
		return err
	}
	if shards > 0 {
		if err := resultdir.WriteFile(filepath.Join(work, rundir.ShardFile), fmt.Appendf(nil, "{\"shard\": %d, \"shards\": %d}\n", shard, shards)); err != nil {
			return err
		}
	}
	total := len(plan.Runs())
	var bar *progressbar.ProgressBar
	opts := sweep.Options{Jobs: o.jobs, Shard: shard, Shards: shards, Build: build()}
	if e.tty && !o.quiet {
		// The bar counts the runs left, so that after --resume its rate and
		// time to go are those of runs simulated, not of the finished runs
		// it skips in no time.
		opts.Start = func(done, left int) {
			bar = sweepBar(e.stderr, plan, done, left)
		}
		opts.Progress = func(done, _ int) { bar.Set(done) }
	}
	start := time.Now()
	err = sweep.Execute(ctx, plan, work, opts)
	endBar(bar, err == nil)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "throttlesim: interrupted; finished runs are kept in %s: continue with the same command and --resume\n", work)
			return reportedError{exitInterrupted}
		}
		return err
	}
	var agg aggregated
	if shards == 0 {
		if agg, err = aggregateSweep(ctx, work, plan, extra); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(e.stderr, "throttlesim: interrupted while aggregating; the runs are all kept in %s: aggregate them with the same command and --resume\n", work)
				return reportedError{exitInterrupted}
			}
			return err
		}
	}
	if work != out {
		if err := resultdir.Replace(work, out); err != nil {
			return writeError(out, err)
		}
	}
	if !o.quiet {
		if shards > 0 {
			fmt.Fprintf(e.stdout, "%s: shard %d/%d done in %.1f s; merge the shards with: throttlesim merge --out DIR SHARD_DIRS...\nresults: %s%c\n",
				plan.Name, shard, shards, time.Since(start).Seconds(), out, filepath.Separator)
			return nil
		}
		fmt.Fprintf(e.stdout, "%s: %d points x %d seeds = %d runs in %.1f s (%d jobs)\n", plan.Name, len(plan.Points), plan.Seeds, total, time.Since(start).Seconds(), o.jobs)
		if err := sweepTable(e.stdout, out, "text", nil); err != nil {
			return err
		}
		printVerdict(e.stdout, agg.verdict)
		for _, pv := range agg.verdicts {
			printVerdicts(e.stdout, "thresholds, "+pv.Label, pv.Verdicts)
		}
		fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	}
	return pointsVerdictError(agg.verdicts)
}

// aggregated is what aggregating a sweep found: each point's threshold
// verdicts and the sentences the page starts with (report.SweepVerdict).
type aggregated struct {
	verdicts []report.PointVerdicts
	verdict  []string
}

// printVerdict prints a page's verdict sentences, as the page starts with
// them.
func printVerdict(w io.Writer, sentences []string) {
	for _, s := range sentences {
		fmt.Fprintf(w, "verdict: %s\n", s)
	}
}

// sweepBar is the progress bar of a sweep's left runs; done runs (found
// done by --resume) are named in its description, not counted in it. No
// bar when nothing is left.
func sweepBar(w io.Writer, plan *sweep.Plan, done, left int) *progressbar.ProgressBar {
	if left == 0 {
		return nil
	}
	desc := fmt.Sprintf("sweeping %s (%d points x %d seeds", plan.Name, len(plan.Points), plan.Seeds)
	if done > 0 {
		desc += fmt.Sprintf("; %d runs done before", done)
	}
	return progressBar(w, int64(left), desc+")", true)
}

// aggregateSweep writes a finished sweep's tables, charts and report.html
// into dir, and returns each point's threshold verdicts (the scenario's
// thresholds and extra ones). It stops with ctx's error when ctx ends
// (Ctrl-C): between runs read, before and after drawing the charts, and
// before each file is written.
func aggregateSweep(ctx context.Context, dir string, plan *sweep.Plan, extra []threshold.Threshold) (aggregated, error) {
	// The series are folded into the charts' bands as they are read and
	// dropped: memory is points × intervals, not runs × intervals.
	bands := report.NewBands(len(plan.Points))
	pts, err := sweep.LoadRunsEach(ctx, dir, plan, bands.Add)
	if err != nil {
		return aggregated{}, err
	}
	c := report.Comparison{Name: cmp.Or(plan.Title, plan.Name), Varied: variedLabel(plan), Points: pts, Baseline: plan.Baseline, Paired: !plan.Independent, Bands: bands}
	vs, err := pointVerdicts(pts, extra)
	if err != nil {
		return aggregated{}, err
	}
	crn := "yes (replication r of every point uses the same seed)"
	if plan.Independent {
		crn = "no (independent seeds)"
	}
	facts := []report.Fact{{Name: "points", Value: fmt.Sprint(len(plan.Points))}, {Name: "seeds per point", Value: fmt.Sprint(plan.Seeds)},
		{Name: "common random numbers", Value: crn}}
	var scen []report.Text
	var pl strings.Builder
	for i, pt := range plan.Points {
		mark := ""
		if i == plan.Baseline {
			mark = "   # the baseline"
		}
		fmt.Fprintf(&pl, "%s: %s%s\n", pt.Label, strings.Join(append(append([]string{}, plan.BaseSets...), pt.Sets...), "  "), mark)
	}
	scen = append(scen, report.Text{Label: "points: each is " + plan.File + " with these --set overrides", Body: pl.String()})
	if b := max(plan.Baseline, 0); b < len(pts) && len(pts[b].Runs) > 0 {
		y, err := report.ScenarioYAML(pts[b].Runs[0].Doc.Scenario)
		if err != nil {
			return aggregated{}, err
		}
		scen = append(scen, report.Text{Label: "point " + pts[b].Label + ", replication 0, as run: every field, defaults included", Body: y, Folded: true})
	}
	return aggregated{vs, report.SweepVerdict(report.WithShortLabels(pts), c.Paired)}, writeComparison(ctx, dir, "sweep", c, vs, scen, facts)
}

// variedLabel names what differs between a sweep's points, for the charts'
// x axis and legend: the varied fields, or else the fields its labelled
// points set, by their names for people (report.ParamLabel).
func variedLabel(plan *sweep.Plan) string {
	if len(plan.Varied) > 0 {
		var names []string
		for _, v := range plan.Varied {
			names = append(names, report.ParamLabel(v))
		}
		return strings.Join(names, ", ")
	}
	var paths []string
	for _, pt := range plan.Points {
		for _, s := range pt.Sets {
			if path, _, ok := strings.Cut(s, "="); ok && !slices.Contains(paths, report.ParamLabel(path)) {
				paths = append(paths, report.ParamLabel(path))
			}
		}
	}
	return strings.Join(paths, ", ")
}

var errInterrupted = errors.New("interrupted")
