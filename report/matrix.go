package report

import (
	"strings"
)

// Matrix is the points against the baseline in one table: a row per
// metric, a column per point (the baseline left out), each cell what
// changed, coloured by Verdict, its interval in small type and the whole
// comparison in its title (shown on hover).
type Matrix struct {
	Baseline string
	// First says the baseline is only the first run, no --baseline given.
	First  bool
	Points []string
	// Shown are Points as the page shows them (ShortLabels); nil: Points.
	Shown []string
	Rows  []MatrixRow
}

// MatrixRow is one metric of a Matrix.
type MatrixRow struct {
	Metric string
	Cells  []MatrixCell // one per point of Matrix.Points; Text "" where there is none
}

// MatrixCell is one point's change on one metric: a ratio (× 0.38) or,
// for a share, the difference in percentage points; CI is the interval
// of the paired differences ("" without one), Class "better", "worse",
// "same" or "".
type MatrixCell struct {
	Text, CI, Class, Title string
}

// NewMatrix arranges paired rows (Paired) as a Matrix. With differences
// (a sweep, whose rows have intervals) a cell shows the mean of the
// paired differences and their interval; else (compared runs, one each)
// the ratio of the two values, as hyperfine shows "× faster". A share is
// always its difference in percentage points.
func NewMatrix(rows []PairedRow, differences bool) *Matrix {
	if len(rows) == 0 {
		return nil
	}
	m := &Matrix{Baseline: rows[0].Baseline}
	col := map[string]int{}
	row := map[string]int{}
	for _, r := range rows {
		if _, ok := col[r.Point]; !ok {
			col[r.Point] = len(m.Points)
			m.Points = append(m.Points, r.Point)
		}
	}
	// The rows in the order of Metrics, whichever point has them.
	for _, mt := range Metrics {
		for _, r := range rows {
			if r.Metric == mt.Name {
				row[mt.Name] = len(m.Rows)
				m.Rows = append(m.Rows, MatrixRow{Metric: mt.Name, Cells: make([]MatrixCell, len(m.Points))})
				break
			}
		}
	}
	for _, r := range rows {
		m.Rows[row[r.Metric]].Cells[col[r.Point]] = r.cell(differences)
	}
	return m
}

// cell is the row's change as a matrix cell.
func (r PairedRow) cell(differences bool) MatrixCell {
	var c MatrixCell
	missing := "no value"
	if mt, ok := MetricByName(r.Metric); ok && mt.Missing != "" {
		missing = mt.Missing
	}
	base, this := missing, missing
	if r.BaseMean != nil {
		base = Show(r.Metric, *r.BaseMean)
	}
	if r.Mean != nil {
		this = Show(r.Metric, *r.Mean)
	}
	switch {
	case r.Mean == nil:
		c.Text = missing
	case (differences || percentMetric(r.Metric)) && r.Diff.Mean != nil:
		c.Text = ShowDiff(r.Metric, *r.Diff.Mean)
	case r.Ratio != nil:
		c.Text = "× " + Num(*r.Ratio)
	case r.Diff.Mean != nil:
		c.Text = ShowDiff(r.Metric, *r.Diff.Mean)
	default:
		c.Text = this
	}
	if r.Diff.Lo != nil && r.Diff.Hi != nil {
		c.CI = "[" + signed(r.Metric, *r.Diff.Lo) + ", " + signed(r.Metric, *r.Diff.Hi) + "]"
	}
	v := r.Verdict()
	switch v {
	case "better", "worse":
		c.Class = v
	case "same", "no clear difference":
		c.Class = "same"
	}
	// Not recovering is worse than recovering, however late.
	if r.Metric == "recovery_time_s" {
		switch {
		case r.Mean == nil && r.BaseMean != nil:
			c.Class, v = "worse", "worse"
		case r.Mean != nil && r.BaseMean == nil:
			c.Class, v, c.Text = "better", "better", "recovers: "+this+" s"
		}
	}
	var t strings.Builder
	t.WriteString(MetricLabel(r.Metric) + ": " + this + " against " + base + " for " + r.Baseline)
	if r.Ratio != nil {
		t.WriteString("; ratio × " + Num(*r.Ratio))
	}
	if r.Diff.Mean != nil {
		t.WriteString("; difference " + ShowDiff(r.Metric, *r.Diff.Mean))
		if c.CI != "" {
			t.WriteString(" " + c.CI + " (95% interval of the paired differences)")
		}
	}
	if v != "" {
		t.WriteString("; " + v)
	}
	c.Title = t.String()
	return c
}
