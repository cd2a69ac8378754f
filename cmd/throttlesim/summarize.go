package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// summarizeOptions are summarize's arguments and flags.
type summarizeOptions struct {
	dirs    []string
	format  string
	columns []string
}

// newSummarizeCmd builds `throttlesim summarize`; runF replaces the run
// function in tests (nil: the real one).
func newSummarizeCmd(e *env, runF func(context.Context, *env, *summarizeOptions) error) *cobra.Command {
	o := &summarizeOptions{}
	if runF == nil {
		runF = summarizeRun
	}
	cmd := &cobra.Command{
		Use:   "summarize DIR...",
		Short: "Print the headline figures of results folders as one table",
		Long: `Summarize prints one row per results folder: success ratio, local drop
rate, amplification, peak load, wasted work and recovery time (and the
connection figures for runs with connections). Given one sweep folder, it
prints one row per point: each figure's mean ± the half-width of its 95%
confidence interval over the seeds. --format markdown (the default) and
table round for people; csv and json carry raw numbers for programs.
--columns picks columns by their header in the chosen format.

More: docs/cli.md, "throttlesim summarize".`,
		Example: `  throttlesim summarize results/outage results/outage-no-policy
  throttlesim summarize --format csv results/*
  throttlesim summarize --format json results/k-sweep-sweep`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one results folder")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.format {
			case "markdown", "table", "csv", "json":
			default:
				return usageError{fmt.Errorf("--format %q: expected table, csv, json or markdown", o.format)}
			}
			o.dirs = args
			return runF(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "markdown", "table, csv, json or markdown")
	cmd.Flags().StringSliceVar(&o.columns, "columns", nil, "only these columns, by header name, e.g. point,amplification,success")
	return cmd
}

// writeSummary prints points in the format: the human table (rounded, with
// %, ±) for markdown and table, raw numbers (report.Grid) for csv and json.
func writeSummary(w io.Writer, kind string, pts []sweep.PointData, human func() (report.Table, error), format string, columns []string) error {
	var t report.Table
	var err error
	switch format {
	case "json":
		if len(columns) > 0 {
			return usageError{errors.New("--columns applies to the table, markdown and csv formats")}
		}
		return report.NewGrid(kind, pts).WriteJSON(w)
	case "csv":
		t = report.NewGrid(kind, pts).Table()
		if len(columns) > 0 {
			t, err = t.Pick(columns)
		}
	default:
		t, err = human()
		if format == "table" {
			format = "text"
		}
	}
	var nc *report.NoColumnError
	if errors.As(err, &nc) {
		return usageError{err}
	} else if err != nil {
		return err
	}
	return t.Write(w, format)
}

// sweepTable prints one row per point of a sweep folder: each figure's mean
// and its 95% confidence interval over the seeds.
func sweepTable(w io.Writer, dir, format string, columns []string) error {
	plan, err := sweep.ReadPlan(dir)
	if err != nil {
		return err
	}
	pts, err := sweep.LoadRunsEach(context.Background(), dir, plan, nil) // a table of summaries: no series read
	if err != nil {
		return err
	}
	if format == "text" { // the sweep command's printout
		format = "table"
	}
	return writeSummary(w, "sweep", pts, func() (report.Table, error) { return report.SweepTable(pts, columns) }, format, columns)
}

func summarizeRun(_ context.Context, e *env, o *summarizeOptions) error {
	w, dirs, format, columns := e.stdout, o.dirs, o.format, o.columns
	if len(dirs) == 1 {
		if _, err := os.Stat(filepath.Join(dirs[0], rundir.SweepFile)); err == nil {
			return sweepTable(w, dirs[0], format, columns)
		}
	}
	if len(columns) > 0 && (format == "markdown" || format == "table") {
		return usageError{errors.New("--columns applies to one sweep folder (or to --format csv)")}
	}
	var docs []*rundir.SummaryDoc
	for _, d := range dirs {
		doc, err := rundir.ReadSummary(d)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	labels := report.RunLabels(dirs, docs)
	pts := make([]sweep.PointData, len(docs))
	for i, d := range docs {
		pts[i] = sweep.PointData{Label: labels[i], Runs: []sweep.RunData{{Doc: d}}}
	}
	return writeSummary(w, "runs", pts, func() (report.Table, error) { return report.RunsTable(dirs, docs), nil }, format, columns)
}
