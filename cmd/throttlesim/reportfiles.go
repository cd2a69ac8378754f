package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
)

// writeComparison writes a sweep's or comparison's tables, charts and
// report.html into dir (a folder that replaces the results folder once
// complete).
func writeComparison(ctx context.Context, dir, kind string, c report.Comparison, vs []report.PointVerdicts, scen []report.Text, facts []report.Fact) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	files, charts, err := c.FilesAndCharts(plots.Compare)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the charts take the longest
		return err
	}
	page, err := report.ComparisonPage(kind, c, vs, charts, scen, facts)
	if err != nil {
		return err
	}
	html, err := report.HTML(page)
	if err != nil {
		return err
	}
	files[rundir.ReportFile] = html
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := resultdir.WriteFile(filepath.Join(dir, n), files[n]); err != nil {
			return err
		}
	}
	return nil
}

// printBaseline prints each run's figures against the baseline's, as
// hyperfine prints "× faster": the ratio of the two and the difference.
func printBaseline(w io.Writer, rows []report.PairedRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "against the baseline %s:\n", rows[0].Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	dash := func(p *float64, prefix string) string {
		if p == nil {
			return "–"
		}
		return prefix + report.Num(*p)
	}
	point := ""
	for _, r := range rows {
		if r.Point != point {
			point = r.Point
			fmt.Fprintf(tw, "  %s\tbaseline\tthis run\tratio\tdifference\t\n", point)
		}
		diff := dash(r.Diff.Mean, "")
		if r.Diff.Mean != nil && *r.Diff.Mean > 0 {
			diff = "+" + diff
		}
		base, this := dash(r.BaseMean, ""), dash(r.Mean, "")
		if m, ok := report.MetricByName(r.Metric); ok && m.Missing != "" { // "did not recover"
			if r.BaseMean == nil {
				base = m.Missing
			}
			if r.Mean == nil {
				this = m.Missing
			}
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\n", r.Metric, base, this, dash(r.Ratio, "× "), diff, r.Verdict())
	}
	tw.Flush()
}
