package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/fit"
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
		Long: `Fit reads a server's metrics for a window of time, from a Prometheus server's
HTTP API or from exported query answers, and writes a scenario that replays
it: the arrival trace (the rate of the requests counter, per --step), the
service-time distribution (the latency histogram's buckets over the window,
as dist: histogram), the workers and queue (from a workers gauge, else the
throughput at saturation by Little's law, else the requests in flight; the
report says which and why), the error rate, and the outages and capacity
drops it saw as faults. Into --out it writes scenario.yaml (a comment on
each field names its query), arrivals.csv, report.md, fit.json and the
query answers (queries/, readable back with --from-files). Nothing is
written if a query fails.

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
		fmt.Fprintf(e.stdout, "wrote %s/{%s,%s,%s,%s}\n", o.out, fit.ScenarioFile, fit.ArrivalsFile, fit.ReportFile, fit.ResultFile)
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
