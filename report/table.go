package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// Table is a printable table: a header and rows of cells, already
// formatted.
type Table struct {
	Header []string
	Rows   [][]string
	// Display, when set, is the first column as the "text" format shows
	// it (a sweep's short labels, ShortLabels); csv and markdown keep
	// Rows' own.
	Display []string
}

// NoColumnError says --columns named a column the table does not have.
type NoColumnError struct {
	Column  string
	Columns []string // the table's columns
}

func (e *NoColumnError) Error() string {
	return fmt.Sprintf("--columns: no column %q; the columns are %s", e.Column, strings.Join(e.Columns, ", "))
}

// Write prints the table as "csv" (encoding/csv), "text" (aligned
// columns) or, for any other format, a markdown table.
func (t Table) Write(w io.Writer, format string) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(t.Header)
		cw.WriteAll(t.Rows)
		return cw.Error()
	case "text":
		all := append([][]string{t.Header}, t.Rows...)
		if len(t.Display) == len(t.Rows) {
			for i, d := range t.Display {
				all[i+1] = append([]string{d}, t.Rows[i][1:]...)
			}
		}
		widths := make([]int, len(t.Header))
		for _, r := range all {
			for i, c := range r {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		for _, r := range all {
			var b strings.Builder
			b.WriteString(" ")
			for i, c := range r {
				b.WriteString(" " + c + strings.Repeat(" ", widths[i]-len([]rune(c))+1))
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	default:
		fmt.Fprintln(w, "| "+strings.Join(t.Header, " | ")+" |")
		seps := make([]string, len(t.Header))
		for i := range seps {
			seps[i] = "---"
		}
		fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
		for _, r := range t.Rows {
			fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
		}
	}
	return nil
}

// Pick keeps the named columns, in the order given; a name the table does
// not have is a *NoColumnError.
func (t Table) Pick(columns []string) (Table, error) {
	var keep []int
	for _, c := range columns {
		found := false
		for i, h := range t.Header {
			if h == c {
				keep, found = append(keep, i), true
			}
		}
		if !found {
			return Table{}, &NoColumnError{Column: c, Columns: t.Header}
		}
	}
	pick := func(r []string) []string {
		out := make([]string, len(keep))
		for j, i := range keep {
			out[j] = r[i]
		}
		return out
	}
	out := Table{Header: pick(t.Header)}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, pick(r))
	}
	if len(keep) > 0 && keep[0] == 0 {
		out.Display = t.Display // still the first column
	}
	return out, nil
}

func fmtp(p *float64, prec int) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func pc(p *float64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(100**p, 'f', 1, 64) + "%"
}

// optionalColumns are the sweep table's columns left out unless --columns
// names them: the backend's received attempts (with backend.kind occ, its
// write calls) and the time of the last success (with arrival process
// once, when every client was served), and the load against the
// effective capacity, and an autoscaler's replicas (docs/reading-results.md).
var optionalColumns = []string{"backend received", "last success (s)", "fault load / eff. capacity", "success during fault", "time above capacity (s)", "wasted in recovery", "peak replicas", "mean replicas"}

// SweepTable is one row per point of a sweep: each figure's mean and the
// half-width of its 95% confidence interval over the seeds. columns, when
// given, picks and orders the columns by header name.
func SweepTable(pts []sweep.PointData, columns []string) (Table, error) {
	header := []string{"point", "runs", "recovered", "recovery (s)", "peak load / capacity", "amplification", "wasted work", "success", "dropped locally"}
	// The connection columns, when any point has connections (the others
	// get "–" there, so that every row has every column).
	anyConn := false
	for _, pt := range pts {
		anyConn = anyConn || len(pt.Runs) > 0 && pt.Runs[0].Doc.Summary.Connections != nil
	}
	if anyConn {
		header = append(header, "connect attempts", "all reconnected (s)")
	}
	var rows [][]string
	for _, pt := range pts {
		cell := func(name string, scale float64, prec int, unit string) string {
			var xs []float64
			if m, ok := MetricByName(name); ok {
				for _, x := range m.Values(pt) {
					xs = append(xs, x*scale)
				}
			}
			st := sweep.Describe(xs)
			switch {
			case st.N == 0:
				return "–"
			case st.N == 1:
				return strconv.FormatFloat(st.Mean, 'f', prec, 64) + unit
			}
			return strconv.FormatFloat(st.Mean, 'f', prec, 64) + unit + " ± " + strconv.FormatFloat(st.Hi-st.Mean, 'f', prec, 64)
		}
		recovered := recoveredCell(pt)
		row := []string{pt.Label, strconv.Itoa(len(pt.Runs)), recovered,
			cell("recovery_time_s", 1, 1, ""), cell("peak_received_over_capacity", 1, 2, ""), cell("amplification", 1, 3, ""), cell("wasted_work_fraction", 100, 2, "%"),
			cell("success_ratio", 100, 1, "%"), cell("local_drop_rate", 100, 1, "%")}
		if anyConn {
			row = append(row, cell("connect_attempts", 1, 0, ""), cell("reconnected_all_s", 1, 1, ""))
		}
		// Columns shown only when --columns asks for them.
		row = append(row, cell("backend_received", 1, 0, ""), cell("last_success_s", 1, 2, ""),
			cell("fault_load_over_effective_capacity", 1, 2, ""), cell("fault_success_ratio", 100, 1, "%"), cell("time_above_capacity_s", 1, 0, ""), cell("recovery_wasted_fraction", 100, 1, "%"),
			cell("replicas_peak", 1, 1, ""), cell("replicas_mean", 1, 2, ""))
		rows = append(rows, row)
	}
	header = append(header, optionalColumns...)
	if len(columns) == 0 && oneShot(pts) {
		// One request per client, or the occ row: nothing to recover from
		// and no capacity; what matters is the work and the completion.
		columns = []string{"point", "runs", "backend received", "last success (s)", "amplification", "success", "dropped locally"}
	}
	t := Table{Header: header, Rows: rows}
	labels := make([]string, len(pts))
	for i, pt := range pts {
		labels[i] = pt.Label
	}
	if short := ShortLabels(labels); !slices.Equal(short, labels) {
		t.Display = short
	}
	if len(columns) == 0 {
		t.Header = header[:len(header)-len(optionalColumns)]
		for i := range t.Rows {
			t.Rows[i] = t.Rows[i][:len(t.Rows[i])-len(optionalColumns)]
		}
		return t, nil
	}
	return t.Pick(columns)
}

// oneShot reports whether the sweep's clients send one request each, or
// its backend is the occ row.
func oneShot(pts []sweep.PointData) bool {
	if len(pts) == 0 || len(pts[0].Runs) == 0 {
		return false
	}
	sc := pts[0].Runs[0].Doc.Scenario
	return sc.Backend.Kind == scenario.BackendOCC || sc.Clients.Arrival.Process == scenario.ArrivalOnce
}

// recoveredCell is "r of a": the runs that recovered of those where
// recovery applies.
func recoveredCell(pt sweep.PointData) string {
	rec, applicable := recoveredCount(pt)
	if applicable == 0 {
		return "n/a (no fault)"
	}
	return fmt.Sprintf("%d of %d", rec, applicable)
}

func recoveredCount(pt sweep.PointData) (recovered, applicable int) {
	for _, r := range pt.Runs {
		if r.Doc.Summary.Recovery.Recovered {
			recovered++
		}
		if r.Doc.Summary.Recovery.Applicable {
			applicable++
		}
	}
	return recovered, applicable
}

// RunLabels names runs by scenario name, or by folder where two runs share
// a scenario name.
func RunLabels(dirs []string, docs []*rundir.SummaryDoc) []string {
	names := map[string]int{}
	for _, d := range docs {
		names[d.Scenario.Name]++
	}
	labels := make([]string, len(docs))
	for i, d := range docs {
		labels[i] = d.Scenario.Name
		if names[labels[i]] > 1 {
			labels[i] = filepath.Base(filepath.Clean(dirs[i])) // two runs of one scenario
		}
	}
	return labels
}

// RunsTable is one row per run folder: its headline figures, and for runs
// with connections the reconnect figures.
func RunsTable(dirs []string, docs []*rundir.SummaryDoc) Table {
	header := []string{"run", "success", "dropped locally", "amplification", "peak load / capacity", "wasted work", "recovery (s)", "second outage"}
	conn := false
	for _, d := range docs {
		conn = conn || d.Summary.Connections != nil
	}
	if conn {
		header = append(header, "connect attempts", "peak connects / capacity", "wasted handshake work", "99% reconnected (s)", "all reconnected (s)")
	}
	var rows [][]string
	labels := RunLabels(dirs, docs)
	for di, d := range docs {
		s := d.Summary
		label := labels[di]
		if d.Run.Status != "complete" {
			label += " (incomplete)"
		}
		rec := "n/a"
		switch {
		case s.Recovery.Recovered:
			rec = fmtp(s.Recovery.RecoveryTimeS, 0)
		case s.Recovery.Applicable:
			rec = "did not recover"
		}
		second := "no"
		if s.Recovery.SecondOutage {
			second = "yes, at " + fmtp(s.Recovery.SecondOutageAtS, 0) + " s"
		}
		if !s.Recovery.Applicable {
			second = "n/a"
		}
		row := []string{label, pc(s.SuccessRatio), pc(s.LocalDropRate), fmtp(s.Amplification, 3),
			fmtp(s.PeakReceivedOverCapacity, 2), pc(s.WastedWorkFraction), rec, second}
		if conn {
			if c := s.Connections; c != nil {
				re, all := "not reached", "not reached"
				if c.Reconnected99S != nil {
					re = fmtp(c.Reconnected99S, 1)
				}
				if c.ReconnectedAllS != nil {
					all = fmtp(c.ReconnectedAllS, 1)
				}
				row = append(row, strconv.FormatInt(c.ConnectAttempts, 10), fmtp(c.PeakConnectRateOverCapacity, 2),
					fmt.Sprintf("%s (%.0f worker-s)", pc(c.WastedHandshakeFraction), c.WastedHandshakeWorkerS), re, all)
			} else {
				row = append(row, "–", "–", "–", "–", "–")
			}
		}
		rows = append(rows, row)
	}
	return Table{Header: header, Rows: rows}
}
