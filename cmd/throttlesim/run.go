package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

type runOptions struct {
	file     string
	seed     uint64
	seedSet  bool
	out      string
	sets     []string
	quiet    bool
	noCharts bool
	force    bool
	replace  bool // --replace: the results folder only, not the cost limits
	// thresholds are --threshold flags, added to the scenario's.
	thresholds []string
}

// newRunCmd builds `throttlesim run`; runF replaces the run function in
// tests (nil: the real one).
func newRunCmd(e *env, runF func(context.Context, *env, *runOptions) error) *cobra.Command {
	o := &runOptions{}
	if runF == nil {
		runF = runRun
	}
	cmd := &cobra.Command{
		Use:   "run FILE|-",
		Short: "Run one scenario and write its results folder",
		Long: `Run simulates the scenario in FILE (- reads it from stdin) and writes a
results folder, results/<name>/ unless --out says otherwise: timeseries.csv,
summary.json, charts and report.html, one page with all of them. A short
summary goes to stdout, a progress bar to stderr when it is a terminal. The
folder must not hold results already (--replace or --force replaces them,
atomically); an interrupted run's partial result goes to
<folder>.incomplete/. A failed threshold (thresholds: or --threshold) makes
the exit code 99; a run estimated above 8 GiB or 1 hour is refused unless
--force (--replace does not lift it).

More: docs/cli.md, "throttlesim run" (every file of the folder, thresholds).`,
		Example: `  throttlesim run scenarios/outage.yaml
  throttlesim run scenarios/outage.yaml --set clients.throttle.k=3 --out results/k3
  sed 's/k: 2/k: 3/' scenarios/outage.yaml | throttlesim run - --out results/k3`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = seedGiven(cmd)
			o.quiet = e.quiet
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	addSeedFlag(f, &o.seed, 0, "master seed (default: the scenario's seed)")
	addOutFlag(cmd, &o.out, "", "results folder (default results/<scenario name>)")
	addSetFlag(cmd, &o.sets, "override a scenario field by its YAML path, e.g. clients.throttle.k=3 (repeatable)")
	f.BoolVar(&o.noCharts, "no-charts", false, "no PNG charts: timeseries.csv, summary.json and a report.html without charts")
	f.BoolVar(&o.force, "force", false, "replace the results folder if it exists; run even when the estimated memory or time is above the limits")
	f.BoolVar(&o.replace, "replace", false, "replace the results folder if it exists, and nothing else: a run above the limits is still refused (--force does both)")
	addThresholdFlag(f, &o.thresholds)
	return cmd
}

// loadScenario loads FILE with the overrides, printing every problem.
func loadScenario(e *env, file string, sets []string) (*scenario.Scenario, error) {
	sc, _, err := loadScenarioWritten(e, file, sets)
	return sc, err
}

// loadScenarioWritten is loadScenario and what the person gave: the
// fields the file and the overrides set (report.AsWritten), which the run
// page shows with the defaults folded away.
func loadScenarioWritten(e *env, file string, sets []string) (*scenario.Scenario, *report.AsWritten, error) {
	for _, s := range sets {
		path, value, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(path) == "" {
			return nil, nil, usageError{fmt.Errorf("--set %q: expected path=value, e.g. clients.throttle.k=3", s)}
		}
		var v any
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return nil, nil, usageError{fmt.Errorf("--set %q: the value is not valid YAML (quote it, or use flow syntax such as [a, b])", s)}
		}
	}
	var data []byte
	var err error
	name := file
	if file == "-" {
		if data, err = io.ReadAll(e.stdin); err != nil {
			return nil, nil, fmt.Errorf("reading the scenario from stdin: %w", err)
		}
		name = "<stdin>"
	}
	var sc *scenario.Scenario
	if data != nil {
		sc, err = scenario.Parse(data, name, sets)
	} else {
		sc, err = scenario.Load(file, sets)
	}
	if err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) {
			for _, fe := range errs {
				fmt.Fprintln(e.stderr, fe.Error())
			}
			fmt.Fprintf(e.stderr, "throttlesim: %s: %d problem%s; nothing was run\n", file, len(errs), plural(len(errs)))
			return nil, nil, reportedError{exitError}
		}
		return nil, nil, err
	}
	if data == nil {
		data, err = os.ReadFile(file) // Load read it a moment ago
	}
	var w *report.AsWritten
	if err == nil {
		// Without it the page shows every field: nothing is lost.
		if given, gerr := scenario.Given(data, sets); gerr == nil {
			w = &report.AsWritten{File: name, Given: given}
			for _, s := range sets {
				w.Flags = append(w.Flags, "--set "+s)
			}
		}
	}
	return sc, w, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func runRun(ctx context.Context, e *env, o *runOptions) error {
	extra, err := parseThresholds(o.thresholds)
	if err != nil {
		return err
	}
	sc, w, err := loadScenarioWritten(e, o.file, o.sets)
	if err != nil {
		return err
	}
	if o.seedSet {
		sc.Seed = o.seed
		w.Seed(o.seed)
	}
	ths, err := report.Thresholds(sc, extra)
	if err != nil {
		return err
	}
	if why := sim.EstimateCost(sc).TooBig(); why != "" && !o.force {
		return fmt.Errorf("%s: %s; use --force to run it anyway", o.file, why)
	}
	out := o.out
	if out == "" {
		out = filepath.Join("results", sc.Name)
	}
	out = filepath.Clean(out)
	if err := checkOut(out, o.force || o.replace); err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	opts := sim.Options{}
	if e.tty && !o.quiet {
		total := int64(sc.Duration / scenario.Duration(time.Millisecond))
		bar = progressBar(e.stderr, total, "simulating "+sc.Name, false)
		opts.Progress = func(now, end int64) { bar.Set64(now / int64(time.Millisecond)) }
	}
	start := time.Now()
	res, runErr := sim.Run(ctx, sc, opts)
	wall := time.Since(start)
	endBar(bar, runErr == nil)
	if runErr != nil && !errors.Is(runErr, sim.ErrInterrupted) {
		return runErr
	}
	if runErr != nil {
		// Keep the previous results; put what finished beside them, marked.
		out += ".incomplete"
	}
	var verdicts []threshold.Verdict
	if runErr == nil { // an interrupted run is not judged
		for _, t := range ths {
			verdicts = append(verdicts, t.Check(&res.Summary))
		}
	}
	if err := writeResults(out, res, !o.noCharts, verdicts, w); err != nil {
		return writeError(out, err)
	}
	if runErr != nil {
		fmt.Fprintf(e.stderr, "throttlesim: interrupted; the partial result (status \"incomplete\") is in %s\n", out)
		return reportedError{exitInterrupted}
	}
	if !o.quiet {
		printSummary(e.stdout, res, wall, out, verdicts)
	}
	return verdictError(verdicts)
}

// checkOut refuses, before any simulation, an output path that cannot
// become a results folder, and one that already holds results unless
// replace (--force): results are never replaced by surprise.
func checkOut(out string, replace bool) error {
	if b := filepath.Base(out); b == "." || b == ".." || b == string(filepath.Separator) {
		return fmt.Errorf("--out %s: cannot be a results folder (it would replace the folder itself); name a new folder", out)
	}
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return fmt.Errorf("--out %s: exists and is not a folder", out)
	} else if err == nil && !isResultsFolder(out) {
		return fmt.Errorf("--out %s: exists and is not a throttlesim results folder (no summary.json, sweep.json or compare.json); refusing to replace it", out)
	} else if err == nil && !replace && !isEmptyDir(out) {
		return fmt.Errorf("%s holds earlier results; nothing was run: add --force to replace them, or --out DIR to write elsewhere", out)
	}
	parent := filepath.Dir(out)
	for p := parent; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("--out %s: %s is not a folder", out, p)
			}
			// The results are written beside the folder and moved into
			// place: check now, not after the simulation, that they can
			// be.
			probe, err := os.MkdirTemp(p, ".throttlesim-write-check-")
			if err != nil {
				return fmt.Errorf("--out %s: cannot write in %s (%s)", out, p, plainIOError(err))
			}
			os.Remove(probe)
			break
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	return nil
}

// writeError says that the results could not be written to out, and why,
// in the system's words and without the package that found out
// ("resultdir: rename ...").
func writeError(out string, err error) error {
	return fmt.Errorf("--out %s: the results could not be written (%s)", out, plainIOError(err))
}

// plainIOError is what went wrong, without the operation and path Go puts
// in front ("mkdir /x/.tmp-123: permission denied" -> "permission
// denied").
func plainIOError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return strings.TrimPrefix(err.Error(), "resultdir: ")
}

// isEmptyDir reports whether dir is a folder with nothing in it.
func isEmptyDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

// isResultsFolder reports whether dir can be replaced by new results: it is
// empty, or it holds what throttlesim writes.
func isResultsFolder(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return err == nil
	}
	for _, marker := range rundir.Markers {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return true
		}
	}
	return false
}

func build() rundir.Build { return rundir.Build{Version: version, Commit: commit} }

// resultFiles renders every output file of a run: report.html shows the
// threshold verdicts and the fields w gave (w may be nil); extra files (a
// live run's live.json) go before summary.json.
func resultFiles(run rundir.Run, charts bool, verdicts []threshold.Verdict, w *report.AsWritten, extra ...resultdir.File) ([]resultdir.File, error) {
	return report.RunFiles(run, build(), charts, verdicts, runDrawers, w, extra...)
}

// runDrawers are the plots functions a run's charts are drawn with.
var runDrawers = report.RunDrawers{All: plots.All, ServicesOverload: plots.ServicesOverload, ServicesLoad: plots.ServicesLoad, Amplification: plots.Amplification}

func writeResults(dir string, res *sim.Result, charts bool, verdicts []threshold.Verdict, w *report.AsWritten) error {
	files, err := resultFiles(rundir.Run{Result: res}, charts, verdicts, w)
	if err != nil {
		return err
	}
	return resultdir.Write(dir, files)
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(100**p, 'f', 1, 64) + "%"
}

func num(p *float64, prec int) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func printSummary(w io.Writer, res *sim.Result, wall time.Duration, out string, verdicts []threshold.Verdict) {
	sc, s := res.Scenario, res.Summary
	fmt.Fprintf(w, "%s (seed %d): %s clients, %s simulated, %s events in %.2f s (%.1f M events/s)\n",
		sc.Name, sc.Seed, group(int64(sc.Clients.Count)), sc.Duration, group(int64(res.Events)), wall.Seconds(),
		float64(res.Events)/wall.Seconds()/1e6)
	var failed *float64
	if s.Offered > 0 {
		f := float64(s.Failed) / float64(s.Offered)
		failed = &f
	}
	rows := [][2]string{
		{"application requests", fmt.Sprintf("%s offered   %s succeeded   %s dropped locally   %s failed", group(s.Offered), pct(s.SuccessRatio), pct(s.LocalDropRate), pct(failed))},
	}
	// A service graph leads with its services, the most overloaded first;
	// the backend and overload rows below are then the entry service's,
	// and say so.
	backend, overload := "backend", "overload"
	if g := res.Graph(); g != nil {
		rows = append(rows, graphRows(g)...)
		backend, overload = "entry "+g.EntryService, "overload at "+g.EntryService
	}
	rows = append(rows, [][2]string{
		{"attempts", fmt.Sprintf("%s sent   amplification %s attempts per request", group(s.Attempts), num(s.Amplification, 3))},
		{backend, fmt.Sprintf("%s received   %s rejected   peak %s× capacity   %s of worker time wasted", group(s.Received), group(s.Rejected), num(s.PeakReceivedOverCapacity, 2), pct(s.WastedWorkFraction))},
		{"latency", fmt.Sprintf("p50 %s ms   p90 %s ms   p99 %s ms   max %s ms", num(s.LatencyP50MS, 1), num(s.LatencyP90MS, 1), num(s.LatencyP99MS, 1), num(s.LatencyMaxMS, 0))},
	}...)
	if s.TimeAboveCapacityS != nil && (s.FaultLoadOverCapacity != nil || s.RecoveryWastedFraction != nil) {
		line := fmt.Sprintf("%s s above capacity", num(s.TimeAboveCapacityS, 0))
		if s.FaultLoadOverCapacity != nil {
			line = fmt.Sprintf("%s× effective capacity during the fault   ", num(s.FaultLoadOverCapacity, 2)) + line
		}
		if s.RecoveryWastedFraction != nil {
			until := "recovery"
			if !s.Recovery.Recovered {
				until = "the end"
			}
			line += fmt.Sprintf("   %s of worker time wasted from the fault's end to %s", pct(s.RecoveryWastedFraction), until)
		}
		rows = append(rows, [2]string{overload, line})
	}
	if s.FaultSuccessRatio != nil {
		rows = append(rows, [2]string{"during the fault", pct(s.FaultSuccessRatio) + " of the requests succeeded"})
	}
	if sc.Backend.Kind == scenario.BackendOCC {
		rows[2][1] = fmt.Sprintf("%s write calls   %s refused for a stale version", group(s.Received), group(s.Errors))
	}
	if sc.Clients.Arrival.Process == scenario.ArrivalOnce {
		rows = append(rows, [2]string{"completion", "last success at " + num(s.LastSuccessS, 3) + " s"})
	}
	r := s.Recovery
	switch {
	case !r.Applicable:
		rows = append(rows, [2]string{"recovery", "n/a (" + r.Reason + ")"})
	case r.Recovered:
		rows = append(rows, [2]string{"recovery", fmt.Sprintf("recovered %s s after the fault ended (at %s s; baseline %s req/s)", num(r.RecoveryTimeS, 0), num(r.RecoveredAtS, 0), num(r.BaselineGoodput, 1))})
	default:
		rows = append(rows, [2]string{"recovery", "DID NOT RECOVER: " + r.Reason})
	}
	for _, row := range rows {
		fmt.Fprintf(w, "  %-22s %s\n", row[0], row[1])
	}
	doc := rundir.Run{Result: res}.Doc(build())
	printVerdict(w, report.RunVerdict(&doc))
	printVerdicts(w, "thresholds", verdicts)
	fmt.Fprintf(w, "results: %s%c\n", out, filepath.Separator)
}

// graphRows are a service graph's lines of the summary: a heading, then
// one line per service, the most overloaded first.
func graphRows(g *sim.GraphSummary) [][2]string {
	rows := [][2]string{{"services", "most overloaded first (peak load ÷ the service's own capacity)"}}
	for _, ln := range g.Services {
		rec := "n/a"
		switch {
		case ln.Recovered:
			rec = "recovered +" + num(ln.RecoveryTimeS, 0) + " s"
		case ln.RecoveryApplicable:
			rec = "did not recover"
		}
		load := num(ln.PeakLoadOverCapacity, 2) + "× capacity"
		if ln.CallsOthers {
			load = num(ln.PeakLoadOverCapacity, 2) + "× local capacity"
		}
		name := "  " + ln.Name
		if ln.Name == g.EntryService {
			name += " (entry)"
		}
		rows = append(rows, [2]string{name, fmt.Sprintf("%s   %s busy   %s rejected   %s of work wasted   %s attempts per request   %s",
			load, pct(ln.Utilisation), group(ln.Rejected), pct(ln.WastedWorkFraction), num(ln.AttemptsPerRequest, 2), rec)})
	}
	return rows
}
