package report

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// chartTitle is a chart's file name in words: compare_server_load.png is
// "server load".
func chartTitle(file string) string {
	s := strings.TrimSuffix(path.Base(file), path.Ext(file))
	s = strings.TrimPrefix(s, "compare_")
	return strings.ReplaceAll(s, "_", " ")
}

// Charts are PNG charts for a page, in the order given.
func Charts(cs []plots.Chart) []Chart {
	out := make([]Chart, len(cs))
	for i, c := range cs {
		out[i] = Chart{Title: chartTitle(c.File), File: c.File, PNG: c.PNG, SVG: c.SVG, Series: c.Series}
	}
	return out
}

// chartOrder puts the comparison charts over time first, then the
// figures; other charts follow by name.
var chartOrder = []string{"compare_server_load.png", "compare_local_drops.png", "compare_goodput.png",
	"compare_recovery.png", "compare_received.png", "compare_completion.png", "compare_peak_load.png",
	"compare_amplification.png", "compare_success.png"}

// ChartFiles are the PNG files among a results folder's files, as page
// charts: those of chartOrder in its order, then the others by name.
func ChartFiles(files map[string][]byte) []Chart {
	rank := func(n string) int {
		if i := slices.Index(chartOrder, n); i >= 0 {
			return i
		}
		return len(chartOrder)
	}
	names := slices.Sorted(maps.Keys(files))
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	var out []Chart
	for _, n := range names {
		if strings.HasSuffix(n, ".png") {
			out = append(out, Chart{Title: chartTitle(n), File: n, PNG: files[n]})
		}
	}
	return out
}

// RunPage is the report of one run: its summary, the verdicts of its
// thresholds, its charts and its scenario (the fields w gave, when w is
// not nil, and every field folded).
func RunPage(doc *rundir.SummaryDoc, vs []PointVerdicts, charts []Chart, w *AsWritten) (Page, error) {
	sc := doc.Scenario
	scen, err := RunScenario(sc, w)
	if err != nil {
		return Page{}, err
	}
	pt := sweep.PointData{Label: sc.Name, Runs: []sweep.RunData{{Doc: doc}}}
	p := Page{
		Title:       sc.Name,
		Description: sc.Description,
		Kind:        "run",
		Verdict:     RunVerdict(doc),
		Facts: []Fact{
			{"seed", fmt.Sprint(sc.Seed)}, {"simulated", sc.Duration.String()}, {"clients", group(fmt.Sprint(sc.Clients.Count))},
			{"status", doc.Run.Status}, {"fingerprint", doc.Run.Fingerprint},
		},
		Summary:  NewGrid("runs", []sweep.PointData{pt}),
		Verdicts: vs,
		Charts:   charts,
		Scenario: scen,
	}
	if lv := doc.Live; lv != nil {
		// A live run took wall time and has no fingerprint (nothing was
		// simulated: its 0 would read as one).
		p.Facts[1] = Fact{"wall time (live)", sc.Duration.String()}
		p.Facts = p.Facts[:4]
		if len(lv.NotMeasured) > 0 {
			notMeasured(&p.Summary, lv.NotMeasured, len(sc.Faults) > 0)
			p.Facts = append(p.Facts, Fact{"backend", "not measured (a remote --target)"})
		}
	}
	runLatency(&p.Summary, &doc.Summary) // after notMeasured, which rebuilds the columns from Metrics
	if g := doc.Graph; g != nil {
		p.Lead = []Section{graphSection(g)}
		p.Summary.Scope = map[string]string{}
		for _, m := range entryScoped {
			p.Summary.Scope[m] = "the entry service " + g.EntryService
		}
	}
	return p, nil
}

// runLatency puts a run's p50, p90 and maximum latency beside its p99
// in the summary table (one run: no interval; the sweep's tables keep
// the p99 alone).
func runLatency(g *Grid, s *metrics.Summary) {
	i := slices.Index(g.Columns, "latency_p99_ms")
	if i < 0 || len(g.Rows) != 1 {
		return
	}
	g.Columns = slices.Insert(g.Columns, i+1, "latency_max_ms")
	g.Columns = slices.Insert(g.Columns, i, "latency_p50_ms", "latency_p90_ms")
	for name, v := range map[string]*float64{"latency_p50_ms": s.LatencyP50MS, "latency_p90_ms": s.LatencyP90MS, "latency_max_ms": s.LatencyMaxMS} {
		e := Estimate{Mean: v}
		if v != nil {
			e.N = 1
		}
		g.Rows[0].Metrics[name] = e
	}
}

// notMeasured marks the grid's metrics a run could not see and shows
// them, in Metrics' order, rather than a 0 or nothing (the figures of a
// fault only when the scenario has one).
func notMeasured(g *Grid, fields []string, faults bool) {
	g.NotMeasured = map[string]bool{}
	for _, f := range fields {
		g.NotMeasured[f] = true
	}
	ofFault := map[string]bool{"fault_load_over_effective_capacity": true, "recovery_wasted_fraction": true}
	var cols []string
	for _, m := range Metrics {
		if slices.Contains(g.Columns, m.Name) || g.NotMeasured[m.Name] && (faults || !ofFault[m.Name]) {
			cols = append(cols, m.Name)
		}
	}
	g.Columns = cols
}

// entryScoped are the summary's figures that, in a service graph, are
// the entry service's alone.
var entryScoped = []string{"peak_received_over_capacity", "wasted_work_fraction", "backend_received",
	"fault_load_over_effective_capacity", "time_above_capacity_s", "recovery_wasted_fraction"}

// graphSection is a service graph's services, the most overloaded first:
// what a graph run's page leads with.
func graphSection(g *sim.GraphSummary) Section {
	var b strings.Builder
	esc := template.HTMLEscapeString
	b.WriteString("<p>Most overloaded: <b>" + esc(g.MostOverloaded) + "</b>. Services by peak load ÷ their own capacity (attempts per second that reached the service, refused ones in an outage included, ÷ workers ÷ mean service time), highest first. " +
		"The summary below is the clients' view; its backend figures are the entry service <b>" + esc(g.EntryService) + "</b>'s.</p>\n")
	b.WriteString("<table id=\"services-table\">\n<thead><tr><th>service</th><th>peak load ÷ capacity</th><th>busy</th><th>rejected</th><th>wasted work</th><th>attempts per external request</th><th>recovered</th></tr></thead>\n<tbody>\n")
	for _, ln := range g.Services {
		name := esc(ln.Name)
		if ln.Name == g.EntryService {
			name += " (entry)"
		}
		load := fmtp(ln.PeakLoadOverCapacity, 2) + "×"
		if ln.CallsOthers {
			load += " <span class=\"ci\">local work only: it also waits on its calls</span>"
		}
		rec := "n/a (no fault)"
		switch {
		case ln.Recovered:
			rec = "yes, +" + fmtp(ln.RecoveryTimeS, 0) + " s"
		case ln.RecoveryApplicable:
			rec = "<span class=\"fail\">no</span>"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
			name, load, pc(ln.Utilisation), plots.Thousands(float64(ln.Rejected)), pc(ln.WastedWorkFraction), fmtp(ln.AttemptsPerRequest, 2), rec)
	}
	b.WriteString("</tbody>\n</table>\n")
	return Section{ID: "services", Title: "Services", HTML: template.HTML(b.String())}
}

// ComparisonPage is the report of a sweep (kind "sweep") or of compared
// runs (kind "compare"): a verdict, for compared runs the fields their
// scenarios differ in, the summary of every point, verdicts, the
// differences from the baseline, charts, and scenario texts the caller
// chose (a sweep's base scenario and points, or every compared run's).
func ComparisonPage(kind string, c Comparison, vs []PointVerdicts, charts []Chart, scen []Text, facts []Fact) (Page, error) {
	grid := "sweep"
	if kind == "compare" {
		grid = "runs"
	}
	p := Page{
		Title:    c.Name,
		Kind:     kind,
		Facts:    facts,
		Summary:  NewGrid(grid, c.Points),
		Verdicts: vs,
		Charts:   charts,
		Scenario: scen,
	}
	if kind == "compare" {
		p.Verdict = CompareVerdict(c.Points, c.Baseline)
		ref := max(c.Baseline, 0)
		var scs []*scenario.Scenario
		for _, pt := range c.Points {
			if len(pt.Runs) == 0 {
				scs = nil
				break
			}
			scs = append(scs, pt.Runs[0].Doc.Scenario)
			p.Diff.Runs = append(p.Diff.Runs, pt.Label)
		}
		if len(scs) > 1 {
			rows, err := ScenarioDiffs(scs, ref)
			if err != nil {
				return Page{}, fmt.Errorf("comparing the scenarios of %s: %w", strings.Join(p.Diff.Runs, ", "), err)
			}
			p.Diff.Rows, p.Diff.Ref = rows, ref
		} else {
			p.Diff.Runs = nil
		}
	} else {
		p.Verdict = SweepVerdict(WithShortLabels(c.Points), c.Paired)
	}
	// Structured sweep points by the fields that tell them apart, on the
	// page as in the terminal (the full name on hover).
	labels := make([]string, len(c.Points))
	for i, pt := range c.Points {
		labels[i] = pt.Label
	}
	short := ShortLabels(labels)
	shown := map[string]string{}
	if kind == "sweep" && !slices.Equal(short, labels) {
		for i := range p.Summary.Rows {
			if i < len(short) && p.Summary.Rows[i].Label == labels[i] {
				p.Summary.Rows[i].Shown = short[i]
				shown[labels[i]] = short[i]
			}
		}
	}
	switch {
	case c.Baseline >= 0:
		p.Paired = Paired(c.Points, c.Baseline)
		p.Matrix = NewMatrix(p.Paired, kind != "compare")
	case kind == "compare" && len(c.Points) > 1:
		// Without --baseline the runs are read against the first, as the
		// verdict reads them.
		p.Paired = Paired(c.Points, 0)
		p.Matrix = NewMatrix(p.Paired, false)
		if p.Matrix != nil {
			p.Matrix.First = true
		}
	}
	if p.Matrix != nil && len(shown) > 0 {
		for _, pt := range p.Matrix.Points {
			p.Matrix.Shown = append(p.Matrix.Shown, cmp.Or(shown[pt], pt))
		}
	}
	return p, nil
}
