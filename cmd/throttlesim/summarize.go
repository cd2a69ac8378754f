package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/report"
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
	t, err := report.SweepTable(pts, columns)
	var nc *report.NoColumnError
	if errors.As(err, &nc) {
		return usageError{err}
	} else if err != nil {
		return err
	}
	return t.Write(w, format)
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
	var docs []*sim.SummaryDoc
	for _, d := range dirs {
		doc, err := sim.ReadSummary(d)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	return report.RunsTable(dirs, docs).Write(w, format)
}
