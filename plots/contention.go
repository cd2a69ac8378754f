package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ContentionSeries is one backoff strategy of the contention experiment:
// a mean and a 95% half-width per client count.
type ContentionSeries struct {
	Name    string
	Clients []float64
	Mean    []float64
	CI      []float64
}

// Add appends the point at n clients; a NaN half-width (one run) draws no
// error bar.
func (s *ContentionSeries) Add(n, mean, halfWidth float64) {
	if math.IsNaN(halfWidth) {
		halfWidth = 0
	}
	s.Clients, s.Mean, s.CI = append(s.Clients, n), append(s.Mean, mean), append(s.CI, halfWidth)
}

// Contention renders one chart of the contention experiment (sim/occ):
// one line per strategy against the number of clients, with error bars.
func Contention(title, ylabel string, series []ContentionSeries) ([]byte, error) {
	p := NewPlot(title, "contending clients", ylabel)
	l := NewLegend()
	ymax := 0.0
	for i, s := range series {
		c, dashes := Palette(i)
		var e estimates
		for j := range s.Clients {
			e.add(s.Clients[j], s.Mean[j], s.Mean[j]-s.CI[j], s.Mean[j]+s.CI[j])
			ymax = max(ymax, s.Mean[j]+s.CI[j])
		}
		ln, pts, err := plotter.NewLinePoints(e)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", s.Name, err)
		}
		ln.Color, ln.Dashes, ln.Width = c, dashes, vg.Points(1.5)
		pts.Color = c
		pts.Radius = vg.Points(2)
		bars, err := plotter.NewYErrorBars(e)
		if err != nil {
			return nil, err
		}
		bars.Color = c
		p.Add(ln, pts, bars)
		l.Add(s.Name, ln)
	}
	p.X.Min = 0
	SetYRange(p, ymax)
	return Render(p, l)
}
