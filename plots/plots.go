package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// Fault is a shaded window on the time axis.
type Fault struct {
	Start, End int64 // ns
	Label      string
	Outage     bool // the backend is down (refusing costs it nothing)
}

// Input is what the run charts need.
type Input struct {
	Name        string
	Series      *metrics.Series
	Faults      []Fault
	CapacityRPS float64 // nominal
	Workers     int     // nominal
	Summary     metrics.Summary
	// Clients and ConnectCapacityRPS (workers / connect_cost) are set when
	// the scenario has persistent connections; All then adds
	// connections.png.
	Clients            int
	ConnectCapacityRPS float64
	// RecoveryWindow is the sliding window of the recovery rule, ns.
	RecoveryWindow  int64
	RecoverFraction float64
	StayFraction    float64
	// Contention: the backend is one versioned row (backend.kind occ),
	// with no capacity; server_load.png shows its writes.
	Contention bool
}

// Chart is one rendered file.
type Chart struct {
	File string
	PNG  []byte
}

// Size of every chart.
const (
	Width  = 25 * vg.Centimeter
	Height = 13 * vg.Centimeter
	DPI    = 110
)

// Okabe–Ito colours: distinguishable with the common colour-vision
// deficiencies.
var (
	Blue       = color.NRGBA{0x00, 0x72, 0xB2, 0xff}
	Orange     = color.NRGBA{0xE6, 0x9F, 0x00, 0xff}
	Vermillion = color.NRGBA{0xD5, 0x5E, 0x00, 0xff}
	Green      = color.NRGBA{0x00, 0x9E, 0x73, 0xff}
	Sky        = color.NRGBA{0x56, 0xB4, 0xE9, 0xff}
	Purple     = color.NRGBA{0xCC, 0x79, 0xA7, 0xff}
	Black      = color.NRGBA{0x00, 0x00, 0x00, 0xff}
	Grey       = color.NRGBA{0x70, 0x70, 0x70, 0xff}
	faultFill  = color.NRGBA{0xD5, 0x5E, 0x00, 0x30}
)

// All renders every run chart.
func All(in Input) ([]Chart, error) {
	var out []Chart
	for _, c := range []struct {
		file string
		f    func(Input) (*plot.Plot, *plot.Legend, error)
	}{
		{"server_load.png", serverLoad},
		{"local_drops.png", localDrops},
		{"recovery.png", recoveryChart},
	} {
		p, l, err := c.f(in)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		b, err := Render(p, l)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		out = append(out, Chart{File: c.file, PNG: b})
	}
	if in.Clients > 0 {
		b, err := Connections(in, in.Clients)
		if err != nil {
			return nil, fmt.Errorf("plots: connections.png: %w", err)
		}
		out = append(out, Chart{File: "connections.png", PNG: b})
	}
	return out, nil
}

// Render draws the plot with its legend to the right of the data and
// returns PNG bytes.
func Render(p *plot.Plot, l *plot.Legend) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
	dc := draw.New(img)
	dc = draw.Crop(dc, vg.Millimeter, -2*vg.Millimeter, vg.Millimeter, -vg.Millimeter)
	if l != nil {
		l.Top = true
		l.YOffs = -p.Title.TextStyle.FontExtents().Height - 3*vg.Millimeter
		r := l.Rectangle(dc)
		l.Draw(dc)
		dc = draw.Crop(dc, 0, -(r.Max.X-r.Min.X)-4*vg.Millimeter, 0, 0)
	}
	p.Draw(dc)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// NewPlot is a plot with our title and axis styling.
func NewPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = 3 * vg.Millimeter
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Tick.Marker = yTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// yTicks marks five to seven round values (steps of 1, 2, 2.5 or 5 times a
// power of ten) with as many decimals as the step needs, and four minor
// ticks between. gonum's default ticker sometimes labels only the two
// ends of an axis, with more decimals than the values have.
type yTicks struct{}

func (yTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := 0
	for decimals < 12 && math.Abs(step*math.Pow(10, float64(decimals))-math.Round(step*math.Pow(10, float64(decimals)))) > 1e-9 {
		decimals++
	}
	var ts []plot.Tick
	minor := step / 5
	for k, last := math.Ceil(lo/minor-1e-9), math.Floor(hi/minor+1e-9); k <= last; k++ {
		v := min(max(k*minor, lo), hi)
		if math.Abs(math.Round(v/step)*step-v) < minor*1e-6 {
			v = math.Round(v/step) * step
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// NewLegend is a legend in our text size.
func NewLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = vg.Points(10)
	l.Left = false
	l.Padding = vg.Millimeter
	return &l
}

// stepSeries is one step line of a chart and its legend entry.
type stepSeries struct {
	name   string
	c      color.Color
	dashes []vg.Length
	f      func(r *metrics.Row) float64
}

// addSteps adds each series to the plot and the legend.
func addSteps(p *plot.Plot, l *plot.Legend, s *metrics.Series, series []stepSeries) error {
	for _, sr := range series {
		ln, err := StepLine(s, sr.c, sr.dashes, sr.f)
		if err != nil {
			return err
		}
		p.Add(ln)
		l.Add(sr.name, ln)
	}
	return nil
}

// StepLine is a per-interval series drawn as steps from each interval's
// start to its end.
func StepLine(s *metrics.Series, c color.Color, dashes []vg.Length, value func(r *metrics.Row) float64) (*plotter.Line, error) {
	pts := make(plotter.XYs, 0, len(s.Rows)+1)
	for i := range s.Rows {
		v := value(&s.Rows[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		pts = append(pts, plotter.XY{X: float64(int64(i)*s.Interval) / 1e9, Y: v})
	}
	if n := len(pts); n > 0 {
		pts = append(pts, plotter.XY{X: float64(int64(n)*s.Interval) / 1e9, Y: pts[n-1].Y})
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = vg.Points(1.3)
	l.Dashes = dashes
	return l, nil
}

// Shade adds the fault windows as translucent boxes from y=0 to ymax, with
// their labels at the top. Call it before adding the data so the data draw
// on top, and fix the y range with SetYRange afterwards.
func Shade(p *plot.Plot, faults []Fault, ymax float64) error {
	var labels plotter.XYLabels
	for _, f := range faults {
		x0, x1 := float64(f.Start)/1e9, float64(f.End)/1e9
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color = faultFill
		poly.LineStyle.Width = 0
		p.Add(poly)
		labels.XYs = append(labels.XYs, plotter.XY{X: x0, Y: ymax})
		labels.Labels = append(labels.Labels, " "+f.Label)
	}
	if len(labels.XYs) > 0 {
		lb, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = Vermillion
			lb.TextStyle[i].YAlign = text.YTop
			lb.TextStyle[i].Font.Size = vg.Points(9)
		}
		p.Add(lb)
	}
	return nil
}

// SetYRange fixes the y axis to [0, ymax] (after every Add, which widens
// the axes to each plotter's range).
func SetYRange(p *plot.Plot, ymax float64) {
	p.Y.Min, p.Y.Max = 0, ymax
}

func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) {
		return 1
	}
	return v * 1.12
}

func perSecond(s *metrics.Series) float64 { return float64(s.Interval) / 1e9 }

func serverLoad(in Input) (*plot.Plot, *plot.Legend, error) {
	if in.Contention {
		return contentionLoad(in)
	}
	s := in.Series
	sec := perSecond(s)
	capPerWorker := in.CapacityRPS / float64(max(in.Workers, 1))
	var ymax float64
	for _, r := range s.Rows {
		ymax = max(ymax, float64(r.Received)/sec, float64(r.FailedOutage)/sec, float64(r.CapacityNS)/float64(s.Interval)*capPerWorker, float64(r.ConnectsRcvd)/sec)
	}
	ymax = niceMax(ymax)
	ylabel := "attempts per second"
	if in.Clients > 0 {
		ylabel = "attempts and handshakes per second"
	}
	p := NewPlot(in.Name+": load on the backend", "simulated time (s)", ylabel)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	series := []stepSeries{
		{"received", Blue, nil, func(r *metrics.Row) float64 { return float64(r.Received) / sec }},
		{"accepted", Green, nil, func(r *metrics.Row) float64 { return float64(r.Accepted) / sec }},
		{"rejected (overload)", Vermillion, nil, func(r *metrics.Row) float64 { return float64(r.Rejected+r.QueueTimeouts) / sec }},
		{"sent into the outage", Purple, []vg.Length{vg.Points(2), vg.Points(2)}, func(r *metrics.Row) float64 { return float64(r.FailedOutage) / sec }},
		{"capacity", Black, []vg.Length{vg.Points(6), vg.Points(3)}, func(r *metrics.Row) float64 {
			return float64(r.CapacityNS) / float64(s.Interval) * capPerWorker
		}},
	}
	if in.Clients > 0 { // persistent connections: handshakes are load too
		hs := stepSeries{"handshakes received", Orange, []vg.Length{vg.Points(4), vg.Points(2)}, func(r *metrics.Row) float64 { return float64(r.ConnectsRcvd) / sec }}
		series = append(series[:4:4], append([]stepSeries{hs}, series[4:]...)...)
	}
	if err := addSteps(p, l, s, series); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

// contentionLoad is server_load.png for the occ backend: write calls,
// split into those that succeeded and those refused for a stale version.
func contentionLoad(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	sec := perSecond(s)
	var ymax float64
	for _, r := range s.Rows {
		ymax = max(ymax, float64(r.Received)/sec, float64(r.FailedOutage)/sec)
	}
	ymax = niceMax(ymax)
	p := NewPlot(in.Name+": writes to the row", "simulated time (s)", "write calls per second")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	series := []stepSeries{
		{"write calls", Blue, nil, func(r *metrics.Row) float64 { return float64(r.Received) / sec }},
		{"refused: stale version", Vermillion, nil, func(r *metrics.Row) float64 { return float64(r.Errors) / sec }},
		{"succeeded", Green, []vg.Length{vg.Points(4), vg.Points(2)}, func(r *metrics.Row) float64 { return float64(r.Received-r.Errors) / sec }},
	}
	if len(in.Faults) > 0 {
		series = append(series, stepSeries{"sent into the outage", Purple, []vg.Length{vg.Points(2), vg.Points(2)}, func(r *metrics.Row) float64 { return float64(r.FailedOutage) / sec }})
	}
	if err := addSteps(p, l, s, series); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

func localDrops(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	frac := func(num func(r *metrics.Row) int64) func(r *metrics.Row) float64 {
		return func(r *metrics.Row) float64 {
			if r.Offered == 0 {
				return 0
			}
			return 100 * float64(num(r)) / float64(r.Offered)
		}
	}
	p := NewPlot(in.Name+": requests dropped or failed at the client", "simulated time (s)", "% of application requests")
	var ymax float64
	for _, r := range s.Rows {
		if r.Offered > 0 {
			ymax = max(ymax, 100*float64(r.DropThrottle)/float64(r.Offered), 100*float64(r.DropNoConn)/float64(r.Offered),
				100*float64(r.DropBreaker)/float64(r.Offered), 100*float64(r.Failed)/float64(r.Offered))
		}
	}
	ymax = min(max(niceMax(ymax), 5), 105)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if err := addSteps(p, l, s, []stepSeries{
		{"dropped locally: throttle", Blue, nil, frac(func(r *metrics.Row) int64 { return r.DropThrottle })},
		{"dropped locally: circuit breaker", Purple, nil, frac(func(r *metrics.Row) int64 { return r.DropBreaker })},
		{"dropped locally: no connection", Orange, nil, frac(func(r *metrics.Row) int64 { return r.DropNoConn })},
		{"failed after last attempt", Grey, []vg.Length{vg.Points(3), vg.Points(2)}, frac(func(r *metrics.Row) int64 { return r.Failed })},
	}); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

func recoveryChart(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	g := s.Goodput()
	rec := in.Summary.Recovery
	title := in.Name + ": goodput and recovery"
	switch {
	case !rec.Applicable:
		title += " (no fault)"
	case rec.Recovered:
		title += fmt.Sprintf(": recovered %.0f s after the fault", *rec.RecoveryTimeS)
	default:
		title += ": did not recover"
	}
	p := NewPlot(title, "simulated time (s)", "successful requests per second")
	ymax := 0.0
	for _, x := range g {
		ymax = max(ymax, x)
	}
	base := 0.0
	if rec.BaselineGoodput != nil {
		base = *rec.BaselineGoodput
		ymax = max(ymax, base)
	}
	ymax = niceMax(ymax)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	ln, err := StepLine(s, Sky, nil, func(r *metrics.Row) float64 { return float64(r.Succeeded) / perSecond(s) })
	if err != nil {
		return nil, nil, err
	}
	p.Add(ln)
	l.Add("goodput per interval", ln)
	// Sliding-window goodput, as the recovery rule sees it.
	w := int(in.RecoveryWindow / s.Interval)
	if w >= 1 && len(g) >= w {
		pts := make(plotter.XYs, 0, len(g))
		var acc float64
		for j := range g {
			acc += g[j]
			if j >= w {
				acc -= g[j-w]
			}
			if j >= w-1 {
				pts = append(pts, plotter.XY{X: float64(int64(j+1)*s.Interval) / 1e9, Y: acc / float64(w)})
			}
		}
		wl, err := plotter.NewLine(pts)
		if err != nil {
			return nil, nil, err
		}
		wl.Color, wl.Width = Blue, vg.Points(2)
		p.Add(wl)
		l.Add(fmt.Sprintf("goodput, %g s sliding mean", float64(in.RecoveryWindow)/1e9), wl)
	}
	if base > 0 {
		end := float64(int64(len(s.Rows))*s.Interval) / 1e9
		for _, h := range []struct {
			frac   float64
			name   string
			c      color.Color
			dashes []vg.Length
		}{
			{1, "pre-fault baseline", Black, nil},
			{in.RecoverFraction, fmt.Sprintf("%.0f%% of baseline: recovered", 100*in.RecoverFraction), Green, []vg.Length{vg.Points(6), vg.Points(3)}},
			{in.StayFraction, fmt.Sprintf("%.0f%% of baseline: must stay above", 100*in.StayFraction), Orange, []vg.Length{vg.Points(2), vg.Points(2)}},
		} {
			hl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: h.frac * base}, {X: end, Y: h.frac * base}})
			if err != nil {
				return nil, nil, err
			}
			hl.Color, hl.Dashes, hl.Width = h.c, h.dashes, vg.Points(1)
			p.Add(hl)
			l.Add(h.name, hl)
		}
	}
	if rec.Recovered {
		x := *rec.RecoveredAtS
		vl, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
		if err != nil {
			return nil, nil, err
		}
		vl.Color, vl.Width = Green, vg.Points(2)
		p.Add(vl)
		l.Add(fmt.Sprintf("recovered at %.0f s (+%.0f s)", x, *rec.RecoveryTimeS), vl)
	} else if rec.Applicable {
		x := 0.0
		if rec.FaultEndS != nil {
			x = *rec.FaultEndS
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    []plotter.XY{{X: x, Y: ymax * 0.5}},
			Labels: []string{"  did not recover"},
		})
		if err != nil {
			return nil, nil, err
		}
		lb.TextStyle[0].Color = Vermillion
		lb.TextStyle[0].Font.Size = vg.Points(11)
		p.Add(lb)
	}
	SetYRange(p, ymax)
	return p, l, nil
}
