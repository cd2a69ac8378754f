package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Band is a per-interval series across replications: the mean and the
// spread (min and max over the replications).
type Band struct{ Mean, Lo, Hi []float64 }

// ComparePoint is one variant of a comparison.
type ComparePoint struct {
	Label    string
	Received Band // attempts received by the backend per second
	Drops    Band // % of application requests dropped locally
	Goodput  Band // successful requests per second
}

// Estimate is one point's value of a summary figure: the mean over the N
// replications where it is defined, with its 95% confidence interval (NaN
// when N < 2), and Missing replications where it is not (e.g. runs that did
// not recover).
type Estimate struct {
	Mean, Lo, Hi float64
	N, Missing   int
}

// Figure is a chart of one summary figure across the points.
type Figure struct {
	File, Title, YLabel string
	// MissingText describes a replication without a value ("did not
	// recover").
	MissingText string
	Values      []Estimate // one per point
}

// CompareInput is what the comparison charts need.
type CompareInput struct {
	Name     string // the sweep or comparison
	Varied   string // what differs between the points, for the legend title
	XLabel   string // the summary charts' x axis when Varied is empty (default "run")
	Seeds    int
	Interval int64
	Faults   []Fault
	Capacity float64 // nominal requests per second
	Points   []ComparePoint
	Figures  []Figure
}

// Palette gives point i its colour and dash pattern, the same in every
// chart: the Okabe–Ito colours, then the same colours dashed.
func Palette(i int) (color.Color, []vg.Length) {
	cs := []color.Color{Blue, Vermillion, Green, Orange, Purple, Sky, Black}
	var dashes []vg.Length
	if i/len(cs)%2 == 1 {
		dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return cs[i%len(cs)], dashes
}

// Compare renders compare_server_load.png, compare_local_drops.png,
// compare_goodput.png and one chart per Figure.
func Compare(in CompareInput) ([]Chart, error) {
	var out []Chart
	spread := ""
	if in.Seeds > 1 {
		spread = fmt.Sprintf(" (mean of %d seeds; band: min–max)", in.Seeds)
	}
	for _, c := range []struct {
		file, title, ylabel string
		band                func(p ComparePoint) Band
		capacity            bool
	}{
		{"compare_server_load.png", "load on the backend" + spread, "attempts received per second", func(p ComparePoint) Band { return p.Received }, true},
		{"compare_local_drops.png", "requests dropped locally" + spread, "% of application requests", func(p ComparePoint) Band { return p.Drops }, false},
		{"compare_goodput.png", "goodput" + spread, "successful requests per second", func(p ComparePoint) Band { return p.Goodput }, false},
	} {
		p, l, err := bandChart(in, in.Name+": "+c.title, c.ylabel, c.band, c.capacity)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		b, err := Render(p, l)
		if err != nil {
			return nil, err
		}
		out = append(out, Chart{File: c.file, PNG: b})
	}
	for _, f := range in.Figures {
		p, err := figureChart(in, f)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", f.File, err)
		}
		b, err := Render(p, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, Chart{File: f.File, PNG: b})
	}
	return out, nil
}

func bandChart(in CompareInput, title, ylabel string, get func(ComparePoint) Band, capacity bool) (*plot.Plot, *plot.Legend, error) {
	p := NewPlot(title, "simulated time (s)", ylabel)
	var ymax float64
	for _, pt := range in.Points {
		for _, v := range get(pt).Hi {
			if !math.IsNaN(v) {
				ymax = max(ymax, v)
			}
		}
	}
	if capacity {
		ymax = max(ymax, in.Capacity)
	}
	ymax = niceMax(ymax)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if in.Varied != "" {
		l.Add(in.Varied + ":")
	}
	sec := float64(in.Interval) / 1e9
	for i, pt := range in.Points {
		b := get(pt)
		c, dashes := Palette(i)
		n := len(b.Mean)
		if n == 0 {
			continue
		}
		// The spread as one translucent polygon ring: upper edge left to
		// right, lower edge right to left.
		if len(b.Lo) == n && len(b.Hi) == n && in.Seeds > 1 {
			ring := make(plotter.XYs, 0, 4*n)
			for j := 0; j < n; j++ {
				x0, x1 := float64(j)*sec, float64(j+1)*sec
				ring = append(ring, plotter.XY{X: x0, Y: zeroNaN(b.Hi[j])}, plotter.XY{X: x1, Y: zeroNaN(b.Hi[j])})
			}
			for j := n - 1; j >= 0; j-- {
				x0, x1 := float64(j)*sec, float64(j+1)*sec
				ring = append(ring, plotter.XY{X: x1, Y: zeroNaN(b.Lo[j])}, plotter.XY{X: x0, Y: zeroNaN(b.Lo[j])})
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, nil, err
			}
			r, g, bl, _ := c.RGBA()
			poly.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0x30}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		pts := make(plotter.XYs, 0, n+1)
		for j, v := range b.Mean {
			pts = append(pts, plotter.XY{X: float64(j) * sec, Y: zeroNaN(v)})
		}
		pts = append(pts, plotter.XY{X: float64(n) * sec, Y: pts[n-1].Y})
		ln, err := plotter.NewLine(pts)
		if err != nil {
			return nil, nil, err
		}
		ln.StepStyle = plotter.PostStep
		ln.Color, ln.Dashes, ln.Width = c, dashes, vg.Points(1.4)
		p.Add(ln)
		l.Add(shorten(pt.Label), ln)
	}
	if capacity && in.Capacity > 0 && len(in.Points) > 0 {
		end := float64(len(in.Points[0].Received.Mean)) * sec
		cl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: in.Capacity}, {X: end, Y: in.Capacity}})
		if err != nil {
			return nil, nil, err
		}
		cl.Color, cl.Dashes = Black, []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(cl)
		l.Add("nominal capacity", cl)
	}
	SetYRange(p, ymax)
	return p, l, nil
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// estimates implements plotter.XYer and plotter.YErrorer over the points
// that have a confidence interval.
type estimates struct {
	xy  plotter.XYs
	err plotter.YErrors
}

func (e estimates) Len() int                        { return len(e.xy) }
func (e estimates) XY(i int) (float64, float64)     { return e.xy[i].X, e.xy[i].Y }
func (e estimates) YError(i int) (float64, float64) { return e.err[i].Low, e.err[i].High }
func (e *estimates) add(x, y, lo, hi float64) {
	e.xy = append(e.xy, plotter.XY{X: x, Y: y})
	e.err = append(e.err, struct{ Low, High float64 }{y - lo, hi - y})
}
func (e estimates) empty() bool { return len(e.xy) == 0 }
func labelsAt(xs []float64, ys []float64, ls []string) plotter.XYLabels {
	var out plotter.XYLabels
	for i := range xs {
		out.XYs = append(out.XYs, plotter.XY{X: xs[i], Y: ys[i]})
		out.Labels = append(out.Labels, ls[i])
	}
	return out
}

func figureChart(in CompareInput, f Figure) (*plot.Plot, error) {
	title := in.Name + ": " + f.Title
	if in.Seeds > 1 {
		title += fmt.Sprintf(" (mean of %d seeds, 95%% CI)", in.Seeds)
	}
	p := NewPlot(title, in.Varied, f.YLabel)
	if in.Varied == "" {
		p.X.Label.Text = "run"
		if in.XLabel != "" {
			p.X.Label.Text = in.XLabel
		}
	}
	var ymax float64
	for _, v := range f.Values {
		for _, x := range []float64{v.Mean, v.Hi} {
			if !math.IsNaN(x) {
				ymax = max(ymax, x)
			}
		}
	}
	ymax = niceMax(ymax)
	var ci estimates
	var noteX, noteY []float64
	var notes []string
	names := make([]string, len(in.Points))
	for i, v := range f.Values {
		names[i] = in.Points[i].Label
		x := float64(i)
		c, _ := Palette(i)
		if v.N > 0 {
			sc, err := plotter.NewScatter(plotter.XYs{{X: x, Y: v.Mean}})
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = c
			sc.GlyphStyle.Radius = vg.Points(4)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			if !math.IsNaN(v.Lo) {
				ci.add(x, v.Mean, v.Lo, v.Hi)
			}
		}
		if v.Missing > 0 {
			y := ymax * 0.93
			if v.N > 0 && !math.IsNaN(v.Hi) {
				y = min(max(v.Hi, v.Mean)+ymax*0.06, ymax*0.97)
			}
			text := f.MissingText
			if v.N > 0 {
				text = fmt.Sprintf("%d of %d %s", v.Missing, v.N+v.Missing, f.MissingText)
			} else if v.Missing > 1 {
				text = fmt.Sprintf("all %d %s", v.Missing, f.MissingText)
			}
			noteX, noteY, notes = append(noteX, x), append(noteY, y), append(notes, text)
		}
	}
	if !ci.empty() {
		eb, err := plotter.NewYErrorBars(ci)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Width = vg.Points(1.2)
		eb.CapWidth = vg.Points(8)
		p.Add(eb)
	}
	if len(notes) > 0 {
		lb, err := plotter.NewLabels(labelsAt(noteX, noteY, notes))
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = Vermillion
			lb.TextStyle[i].XAlign = -0.5
			lb.TextStyle[i].Font.Size = vg.Points(9)
		}
		p.Add(lb)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	SetYRange(p, ymax)
	return p, nil
}

// shorten keeps legend entries from eating the chart: at most 48
// characters, the end elided (sweep.csv has the full labels).
func shorten(s string) string {
	r := []rune(s)
	if len(r) <= 48 {
		return s
	}
	return string(r[:47]) + "…"
}
