package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// ContentionCell is one client count and strategy of the contention
// experiment (`throttlesim contention`): the server write calls and the
// completion time over its runs.
type ContentionCell struct {
	Clients      int
	Strategy     string
	Runs         int
	Writes       sweep.Stat
	CompletionMS sweep.Stat
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// halfWidth is the 95% interval's half-width, empty when one run gives no
// interval.
func halfWidth(st sweep.Stat) string {
	if math.IsNaN(st.Hi) {
		return ""
	}
	return f2(st.Hi - st.Mean)
}

// ContentionCSV is contention.csv: one row per cell, means and 95%
// half-widths with two decimals.
func ContentionCSV(cells []ContentionCell) ([]byte, error) {
	recs := [][]string{{"clients", "strategy", "runs", "writes_mean", "writes_ci95", "completion_ms_mean", "completion_ms_ci95"}}
	for _, c := range cells {
		recs = append(recs, []string{strconv.Itoa(c.Clients), c.Strategy, strconv.Itoa(c.Runs),
			f2(c.Writes.Mean), halfWidth(c.Writes), f2(c.CompletionMS.Mean), halfWidth(c.CompletionMS)})
	}
	return writeCSV(recs)
}

// ContentionMarkdown is contention.md: one row per client count (in the
// order of cells), one column per strategy, each "W writes, T s".
func ContentionMarkdown(strategies []string, cells []ContentionCell) []byte {
	var md bytes.Buffer
	md.WriteString("| clients | " + strings.Join(strategies, " | ") + " |\n|---|" + strings.Repeat("---|", len(strategies)) + "\n")
	for i := 0; i < len(cells); i += len(strategies) {
		row := make([]string, 0, len(strategies))
		for _, c := range cells[i:min(i+len(strategies), len(cells))] {
			row = append(row, fmt.Sprintf("%.0f writes, %.2f s", c.Writes.Mean, c.CompletionMS.Mean/1000))
		}
		fmt.Fprintf(&md, "| %d | %s |\n", cells[i].Clients, strings.Join(row, " | "))
	}
	return md.Bytes()
}

// ContentionSeries are the chart inputs of plots.Contention: per strategy,
// the write calls and the completion time (s) against the client count,
// with their 95% half-widths.
func ContentionSeries(strategies []string, cells []ContentionCell) (writes, times []plots.ContentionSeries) {
	writes = make([]plots.ContentionSeries, len(strategies))
	times = make([]plots.ContentionSeries, len(strategies))
	for i, s := range strategies {
		writes[i].Name, times[i].Name = s, s
	}
	for j, c := range cells {
		i := j % len(strategies)
		writes[i].Add(float64(c.Clients), c.Writes.Mean, c.Writes.Hi-c.Writes.Mean)
		times[i].Add(float64(c.Clients), c.CompletionMS.Mean/1000, (c.CompletionMS.Hi-c.CompletionMS.Mean)/1000)
	}
	return writes, times
}
