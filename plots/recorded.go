package plots

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// RecordedPanel is one series of a recorded window against simulations of
// it, per step: the recorded values, and the simulations' mean and range
// (NaN: nothing there).
type RecordedPanel struct {
	Title, YLabel  string
	Recorded       []float64
	Mean, Lo, High []float64
}

// RecordedInput is what the recorded-vs-simulated chart needs.
type RecordedInput struct {
	Title  string // says what happened, e.g. the fit's verdict
	StepS  float64
	Seeds  int
	Faults []Fault // shaded on every panel
	Panels []RecordedPanel
}

// Recorded draws the panels stacked on one time axis (seconds from the
// window's start; each value at the middle of its step): the recorded
// series as a black line with dots, the simulations' mean as a blue line
// and their range as a blue band.
func Recorded(in RecordedInput) ([]byte, error) {
	var ps []*plot.Plot
	var ls []*plot.Legend
	for i, pn := range in.Panels {
		title := pn.Title
		if i == 0 && in.Title != "" {
			title = in.Title + "\n" + pn.Title
		}
		p := NewPlot(title, "", pn.YLabel)
		if i == len(in.Panels)-1 {
			p.X.Label.Text = "seconds from the window's start"
		}
		p.Title.TextStyle.Font.Size = vg.Points(11)
		ymax := 0.0
		for _, xs := range [][]float64{pn.Recorded, pn.High, pn.Mean} {
			for _, v := range xs {
				if !math.IsNaN(v) {
					ymax = max(ymax, v)
				}
			}
		}
		if ymax <= 0 {
			ymax = 1
		}
		ymax *= 1.1
		p.Y.Min, p.Y.Max = 0, ymax
		p.X.Min, p.X.Max = 0, float64(len(pn.Recorded))*in.StepS
		fs := in.Faults
		if i > 0 { // labels on the first panel only
			fs = nil
			for _, f := range in.Faults {
				f.Label = ""
				fs = append(fs, f)
			}
		}
		if err := Shade(p, fs, ymax); err != nil {
			return nil, err
		}
		l := plot.NewLegend()
		band := translucent(Blue, 60)
		for _, seg := range runs(pn.Lo, pn.High, in.StepS) {
			poly, err := plotter.NewPolygon(seg)
			if err != nil {
				return nil, err
			}
			poly.Color = band
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		sim, err := lines(pn.Mean, in.StepS)
		if err != nil {
			return nil, err
		}
		for _, ln := range sim {
			ln.Color = Blue
			ln.Width = vg.Points(1.8)
			p.Add(ln)
		}
		rec, err := lines(pn.Recorded, in.StepS)
		if err != nil {
			return nil, err
		}
		for _, ln := range rec {
			ln.Color = Black
			ln.Width = vg.Points(1.2)
			p.Add(ln)
		}
		pts, err := plotter.NewScatter(points(pn.Recorded, in.StepS))
		if err != nil {
			return nil, err
		}
		pts.GlyphStyle.Color = Black
		pts.GlyphStyle.Shape = draw.CircleGlyph{}
		pts.GlyphStyle.Radius = vg.Points(2)
		p.Add(pts)
		if i == 0 {
			l.Add("recorded (Prometheus)", rec0(rec), pts)
			sw := &plotter.Polygon{Color: band}
			l.Add("simulated: mean of seeds", sim0(sim))
			l.Add("simulated: range of seeds", sw)
			if len(in.Faults) > 0 {
				l.Add("fault (fitted)", &plotter.Polygon{Color: faultFill})
			}
		}
		ps = append(ps, p)
		if i == 0 {
			ls = append(ls, &l)
		} else {
			ls = append(ls, nil)
		}
	}
	return RenderStack(ps, ls, vg.Length(len(in.Panels))*5.5*vg.Centimeter)
}

func rec0(ls []*plotter.Line) plot.Thumbnailer {
	if len(ls) > 0 {
		return ls[0]
	}
	return &plotter.Line{LineStyle: draw.LineStyle{Color: Black, Width: vg.Points(1.2)}}
}

func sim0(ls []*plotter.Line) plot.Thumbnailer {
	if len(ls) > 0 {
		return ls[0]
	}
	return &plotter.Line{LineStyle: draw.LineStyle{Color: Blue, Width: vg.Points(1.8)}}
}

// points are the finite values at their steps' middles.
func points(v []float64, step float64) plotter.XYs {
	var xy plotter.XYs
	for k, y := range v {
		if !math.IsNaN(y) {
			xy = append(xy, plotter.XY{X: (float64(k) + 0.5) * step, Y: y})
		}
	}
	return xy
}

// lines are the runs of finite values, one line each.
func lines(v []float64, step float64) ([]*plotter.Line, error) {
	var out []*plotter.Line
	var cur plotter.XYs
	flush := func() error {
		if len(cur) > 0 {
			l, err := plotter.NewLine(cur)
			if err != nil {
				return err
			}
			out = append(out, l)
		}
		cur = nil
		return nil
	}
	for k, y := range v {
		if math.IsNaN(y) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, plotter.XY{X: (float64(k) + 0.5) * step, Y: y})
	}
	return out, flush()
}

// runs are the band's polygons over runs of finite values.
func runs(lo, hi []float64, step float64) []plotter.XYs {
	var out []plotter.XYs
	k := 0
	for k < len(lo) {
		if math.IsNaN(lo[k]) || math.IsNaN(hi[k]) {
			k++
			continue
		}
		j := k
		for j < len(lo) && !math.IsNaN(lo[j]) && !math.IsNaN(hi[j]) {
			j++
		}
		var poly plotter.XYs
		for i := k; i < j; i++ {
			poly = append(poly, plotter.XY{X: (float64(i) + 0.5) * step, Y: hi[i]})
		}
		for i := j - 1; i >= k; i-- {
			poly = append(poly, plotter.XY{X: (float64(i) + 0.5) * step, Y: lo[i]})
		}
		if j-k == 1 { // one step: a thin sliver, visible
			poly = plotter.XYs{{X: poly[0].X - step/4, Y: hi[k]}, {X: poly[0].X + step/4, Y: hi[k]}, {X: poly[0].X + step/4, Y: lo[k]}, {X: poly[0].X - step/4, Y: lo[k]}}
		}
		out = append(out, poly)
		k = j
	}
	return out
}
