package fit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files fit writes into its folder.
const (
	ScenarioFile = "scenario.yaml"
	ArrivalsFile = "arrivals.csv"
	ResultFile   = "fit.json"
	ReportFile   = "report.md"
	QueriesDir   = "queries" // the answers, readable back with --from-files
	// RecordedChart and PageFile: the recorded series against the
	// simulated ones, as a chart and a page (with Simulate).
	RecordedChart = "recorded_vs_simulated.png"
	PageFile      = "report.html"
)

// Options of the scenario fit writes.
type Options struct {
	Name    string // the scenario's name
	Clients int    // clients.count: the server's metrics do not say how many clients there were
	Source  string // where the data came from (a URL or a folder), for the comments
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Scenario is the text of the fitted scenario, with a comment on each
// field naming the query it comes from. Its arrival section is the trace
// contract of issue 23 part 1 (clients.arrival.trace).
func (r *Result) Scenario(o Options) []byte {
	var b bytes.Buffer
	q := map[string]string{}
	for _, x := range r.Queries {
		q[x.Name] = x.Expr
	}
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Fitted by throttlesim fit from %s\n", o.Source)
	p("# window %s to %s (%s), step %s; provenance of each field in the comment above it.\n",
		r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), r.End.Sub(r.Start), r.Step)
	p("# Client policies (timeouts, retries, throttles) are not visible in a server's metrics: set them.\n")
	p("name: %s\n", strconv.Quote(o.Name))
	p("duration: %s\n", dur(r.End.Sub(r.Start)))
	p("clients:\n")
	p("  count: %d\n", o.Clients)
	p("  arrival:\n")
	p("    process: poisson\n")
	p("    # %s: the total arrival rate per step (%d steps", q["arrivals"], len(r.Arrivals))
	if r.Gaps > 0 {
		p(", %d missing, filled with the step before", r.Gaps)
	}
	if r.Filled > 0 {
		p("; %d outage steps, whose requests were never answered so never counted, take the rate of the step before the outage", r.Filled)
	}
	p(")\n")
	p("    trace:\n")
	p("      file: %s\n      format: csv\n      time_column: time\n      rate_column: rate\n      interpolate: step\n      scale: 1.0\n", ArrivalsFile)
	p("backend:\n")
	for _, e := range r.Estimates {
		if e.Used && strings.HasPrefix(e.Name, "workers") {
			p("  # workers: %s (%s): %s\n", e.Name, e.From, e.Why)
		}
	}
	p("  workers: %d\n", r.WorkersFit)
	p("  queue:\n")
	for _, e := range r.Estimates {
		if e.Name == "queue limit" {
			p("    # %s\n", e.Why)
		}
	}
	p("    limit: %d\n", r.QueueFit)
	p("  # %s: increase of each bucket over the window\n", q["duration_bucket"])
	p("  service:\n    dist: histogram\n")
	if r.InFlight == nil && r.Workers == nil {
		p("    # a request-duration histogram counts the wait in the queue too: in a window that queued, this overstates service times\n")
	}
	if r.LogUniform {
		p("    # its mean is closer to the exact _sum/_count than uniform's\n")
		p("    within: log_uniform\n")
	}
	if r.InfCap > 0 {
		p("    # a guess: twice the last finite bound; Prometheus cannot say how slow the +Inf bucket's requests were\n")
		p("    inf_cap: %s\n", dur(time.Duration(r.InfCap*1e9)))
	}
	p("    buckets:\n")
	for _, bk := range r.Buckets {
		p("      - {le: %s, count: %s}\n", bk.Le, strconv.FormatFloat(bk.Count, 'g', -1, 64)) // exact: a count rounded to 6 digits would move the mean
	}
	p("  # %s: 5xx other than 503 over 2xx + those, outside outages\n", q["codes"])
	p("  error_rate: %s\n", g(r.ErrorRate))
	if len(r.Faults) > 0 {
		p("faults:\n")
		for _, f := range r.Faults {
			p("  # %s\n", f.Rule)
			switch f.Kind {
			case "capacity":
				p("  - {kind: capacity, start: %s, duration: %s, fraction: %s}\n", f.Start, f.Duration, g(f.Fraction))
			default:
				p("  - {kind: %s, start: %s, duration: %s}\n", f.Kind, f.Start, f.Duration)
			}
		}
	}
	return b.Bytes()
}

// dur writes a time.Duration as a scenario duration (whole ms at least).
func dur(d time.Duration) string {
	d = d.Round(time.Millisecond)
	switch {
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
}

// ArrivalsCSV is the arrival trace: seconds from the window's start and
// the rate (req/s) from then to the next row.
func (r *Result) ArrivalsCSV() []byte {
	var b bytes.Buffer
	b.WriteString("time,rate\n")
	for k, v := range r.Arrivals {
		fmt.Fprintf(&b, "%s,%s\n", g(float64(k)*r.Step.Seconds()), strconv.FormatFloat(v, 'f', -1, 64))
	}
	return b.Bytes()
}

// Report is the fit's estimates as Markdown.
func (r *Result) Report(o Options) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Fit of %s\n\nFrom %s, %s to %s, step %s.\n\n", o.Name, o.Source, r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), r.Step)
	p("| estimate | value | from | used | how |\n|---|---|---|---|---|\n")
	for _, e := range r.Estimates {
		used := ""
		if e.Used {
			used = "yes"
		}
		p("| %s | %s %s | %s | %s | %s |\n", e.Name, g(e.Value), e.Unit, e.From, used, e.Why)
	}
	p("\nMean arrival rate %s req/s (peak %s).\n", g(total(r.Arrivals)/float64(len(r.Arrivals))), g(maxOf(r.Arrivals)))
	if r.Filled > 0 {
		p("The arrivals are the requests answered: the %d outage steps take the rate of the step before the outage.\n", r.Filled)
	}
	if len(r.Faults) == 0 {
		p("\nNo fault seen.\n")
	} else {
		p("\n| fault | start | duration | rule |\n|---|---|---|---|\n")
		for _, f := range r.Faults {
			what := string(f.Kind)
			if f.Kind == "capacity" {
				what += fmt.Sprintf(" (fraction %s)", g(f.Fraction))
			}
			p("| %s | %s | %s | %s |\n", what, f.Start, f.Duration, f.Rule)
		}
	}
	if len(r.Missing) > 0 {
		p("\nNot exposed (optional queries that answered nothing): %s.\n", strings.Join(r.Missing, ", "))
	}
	p("\n## Queries\n\n")
	for _, q := range r.Queries {
		p("- `%s`: `%s`\n", q.Name, q.Expr)
	}
	if c := r.Simulated; c != nil {
		p("\n## Recorded against simulated\n\n%s\n\n", c.Verdict)
		p("The fitted scenario as written, run with seeds %v, one row per %gs step (%s).\n\n", c.Seeds, c.StepS, RecordedChart)
		p("| series | recorded mean | simulated mean | mean absolute error | relative | steps inside the seeds' range |\n|---|---|---|---|---|---|\n")
		for _, x := range c.Series {
			p("| %s (%s) | %s | %s | %s | %.0f%% | %.0f%% of %d |\n", x.Name, x.Unit, g(meanOf(x.Recorded)), g(meanOf(x.Mean)), g(x.MAE), 100*x.Rel, 100*x.Inside, x.Steps)
		}
	} else {
		p("\nNot simulated (--seeds 0): `throttlesim run %s` runs the fitted scenario.\n", ScenarioFile)
	}
	return b.Bytes()
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Write puts the scenario, its arrival trace, the estimates, the report
// and the query answers into dir, whole or not at all: they are written
// into a new folder beside it, renamed into place at the end. An existing
// dir is replaced only with replace, and only if it holds a fit (its
// fit.json).
func (r *Result) Write(dir string, o Options, replace bool) error {
	if _, err := os.Stat(dir); err == nil {
		if !replace {
			return fmt.Errorf("fit: %s exists: choose another --out or give --force", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, ResultFile)); err != nil {
			return fmt.Errorf("fit: %s exists and holds no %s: not replacing a folder fit did not write", dir, ResultFile)
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	files := map[string][]byte{
		ScenarioFile: r.Scenario(o), ArrivalsFile: r.ArrivalsCSV(), ResultFile: append(js, '\n'), ReportFile: r.Report(o),
	}
	for name, data := range r.Extra {
		files[name] = data
	}
	for name, raw := range r.Raw {
		files[filepath.Join(QueriesDir, name+".json")] = raw
	}
	if len(r.Raw) > 0 {
		if err := os.Mkdir(filepath.Join(tmp, QueriesDir), 0o755); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	if _, err := os.Stat(dir); err == nil {
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return errors.Join(fmt.Errorf("fit: %w", err), os.Rename(old, dir))
		}
		done = true
		return os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	done = true
	return nil
}

// meanOf is the mean of the finite values (NaN when none).
func meanOf(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}
