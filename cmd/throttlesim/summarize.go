package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

func newSummarizeCmd(e *env) *cobra.Command {
	var format string
	var columns []string
	cmd := &cobra.Command{
		Use:   "summarize DIR...",
		Short: "Print the headline figures of results folders as one table",
		Long: `Summarize reads summary.json from each results folder and prints one row per
run: success ratio, local drop rate, amplification, peak load, wasted work,
recovery time, and for runs with connections the peak connect rate, wasted
handshake work and the time until 99% of clients were connected again.
Given one sweep folder, it prints one row per point instead: each figure's
mean ± the half-width of its 95% confidence interval over the seeds.
--format markdown (the default) suits docs and pull requests; csv suits
spreadsheets.`,
		Example: `  throttlesim summarize results/outage results/outage-no-policy
  throttlesim summarize --format csv results/*`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one results folder")}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if format != "markdown" && format != "csv" {
				return usageError{fmt.Errorf("--format %q: expected markdown or csv", format)}
			}
			return summarizeRun(e.stdout, args, format, columns)
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or csv")
	cmd.Flags().StringSliceVar(&columns, "columns", nil, "only these columns, by header name, e.g. point,amplification,success")
	return cmd
}

func f(p *float64, prec int) string {
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

// sweepTable prints one row per point of a sweep folder: each figure's mean
// and the half-width of its 95% confidence interval over the seeds.
func sweepTable(w io.Writer, dir, format string, columns []string) error {
	plan, err := sweep.ReadPlan(dir)
	if err != nil {
		return err
	}
	pts, err := sweep.LoadRuns(dir, plan)
	if err != nil {
		return err
	}
	header := []string{"point", "runs", "recovered", "recovery (s)", "peak load / capacity", "amplification", "wasted work", "success", "dropped locally"}
	var rows [][]string
	for _, pt := range pts {
		cell := func(name string, scale float64, prec int, unit string) string {
			var xs []float64
			for _, m := range sweep.Metrics {
				if m.Name != name {
					continue
				}
				for _, r := range pt.Runs {
					if v := m.Get(&r.Doc.Summary); v != nil {
						xs = append(xs, *v*scale)
					}
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
		rec, applicable := 0, 0
		for _, r := range pt.Runs {
			if r.Doc.Summary.Recovery.Recovered {
				rec++
			}
			if r.Doc.Summary.Recovery.Applicable {
				applicable++
			}
		}
		recovered := fmt.Sprintf("%d of %d", rec, applicable)
		if applicable == 0 {
			recovered = "n/a (no fault)"
		}
		conn := len(pt.Runs) > 0 && pt.Runs[0].Doc.Summary.Connections != nil
		row := []string{pt.Label, strconv.Itoa(len(pt.Runs)), recovered,
			cell("recovery_time_s", 1, 1, ""), cell("peak_received_over_capacity", 1, 2, ""), cell("amplification", 1, 3, ""), cell("wasted_work_fraction", 100, 2, "%"),
			cell("success_ratio", 100, 1, "%"), cell("local_drop_rate", 100, 1, "%")}
		if conn {
			if len(header) == 9 {
				header = append(header, "connect attempts", "all reconnected (s)")
			}
			row = append(row, cell("connect_attempts", 1, 0, ""), cell("reconnected_all_s", 1, 1, ""))
		}
		// Columns shown only when --columns asks for them.
		row = append(row, cell("backend_received", 1, 0, ""), cell("last_success_s", 1, 2, ""),
			cell("fault_load_over_effective_capacity", 1, 2, ""), cell("time_above_capacity_s", 1, 0, ""), cell("recovery_wasted_fraction", 100, 1, "%"))
		rows = append(rows, row)
	}
	header = append(header, optionalColumns...)
	if len(columns) == 0 && len(pts) > 0 && len(pts[0].Runs) > 0 {
		// One request per client, or the occ row: nothing to recover from
		// and no capacity; what matters is the work and the completion.
		if sc := pts[0].Runs[0].Doc.Scenario; sc.Backend.Kind == "occ" || sc.Clients.Arrival.Process == "once" {
			columns = []string{"point", "runs", "backend received", "last success (s)", "amplification", "success", "dropped locally"}
		}
	}
	if len(columns) == 0 {
		header = header[:len(header)-len(optionalColumns)]
		for i := range rows {
			rows[i] = rows[i][:len(rows[i])-len(optionalColumns)]
		}
	}
	if len(columns) > 0 {
		var keep []int
		for _, c := range columns {
			found := false
			for i, h := range header {
				if h == c {
					keep, found = append(keep, i), true
				}
			}
			if !found {
				return usageError{fmt.Errorf("--columns: no column %q; the columns are %s", c, strings.Join(header, ", "))}
			}
		}
		pick := func(r []string) []string {
			out := make([]string, len(keep))
			for j, i := range keep {
				out[j] = r[i]
			}
			return out
		}
		header = pick(header)
		for i := range rows {
			rows[i] = pick(rows[i])
		}
	}
	return writeTable(w, header, rows, format)
}

// optionalColumns are the sweep table's columns left out unless --columns
// names them: the backend's received attempts (with backend.kind occ, its
// write calls) and the time of the last success (with arrival process
// once, when every client was served), and the load against the
// effective capacity (docs/reading-results.md).
var optionalColumns = []string{"backend received", "last success (s)", "fault load / eff. capacity", "time above capacity (s)", "wasted in recovery"}

func writeTable(w io.Writer, header []string, rows [][]string, format string) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(header)
		cw.WriteAll(rows)
		return cw.Error()
	case "text":
		widths := make([]int, len(header))
		for _, r := range append([][]string{header}, rows...) {
			for i, c := range r {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		for _, r := range append([][]string{header}, rows...) {
			var b strings.Builder
			b.WriteString(" ")
			for i, c := range r {
				b.WriteString(" " + c + strings.Repeat(" ", widths[i]-len([]rune(c))+1))
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	default:
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		seps := make([]string, len(header))
		for i := range seps {
			seps[i] = "---"
		}
		fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
		for _, r := range rows {
			fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
		}
	}
	return nil
}

func summarizeRun(w io.Writer, dirs []string, format string, columns []string) error {
	if len(dirs) == 1 {
		if _, err := os.Stat(filepath.Join(dirs[0], "sweep.json")); err == nil {
			return sweepTable(w, dirs[0], format, columns)
		}
	}
	if len(columns) > 0 {
		return usageError{errors.New("--columns applies to one sweep folder")}
	}
	header := []string{"run", "success", "dropped locally", "amplification", "peak load / capacity", "wasted work", "recovery (s)", "second outage"}
	var docs []*sim.SummaryDoc
	conn := false
	for _, d := range dirs {
		doc, err := sim.ReadSummary(d)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
		conn = conn || doc.Summary.Connections != nil
	}
	if conn {
		header = append(header, "connect attempts", "peak connects / capacity", "wasted handshake work", "99% reconnected (s)", "all reconnected (s)")
	}
	var rows [][]string
	names := map[string]int{}
	for _, d := range docs {
		names[d.Scenario.Name]++
	}
	for di, d := range docs {
		s := d.Summary
		label := d.Scenario.Name
		if names[label] > 1 {
			label = filepath.Base(filepath.Clean(dirs[di])) // two runs of one scenario
		}
		if d.Run.Status != "complete" {
			label += " (incomplete)"
		}
		rec := "n/a"
		switch {
		case s.Recovery.Recovered:
			rec = f(s.Recovery.RecoveryTimeS, 0)
		case s.Recovery.Applicable:
			rec = "did not recover"
		}
		second := "no"
		if s.Recovery.SecondOutage {
			second = "yes, at " + f(s.Recovery.SecondOutageAtS, 0) + " s"
		}
		if !s.Recovery.Applicable {
			second = "n/a"
		}
		row := []string{label, pc(s.SuccessRatio), pc(s.LocalDropRate), f(s.Amplification, 3),
			f(s.PeakReceivedOverCapacity, 2), pc(s.WastedWorkFraction), rec, second}
		if conn {
			if c := s.Connections; c != nil {
				re, all := "not reached", "not reached"
				if c.Reconnected99S != nil {
					re = f(c.Reconnected99S, 1)
				}
				if c.ReconnectedAllS != nil {
					all = f(c.ReconnectedAllS, 1)
				}
				row = append(row, strconv.FormatInt(c.ConnectAttempts, 10), f(c.PeakConnectRateOverCapacity, 2),
					fmt.Sprintf("%s (%.0f worker-s)", pc(c.WastedHandshakeFraction), c.WastedHandshakeWorkerS), re, all)
			} else {
				row = append(row, "–", "–", "–", "–", "–")
			}
		}
		rows = append(rows, row)
	}
	return writeTable(w, header, rows, format)
}
