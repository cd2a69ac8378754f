package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

// Estimate is a metric over a point's runs as raw numbers: the number of
// runs with a value, the mean, the standard deviation and the 95%
// confidence interval; nil (JSON null) where undefined (no run, or one).
type Estimate struct {
	N    int      `json:"n"`
	Mean *float64 `json:"mean"`
	SD   *float64 `json:"sd"`
	Lo   *float64 `json:"ci95_lo"`
	Hi   *float64 `json:"ci95_hi"`
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// NewEstimate converts a Stat.
func NewEstimate(s sweep.Stat) Estimate {
	return Estimate{N: s.N, Mean: finite(s.Mean), SD: finite(s.SD), Lo: finite(s.Lo), Hi: finite(s.Hi)}
}

// GridRow is one point (or run) of a Grid.
type GridRow struct {
	Label string `json:"label"`
	// Shown is the label as a page shows it, when shorter (ShortLabels).
	Shown  string `json:"-"`
	Runs   int    `json:"runs"`
	Status string `json:"status,omitempty"` // a single run's: complete or incomplete
	// Recovered runs of the Applicable ones (runs with a fault to recover
	// from).
	Recovered  int                 `json:"recovered"`
	Applicable int                 `json:"recovery_applicable"`
	Metrics    map[string]Estimate `json:"metrics"`
}

// Grid is a summary as raw numbers: one row per point or run, and for
// each every metric of Metrics that some row has a value of, or that
// applies (Columns, in the order of Metrics).
type Grid struct {
	Kind    string    `json:"kind"` // "sweep" (rows are points) or "runs"
	Columns []string  `json:"metrics"`
	Rows    []GridRow `json:"rows"`
	// Scope says, per metric, which service a figure describes when that
	// is not plain (a service graph's backend figures are its entry
	// service's); shown under the metric's name.
	Scope map[string]string `json:"-"`
	// NotMeasured are the metrics the run could not see (a live run's
	// server against a remote --target): shown as "not measured".
	NotMeasured map[string]bool `json:"-"`
}

// NewGrid summarises points; kind is "sweep" or "runs" (one run per
// point, whose status is then given).
func NewGrid(kind string, pts []sweep.PointData) Grid {
	g := Grid{Kind: kind}
	has := map[string]bool{}
	for _, pt := range pts {
		rec, app := recoveredCount(pt)
		row := GridRow{Label: pt.Label, Runs: len(pt.Runs), Recovered: rec, Applicable: app, Metrics: map[string]Estimate{}}
		if kind == "runs" && len(pt.Runs) == 1 {
			row.Status = pt.Runs[0].Doc.Run.Status
		}
		for _, m := range Metrics {
			e := NewEstimate(m.Describe(pt))
			row.Metrics[m.Name] = e
			has[m.Name] = has[m.Name] || e.N > 0
		}
		g.Rows = append(g.Rows, row)
	}
	// Where a figure applies but no row has it, say so rather than drop
	// it: recovery time when some run had a fault, the time until all
	// reconnected when clients hold connections.
	for _, r := range g.Rows {
		has["recovery_time_s"] = has["recovery_time_s"] || r.Applicable > 0
	}
	has["reconnected_all_s"] = has["reconnected_all_s"] || has["connect_attempts"]
	for _, m := range Metrics {
		if has[m.Name] {
			g.Columns = append(g.Columns, m.Name)
		}
	}
	return g
}

// WriteJSON writes the grid as indented JSON.
func (g Grid) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func raw(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// Table is the grid as a table of raw numbers: no units, percentages or
// ± signs in the cells, an empty cell where there is no value, and the
// interval as separate columns (<metric>_ci95_lo, <metric>_ci95_hi) for
// a sweep; a single run's metric is one column.
func (g Grid) Table() Table {
	header := []string{"point", "runs"}
	if g.Kind == "runs" {
		header = []string{"run", "status"}
	}
	header = append(header, "recovered", "recovery_applicable")
	for _, c := range g.Columns {
		if g.Kind == "runs" {
			header = append(header, c)
			continue
		}
		header = append(header, c+"_n", c+"_mean", c+"_ci95_lo", c+"_ci95_hi")
	}
	t := Table{Header: header}
	for _, r := range g.Rows {
		row := []string{r.Label, strconv.Itoa(r.Runs)}
		if g.Kind == "runs" {
			row[1] = r.Status
		}
		row = append(row, strconv.Itoa(r.Recovered), strconv.Itoa(r.Applicable))
		for _, c := range g.Columns {
			e := r.Metrics[c]
			if g.Kind == "runs" {
				row = append(row, raw(e.Mean))
				continue
			}
			row = append(row, strconv.Itoa(e.N), raw(e.Mean), raw(e.Lo), raw(e.Hi))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
