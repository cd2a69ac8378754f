package main

import (
	"context"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/fit"
	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
)

// fitOptions are fit's flags.
type fitOptions struct {
	prometheus, fromFiles string
	start, end            string
	last, step            time.Duration
	out                   string
	force                 bool
	convention, selector  string
	names                 fit.Names // overrides of the convention's names ("" keeps it)
	clients               int
	name                  string
	seeds                 int
}

// newFitCmd builds `throttlesim fit`; runF replaces the run function in
// tests (nil: the real one).
func newFitCmd(e *env, runF func(context.Context, *env, *fitOptions) error) *cobra.Command {
	o := &fitOptions{}
	if runF == nil {
		runF = fitRun
	}
	cmd := &cobra.Command{
		Use:   "fit (--prometheus URL | --from-files DIR) [--last 10m | --start T --end T]",
		Short: "Build a scenario from what Prometheus recorded of a real server",
		Long: `Fit reads a server's metrics for a window, from a Prometheus server's
HTTP API or from exported query answers, and writes a scenario that replays
it: the arrival trace, the service-time histogram, workers and queue (the
report says which estimate and why), the error rate and the faults seen.
Into --out: scenario.yaml (each field's query in a comment), arrivals.csv,
report.md, fit.json, queries/ (readable back with --from-files) and, unless
--seeds 0, the scenario as written run with seeds 1..N against the
recording: recorded_vs_simulated.png and report.html. Nothing is written if
a query fails. --out must not hold results already (--force replaces an
earlier fit, atomically; a folder fit did not write is never replaced).

More: docs/cli.md, "throttlesim fit" (the queries, the estimates, their limits).`,
		Example: `  throttlesim fit --prometheus http://127.0.0.1:9090 --last 10m --convention throttlesim --selector 'job="serve"' --out incident
  throttlesim fit --from-files incident/queries --convention throttlesim --out refit --force`,
		Args: argsExactly(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.prometheus, "prometheus", "", "the Prometheus server's URL, e.g. http://127.0.0.1:9090")
	f.StringVar(&o.fromFiles, "from-files", "", "read the query answers from DIR (NAME.json as fit writes to queries/, or NAME.csv: time,value[,labels])")
	f.StringVar(&o.start, "start", "", "the window's start: RFC 3339 or unix seconds")
	f.StringVar(&o.end, "end", "", "the window's end: RFC 3339 or unix seconds (default: now)")
	f.DurationVar(&o.last, "last", 0, "the window is the last DURATION before --end, e.g. 10m")
	f.DurationVar(&o.step, "step", 5*time.Second, "the resolution: one rate per step (at least twice the scrape interval)")
	addOutFlag(cmd, &o.out, "fit", "the folder to write")
	f.BoolVar(&o.force, "force", false, "replace --out if it holds an earlier fit")
	f.StringVar(&o.convention, "convention", "prometheus", "metric names: "+strings.Join(fit.ConventionNames(), ", ")+" (throttlesim serve's own)")
	f.StringVar(&o.selector, "selector", "", `label matchers added to every query, e.g. job="api"`)
	f.StringVar(&o.names.Requests, "requests", "", "counter of requests answered, by status code (default: the convention's, e.g. http_requests_total)")
	f.StringVar(&o.names.CodeLabel, "code-label", "", "the status code's label on --requests (default: the convention's, e.g. code)")
	f.StringVar(&o.names.Arrivals, "arrivals", "", "counter of every request that arrived, answered or not, with matchers (default: --requests)")
	f.StringVar(&o.names.Duration, "duration", "", "histogram of service or request times, without _bucket (default: the convention's)")
	f.StringVar(&o.names.DurationFilter, "duration-filter", "", `matchers on --duration, e.g. code=~"2.." (default: the convention's)`)
	f.StringVar(&o.names.InFlight, "in-flight", "", "gauge of requests in the server (default: the convention's)")
	f.StringVar(&o.names.Workers, "workers", "", "gauge of the workers available (default: the convention's; none for prometheus and otel)")
	f.StringVar(&o.names.Down, "down", "", "gauge that is 1 during an outage (default: the convention's)")
	f.IntVar(&o.clients, "clients", 100, "clients.count of the scenario (a server's metrics do not say how many clients there were)")
	f.StringVar(&o.name, "name", "fitted", "the scenario's name")
	f.IntVar(&o.seeds, "seeds", 5, "run the fitted scenario as written with seeds 1..N and compare it with the recording, step by step (0: do not)")
	return cmd
}

// fitWindow resolves --start, --end and --last (at now when --end is not
// given).
func fitWindow(o *fitOptions, now time.Time) (fit.Window, error) {
	w := fit.Window{Step: o.step, End: now}
	if o.step < time.Second || o.step%time.Second != 0 {
		return w, usageError{fmt.Errorf("--step must be a whole number of seconds >= 1s, got %s", o.step)}
	}
	var err error
	if o.end != "" {
		if w.End, err = parseWhen(o.end); err != nil {
			return w, usageError{fmt.Errorf("--end: %w", err)}
		}
	}
	switch {
	case o.last < 0:
		return w, usageError{fmt.Errorf("--last must be > 0 (the window up to --end: 10m, 1h), got %s", o.last)}
	case o.start != "" && o.last != 0:
		return w, usageError{errors.New("--start and --last name the window twice: give one")}
	case o.start != "":
		if w.Start, err = parseWhen(o.start); err != nil {
			return w, usageError{fmt.Errorf("--start: %w", err)}
		}
	case o.last > 0:
		w.Start = w.End.Add(-o.last)
	default:
		return w, usageError{errors.New("the window: give --last (e.g. 10m) or --start")}
	}
	if !w.End.After(w.Start.Add(o.step)) {
		return w, usageError{fmt.Errorf("the window %s to %s is not longer than one --step (%s)", w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339), o.step)}
	}
	w.Start = w.End.Add(-w.End.Sub(w.Start).Truncate(o.step)) // whole steps
	return w, nil
}

// parseWhen reads RFC 3339 or unix seconds.
func parseWhen(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	var sec float64
	if _, err := fmt.Sscanf(s, "%g", &sec); err == nil && sec > 0 {
		return time.Unix(0, int64(sec*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither RFC 3339 (2026-12-06T02:00:00Z) nor unix seconds", s)
}

func fitRun(ctx context.Context, e *env, o *fitOptions) error {
	names, ok := fit.Conventions[o.convention]
	if !ok {
		return usageError{fmt.Errorf("--convention %q: one of %s", o.convention, strings.Join(fit.ConventionNames(), ", "))}
	}
	for _, x := range []struct {
		dst *string
		v   string
	}{{&names.Requests, o.names.Requests}, {&names.CodeLabel, o.names.CodeLabel},
		{&names.Arrivals, o.names.Arrivals}, {&names.Duration, o.names.Duration}, {&names.DurationFilter, o.names.DurationFilter},
		{&names.InFlight, o.names.InFlight}, {&names.Workers, o.names.Workers}, {&names.Down, o.names.Down}} {
		if x.v != "" {
			*x.dst = x.v
		}
	}
	if o.clients < 1 {
		return usageError{fmt.Errorf("--clients must be >= 1, got %d", o.clients)}
	}
	sel := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(o.selector), "{"), "}")
	var (
		src    fit.Source
		w      fit.Window
		from   string
		window = o.start != "" || o.last != 0 || o.end != ""
	)
	switch {
	case o.prometheus != "" && o.fromFiles != "":
		return usageError{errors.New("--prometheus and --from-files: give one source")}
	case o.prometheus != "":
		p, err := fit.NewPrometheus(o.prometheus)
		if err != nil {
			return usageError{err}
		}
		if w, err = fitWindow(o, time.Now()); err != nil {
			return err
		}
		src, from = p, o.prometheus
	case o.fromFiles != "":
		if window {
			return usageError{errors.New("--from-files: the files hold their own window; --start, --end and --last apply to --prometheus")}
		}
		src, from = fit.Files{Dir: o.fromFiles}, o.fromFiles
	default:
		return usageError{errors.New("give --prometheus URL or --from-files DIR")}
	}
	res, err := fit.Fit(ctx, src, names, sel, w)
	if err != nil {
		return err
	}
	opt := fit.Options{Name: o.name, Clients: o.clients, Source: from}
	if o.seeds < 0 || o.seeds > 1000 {
		return usageError{fmt.Errorf("--seeds must be 0 to 1000, got %d", o.seeds)}
	}
	if o.seeds > 0 {
		if err := fitSimulate(ctx, res, opt, o.seeds); err != nil {
			return err
		}
	}
	if err := res.Write(o.out, opt, o.force); err != nil {
		return err
	}
	if !e.quiet {
		fmt.Fprintf(e.stdout, "fitted %s to %s (%s, %d steps of %s): %.1f req/s on average, mean service %.1f ms, %d workers, queue %d, error rate %.3f, %d fault(s)\n",
			res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339), res.End.Sub(res.Start), len(res.Arrivals), res.Step,
			mean(res.Arrivals), res.MeanService*1e3, res.WorkersFit, res.QueueFit, res.ErrorRate, len(res.Faults))
		for _, est := range res.Estimates {
			if est.Used && strings.HasPrefix(est.Name, "workers") {
				fmt.Fprintf(e.stdout, "workers from %s: %s\n", strings.TrimPrefix(est.Name, "workers, "), est.Why)
			}
		}
		if c := res.Simulated; c != nil {
			fmt.Fprintf(e.stdout, "verdict: %s\n", c.Verdict)
			fmt.Fprintf(e.stdout, "wrote %s/{%s,%s,%s,%s,%s,%s}\n", o.out, fit.ScenarioFile, fit.ArrivalsFile, fit.ReportFile, fit.ResultFile, fit.RecordedChart, fit.PageFile)
		} else {
			fmt.Fprintf(e.stdout, "wrote %s/{%s,%s,%s,%s}\n", o.out, fit.ScenarioFile, fit.ArrivalsFile, fit.ReportFile, fit.ResultFile)
		}
	}
	return nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// fitSimulate runs the fitted scenario as written with seeds 1..n, draws
// the recorded series against the simulated ones and makes the page;
// Write puts them in the folder with the rest.
func fitSimulate(ctx context.Context, res *fit.Result, opt fit.Options, n int) error {
	sc, err := res.Load(opt)
	if err != nil {
		return err
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	c, err := res.Simulate(ctx, sc, seeds)
	if err != nil {
		return err
	}
	res.Simulated = c
	in := plots.RecordedInput{Title: fmt.Sprintf("%s: the fitted scenario reproduces goodput within %.0f%%, rejections within %.1f req/s (recorded black, %d seeds blue)", opt.Name, 100*c.Get(fit.SeriesGoodput).Rel, c.Get(fit.SeriesRejections).MAE, n), StepS: c.StepS, Seeds: n}
	for _, f := range res.Faults {
		in.Faults = append(in.Faults, plots.Fault{Start: int64(f.Start), End: int64(f.Start + f.Duration), Label: string(f.Kind), Outage: f.Kind == "outage"})
	}
	for _, x := range c.Series {
		in.Panels = append(in.Panels, plots.RecordedPanel{
			Title:  fmt.Sprintf("%s: mean absolute error %.3g %s (%.0f%% of the recorded mean), recorded inside the seeds' range in %.0f%% of %d steps", x.Name, x.MAE, x.Unit, 100*x.Rel, 100*x.Inside, x.Steps),
			YLabel: x.Name + " (" + x.Unit + ")", Recorded: x.Recorded, Mean: x.Mean, Lo: x.Lo, High: x.Hi})
	}
	png, err := plots.Recorded(in)
	if err != nil {
		return fmt.Errorf("fit: drawing %s: %w", fit.RecordedChart, err)
	}
	page, err := report.HTML(report.Page{
		Title: "Fit of " + opt.Name, Kind: "fit",
		Facts: []report.Fact{{Name: "from", Value: opt.Source},
			{Name: "window", Value: fmt.Sprintf("%s to %s, step %s", res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339), res.Step)},
			{Name: "fitted", Value: fmt.Sprintf("%d workers, queue %d, mean service %.1f ms, error rate %.3f, %d fault(s)", res.WorkersFit, res.QueueFit, res.MeanService*1e3, res.ErrorRate, len(res.Faults))},
			{Name: "seeds", Value: fmt.Sprint(seeds)}},
		Verdict:  []string{c.Verdict, "Client policies are not in a server's metrics: the simulated clients are the scenario's (a 2 s timeout, no retries, unless you set them); the recorded ones may have differed."},
		Charts:   []report.Chart{{Title: "Recorded against simulated, per step", File: fit.RecordedChart, PNG: png}},
		Scenario: []report.Text{{Label: fit.ScenarioFile, Body: string(res.Scenario(opt))}},
		Sections: []report.Section{{ID: "fit", Title: "The fit", HTML: htmltemplate.HTML("<pre>" + htmltemplate.HTMLEscapeString(string(res.Report(opt))) + "</pre>")}},
	})
	if err != nil {
		return fmt.Errorf("fit: %s: %w", fit.PageFile, err)
	}
	res.Extra = map[string][]byte{fit.RecordedChart: png, fit.PageFile: page}
	return nil
}
