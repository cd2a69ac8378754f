package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

type tuneOptions struct {
	force       bool // replace an existing results folder
	files       []string
	params      []string
	sets        []string
	minimize    string
	maximize    string
	subjectTo   []string
	objective   string
	budget      int
	final       int
	finalSeeds  int
	sensitivity int
	seed        uint64
	seedSet     bool
	jobs        int
	out         string
	quiet       bool
	strict      bool
	resume      bool
	flagInputs  []keepInput // the flags as resume.json records them
	round       roundOptions
	emit        emitOptions
	forward     []string
}

func newTuneCmd(e *env, runF func(context.Context, *env, *tuneOptions) error) *cobra.Command {
	if runF == nil {
		runF = tuneRun
	}
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "tune SCENARIO... --param PATH=a..b --minimize METRIC [--subject-to 'METRIC<=x']",
		Short: "Search policy parameters for the best value of a metric under constraints",
		Long: `Tune searches the --param fields for the value that minimises (or
maximises) a metric of summary.json subject to --subject-to constraints,
across one or several scenarios: a constraint must hold in every one, and
the objective is their mean or, with --objective worst, the worst. It
spends --budget runs on rounds of a grid and successive halving, then
compares the best candidates on more seeds and reports the chosen value,
the runner-up and whether they differ significantly. Writes tune.csv,
best.yaml, tune.json, pareto.png and sensitivity.png. No candidate meets
the constraints: "infeasible", exit code 1. An existing results folder is refused unless --force replaces it.

The search, the feasibility rule, the metrics: docs/cli.md, "throttlesim tune".`,
		Example: `  throttlesim tune scenarios/tune-overload.yaml --param clients.throttle.k=1..4 \
      --minimize backend_load_rps --subject-to 'local_drop_rate<=0.6'
  throttlesim tune scenarios/tune-retries.yaml --param clients.retry.max_attempts=1..8 \
      --minimize amplification --subject-to 'success_ratio>=0.999'
  throttlesim tune scenarios/outage.yaml scenarios/overload.yaml --param clients.throttle.k=1.1..4 \
      --minimize recovery.recovery_time_s --objective worst --budget 300`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one scenario FILE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			o.seedSet = seedGiven(cmd)
			o.quiet = e.quiet
			o.flagInputs = flagInputs(cmd)
			if err := o.round.check(o.resume, map[string]bool{"--emit": o.emit.engine != ""}); err != nil {
				return err
			}
			if err := checkEmitFlags(cmd, &o.emit); err != nil {
				return err
			}
			o.forward = forwardedFlags(cmd)
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.params, "param", nil, "a field to tune and its range: PATH=a..b, or PATH=a..b:step to try only multiples of step (repeatable)")
	f.StringVar(&o.minimize, "minimize", "", "the metric to minimise")
	f.StringVar(&o.maximize, "maximize", "", "the metric to maximise (instead of --minimize)")
	f.StringArrayVar(&o.subjectTo, "subject-to", nil, "a constraint METRIC<=x or METRIC>=x (x may be a percentage), in every scenario (repeatable)")
	f.StringVar(&o.objective, "objective", "mean", "across several scenarios: mean or worst")
	f.BoolVar(&o.strict, "strict", false, "a constraint holds only when met with 95% confidence (default: unless violated with 95% confidence)")
	addSetFlag(cmd, &o.sets, "override a field of every scenario, path=value (repeatable)")
	f.IntVar(&o.budget, "budget", 200, "simulation runs for the search and the final comparison")
	f.IntVar(&o.final, "final", 3, "candidates in the final paired comparison")
	f.IntVar(&o.finalSeeds, "final-seeds", 10, "seeds per candidate in the final comparison")
	f.IntVar(&o.sensitivity, "sensitivity", 9, "points per parameter in the sensitivity scan (0: none; runs beyond the budget)")
	addSeedFlag(f, &o.seed, 0, "base seed (default: the first scenario's seed)")
	addJobsFlag(f, &o.jobs)
	addOutFlag(cmd, &o.out, "", "results folder (default results/<name>-tune)")
	addForceFlag(f, &o.force)
	f.BoolVar(&o.resume, "resume", false, "continue an interrupted tuning: its finished runs are kept in <out>.incomplete and not run again (refused if a scenario or a flag changed)")
	addRoundFlags(f, &o.round, "tuning")
	addEmitFlags(f, &o.emit)
	return cmd
}

// errInfeasible: no candidate met the constraints (outputs are written).
var errInfeasible = errors.New("infeasible")

func tuneRun(ctx context.Context, e *env, o *tuneOptions) error {
	if o.jobs < 1 {
		return usageError{fmt.Errorf("--jobs %d: must be at least 1", o.jobs)}
	}
	cfg := explore.TuneConfig{Budget: o.budget, Final: o.final, FinalSeeds: o.finalSeeds, Sensitivity: o.sensitivity, Jobs: o.jobs, Strict: o.strict}
	switch {
	case o.minimize != "" && o.maximize != "":
		return usageError{errors.New("give --minimize or --maximize, not both")}
	case o.minimize != "":
		cfg.Objective = o.minimize
	case o.maximize != "":
		cfg.Objective, cfg.Maximize = o.maximize, true
	default:
		return usageError{errors.New("--minimize METRIC (or --maximize METRIC) is required")}
	}
	if err := explore.CheckMetric(cfg.Objective); err != nil {
		return usageError{err}
	}
	switch o.objective {
	case "mean":
	case "worst":
		cfg.Worst = true
	default:
		return usageError{fmt.Errorf("--objective %q: expected mean or worst", o.objective)}
	}
	if len(o.params) == 0 {
		return usageError{errors.New("--param PATH=a..b is required (repeatable)")}
	}
	for _, s := range o.subjectTo {
		c, err := explore.ParseConstraint(s)
		if err != nil {
			return usageError{err}
		}
		cfg.Constraints = append(cfg.Constraints, c)
	}
	var srcs []explore.Source
	var name string
	var seed uint64
	for i, f := range o.files {
		src, sc, err := readSource(f, o.sets)
		if err != nil {
			return reportScenarioErr(e, err)
		}
		if i == 0 {
			name, seed = sc.Name, sc.Seed
		}
		srcs = append(srcs, src)
	}
	for _, s := range o.params {
		r, err := explore.ParseRange("--param", s)
		if err != nil {
			return usageError{err}
		}
		if r.Steps != 0 {
			return usageError{fmt.Errorf("--param %q: the search chooses its own points; drop the /steps (to keep its values on a grid, give a step: PATH=a..b:step)", s)}
		}
		r.Integer = isIntegerField(srcs[0], r)
		if r.Integer && r.Step != math.Floor(r.Step) {
			return usageError{fmt.Errorf("--param %q: %s is an integer field; give a whole step, not %g", s, r.Path, r.Step)}
		}
		cfg.Params = append(cfg.Params, r)
	}
	var lo, hi []string
	for _, p := range cfg.Params {
		lo, hi = append(lo, p.Set(p.Lo)), append(hi, p.Set(p.Hi))
	}
	if err := explore.CheckSources(srcs, lo, hi); err != nil {
		return reportScenarioErr(e, err)
	}
	if o.seedSet {
		seed = o.seed
	}
	cfg.BaseSeed = seed
	cfg.Scenarios = len(srcs)
	out := o.out
	if out == "" {
		out = filepath.Join("results", name+"-tune")
	}
	out = filepath.Clean(out)
	if o.emit.engine != "" {
		if len(srcs) != 1 {
			return usageError{fmt.Errorf("--emit with %d scenario files: the job files carry one", len(srcs))}
		}
		// A tuning is sequential: on a cluster it runs in rounds.
		return emitRun(e, &o.emit, emitJob{verb: []string{"tune"}, file: srcs[0].File, data: srcs[0].Data, forward: o.forward, out: out, rounds: true})
	}
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	rounds := o.round.next || o.round.shard != ""
	keep, fresh, err := openKeep(out+".incomplete", o.resume || rounds, newKeepPlan("tune", srcs, append(o.flagInputs, keepInput{"base seed", strconv.FormatUint(cfg.BaseSeed, 10)})...))
	if err != nil {
		return err
	}
	if rounds {
		finish, err := searchRound(ctx, e, o.round, keep, explore.SimEval(srcs), o.jobs, o.quiet,
			func(ctx context.Context, ev explore.Eval) error { _, err := explore.Tune(ctx, ev, cfg); return err })
		if !finish {
			return err
		}
	}
	if o.resume && fresh && !o.quiet {
		fmt.Fprintf(e.stderr, "throttlesim: nothing to resume in %s.incomplete; starting the tuning\n", out)
	}
	prog, done := newBar(e, o.quiet, "tuning "+name+" (runs)")
	cfg.Progress = prog
	start := time.Now()
	res, err := explore.Tune(ctx, keep.wrap(explore.SimEval(srcs)), cfg)
	done()
	if err != nil {
		if ctx.Err() != nil {
			return keep.interrupted(e)
		}
		keep.failed(fresh)
		var ce *explore.ConfigError
		if errors.As(err, &ce) {
			return usageError{err}
		}
		return reportScenarioErr(e, err)
	}
	wall := time.Since(start)
	files, chartErr, err := report.TuneFiles(name, o.files, o.sets, srcs, cfg, res, report.TuneDrawers{Pareto: plots.Pareto, Sensitivity: plots.Sensitivity})
	if err != nil {
		return err
	}
	if chartErr != nil {
		fmt.Fprintf(e.stderr, "throttlesim: warning: no charts: %v\n", chartErr) // the tables are still worth writing
	}
	sets := cfg.Sets(res.Best)
	if err := resultdir.Write(out, files); err != nil {
		return err
	}
	keep.done(e)
	if !o.quiet {
		fmt.Fprintf(e.stdout, "%s: %d candidates, %d runs (+%d for the sensitivity scan) in %.1f s (%d jobs)\n", name, len(res.Candidates), res.Runs, res.SensitivityRuns, wall.Seconds(), o.jobs)
		report.WriteTuneChoice(e.stdout, cfg, res)
		fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	}
	if res.Infeasible {
		var cs []string
		for _, c := range cfg.Constraints {
			cs = append(cs, c.String())
		}
		return fmt.Errorf("%w: no candidate meets %s; the closest is %s (see %s)", errInfeasible, strings.Join(cs, " and "), strings.Join(sets, " "), filepath.Join(out, "tune.csv"))
	}
	return nil
}
