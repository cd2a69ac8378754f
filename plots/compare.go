package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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
	// Capacity is the point's effective capacity per interval, attempts
	// per second (the workers left by its capacity faults; nil: none).
	Capacity []float64
	// Faults are the point's fault windows; nil: CompareInput.Faults.
	Faults []Fault
	// Handshakes received per second and the share of the workers busy
	// with handshakes (%), for runs with persistent connections (empty
	// Mean: none). compare_connections.png draws them.
	Handshakes, HandshakeWork Band
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
	Faults   []Fault // shared by every point without Faults of its own
	Capacity float64 // nominal requests per second; points' Capacity replaces it
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
		svg, names, err := RenderSVG([]*plot.Plot{p}, []*plot.Legend{l}, Height, "t", " s")
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.file, err)
		}
		out = append(out, Chart{File: c.file, PNG: b, SVG: svg, Series: names})
	}
	if hasConnections(in) {
		ps, ls, err := compareConnections(in, spread)
		if err == nil {
			var b, svg []byte
			var names []string
			if b, err = RenderStack(ps, ls, 2*Height); err == nil {
				svg, names, err = RenderSVG(ps, ls, 2*Height, "t", " s")
			}
			if err == nil {
				out = append(out, Chart{File: "compare_connections.png", PNG: b, SVG: svg, Series: names})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("plots: compare_connections.png: %w", err)
		}
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
		vs := get(pt).Hi
		if in.Seeds <= 1 { // no band drawn: the means set the range
			vs = get(pt).Mean
		}
		for _, v := range vs {
			if !math.IsNaN(v) {
				ymax = max(ymax, v)
			}
		}
	}
	caps := capacities(in)
	if capacity {
		for _, c := range caps {
			for _, v := range c.values {
				ymax = max(ymax, v)
			}
		}
	}
	ymax = niceMax(ymax)
	if err := shadeFaults(p, in, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if in.Varied != "" {
		l.Add(shorten(in.Varied) + ":") // the heading too: a long list of fields pushed the chart off the canvas
	}
	var ends []endLabel
	for i, pt := range in.Points {
		c, dashes := Palette(i)
		ln, err := addBand(p, shorten(pt.Label), get(pt), in.Interval, in.Seeds > 1, c, dashes)
		if err != nil {
			return nil, nil, err
		}
		if ln == nil {
			continue
		}
		if n := len(in.Points); n <= 3 {
			// Few lines: each drawn wider than the ones drawn after it,
			// so that where they coincide the earlier shows around the
			// later instead of hiding under it.
			ln.Width = vg.Points(1.4 + 1.1*float64(n-1-i))
		}
		l.Add(shorten(pt.Label), ln)
		ends = append(ends, endLabel{text: pt.Label, y: ln.XYs[len(ln.XYs)-1].Y, c: c, series: shorten(pt.Label)})
	}
	if capacity {
		for _, c := range caps {
			cl, err := capacityLine(c.values, in.Interval)
			if err != nil {
				return nil, nil, err
			}
			cl.Color = c.c
			p.Add(taggedSteps(c.name, cl))
			l.Add(c.name, cl)
		}
	}
	if err := labelEnds(p, ends, ymax); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}

// addBand draws a point's band (its spread over the seeds, when spread)
// and its mean as steps, both as the series name (its legend entry);
// nil when the band is empty.
func addBand(p *plot.Plot, name string, b Band, interval int64, spread bool, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	sec := float64(interval) / 1e9
	n := len(b.Mean)
	if n == 0 {
		return nil, nil
	}
	// The spread as one translucent polygon ring: upper edge left to
	// right, lower edge right to left.
	if len(b.Lo) == n && len(b.Hi) == n && spread {
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
			return nil, err
		}
		poly.Color = translucent(c, 0x30)
		poly.LineStyle.Width = 0
		p.Add(tagged(name, poly))
	}
	pts := make(plotter.XYs, 0, 2*n)
	for j, v := range b.Mean {
		pts = append(pts, plotter.XY{X: float64(j) * sec, Y: zeroNaN(v)}, plotter.XY{X: float64(j+1) * sec, Y: zeroNaN(v)})
	}
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	ln.Color, ln.Dashes, ln.Width = c, dashes, vg.Points(1.4)
	p.Add(taggedSteps(name, ln))
	return ln, nil
}

type capacitySeries struct {
	name   string
	c      color.Color
	values []float64
}

// capacities are the capacity lines of a comparison: one black line when
// every point has the same capacity over time, else one per point in its
// colour. A capacity that changes over time (a capacity fault) is the
// effective capacity: the workers left.
func capacities(in CompareInput) []capacitySeries {
	var rows int
	for _, pt := range in.Points {
		rows = max(rows, len(pt.Received.Mean))
	}
	of := func(pt ComparePoint) []float64 {
		if pt.Capacity != nil {
			return pt.Capacity
		}
		if in.Capacity <= 0 {
			return nil
		}
		v := make([]float64, rows)
		for i := range v {
			v[i] = in.Capacity
		}
		return v
	}
	varies := func(v []float64) bool {
		for _, x := range v {
			if x != v[0] {
				return true
			}
		}
		return false
	}
	name := func(v []float64) string {
		if varies(v) {
			return "effective capacity"
		}
		return "capacity"
	}
	if len(in.Points) == 0 {
		return nil
	}
	first := of(in.Points[0])
	same := true
	for _, pt := range in.Points[1:] {
		same = same && slices.Equal(of(pt), first)
	}
	if same {
		if len(first) == 0 {
			return nil
		}
		return []capacitySeries{{name(first), Black, first}}
	}
	var out []capacitySeries
	for i, pt := range in.Points {
		if v := of(pt); len(v) > 0 {
			c, _ := Palette(i)
			out = append(out, capacitySeries{name(v) + ": " + shorten(pt.Label), c, v})
		}
	}
	return out
}

func capacityLine(v []float64, interval int64) (*plotter.Line, error) {
	sec := float64(interval) / 1e9
	pts := make(plotter.XYs, 0, 2*len(v))
	for j, x := range v {
		pts = append(pts, plotter.XY{X: float64(j) * sec, Y: x}, plotter.XY{X: float64(j+1) * sec, Y: x})
	}
	cl, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	cl.Dashes, cl.Width = []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1.2)
	return cl, nil
}

// shadeFaults shades the fault windows: once when every point has the
// same, else each point's own in its colour, labelled with its name.
func shadeFaults(p *plot.Plot, in CompareInput, ymax float64) error {
	of := func(pt ComparePoint) []Fault {
		if pt.Faults != nil {
			return pt.Faults
		}
		return in.Faults
	}
	same := true
	for _, pt := range in.Points {
		same = same && len(in.Points) > 0 && slices.Equal(of(pt), of(in.Points[0]))
	}
	if same {
		if len(in.Points) == 0 {
			return Shade(p, in.Faults, ymax)
		}
		return Shade(p, of(in.Points[0]), ymax)
	}
	for i, pt := range in.Points {
		c, _ := Palette(i)
		fs := slices.Clone(of(pt))
		for j := range fs {
			fs[j].Label = shorten(pt.Label) + ": " + fs[j].Label
		}
		// Each point's labels a line lower, so that windows shared by
		// several points stay readable.
		top := ymax * (1 - 0.05*float64(i))
		if err := shadeIn(p, fs, 0, top, translucent(c, 0x22), c); err != nil {
			return err
		}
	}
	return nil
}

// endLabel names a line at its right end.
type endLabel struct {
	text   string
	y      float64
	c      color.Color
	series string // the line's series name (tagged), hidden with it
}

// labelEnds writes each line's name just right of its last value, moved
// apart where lines end close together, and widens the x axis to make
// room.
func labelEnds(p *plot.Plot, ends []endLabel, ymax float64) error {
	if len(ends) == 0 || len(ends) > 12 {
		return nil
	}
	style := p.Y.Tick.Label
	style.Font.Size = vg.Points(9)
	var widest vg.Length
	for i := range ends {
		ends[i].text = shortLabel(ends[i].text)
		widest = max(widest, style.Width(ends[i].text))
	}
	// Spread the labels at least gap apart, within [0, ymax].
	gap := ymax * 0.055
	order := make([]int, len(ends))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(ends[a].y, ends[b].y) })
	ys := make([]float64, len(ends))
	for k, i := range order {
		ys[i] = max(ends[i].y, gap/2)
		if k > 0 {
			ys[i] = max(ys[i], ys[order[k-1]]+gap)
		}
	}
	// Centre the pushed-apart labels on their lines, then push apart
	// again from the bottom.
	var off float64
	for i := range ends {
		off += ends[i].y - ys[i]
	}
	for k, i := range order {
		ys[i] = max(ys[i]+off/float64(len(ends)), gap/2)
		if k > 0 {
			ys[i] = max(ys[i], ys[order[k-1]]+gap)
		}
	}
	if top := ys[order[len(order)-1]]; top > ymax-gap/2 {
		shift := top - (ymax - gap/2)
		for i := range ys {
			ys[i] -= shift
		}
	}
	xmax := p.X.Max
	// The data area is about 16 cm wide (Width less the legend strip and
	// the y axis): room for the widest label and a gap.
	dataW := Width - legendStrip - dataLeft - 5*vg.Millimeter
	frac := float64(widest+2*vg.Millimeter) / float64(dataW-widest-2*vg.Millimeter)
	p.X.Max = xmax * (1 + frac)
	p.X.Tick.Marker = timeTicks{upTo: xmax} // no time ticks under the labels
	// One plotter per label: in an SVG each is in its line's group,
	// hidden with it.
	for i, e := range ends {
		lb, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    plotter.XYs{{X: xmax + (p.X.Max-xmax)*0.05, Y: ys[i]}},
			Labels: []string{e.text},
		})
		if err != nil {
			return err
		}
		lb.TextStyle[0] = style
		lb.TextStyle[0].Color = e.c
		lb.TextStyle[0].XAlign, lb.TextStyle[0].YAlign = text.XLeft, text.YCenter
		p.Add(untagged(e.series, lb))
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// shortLabel keeps a line-end label short: at most 24 characters, and
// only the value of a path=value label ("clients.throttle.k=2" -> "k=2").
func shortLabel(s string) string {
	if path, v, ok := strings.Cut(s, "="); ok && !strings.ContainsAny(path, " ,") {
		if i := strings.LastIndex(path, "."); i >= 0 {
			s = path[i+1:] + "=" + v
		}
	}
	if r := []rune(s); len(r) > 24 {
		return string(r[:23]) + "…"
	}
	return s
}

func hasConnections(in CompareInput) bool {
	for _, pt := range in.Points {
		if len(pt.Handshakes.Mean) > 0 {
			return true
		}
	}
	return false
}

// compareConnections is compare_connections.png: the handshakes each
// point's backend received per second (top) and the share of its workers
// they kept busy (bottom), as means over readable bins. A reconnect storm
// is handshake work the request-load chart does not show.
func compareConnections(in CompareInput, spread string) ([]*plot.Plot, []*plot.Legend, error) {
	var rows int
	for _, pt := range in.Points {
		rows = max(rows, len(pt.Handshakes.Mean))
	}
	b := readableBin(in.Interval, rows)
	binIn := in
	binIn.Interval = int64(b.n) * in.Interval
	var ps []*plot.Plot
	var ls []*plot.Legend
	for _, panel := range []struct {
		title, ylabel string
		get           func(ComparePoint) Band
	}{
		{"handshakes received", "handshakes per second", func(pt ComparePoint) Band { return pt.Handshakes }},
		{"workers busy with handshakes", "% of nominal workers", func(pt ComparePoint) Band { return pt.HandshakeWork }},
	} {
		title := in.Name + ": " + panel.title + spread
		if b.n > 1 {
			title += fmt.Sprintf(" (%s means)", secs(float64(binIn.Interval)/1e9))
		}
		pts := make([]ComparePoint, len(in.Points))
		for i, pt := range in.Points {
			pts[i] = ComparePoint{Label: pt.Label, Faults: pt.Faults, Received: rebin(panel.get(pt), b.n)}
		}
		binIn.Points = pts
		p, l, err := bandChart(binIn, title, panel.ylabel, func(pt ComparePoint) Band { return pt.Received }, false)
		if err != nil {
			return nil, nil, err
		}
		ps, ls = append(ps, p), append(ls, l)
	}
	return ps, ls, nil
}

// rebin averages a band's mean over n intervals, its Lo and Hi to the
// lowest and highest in each bin.
func rebin(b Band, n int) Band {
	if n <= 1 || len(b.Mean) == 0 {
		return b
	}
	var out Band
	for i := 0; i < len(b.Mean); i += n {
		var sum float64
		cnt := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for j := i; j < min(i+n, len(b.Mean)); j++ {
			if !math.IsNaN(b.Mean[j]) {
				sum += b.Mean[j]
				cnt++
			}
			if j < len(b.Lo) && !math.IsNaN(b.Lo[j]) {
				lo = min(lo, b.Lo[j])
			}
			if j < len(b.Hi) && !math.IsNaN(b.Hi[j]) {
				hi = max(hi, b.Hi[j])
			}
		}
		m := math.NaN()
		if cnt > 0 {
			m = sum / float64(cnt)
		}
		if math.IsInf(lo, 0) {
			lo, hi = math.NaN(), math.NaN()
		}
		out.Mean, out.Lo, out.Hi = append(out.Mean, m), append(out.Lo, lo), append(out.Hi, hi)
	}
	return out
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
	vmin := math.Inf(1)
	for _, v := range f.Values {
		for _, x := range []float64{v.Mean, v.Hi, v.Lo} {
			if !math.IsNaN(x) {
				ymax = max(ymax, x)
				vmin = min(vmin, x)
			}
		}
	}
	// Values a few percent apart on an axis from zero look equal: zoom in
	// (and say so) when they all lie within a fifth of the largest.
	ymin := 0.0
	if vmin > 0 && ymax > 0 && (ymax-vmin) < 0.2*ymax {
		pad := max(ymax-vmin, 0.01*ymax) * 0.25
		ymin = max(0, vmin-pad)
		ymax += pad
		p.Y.Label.Text += " (zoomed: not from 0)"
	} else {
		ymax = niceMax(ymax)
	}
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
			span := ymax - ymin
			y := ymin + span*0.93
			if v.N > 0 && !math.IsNaN(v.Hi) {
				y = min(max(v.Hi, v.Mean)+span*0.06, ymin+span*0.97)
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
	p.Y.Min, p.Y.Max = ymin, ymax
	slantCrowded(p, names)
	return p, nil
}

// slantCrowded tilts the point names under a chart of one slot per point
// when one of them is wider than its slot, so that neighbours do not run
// into each other ("SRE throttle K=2Envoy admission control").
func slantCrowded(p *plot.Plot, names []string) {
	if len(names) == 0 {
		return
	}
	slot := (Width - 3*vg.Centimeter) / vg.Length(len(names))
	for _, n := range names {
		if p.X.Tick.Label.Width(n) > 0.95*slot {
			p.X.Tick.Label.Rotation = math.Pi / 7
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YTop
			return
		}
	}
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
