package plots

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A namedSeries is a plotter with a name (its legend entry's): drawn into an
// SVG (RenderSVG) it is a group of its own, class ser-N (N its series'
// number, Chart.Series[N]), that the page can hide, and its points
// become the values shown on hover. Drawn into a PNG it is the plotter.
type namedSeries struct {
	plot.Plotter
	name string
	xys  plotter.XYs // the values shown on hover; nil: none (a band)
}

// tagged names a plotter for the SVG: its group and, for a line, its
// values on hover.
func tagged(name string, pl plot.Plotter) plot.Plotter {
	s := &namedSeries{Plotter: pl, name: name}
	if ln, ok := pl.(*plotter.Line); ok {
		s.xys = ln.XYs
	}
	return s
}

// taggedSteps is tagged for a step line (two points per interval, at
// its start and its end): values on hover per interval, none at the end
// of the last.
func taggedSteps(name string, ln *plotter.Line) plot.Plotter {
	return &namedSeries{Plotter: ln, name: name, xys: ln.XYs[:max(0, len(ln.XYs)-1)]}
}

// untagged names a plotter for the SVG's group alone: no values on
// hover (a vertical marker).
func untagged(name string, pl plot.Plotter) plot.Plotter {
	return &namedSeries{Plotter: pl, name: name}
}

// DataRange is the plotter's, so that the axes are those of the untagged
// plot.
func (s *namedSeries) DataRange() (xmin, xmax, ymin, ymax float64) {
	if dr, ok := s.Plotter.(plot.DataRanger); ok {
		return dr.DataRange()
	}
	return math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
}

// GlyphBoxes are the plotter's.
func (s *namedSeries) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if gb, ok := s.Plotter.(plot.GlyphBoxer); ok {
		return gb.GlyphBoxes(p)
	}
	return nil
}

// markerUnit is the vertical shift, in points, that marks a series'
// group in vgsvg's output (translate(0, -(N+1)·markerUnit)): far below
// a pixel, and a number no other drawing makes.
const markerUnit = 1e-9

// Plot draws the plotter; into an SVG, in a marked group, and records
// its points where the canvas puts them.
func (s *namedSeries) Plot(c draw.Canvas, p *plot.Plot) {
	hc, ok := hoverOf(c.Canvas)
	if !ok {
		s.Plotter.Plot(c, p)
		return
	}
	k := hc.index(s.name)
	c.Push()
	c.Translate(vg.Point{Y: -vg.Length(k+1) * markerUnit})
	s.Plotter.Plot(c, p)
	c.Pop()
	if s.xys == nil {
		return
	}
	trX, _ := p.Transforms(&c)
	pan := hc.panel(p, c.Rectangle)
	for _, xy := range s.xys {
		if math.IsNaN(xy.Y) || math.IsInf(xy.Y, 0) {
			continue
		}
		pan.pts = append(pan.pts, hoverPoint{series: k, x: xy.X, y: xy.Y, cx: float64(trX(xy.X))})
	}
}

// hoverOf is the hoverCanvas under a canvas (a plot wraps its canvas in
// draw.Canvas values), if any.
func hoverOf(cv vg.Canvas) (*hoverCanvas, bool) {
	for {
		switch v := cv.(type) {
		case *hoverCanvas:
			return v, true
		case draw.Canvas:
			cv = v.Canvas
		case *draw.Canvas:
			cv = v.Canvas
		default:
			return nil, false
		}
	}
}

// hoverCanvas is an SVG canvas that collects the series drawn on it.
type hoverCanvas struct {
	*vgsvg.Canvas
	names  []string
	panels []*hoverPanel
}

type hoverPanel struct {
	p    *plot.Plot
	rect vg.Rectangle
	pts  []hoverPoint
}

type hoverPoint struct {
	series int
	x, y   float64
	cx     float64 // x on the canvas, points
}

func (hc *hoverCanvas) index(name string) int {
	if i := slices.Index(hc.names, name); i >= 0 {
		return i
	}
	hc.names = append(hc.names, name)
	return len(hc.names) - 1
}

func (hc *hoverCanvas) panel(p *plot.Plot, r vg.Rectangle) *hoverPanel {
	for _, pan := range hc.panels {
		if pan.p == p {
			return pan
		}
	}
	pan := &hoverPanel{p: p, rect: r}
	hc.panels = append(hc.panels, pan)
	return pan
}

var marker = regexp.MustCompile(`<g transform="translate\(0, (-[0-9.]+e-0[5-9])\)">`)

// maxColumns is the most hover columns a panel gets, and maxCells the
// most values (columns × series) its titles hold: beyond either, a
// column spans k x's and shows each series' mean over them (a long run
// of short intervals; a sweep of many points, whose titles would
// otherwise outweigh the drawing).
const (
	maxColumns = 1500
	maxCells   = 8000
)

// RenderSVG draws plots as RenderStack does, as an SVG document for a
// page: each named series (tagged) a group of class ser-N, and over each
// panel's data a column per x whose <title> holds every series' value
// there (shown on hover). xName names x in those titles ("t"), unit is
// the y values' ("/s", "%"). series are the names, N by N.
func RenderSVG(ps []*plot.Plot, ls []*plot.Legend, height vg.Length, xName, xUnit string) (svg []byte, names []string, err error) {
	hc := &hoverCanvas{Canvas: vgsvg.NewWith(vgsvg.UseWH(Width, height), vgsvg.EmbedFonts(false))}
	drawStack(hc, ps, ls)
	var buf bytes.Buffer
	if _, err := hc.WriteTo(&buf); err != nil {
		return nil, nil, err
	}
	out := buf.String()
	if i := strings.Index(out, "<svg"); i >= 0 { // no XML declaration inside a page
		out = out[i:]
	}
	out = marker.ReplaceAllStringFunc(out, func(m string) string {
		v, err := strconv.ParseFloat(marker.FindStringSubmatch(m)[1], 64)
		if err != nil {
			return m
		}
		return fmt.Sprintf(`<g class="ser ser-%d">`, int(math.Round(-v/markerUnit))-1)
	})
	out = compactPaths(out)
	var hov strings.Builder
	hov.WriteString(`<g class="hover">` + "\n")
	for _, pan := range hc.panels {
		writeColumns(&hov, pan, hc.names, xName, xUnit)
	}
	hov.WriteString("</g>\n")
	// Inside the last group, which flips y as the drawing's own.
	end := strings.LastIndex(out, "</g>")
	if end < 0 {
		return nil, nil, fmt.Errorf("plots: unexpected SVG from vgsvg")
	}
	out = out[:end] + hov.String() + out[end:]
	return []byte(out), hc.names, nil
}

// writeColumns writes a transparent rectangle per x of a panel's series,
// from it to the next x, titled with every series' value there (a step
// line's last point at x: the interval that starts there). When the
// panel has more x's than maxColumns or more values than maxCells, a
// rectangle spans several x's, titled with the range and each series'
// mean over them.
func writeColumns(b *strings.Builder, pan *hoverPanel, names []string, xName, xUnit string) {
	var xs []float64
	at := map[float64]map[int]float64{}
	cx := map[float64]float64{}
	series := map[int]bool{}
	for _, pt := range pan.pts {
		if pt.cx < float64(pan.rect.Min.X)-0.5 || pt.cx > float64(pan.rect.Max.X)+0.5 {
			continue
		}
		m, ok := at[pt.x]
		if !ok {
			m = map[int]float64{}
			at[pt.x] = m
			xs = append(xs, pt.x)
			cx[pt.x] = pt.cx
		}
		m[pt.series] = pt.y
		series[pt.series] = true
	}
	slices.Sort(xs)
	stride := max(1+len(xs)/maxColumns, (len(xs)*len(series)+maxCells-1)/maxCells)
	y0, h := float64(pan.rect.Min.Y), float64(pan.rect.Max.Y-pan.rect.Min.Y)
	for i := 0; i < len(xs); i += stride {
		x := xs[i]
		right := float64(pan.rect.Max.X)
		if i+stride < len(xs) {
			right = cx[xs[i+stride]]
		}
		w := right - cx[x]
		if w <= 0 {
			continue
		}
		var t strings.Builder
		if stride == 1 {
			fmt.Fprintf(&t, "%s = %s%s", xName, trimNum(x), xUnit)
			for k := range names {
				if v, ok := at[x][k]; ok {
					fmt.Fprintf(&t, "\n%s: %s", names[k], valueText(v))
				}
			}
		} else {
			last := min(i+stride, len(xs)) - 1
			to := xs[last]
			if i+stride < len(xs) {
				to = xs[i+stride]
			} else if last > 0 { // the last column: one x's step on
				to += xs[last] - xs[last-1]
			}
			fmt.Fprintf(&t, "%s = %s–%s%s, means", xName, trimNum(x), trimNum(to), xUnit)
			for k := range names {
				var sum float64
				n := 0
				for _, xx := range xs[i : last+1] {
					if v, ok := at[xx][k]; ok {
						sum += v
						n++
					}
				}
				if n > 0 {
					fmt.Fprintf(&t, "\n%s: %s", names[k], valueText(sum/float64(n)))
				}
			}
		}
		fmt.Fprintf(b, `<rect x="%.5g" y="%.5g" width="%.5g" height="%.5g"><title>%s</title></rect>`+"\n", cx[x], y0, w, h, html.EscapeString(t.String()))
	}
}

var pathData = regexp.MustCompile(`<path d="([^"]*)"`)

// compactPaths writes the segments of the SVG's paths that run along an
// axis with H and V, as every segment of a step line does: the same
// drawing in about half the bytes (a sweep's charts are thousands of
// steps).
func compactPaths(svg string) string {
	return pathData.ReplaceAllStringFunc(svg, func(m string) string {
		if d, ok := compactPath(pathData.FindStringSubmatch(m)[1]); ok {
			return `<path d="` + d + `"`
		}
		return m
	})
}

// compactPath is path data of M x,y, L x,y and Z commands (vgsvg's
// lines and polygons) with its horizontal and vertical L as H and V, a
// run of them in one direction as one, and segments of no length after
// the first of a subpath left out; ok false for any other path data.
func compactPath(d string) (string, bool) {
	type seg struct {
		cmd  byte   // M, L, H, V or Z
		text string // its arguments
		from float64
	}
	var out []seg
	var x0, y0, px, py string // the subpath's start, the current point
	drawn := false            // a segment since the subpath's start
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	for i := 0; i < len(d); {
		cmd := d[i]
		i++
		if cmd == 'Z' {
			out = append(out, seg{cmd: 'Z'})
			px, py = x0, y0
			continue
		}
		if cmd != 'M' && cmd != 'L' {
			return "", false
		}
		j := i
		for j < len(d) && d[j] != 'M' && d[j] != 'L' && d[j] != 'Z' {
			j++
		}
		x, y, ok := strings.Cut(d[i:j], ",")
		i = j
		if _, err := strconv.ParseFloat(x, 64); !ok || err != nil {
			return "", false
		}
		if _, err := strconv.ParseFloat(y, 64); err != nil {
			return "", false
		}
		s := seg{cmd: 'L', text: x + "," + y}
		switch {
		case cmd == 'M':
			s = seg{cmd: 'M', text: x + "," + y}
			x0, y0, drawn = x, y, false
		case x == px && y == py && drawn:
			continue
		case x == px:
			s = seg{cmd: 'V', text: y, from: num(py)}
		case y == py:
			s = seg{cmd: 'H', text: x, from: num(px)}
		}
		if n := len(out); n > 0 && (s.cmd == 'H' || s.cmd == 'V') && out[n-1].cmd == s.cmd &&
			(num(s.text) > s.from) == (s.from > out[n-1].from) {
			out[n-1].text = s.text // on in the same direction
		} else {
			out = append(out, s)
		}
		drawn = drawn || cmd == 'L'
		px, py = x, y
	}
	var b strings.Builder
	for _, s := range out {
		b.WriteByte(s.cmd)
		b.WriteString(s.text)
	}
	return b.String(), true
}

func trimNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// valueText is a value on hover: whole with thousands separators from
// 100 on, else three significant digits.
func valueText(v float64) string {
	if math.Abs(v) >= 100 {
		return Thousands(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
