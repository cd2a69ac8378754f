package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/internal/suggest"
	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

type mapOptions struct {
	force         bool // replace an existing results folder
	file          string
	load, trigger string
	sets          []string
	horizon       time.Duration
	grid          int
	resolution    float64
	maxSeeds      int
	alpha, delta  float64
	seed          uint64
	seedSet       bool
	jobs          int
	out           string
	shard         string
	quiet         bool
	resume        bool
	flagInputs    []keepInput // the flags as resume.json records them
	rare          string
	rarePaths     int
	rareFrom      time.Duration
	rarePoints    int
	rareAt        []string
	rareMethod    string
	rareUntil     time.Duration
	rareFactor    float64
	rareSlot      time.Duration
	rareFlagsSet  string // the first --rare-* flag given, to refuse it without --rare
	emit          emitOptions
	round         roundOptions
	forward       []string // with --emit: the flags the shards get
	// loadLabel, triggerLabel name the chart's axes (default: derived
	// from the fields, see axes).
	loadLabel, triggerLabel string
}

func newMapCmd(e *env, runF func(context.Context, *env, *mapOptions) error) *cobra.Command {
	if runF == nil {
		runF = mapRun
	}
	o := &mapOptions{}
	cmd := &cobra.Command{
		Use:   "map SCENARIO --load PATH=a..b[/steps] --trigger PATH=a..b",
		Short: "Find, per load level, the trigger size beyond which the system no longer recovers",
		Long: `Map finds, for each load level, the trigger size (a fault's duration, a
spike's multiplier or length: any numeric field) above which the system
stops recovering: a grid of trigger values, then bisection, each probe
running seeds until a sequential test decides whether P(no recovery) is
above or below 1/2. It prints the boundary per level and writes map.csv,
boundary.csv, map.json, map.png and report.html. --rare estimates small
probabilities of no recovery below the boundary; --shard i/n splits the
levels over machines and 'throttlesim map merge' joins the shards.
An existing results folder is refused unless --force replaces it.

The method, its guarantees, every flag and output: docs/cli.md,
"throttlesim map".`,
		Example: `  throttlesim map scenarios/metastable-duration.yaml --load clients.arrival.total_rate=300/s..700/s/9 \
      --trigger clients.arrival.profile.1.at=60.5s..80s
  throttlesim map scenarios/outage.yaml --load clients.arrival.total_rate=400/s..900/s/20 --trigger faults.0.duration=5s..5m --horizon 5m
  throttlesim map merge --out results/map results/map-shard*`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = seedGiven(cmd)
			for _, n := range []string{"rare-method", "rare-until", "rare-factor", "rare-slot", "rare-paths", "rare-points", "rare-from"} {
				if cmd.Flags().Changed(n) && o.rareFlagsSet == "" {
					o.rareFlagsSet = "--" + n
				}
			}
			o.quiet = e.quiet
			o.flagInputs = flagInputs(cmd)
			if o.load == "" || o.trigger == "" {
				return usageError{errors.New("--load PATH=a..b[/steps] and --trigger PATH=a..b are required")}
			}
			if err := checkEmitFlags(cmd, &o.emit); err != nil {
				return err
			}
			if err := o.round.check(o.resume, map[string]bool{"--rare": o.rare != "", "--shard": o.shard != "", "--emit": o.emit.engine != ""}); err != nil {
				return err
			}
			o.forward = forwardedFlags(cmd)
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.load, "load", "", "the load field and its levels: PATH=a..b[/steps] (default 10 steps)")
	f.StringVar(&o.trigger, "trigger", "", "the trigger field and its range: PATH=a..b")
	f.StringVar(&o.loadLabel, "load-label", "", `the load axis's name on the chart (default: derived from the field, e.g. "offered load (/s)")`)
	f.StringVar(&o.triggerLabel, "trigger-label", "", `the trigger axis's name on the chart (default: derived, e.g. "spike length (s)" measured from the spike's start)`)
	addSetFlag(cmd, &o.sets, "override a field of every run, path=value (repeatable)")
	f.DurationVar(&o.horizon, "horizon", 0, "count a run as recovered only if it recovers within this long after the trigger ends (default: before the run ends)")
	f.IntVar(&o.grid, "grid", 6, "trigger values probed at every load level before bisecting")
	f.Float64Var(&o.resolution, "resolution", 0, "stop bisecting when the bracket is this narrow, in the trigger's unit (default: its range / 50)")
	f.IntVar(&o.maxSeeds, "max-seeds", 20, "seeds at most per probe")
	f.Float64Var(&o.alpha, "alpha", 0.05, "error probability of each probe's verdict")
	f.Float64Var(&o.delta, "delta", 0.25, "indifference zone: verdicts are only guaranteed when P(no recovery) is outside 1/2 ± delta")
	addSeedFlag(f, &o.seed, 0, "base seed (default: the scenario's seed)")
	addJobsFlag(f, &o.jobs)
	addOutFlag(cmd, &o.out, "", "results folder (default results/<name>-map)")
	addForceFlag(f, &o.force)
	f.StringVar(&o.shard, "shard", "", "compute only load levels i, i+n, ... (i/n, 0-based), for batch clusters; auto reads i and n from a Kubernetes Indexed Job or a Slurm array (see sweep --help)")
	f.BoolVar(&o.resume, "resume", false, "continue an interrupted map: its finished runs are kept in <out>.incomplete and not run again (refused if the scenario or a flag changed)")
	f.StringVar(&o.rare, "rare", "", "estimate small P(no recovery) below each boundary; the measure (in_system, outstanding, timed_out) the method ranks runs by, with split optionally =l1,l2,... levels")
	f.StringVar(&o.rareMethod, "rare-method", "tilt", "tilt (importance sampling of the arrivals) or split (multilevel splitting)")
	f.IntVar(&o.rarePaths, "rare-paths", 0, "runs of the estimate (tilt, default 1000) or paths per stage (split, default 100)")
	f.DurationVar(&o.rareUntil, "rare-until", 0, "tilt: the end of the window whose arrivals are tilted (required with tilt; the trigger's end plus a timeout or two)")
	f.Float64Var(&o.rareFactor, "rare-factor", 0, "tilt: the arrival-rate factor of every slot (default: each slot's chosen by a cross-entropy pilot)")
	f.DurationVar(&o.rareSlot, "rare-slot", time.Second, "tilt: the window is cut into slots this long, each with its own factor (at most 64)")
	f.IntVar(&o.rarePoints, "rare-points", 2, "grid probes without a collapse to estimate at, per load level, from the boundary down")
	f.StringSliceVar(&o.rareAt, "rare-at", nil, "estimate at these trigger values (comma-separated, the trigger's unit) at every load level instead of at grid probes")
	f.DurationVar(&o.rareFrom, "rare-from", 0, "the trigger's start: where the tilt's window begins, and the measure counts from")
	addEmitFlags(f, &o.emit)
	addEmitRoundsFlag(f, &o.emit)
	addRoundFlags(f, &o.round, "map")
	cmd.AddCommand(newMapMergeCmd(e, nil))
	return cmd
}

func readSource(file string, sets []string) (explore.Source, *scenario.Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return explore.Source{}, nil, fmt.Errorf("%s: no such scenario file", file)
		}
		return explore.Source{}, nil, err
	}
	sc, err := scenario.Parse(data, file, sets)
	if err != nil {
		return explore.Source{}, nil, err
	}
	return explore.Source{File: file, Data: data, Sets: sets}, sc, nil
}

// reportScenarioErr prints every problem of a scenario error.
func reportScenarioErr(e *env, err error) error {
	var errs scenario.Errors
	if errors.As(err, &errs) {
		for _, fe := range errs {
			fmt.Fprintln(e.stderr, fe.Error())
		}
		return reportedError{exitError}
	}
	return err
}

func newBar(e *env, quiet bool, desc string) (func(int), func()) {
	if !e.tty || quiet {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(e.stderr), progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish(), progressbar.OptionSpinnerType(14))
	return func(n int) { bar.Set(n) }, func() { bar.Finish() }
}

func mapRun(ctx context.Context, e *env, o *mapOptions) error {
	shard, shards, err := parseShard(o.shard)
	if err != nil {
		return err
	}
	if o.jobs < 1 {
		return usageError{fmt.Errorf("--jobs %d: must be at least 1", o.jobs)}
	}
	load, err := explore.ParseRange("--load", o.load)
	if err != nil {
		return usageError{err}
	}
	trig, err := explore.ParseRange("--trigger", o.trigger)
	if err != nil {
		return usageError{err}
	}
	for _, r := range []struct {
		flag, arg string
		step      float64
	}{{"--load", o.load, load.Step}, {"--trigger", o.trigger, trig.Step}} {
		if r.step != 0 {
			return usageError{fmt.Errorf("%s %q: a step (:step) is for tune; map takes a number of load levels (/steps) and bisects the trigger", r.flag, r.arg)}
		}
	}
	if trig.Steps != 0 {
		return usageError{fmt.Errorf("--trigger %q: the trigger is bisected, not stepped; use --grid for the first pass", o.trigger)}
	}
	src, sc, err := readSource(o.file, o.sets)
	if err != nil {
		return reportScenarioErr(e, err)
	}
	for _, r := range []*explore.Range{&load, &trig} {
		r.Integer = isIntegerField(src, *r)
	}
	if err := explore.CheckSources([]explore.Source{src}, []string{load.Set(load.Lo), trig.Set(trig.Lo)}, []string{load.Set(load.Hi), trig.Set(trig.Hi)}); err != nil {
		return reportScenarioErr(e, err)
	}
	seed := sc.Seed
	if o.seedSet {
		seed = o.seed
	}
	cfg := explore.MapConfig{Load: load, Trigger: trig, Grid: o.grid, Resolution: o.resolution,
		Test:     explore.SPRT{Delta: o.delta, Alpha: o.alpha, MaxN: o.maxSeeds},
		HorizonS: o.horizon.Seconds(), BaseSeed: seed, Jobs: o.jobs, Shard: shard, Shards: shards}
	var rare *explore.RareConfig
	var rareAt []float64
	if o.rare != "" {
		rc, err := parseRare(o.rare)
		if err != nil {
			return usageError{err}
		}
		rc.Paths, rc.FromS, rc.HorizonS, rc.Seed, rc.Jobs = o.rarePaths, o.rareFrom.Seconds(), cfg.HorizonS, seed, o.jobs
		rc.Method, rc.UntilS, rc.Factor, rc.SlotS = o.rareMethod, o.rareUntil.Seconds(), o.rareFactor, o.rareSlot.Seconds()
		switch {
		case o.rareMethod != "tilt" && o.rareMethod != "split":
			return usageError{fmt.Errorf("--rare-method %q: want tilt or split", o.rareMethod)}
		case o.rareMethod == "tilt" && rc.Levels != nil:
			return usageError{fmt.Errorf("--rare %q: levels are for --rare-method split", o.rare)}
		case o.rareMethod == "tilt" && o.rareUntil <= o.rareFrom:
			return usageError{fmt.Errorf("--rare-method tilt needs --rare-until after --rare-from (%v): the end of the window whose arrivals decide a collapse, e.g. the trigger's end plus a timeout", o.rareFrom)}
		case o.rareMethod == "tilt" && o.rareUntil > time.Duration(sc.Duration):
			return usageError{fmt.Errorf("--rare-until %v is after the scenario's end (duration %v): the tilt's window must end inside the run", o.rareUntil, time.Duration(sc.Duration))}
		case o.rareMethod == "tilt" && o.rareSlot <= 0:
			return usageError{fmt.Errorf("--rare-slot %v: want a duration above 0", o.rareSlot)}
		case o.rareMethod == "tilt" && (o.rareFactor < 0 || math.IsNaN(o.rareFactor) || math.IsInf(o.rareFactor, 0)):
			return usageError{fmt.Errorf("--rare-factor %g: want a factor above 0 (or 0 for the pilot's choice)", o.rareFactor)}
		}
		rare = &rc
		for _, a := range o.rareAt {
			x, err := trig.Value(a)
			if err != nil {
				return usageError{fmt.Errorf("--rare-at: %w, e.g. %s", err, trig.Short(trig.Lo))}
			}
			if _, err := scenario.Parse(src.Data, src.File, append(slices.Clone(src.Sets), trig.Set(x))); err != nil {
				return reportScenarioErr(e, err)
			}
			rareAt = append(rareAt, x)
		}
	} else if len(o.rareAt) > 0 {
		return usageError{errors.New("--rare-at needs --rare MEASURE")}
	} else if cmd := o.rareFlagsSet; cmd != "" {
		return usageError{fmt.Errorf("%s needs --rare MEASURE", cmd)}
	}
	out := o.out
	if out == "" {
		out = filepath.Join("results", sc.Name+"-map")
		if shards > 0 {
			out += fmt.Sprintf("-shard%dof%d", shard, shards)
		}
	}
	out = filepath.Clean(out)
	if o.emit.engine != "" {
		if o.emit.rounds && o.rare != "" {
			return usageError{errors.New("--rare with --emit --rounds: the estimates are not made in rounds; emit the map without --rounds (its load levels are sharded)")}
		}
		data, err := os.ReadFile(o.file)
		if err != nil {
			return err
		}
		steps := load.Steps
		if steps == 0 {
			steps = 10 // explore.MapConfig's default
		}
		return emitRun(e, &o.emit, emitJob{verb: []string{"map"}, mergeVerb: []string{"map", "merge"}, file: o.file, data: data,
			forward: o.forward, out: out, units: len(load.Values(steps)), unit: "load levels", rounds: o.emit.rounds})
	}
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	rounds := o.round.next || o.round.shard != ""
	keep, fresh, err := openKeep(out+".incomplete", o.resume || rounds,
		newKeepPlan("map", []explore.Source{src}, append(o.flagInputs, keepInput{"shard", fmt.Sprintf("%d/%d", shard, shards)}, keepInput{"base seed", strconv.FormatUint(seed, 10)})...))
	if err != nil {
		return err
	}
	if rounds {
		finish, err := searchRound(ctx, e, o.round, keep, explore.SimEval([]explore.Source{src}), o.jobs, o.quiet,
			func(ctx context.Context, ev explore.Eval) error { _, err := explore.Map(ctx, ev, cfg); return err })
		if !finish {
			return err
		}
	}
	if o.resume && fresh && !o.quiet {
		fmt.Fprintf(e.stderr, "throttlesim: nothing to resume in %s.incomplete; starting the map\n", out)
	}
	prog, done := newBar(e, o.quiet, "mapping "+sc.Name+" (runs)")
	cfg.Progress = prog
	start := time.Now()
	res, err := explore.Map(ctx, keep.wrap(explore.SimEval([]explore.Source{src})), cfg)
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
	if rare != nil {
		parse := func(sets []string) (*scenario.Scenario, error) {
			return scenario.Parse(src.Data, src.File, append(slices.Clone(src.Sets), sets...))
		}
		if err := explore.RareAtBoundary(ctx, parse, res, *rare, o.rarePoints, rareAt); err != nil {
			if ctx.Err() != nil { // the map's runs are kept; the estimates are made again
				return keep.interrupted(e)
			}
			return err
		}
	}
	wall := time.Since(start)
	doc := explore.MapDoc{Scenario: o.file, Name: sc.Name, Sets: o.sets, Load: o.load, Trigger: o.trigger, HorizonS: cfg.HorizonS,
		Grid: o.grid, Resolution: o.resolution, Test: cfg.Test, BaseSeed: seed, Shard: shardLabel(shard, shards), Result: res, Levels: len(res.Load.Values(res.Load.Steps))}
	doc.LoadLabel, doc.TriggerLabel, doc.TriggerOrigin = report.MapAxes(sc, res.Load, res.Trigger, o.loadLabel, o.triggerLabel)
	if err := writeMap(e, out, &doc); err != nil {
		return err
	}
	keep.done(e)
	if !o.quiet {
		fmt.Fprintf(e.stdout, "%s: %d load levels, %d probes, %d runs in %.1f s (%d jobs)\n", sc.Name, len(res.Levels), res.ProbeCount(), res.Runs(), wall.Seconds(), o.jobs)
		report.WriteBoundary(e.stdout, &doc)
		report.WriteRare(e.stdout, &doc)
		fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	}
	return nil
}

// isIntegerField: the field takes whole numbers only (setting x.5 fails
// while whole values load).
func isIntegerField(src explore.Source, r explore.Range) bool {
	lo := math.Ceil(r.Lo)
	if lo > r.Hi {
		return false
	}
	whole := append(slices.Clone(src.Sets), r.Path+"="+fmt.Sprint(lo)+r.Unit)
	half := append(slices.Clone(src.Sets), r.Path+"="+fmt.Sprint(lo+0.5)+r.Unit)
	_, errW := scenario.Parse(src.Data, src.File, whole)
	_, errH := scenario.Parse(src.Data, src.File, half)
	return errW == nil && errH != nil
}

func writeMap(e *env, out string, doc *explore.MapDoc) error {
	files, chartErr, err := report.MapFiles(doc, plots.Map)
	if err != nil {
		return err
	}
	if chartErr != nil {
		fmt.Fprintf(e.stderr, "throttlesim: warning: no map.png: %v\n", chartErr) // the tables are still worth writing
	}
	return resultdir.Write(out, files)
}

// mapMergeOptions are map merge's arguments and flags.
type mapMergeOptions struct {
	force  bool // replace an existing results folder
	shards []string
	out    string
}

// newMapMergeCmd builds `throttlesim map merge`; runF replaces the run
// function in tests (nil: the real one).
func newMapMergeCmd(e *env, runF func(context.Context, *env, *mapMergeOptions) error) *cobra.Command {
	o := &mapMergeOptions{}
	if runF == nil {
		runF = mapMergeRun
	}
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Combine the shards of a map (map --shard i/n) into one map",
		Long: `Map merge combines the shards of a map (map --shard i/n) into one map.
An existing results folder is refused unless --force replaces it.`,
		Example: `  throttlesim map scenarios/outage.yaml --load clients.arrival.total_rate=400/s..900/s/20 \
      --trigger faults.0.duration=5s..5m --shard 0/2 --out results/map-shard0   # and --shard 1/2 elsewhere
  throttlesim map merge --out results/map results/map-shard*`,
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
	addOutFlag(cmd, &o.out, "", "the merged map folder")
	addForceFlag(cmd.Flags(), &o.force)
	return cmd
}

func mapMergeRun(_ context.Context, e *env, o *mapMergeOptions) error {
	shards, out := o.shards, filepath.Clean(o.out)
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	merged, err := sweep.MergeMaps(shards)
	if err != nil {
		return err
	}
	if err := writeMap(e, out, merged); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "merged %d shards: %d load levels, %d runs\n", len(shards), len(merged.Result.Levels), merged.Result.Runs())
	report.WriteBoundary(e.stdout, merged)
	report.WriteRare(e.stdout, merged)
	fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	return nil
}

// parseRare reads --rare: MEASURE or MEASURE=l1,l2,... (increasing).
func parseRare(s string) (explore.RareConfig, error) {
	name, lv, hasLevels := strings.Cut(s, "=")
	rc := explore.RareConfig{Measure: name}
	if _, ok := explore.Measures[name]; !ok {
		hint := ""
		if c := suggest.Closest(name, explore.MeasureNames()); c != "" {
			hint = fmt.Sprintf("; did you mean %q?", c)
		}
		return rc, fmt.Errorf("--rare %q: unknown measure %q (want one of %s)%s", s, name, strings.Join(explore.MeasureNames(), ", "), hint)
	}
	if hasLevels {
		for _, f := range strings.Split(lv, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return rc, fmt.Errorf("--rare %q: level %q is not a number", s, f)
			}
			if n := len(rc.Levels); n > 0 && x <= rc.Levels[n-1] {
				return rc, fmt.Errorf("--rare %q: levels must increase", s)
			}
			rc.Levels = append(rc.Levels, x)
		}
	}
	return rc, nil
}

// shardLabel is the shard a map.json records: i/n as resolved (also for
// --shard auto), "" for a whole map.
func shardLabel(shard, shards int) string {
	if shards == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", shard, shards)
}
