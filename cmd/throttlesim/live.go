package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/live"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

type liveOptions struct {
	file     string
	target   string
	seed     uint64
	seedSet  bool
	out      string
	sets     []string
	quiet    bool
	noCharts bool
	force    bool
	// maxInFlight caps the requests in flight (0: live.DefaultInFlight).
	maxInFlight int
}

// newLiveCmd builds `throttlesim live`; runF replaces the run function in
// tests (nil: the real one).
func newLiveCmd(e *env, runF func(context.Context, *env, *liveOptions) error) *cobra.Command {
	o := &liveOptions{}
	if runF == nil {
		runF = runLive
	}
	cmd := &cobra.Command{
		Use:   "live FILE",
		Short: "Run the scenario for real: clients sending HTTP requests to a live backend",
		Long: `Live runs the scenario in FILE in real time: each client is a goroutine
sending HTTP GETs through the simulator's own policies, on the wall clock,
at the arrival times a simulation with the same seed draws, to the
scenario's backend served in process (or to --target, any URL). It writes
the results folder run writes, plus live.json (schedule lag, goroutines,
heap), so compare and summarize read live and simulated runs alike. A run
takes the scenario's duration in wall time; loads one machine cannot drive
honestly, and an --out that holds results already, are refused unless
--force.

More: docs/cli.md, "throttlesim live" (limits, --max-in-flight, Ctrl-C).`,
		Example: `  throttlesim live scenarios/live-outage.yaml
  throttlesim live scenarios/live-outage.yaml --set clients.throttle=null --out results/live-none
  throttlesim live scenarios/live-outage.yaml --target http://staging.internal:8080/api/ping`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = seedGiven(cmd)
			o.quiet = e.quiet
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "URL to send the requests to (default: the scenario's backend, served in process)")
	addSeedFlag(f, &o.seed, 0, "master seed (default: the scenario's seed)")
	addOutFlag(cmd, &o.out, "", "results folder (default results/<scenario name>-live)")
	addSetFlag(cmd, &o.sets, "override a scenario field by its YAML path, e.g. clients.throttle.k=3 (repeatable)")
	f.BoolVar(&o.noCharts, "no-charts", false, "no PNG charts")
	f.BoolVar(&o.force, "force", false, "replace the results folder if it exists; run loads above the limits anyway")
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "cap on requests in flight; an arrival beyond it is dropped by the generator and counted (default 10,000, lowered to fit the open-file limit)")
	return cmd
}

func runLive(ctx context.Context, e *env, o *liveOptions) error {
	if o.target != "" {
		u, err := url.Parse(o.target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{fmt.Errorf("--target %q: expected an http:// or https:// URL", o.target)}
		}
	}
	if o.maxInFlight < 0 {
		return usageError{fmt.Errorf("--max-in-flight %d: expected a number of requests >= 1 (or 0, the default)", o.maxInFlight)}
	}
	sc, w, err := loadScenarioWritten(e, o.file, o.sets)
	if err != nil {
		return err
	}
	if o.seedSet {
		sc.Seed = o.seed
	}
	if err := live.Check(sc, o.force); err != nil {
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join("results", sc.Name+"-live")
	}
	out = filepath.Clean(out)
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(e.stderr, "live: running %s for %s of wall time (Ctrl-C or SIGTERM stops it, keeping what ran)\n", sc.Name, sc.Duration)
	}
	opts := live.Options{Target: o.target, Force: o.force, MaxInFlight: o.maxInFlight}
	var bar *progressbar.ProgressBar
	if e.tty && !o.quiet {
		// The bar measures wall time, in ms, of the scenario's duration:
		// a live run takes that long.
		total := int64(sc.Duration / scenario.Duration(time.Millisecond))
		bar = progressBar(e.stderr, total, "live "+sc.Name, false)
		opts.Progress = func(now, end int64) { bar.Set64(min(now, end) / int64(time.Millisecond)) }
	}
	res, info, runErr := live.Run(ctx, sc, opts)
	endBar(bar, runErr == nil)
	if runErr != nil && !errors.Is(runErr, sim.ErrInterrupted) {
		return runErr
	}
	if runErr != nil {
		out += ".incomplete"
	}
	js, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	// live.json before summary.json, which stays last (the folder's manifest).
	files, err := resultFiles(rundir.Run{Result: res, Live: info.Schedule()}, !o.noCharts, nil, w, resultdir.File{Name: rundir.LiveFile, Data: append(js, '\n')})
	if err != nil {
		return writeError(out, err)
	}
	if err := resultdir.Write(out, files); err != nil {
		return writeError(out, err)
	}
	if !info.ScheduleOK {
		fmt.Fprintln(e.stderr, scheduleWarning(info))
	}
	if runErr != nil {
		fmt.Fprintf(e.stderr, "throttlesim: interrupted; the partial result (status \"incomplete\") is in %s\n", out)
		return reportedError{exitInterrupted}
	}
	if !o.quiet {
		printLiveSummary(e, res, info, out)
	}
	return nil
}

// printLiveSummary prints run's summary with a header about the live run
// instead of the simulator's event counts.
func printLiveSummary(e *env, res *sim.Result, info *live.Info, out string) {
	var b bytes.Buffer
	printSummary(&b, res, time.Duration(info.WallS*float64(time.Second)), out, nil)
	_, rest, _ := strings.Cut(b.String(), "\n")
	sc := res.Scenario
	fmt.Fprintf(e.stdout, "%s LIVE (seed %d): %s clients for %s against %s; %s arrivals\n",
		sc.Name, sc.Seed, group(int64(sc.Clients.Count)), sc.Duration, info.Target, group(info.Arrivals))
	fmt.Fprintf(e.stdout, "  %-22s p50 %.2f ms   p99 %.2f ms   max %.1f ms   %s started > 10 ms late   peak %d goroutines, %.0f MB heap\n",
		"schedule lag", info.ScheduleLagP50MS, info.ScheduleLagP99MS, info.ScheduleLagMaxMS, group(info.LateArrivals), info.PeakGoroutine, info.PeakHeapMB)
	fmt.Fprintf(e.stdout, "  %-22s peak %s of at most %s   %s arrivals dropped by the generator\n",
		"in flight", group(int64(info.PeakInFlight)), group(int64(info.MaxInFlight)), group(info.GeneratorDropped))
	if !info.InProcess {
		// The backend counts are the in-process server's: against
		// --target there is none, and zeros would read as measured.
		var lines []string
		for _, l := range strings.SplitAfter(rest, "\n") {
			if strings.HasPrefix(l, "  backend ") {
				l = fmt.Sprintf("  %-22s not measured: %s is outside throttlesim (read its own metrics)\n", "backend", info.Target)
			}
			lines = append(lines, l)
		}
		rest = strings.Join(lines, "")
	}
	fmt.Fprint(e.stdout, rest)
}

// scheduleWarning is the one line that says a live run's result is the
// load generator's, not the scenario's: it dropped arrivals at the
// in-flight cap, or started them too late.
func scheduleWarning(info *live.Info) string {
	why := fmt.Sprintf("arrival lag p99 %.1f ms, max %.0f ms", info.ScheduleLagP99MS, info.ScheduleLagMaxMS)
	if info.GeneratorDropped > 0 {
		why = fmt.Sprintf("%s arrivals dropped at the cap of %s in flight (--max-in-flight); %s", group(info.GeneratorDropped), group(int64(info.MaxInFlight)), why)
	}
	return "throttlesim: warning: the load generator could not keep the schedule (" + why + "): the result is this machine's, not the scenario's"
}
