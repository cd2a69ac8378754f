package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

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
	Name string
	// WallClock: the series is a live run's (throttlesim live), so the
	// time axis is wall time, not simulated time.
	WallClock bool
	Series    *metrics.Series
	Faults    []Fault
	// Service names the service Series and the capacity are of, in a
	// service graph (the entry service); "" with one backend.
	Service     string
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

// Chart is one rendered file. A chart of All has SVG too, for a page:
// its named series are groups a page can hide (Series, by number) and
// its values show on hover (RenderSVG).
type Chart struct {
	File   string
	PNG    []byte
	SVG    []byte
	Series []string
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

// All renders every run chart, as PNG and SVG.
func All(in Input) ([]Chart, error) {
	var out []Chart
	for _, c := range []struct {
		file string
		f    func(Input) ([]*plot.Plot, []*plot.Legend, error)
	}{
		{"server_load.png", serverLoadPanels},
		{"local_drops.png", panel(localDrops)},
		{"recovery.png", panel(recoveryChart)},
		{"latency.png", panel(latencyChart)},
	} {
		ps, ls, err := c.f(in)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		h := vg.Length(len(ps)) * Height
		b, err := RenderStack(ps, ls, h)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		x := "t"
		if in.WallClock {
			x = "wall time"
		}
		svg, names, err := RenderSVG(ps, ls, h, x, " s")
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		out = append(out, Chart{File: c.file, PNG: b, SVG: svg, Series: names})
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

func panel(f func(Input) (*plot.Plot, *plot.Legend, error)) func(Input) ([]*plot.Plot, []*plot.Legend, error) {
	return func(in Input) ([]*plot.Plot, []*plot.Legend, error) {
		p, l, err := f(in)
		if err != nil {
			return nil, nil, err
		}
		return []*plot.Plot{p}, []*plot.Legend{l}, nil
	}
}

// Layout shared by every chart, so that charts of one run (or of one
// comparison) stacked on a page have their time axes at the same place:
// the data area starts dataLeft from the left edge (further only when
// the y tick labels need it) and ends where the legend strip begins,
// legendStrip wide (wider only when a legend needs it).
const (
	dataLeft    = 2.4 * vg.Centimeter
	legendStrip = 6.2 * vg.Centimeter
)

// Render draws the plot with its legend (nil: none) to the right of the
// data and returns PNG bytes.
func Render(p *plot.Plot, l *plot.Legend) ([]byte, error) {
	return RenderStack([]*plot.Plot{p}, []*plot.Legend{l}, Height)
}

// RenderStack draws plots stacked vertically, x axes aligned, each with its
// legend (nil: none) to the right, and returns PNG bytes.
func RenderStack(ps []*plot.Plot, ls []*plot.Legend, height vg.Length) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(Width, height), vgimg.UseDPI(DPI))
	drawStack(img, ps, ls)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// drawStack draws plots stacked vertically on a canvas, x axes aligned,
// each with its legend (nil: none) to the right.
func drawStack(cv vg.CanvasSizer, ps []*plot.Plot, ls []*plot.Legend) {
	dc := draw.Crop(draw.New(cv), vg.Millimeter, -2*vg.Millimeter, vg.Millimeter, -vg.Millimeter)
	strip := vg.Length(0) // no legend: the data take the width
	for _, l := range ls {
		if l != nil {
			strip = max(strip, legendStrip)
			r := l.Rectangle(dc)
			strip = max(strip, r.Max.X-r.Min.X+2*vg.Millimeter)
		}
	}
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadY: 5 * vg.Millimeter}
	dataRight := dc.Max.X - strip - 3*vg.Millimeter
	for i, p := range ps {
		c := tiles.At(dc, 0, i)
		d := p.DataCanvas(c)
		left, right := d.Min.X-c.Min.X, c.Max.X-d.Max.X
		pc := c
		pc.Min.X = max(c.Min.X, c.Min.X+dataLeft-left)
		// A plot that pads its data area on the right (bars, glyphs wider
		// than the tick-label overhang) ends its data earlier rather than
		// past the legend strip or the image's edge.
		pc.Max.X = min(dataRight+right, dc.Max.X-strip)
		fitTitle(p, pc.Max.X-pc.Min.X)
		p.Draw(pc)
		if i < len(ls) && ls[i] != nil {
			l := ls[i]
			lc := c
			lc.Min.X = dc.Max.X - strip + 2*vg.Millimeter
			l.Left, l.Top = true, true
			l.YOffs = -p.Title.TextStyle.FontExtents().Height*vg.Length(1+strings.Count(p.Title.Text, "\n")) - 3*vg.Millimeter
			l.Draw(lc)
		}
	}
}

// fitTitle shrinks a title's font, down to 9 points, until it fits the
// width; a title still too wide then breaks onto two lines after a ": "
// (a sweep's verdict, then the chart's name) and shrinks again, so that
// no title runs off the canvas.
func fitTitle(p *plot.Plot, width vg.Length) {
	shrink := func() {
		for p.Title.TextStyle.Font.Size > vg.Points(9) && p.Title.TextStyle.Width(p.Title.Text) > width {
			p.Title.TextStyle.Font.Size -= vg.Points(0.5)
		}
	}
	shrink()
	text := p.Title.Text
	if p.Title.TextStyle.Width(text) <= width || strings.Contains(text, "\n") {
		return
	}
	// The latest break whose first line fits at 9 points: the longest
	// first line, so a sweep's verdict stays on it.
	for i := strings.LastIndex(text, ": "); i > 0; i = strings.LastIndex(text[:i], ": ") {
		p.Title.Text = text[:i+1] + "\n" + text[i+2:]
		p.Title.TextStyle.Font.Size = vg.Points(14)
		shrink()
		if p.Title.TextStyle.Width(p.Title.Text) <= width {
			return
		}
	}
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
	p.X.Tick.Marker = timeTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// timeTicks marks a time axis in seconds: a labelled tick every minute
// (every few minutes on long runs, every few seconds on short ones) and
// unlabelled ticks between, so that a fault's start and the recovery can
// be read off the axis.
type timeTicks struct {
	upTo float64 // when > 0: no ticks after this time (labels beyond the data)
}

func (tt timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if tt.upTo > 0 {
		hi = min(hi, tt.upTo)
	}
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := 0.0
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400} {
		if span/s <= 16 && (s >= 60 || span < 240) {
			step = s
			break
		}
	}
	if step == 0 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	minor := step / 5
	if math.Mod(step, 60) == 0 {
		minor = step / 6
	}
	var ts []plot.Tick
	for k, last := math.Ceil(lo/minor-1e-9), math.Floor(hi/minor+1e-9); k <= last; k++ {
		v := k*minor + 0 // no "-0"
		if v == 0 {
			v = 0
		}
		if math.Abs(math.Round(v/step)*step-v) < minor*1e-6 {
			ts = append(ts, plot.Tick{Value: v, Label: SeparateThousands(strconv.FormatFloat(v, 'f', -1, 64))})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// SeparateThousands puts a comma between each group of three digits of a
// formatted number's integer part: 100000 -> 100,000; 1234.5 -> 1,234.5.
func SeparateThousands(num string) string {
	sign := ""
	if strings.HasPrefix(num, "-") {
		sign, num = "-", num[1:]
	}
	intPart, frac, hasFrac := strings.Cut(num, ".")
	if len(intPart) <= 3 {
		return sign + num
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

// Thousands formats n with thousands separators.
func Thousands(n float64) string {
	return SeparateThousands(strconv.FormatFloat(math.Round(n), 'f', 0, 64))
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
			if v == 0 {
				v = 0 // not -0, which prints as "-0"
			}
			ts = append(ts, plot.Tick{Value: v, Label: SeparateThousands(strconv.FormatFloat(v, 'f', decimals, 64))})
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
	// always: drawn and listed even when zero everywhere (a capacity);
	// other series that are zero throughout are left out, legend and all.
	always bool
	width  vg.Length // 0: the default
}

// addSteps adds each series that applies to the plot and the legend.
func addSteps(p *plot.Plot, l *plot.Legend, s *metrics.Series, series []stepSeries) error {
	for _, sr := range series {
		if !sr.always && allZero(s, sr.f) {
			continue
		}
		ln, err := StepLine(s, sr.c, sr.dashes, sr.f)
		if err != nil {
			return err
		}
		if sr.width > 0 {
			ln.Width = sr.width
		}
		p.Add(tagged(sr.name, ln))
		l.Add(sr.name, ln)
	}
	return nil
}

func allZero(s *metrics.Series, f func(r *metrics.Row) float64) bool {
	for i := range s.Rows {
		if v := f(&s.Rows[i]); v != 0 && !math.IsNaN(v) {
			return false
		}
	}
	return true
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
	return shadeIn(p, faults, 0, ymax, faultFill, Vermillion)
}

func shadeIn(p *plot.Plot, faults []Fault, ymin, ymax float64, fill, labelColour color.Color) error {
	var labels plotter.XYLabels
	for _, f := range faults {
		x0, x1 := float64(f.Start)/1e9, float64(f.End)/1e9
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: ymin}, {X: x1, Y: ymin}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color = fill
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
			lb.TextStyle[i].Color = labelColour
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

// capacityName names the capacity line: "effective capacity" when a
// capacity fault changes it.
func capacityName(in Input, what string) string {
	for _, f := range in.Faults {
		if strings.HasPrefix(f.Label, "capacity") {
			return "effective " + what + " (workers left)"
		}
	}
	return what
}

// serverLoadPanels are server_load.png's panels: the attempts on the backend and,
// when clients hold connections, the handshakes in a panel of their own
// (they come in storms an order of magnitude above the requests).
func serverLoadPanels(in Input) ([]*plot.Plot, []*plot.Legend, error) {
	p, l, err := serverLoad(in)
	if err != nil {
		return nil, nil, err
	}
	ps, ls := []*plot.Plot{p}, []*plot.Legend{l}
	if in.Clients > 0 && !in.Contention {
		hp, hl, err := handshakePanel(in, in.Name+": handshakes on the backend")
		if err != nil {
			return nil, nil, err
		}
		wp, wl, err := workerTimePanel(in)
		if err != nil {
			return nil, nil, err
		}
		ps, ls = append(ps, hp, wp), append(ls, hl, wl)
	}
	if !in.Contention && !allZero(in.Series, func(r *metrics.Row) float64 { return float64(r.LimitNS) }) {
		lp, ll, err := limitPanel(in)
		if err != nil {
			return nil, nil, err
		}
		ps, ls = append(ps, lp), append(ls, ll)
	}
	if in.Series.Autoscaled {
		rp, rl, err := replicasPanel(in)
		if err != nil {
			return nil, nil, err
		}
		ps, ls = append(ps, rp), append(ls, rl)
	}
	return ps, ls, nil
}

// limitPanel plots an adaptive concurrency limit (backend.concurrency_limit)
// against the requests the backend holds and its workers, all as means
// over each interval.
func limitPanel(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	iv := float64(s.Interval)
	limit := func(r *metrics.Row) float64 { return float64(r.LimitNS) / iv }
	held := func(r *metrics.Row) float64 { return float64(r.QueueAreaNS+r.UsefulNS+r.WastedNS) / iv }
	workers := func(r *metrics.Row) float64 { return float64(r.CapacityNS) / iv }
	var ymax float64
	for i := range s.Rows {
		r := &s.Rows[i]
		ymax = max(ymax, limit(r), held(r), workers(r))
	}
	ymax = niceMax(ymax)
	p := NewPlot(in.Name+": adaptive concurrency limit", in.timeAxis(), "requests (interval mean)")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if err := addSteps(p, l, s, []stepSeries{
		{name: "concurrency limit", c: Vermillion, f: limit, always: true, width: vg.Points(2)},
		{name: "held (queued + in service)", c: Blue, f: held, always: true},
		{name: "workers", c: Black, dashes: []vg.Length{vg.Points(6), vg.Points(3)}, f: workers, always: true},
	}); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

func serverLoad(in Input) (*plot.Plot, *plot.Legend, error) {
	if in.Contention {
		return contentionLoad(in)
	}
	s := in.Series
	sec := perSecond(s)
	capPerWorker := in.CapacityRPS / float64(max(in.Workers, 1))
	var ymax float64
	for _, r := range s.Rows {
		ymax = max(ymax, float64(r.Received)/sec, float64(r.FailedOutage)/sec, float64(r.CapacityNS)/float64(s.Interval)*capPerWorker)
	}
	ymax = niceMax(ymax)
	title := in.Name + ": load on the backend"
	if in.Service != "" {
		title = in.Name + ": load on the entry service " + in.Service + " (services_overload.png compares every service)"
	}
	p := NewPlot(title, in.timeAxis(), "attempts per second")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	series := []stepSeries{
		// received first, wide and light: accepted (often equal) draws on
		// top of it without hiding it. The capacity line is left out
		// when CapacityRPS is 0 (no capacity to draw).
		{name: "received", c: Sky, f: func(r *metrics.Row) float64 { return float64(r.Received) / sec }, width: vg.Points(4)},
		{name: "accepted", c: Green, f: func(r *metrics.Row) float64 { return float64(r.Accepted) / sec }},
		{name: "rejected (overload)", c: Vermillion, f: func(r *metrics.Row) float64 { return float64(r.Rejected+r.QueueTimeouts) / sec }},
		{name: "dropped unanswered", c: Orange, dashes: []vg.Length{vg.Points(4), vg.Points(2)}, f: func(r *metrics.Row) float64 { return float64(r.Unanswered) / sec }},
		{name: "sent into the outage", c: Purple, dashes: []vg.Length{vg.Points(2), vg.Points(2)}, f: func(r *metrics.Row) float64 { return float64(r.FailedOutage) / sec }},
		{name: capacityName(in, "capacity"), c: Black, dashes: []vg.Length{vg.Points(6), vg.Points(3)}, f: func(r *metrics.Row) float64 {
			return float64(r.CapacityNS) / float64(s.Interval) * capPerWorker
		}, always: true},
	}
	if in.CapacityRPS <= 0 {
		series = series[:len(series)-1]
	}
	if in.Clients > 0 && in.CapacityRPS > 0 {
		// With connections, handshakes take worker time from requests:
		// what is left, what the clients got, and what was served after
		// its client had given up say why a backend that "accepts" below
		// its capacity answers nobody.
		series = append(series,
			stepSeries{name: "capacity left after handshakes", c: Purple, width: vg.Points(2), f: func(r *metrics.Row) float64 {
				return float64(max(r.CapacityNS-r.HandshakeUsefulNS-r.HandshakeWastedNS, 0)) / float64(s.Interval) * capPerWorker
			}, always: true},
			stepSeries{name: "timed out at the client", c: Grey, dashes: []vg.Length{vg.Points(3), vg.Points(2)}, f: func(r *metrics.Row) float64 { return float64(r.TimedOut) / sec }},
			stepSeries{name: "succeeded (goodput)", c: Blue, width: vg.Points(2), f: func(r *metrics.Row) float64 { return float64(r.Succeeded) / sec }, always: true},
		)
	}
	if err := addSteps(p, l, s, series); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

// workerTimePanel splits the workers' time, interval by interval, into
// requests that did someone good, wasted request work (rejections,
// answers nobody waited for), handshakes that connected someone and
// handshakes wasted, as stacked shares of the nominal workers; what is
// left is idle (or down).
func workerTimePanel(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	total := float64(s.Interval) * float64(max(in.Workers, 1))
	layers := []struct {
		name string
		c    color.Color
		f    func(r *metrics.Row) int64
	}{
		{"requests answered in time", Green, func(r *metrics.Row) int64 { return r.UsefulNS }},
		{"requests wasted (rejected, client gone)", Orange, func(r *metrics.Row) int64 { return r.WastedNS }},
		{"handshakes that connected", Sky, func(r *metrics.Row) int64 { return r.HandshakeUsefulNS }},
		{"handshakes wasted", Vermillion, func(r *metrics.Row) int64 { return r.HandshakeWastedNS }},
	}
	var useful, all float64
	for i := range s.Rows {
		r := &s.Rows[i]
		useful += float64(r.UsefulNS)
		all += float64(r.UsefulNS + r.WastedNS + r.HandshakeUsefulNS + r.HandshakeWastedNS)
	}
	title := in.Name + ": where the workers' time goes"
	if all > 0 {
		title += fmt.Sprintf(" (%.0f%% of it did a client good)", 100*useful/all)
	}
	p := NewPlot(title, in.timeAxis(), "% of worker time")
	if err := Shade(p, in.Faults, 100); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	base := make([]float64, len(s.Rows))
	x := func(i int) float64 { return float64(int64(i)*s.Interval) / 1e9 }
	for _, ly := range layers {
		top := make([]float64, len(s.Rows))
		any := false
		for i := range s.Rows {
			v := 100 * float64(ly.f(&s.Rows[i])) / total
			any = any || v > 0
			top[i] = base[i] + v
		}
		if !any {
			continue
		}
		ring := make(plotter.XYs, 0, 4*len(top))
		for i := range top {
			ring = append(ring, plotter.XY{X: x(i), Y: top[i]}, plotter.XY{X: x(i + 1), Y: top[i]})
		}
		for i := len(top) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: x(i + 1), Y: base[i]}, plotter.XY{X: x(i), Y: base[i]})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, nil, err
		}
		poly.Color = ly.c
		poly.LineStyle.Width = 0
		p.Add(poly)
		l.Add(ly.name, poly)
		base = top
	}
	SetYRange(p, 100)
	p.X.Min, p.X.Max = 0, x(len(s.Rows))
	return p, l, nil
}

// handshakePanel plots the handshakes the backend received per second,
// as means over bins long enough to read a storm (the busiest interval
// is named in the title), with the effective handshake capacity.
func handshakePanel(in Input, title string) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	sec := perSecond(s)
	bin := readableBin(s.Interval, len(s.Rows))
	rcvd := binned(s, bin, func(r *metrics.Row) float64 { return float64(r.ConnectsRcvd) / sec })
	ok := binned(s, bin, func(r *metrics.Row) float64 { return float64(r.ConnectsOK) / sec })
	hcap := func(r *metrics.Row) float64 {
		return float64(r.CapacityNS) / float64(s.Interval) / float64(max(in.Workers, 1)) * in.ConnectCapacityRPS
	}
	ymax := 0.0 // the means' maximum, not the band's (see below)
	for _, m := range rcvd.mean {
		ymax = max(ymax, m)
	}
	if bin.n > 1 {
		// Means only: a band from each bin's quietest to its busiest
		// second fills the panel when clients retry in lockstep.
		title += fmt.Sprintf(" (%s means; busiest %s: %s/s)", secs(float64(int64(bin.n)*bin.interval)/1e9), secs(float64(bin.interval)/1e9), Thousands(rcvd.hiMax()))
	}
	if c := in.ConnectCapacityRPS; c > 0 && c < 3*ymax {
		ymax = max(ymax, c)
	}
	ymax = niceMax(ymax)
	p := NewPlot(title, in.timeAxis(), "handshakes per second")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if err := rcvd.add(p, l, "handshakes received", Orange, nil, false); err != nil {
		return nil, nil, err
	}
	if err := ok.add(p, l, "connections established", Green, nil, false); err != nil {
		return nil, nil, err
	}
	if in.ConnectCapacityRPS > 0 && in.ConnectCapacityRPS < ymax {
		if err := addSteps(p, l, s, []stepSeries{{name: capacityName(in, "handshake capacity"), c: Black,
			dashes: []vg.Length{vg.Points(6), vg.Points(3)}, f: hcap, always: true}}); err != nil {
			return nil, nil, err
		}
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
	p := NewPlot(in.Name+": writes to the row", in.timeAxis(), "write calls per second")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	series := []stepSeries{
		{name: "write calls", c: Sky, f: func(r *metrics.Row) float64 { return float64(r.Received) / sec }, width: vg.Points(4)},
		{name: "refused: stale version", c: Vermillion, f: func(r *metrics.Row) float64 { return float64(r.Errors) / sec }},
		{name: "succeeded", c: Green, dashes: []vg.Length{vg.Points(4), vg.Points(2)}, f: func(r *metrics.Row) float64 { return float64(r.Received-r.Errors) / sec }},
		{name: "sent into the outage", c: Purple, dashes: []vg.Length{vg.Points(2), vg.Points(2)}, f: func(r *metrics.Row) float64 { return float64(r.FailedOutage) / sec }},
	}
	if err := addSteps(p, l, s, series); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

// ended is the application requests that ended in row r: succeeded,
// failed or dropped locally.
func ended(r *metrics.Row) int64 {
	return r.Succeeded + r.Failed + r.DropThrottle + r.DropNoConn + r.DropBreaker
}

func localDrops(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	// Shares of the requests that ended in the interval (a failure ends
	// after its retries, often in a later interval than it arrived in:
	// against the requests that arrived it could pass 100%).
	frac := func(num func(r *metrics.Row) int64) func(r *metrics.Row) float64 {
		return func(r *metrics.Row) float64 {
			if ended(r) == 0 {
				return 0
			}
			return 100 * float64(num(r)) / float64(ended(r))
		}
	}
	p := NewPlot(in.Name+": requests dropped or failed at the client", in.timeAxis(), "% of requests that ended")
	series := []stepSeries{
		{name: "dropped locally: throttle", c: Blue, f: frac(func(r *metrics.Row) int64 { return r.DropThrottle })},
		{name: "dropped locally: circuit breaker", c: Purple, f: frac(func(r *metrics.Row) int64 { return r.DropBreaker })},
		{name: "dropped locally: no connection", c: Orange, f: frac(func(r *metrics.Row) int64 { return r.DropNoConn })},
		{name: "failed after last attempt", c: Grey, dashes: []vg.Length{vg.Points(3), vg.Points(2)}, f: frac(func(r *metrics.Row) int64 { return r.Failed })},
	}
	var ymax float64
	for i := range s.Rows {
		for _, sr := range series {
			ymax = max(ymax, sr.f(&s.Rows[i]))
		}
	}
	ymax = min(max(niceMax(ymax), 5), 105)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	none := true
	for _, sr := range series {
		none = none && allZero(s, sr.f)
	}
	if none {
		p.Title.Text += ": none"
	}
	l := NewLegend()
	if err := addSteps(p, l, s, series); err != nil {
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
	p := NewPlot(title, in.timeAxis(), "successful requests per second")
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
	p.Add(tagged("goodput per interval", ln))
	l.Add("goodput per interval", ln)
	// Sliding-window goodput, as the recovery rule sees it.
	w := int(in.RecoveryWindow / s.Interval)
	if w >= 1 && len(g) >= w {
		win := metrics.SlidingMean(g, w)
		pts := make(plotter.XYs, 0, len(g)-w+1)
		for j := w - 1; j < len(g); j++ {
			pts = append(pts, plotter.XY{X: float64(int64(j+1)*s.Interval) / 1e9, Y: win[j]})
		}
		wl, err := plotter.NewLine(pts)
		if err != nil {
			return nil, nil, err
		}
		wl.Color, wl.Width = Blue, vg.Points(2)
		name := fmt.Sprintf("goodput, %g s sliding mean", float64(in.RecoveryWindow)/1e9)
		p.Add(tagged(name, wl))
		l.Add(name, wl)
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
			p.Add(tagged(h.name, hl))
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
		name := fmt.Sprintf("recovered at %.0f s (+%.0f s)", x, *rec.RecoveryTimeS)
		p.Add(untagged(name, vl)) // a vertical line: no value to show
		l.Add(name, vl)
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

// timeAxis is the x label of a time series chart.
func (in Input) timeAxis() string {
	if in.WallClock {
		return "wall time (s), a live run"
	}
	return "simulated time (s)"
}

// serverLoadChart is server_load.png.
func serverLoadChart(in Input) ([]byte, error) {
	ps, ls, err := serverLoadPanels(in)
	if err != nil {
		return nil, err
	}
	return RenderStack(ps, ls, vg.Length(len(ps))*Height)
}
