package report

import (
	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// Comparison is what a sweep or `throttlesim compare` reports on: points,
// each with its runs.
type Comparison struct {
	Name     string // titles the charts
	Varied   string // what differs between the points ("" for compare)
	Points   []sweep.PointData
	Baseline int  // index of the point the others are paired with; -1: none
	Paired   bool // replications share seeds (common random numbers)
	// NoFigures leaves out the charts of one figure per point
	// (compare_recovery.png and the like): for compared runs, one run
	// each, they repeat two numbers of the summary table.
	NoFigures bool
	// Bands, when set, are the charts' bands accumulated while the runs
	// were read (their series dropped); else they come from the runs'
	// series.
	Bands *Bands
}

// DrawFunc draws comparison charts; plots.Compare is one.
type DrawFunc func(plots.CompareInput) ([]plots.Chart, error)

// Files renders the comparison's files by name: sweep.csv, runs.csv,
// paired.csv (with a baseline and paired replications) and the charts
// that draw returns (none when draw is nil).
func (c Comparison) Files(draw DrawFunc) (map[string][]byte, error) {
	files, _, err := c.FilesAndCharts(draw)
	return files, err
}

// FilesAndCharts is Files and the page's charts (in ChartFiles's
// order): inline SVG, values on hover and series to hide, where draw
// made an SVG of a chart, else its PNG.
func (c Comparison) FilesAndCharts(draw DrawFunc) (map[string][]byte, []Chart, error) {
	files := map[string][]byte{}
	var err error
	if files["sweep.csv"], err = SweepCSV(c.Points); err != nil {
		return nil, nil, err
	}
	if files["runs.csv"], err = RunsCSV(c.Points); err != nil {
		return nil, nil, err
	}
	if c.Baseline >= 0 && c.Paired {
		if files["paired.csv"], err = PairedCSV(c.Points, c.Baseline); err != nil {
			return nil, nil, err
		}
	}
	var drawn []plots.Chart
	if draw != nil {
		bands := c.Bands
		if bands == nil {
			bands = bandsOf(c.Points)
		}
		in := CompareInputBands(c.Name, c.Varied, c.Points, bands)
		if c.NoFigures {
			in.Figures = nil
		}
		if drawn, err = draw(in); err != nil {
			return nil, nil, err
		}
		for _, ch := range drawn {
			files[ch.File] = ch.PNG
		}
	}
	charts := ChartFiles(files)
	for i, ch := range charts {
		for _, d := range drawn {
			if d.File == ch.File {
				charts[i].SVG, charts[i].Series = d.SVG, d.Series
			}
		}
	}
	return files, charts, nil
}
