package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MapCell is one probe of a metastability map: P(no recovery) at a load
// level and trigger size.
type MapCell struct {
	Load, Trigger, P float64
	// Grid: the probe is on the regular grid (drawn as a cell); else a
	// bisection probe (drawn as a dot).
	Grid bool
}

// MapBoundary is one load level's threshold: Kind "bracketed" (Threshold
// in [Lo, Hi]), "below" or "above" the trigger range.
type MapBoundary struct {
	Load, Threshold, Lo, Hi float64
	Kind                    string
}

// MapInput is what map.png needs.
type MapInput struct {
	Title, LoadLabel, TriggerLabel string
	TriggerLo, TriggerHi           float64
	Cells                          []MapCell
	Boundary                       []MapBoundary
	// ViewLo, ViewHi, when ViewHi > ViewLo, is the part of the trigger
	// range drawn (MapView's zoom); else the whole range.
	ViewLo, ViewHi float64
}

// MapView is the part of the trigger range map.png should show: the whole
// range, unless the bracketed boundary lies in less than 40% of it; then
// the band of the brackets with half its width (at least 5% of the range)
// on either side, within the range. zoomed says which.
func MapView(in MapInput) (lo, hi float64, zoomed bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, b := range in.Boundary {
		if b.Kind == "bracketed" && finite(b.Lo) && finite(b.Hi) {
			lo, hi = math.Min(lo, b.Lo), math.Max(hi, b.Hi)
		}
	}
	span := in.TriggerHi - in.TriggerLo
	if !(hi >= lo) || !(span > 0) || hi-lo >= 0.4*span {
		return in.TriggerLo, in.TriggerHi, false
	}
	pad := math.Max((hi-lo)/2, 0.05*span)
	lo, hi = lo-pad, hi+pad
	// Round outwards to a tenth of the view's order of magnitude, so the
	// title says 0.5–7.5 s rather than 0.5–7.464 s.
	step := math.Pow(10, math.Floor(math.Log10(hi-lo))-1)
	lo, hi = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	lo, hi = math.Max(in.TriggerLo, lo), math.Min(in.TriggerHi, hi)
	return lo, hi, hi-lo < 0.95*span
}

// Shades of the two regions: the estimate of where the service recovers
// (below the boundary) and where it does not (above).
var (
	stableShade = color.NRGBA{0xDD, 0xEE, 0xF8, 0xff}
	metaShade   = color.NRGBA{0xF6, 0xC9, 0xB8, 0xff}
)

// boundaryLine is the estimated boundary, one point per load level (a
// bracketed threshold; the range's bottom for "below", its top for
// "above"), held flat to the edges of the outer cells.
// A boundary below or above the range is drawn at the view's edge, so
// nothing beyond the probed range is claimed.
func boundaryLine(in MapInput, dx, vlo, vhi float64) plotter.XYs {
	var xy plotter.XYs
	for _, b := range in.Boundary {
		switch b.Kind {
		case "bracketed":
			if finite(b.Threshold) {
				xy = append(xy, plotter.XY{X: b.Load, Y: b.Threshold})
			}
		case "below":
			xy = append(xy, plotter.XY{X: b.Load, Y: vlo})
		case "above":
			xy = append(xy, plotter.XY{X: b.Load, Y: vhi})
		}
	}
	sortXY(xy)
	if len(xy) == 0 {
		return nil
	}
	first, last := xy[0], xy[len(xy)-1]
	return append(append(plotter.XYs{{X: first.X - dx, Y: first.Y}}, xy...), plotter.XY{X: last.X + dx, Y: last.Y})
}

// clipY clips the polyline xy to lo <= y <= hi: a segment that leaves the
// band gets the point where it crosses, and points outside are held at
// the edge, so a region bounded by the line is clipped exactly.
func clipY(xy plotter.XYs, lo, hi float64) plotter.XYs {
	var out plotter.XYs
	for i, p := range xy {
		if i > 0 {
			q := xy[i-1]
			for _, edge := range []float64{lo, hi} {
				if (q.Y-edge)*(p.Y-edge) < 0 {
					t := (edge - q.Y) / (p.Y - q.Y)
					out = append(out, plotter.XY{X: q.X + t*(p.X-q.X), Y: edge})
				}
			}
			if n := len(out); n >= 2 && out[n-1].X < out[n-2].X { // two crossings in one segment: keep them in order
				out[n-1], out[n-2] = out[n-2], out[n-1]
			}
		}
		out = append(out, plotter.XY{X: p.X, Y: math.Min(math.Max(p.Y, lo), hi)})
	}
	return out
}

// heat maps P in [0, 1] from white through orange to vermillion.
func heat(p float64) color.Color {
	p = math.Min(math.Max(p, 0), 1)
	lerp := func(a, b uint8, t float64) uint8 { return uint8(float64(a) + (float64(b)-float64(a))*t + 0.5) }
	if p < 0.5 {
		t := p / 0.5
		return color.NRGBA{lerp(0xff, 0xE6, t), lerp(0xff, 0x9F, t), lerp(0xff, 0x00, t), 0xff}
	}
	t := (p - 0.5) / 0.5
	return color.NRGBA{lerp(0xE6, 0x8B, t), lerp(0x9F, 0x1A, t), lerp(0x00, 0x00, t), 0xff}
}

func spacing(xs []float64) float64 {
	d := math.Inf(1)
	for i := 1; i < len(xs); i++ {
		if g := xs[i] - xs[i-1]; g > 0 {
			d = math.Min(d, g)
		}
	}
	if math.IsInf(d, 1) {
		return 1
	}
	return d
}

func uniq(xs []float64) []float64 {
	var out []float64
	seen := map[float64]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sortFloats(out)
	return out
}

func sortFloats(xs []float64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// Map renders map.png: P(no recovery) over load × trigger as coloured
// cells (the grid probes) and dots (the bisection probes), the boundary
// where P crosses ½ with its bracket, and the stable and metastable
// regions labelled.
func Map(in MapInput) ([]byte, error) {
	p := NewPlot(in.Title, in.LoadLabel, in.TriggerLabel)
	var loads, trigs []float64
	for _, c := range in.Cells {
		if c.Grid {
			loads, trigs = append(loads, c.Load), append(trigs, c.Trigger)
		}
	}
	dx, dy := spacing(uniq(loads))/2, spacing(uniq(trigs))/2
	vlo, vhi := in.TriggerLo-dy, in.TriggerHi+dy
	if in.ViewHi > in.ViewLo {
		vlo, vhi = in.ViewLo, in.ViewHi
	}
	inView := func(y float64) bool { return y >= vlo && y <= vhi }
	l := NewLegend()
	// The regions follow the estimated boundary: metastable above it,
	// stable below; the probes on top are the evidence, each coloured by
	// its own P(no recovery).
	if bl := clipY(boundaryLine(in, dx, vlo, vhi), vlo, vhi); len(bl) > 0 {
		x0, x1 := bl[0].X, bl[len(bl)-1].X
		under := append(plotter.XYs{{X: x0, Y: vlo}}, bl...)
		under = append(under, plotter.XY{X: x1, Y: vlo})
		over := append(plotter.XYs{{X: x0, Y: vhi}}, bl...)
		over = append(over, plotter.XY{X: x1, Y: vhi})
		for _, r := range []struct {
			xy   plotter.XYs
			c    color.Color
			name string
		}{{under, stableShade, "estimate: recovers"}, {over, metaShade, "estimate: does not recover"}} {
			poly, err := plotter.NewPolygon(r.xy)
			if err != nil {
				return nil, err
			}
			poly.Color, poly.LineStyle.Width = r.c, 0
			p.Add(poly)
			box, _ := plotter.NewPolygon(plotter.XYs{{}, {X: 1}, {X: 1, Y: 1}})
			box.Color, box.LineStyle.Width = r.c, 0
			l.Add(r.name, box)
		}
	}
	var dots, gridDots plotter.XYs
	var dotColors, gridColors []color.Color
	for _, c := range in.Cells {
		if !inView(c.Trigger) {
			continue
		}
		if c.Grid {
			gridDots, gridColors = append(gridDots, plotter.XY{X: c.Load, Y: c.Trigger}), append(gridColors, heat(c.P))
		} else {
			dots, dotColors = append(dots, plotter.XY{X: c.Load, Y: c.Trigger}), append(dotColors, heat(c.P))
		}
	}
	for _, g := range []struct {
		xy    plotter.XYs
		cs    []color.Color
		shape draw.GlyphDrawer
		ring  draw.GlyphDrawer
		r     vg.Length
		name  string
	}{{gridDots, gridColors, draw.BoxGlyph{}, draw.SquareGlyph{}, vg.Points(4.5), "grid probe"}, {dots, dotColors, draw.CircleGlyph{}, draw.RingGlyph{}, vg.Points(3.5), "bisection probe"}} {
		if len(g.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(g.xy)
		if err != nil {
			return nil, err
		}
		cs, r := g.cs, g.r
		sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
			return draw.GlyphStyle{Color: cs[i], Radius: r, Shape: g.shape}
		}
		ring, _ := plotter.NewScatter(g.xy)
		ring.GlyphStyle = draw.GlyphStyle{Color: Black, Radius: g.r, Shape: g.ring}
		p.Add(sc, ring)
		l.Add(g.name+" (fill: its P)", ring)
	}
	for _, v := range []float64{0, 0.5, 1} {
		box, _ := plotter.NewPolygon(plotter.XYs{{}, {X: 1}, {X: 1, Y: 1}})
		box.Color = heat(v)
		box.LineStyle.Color = Grey
		box.LineStyle.Width = vg.Points(0.5)
		l.Add(fmt.Sprintf("P(no recovery) = %g", v), box)
	}
	var line plotter.XYs
	var errs plotter.YErrors
	var below, above plotter.XYs
	for _, b := range in.Boundary {
		switch b.Kind {
		case "bracketed":
			line = append(line, plotter.XY{X: b.Load, Y: b.Threshold})
			errs = append(errs, struct{ Low, High float64 }{b.Threshold - b.Lo, b.Hi - b.Threshold})
		case "below":
			below = append(below, plotter.XY{X: b.Load, Y: math.Max(in.TriggerLo, vlo)})
		case "above":
			above = append(above, plotter.XY{X: b.Load, Y: math.Min(in.TriggerHi, vhi)})
		}
	}
	if len(line) > 0 {
		ln, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = Black, vg.Points(2)
		pts.Color, pts.Radius, pts.Shape = Black, vg.Points(2.5), draw.CircleGlyph{}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{line, errs})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.LineStyle.Width = Black, vg.Points(1.2)
		p.Add(ln, pts, bars)
		l.Add("boundary: P = ½ (bar: bracket)", ln)
	}
	for _, m := range []struct {
		xy    plotter.XYs
		shape draw.GlyphDrawer
		name  string
	}{{below, draw.TriangleGlyph{}, "boundary below the range"}, {above, draw.TriangleGlyph{}, "boundary above the range"}} {
		if len(m.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.xy)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: Blue, Radius: vg.Points(4), Shape: m.shape}
		p.Add(sc)
		l.Add(m.name, sc)
	}
	// Region labels: under the boundary at the lowest load where it is
	// bracketed (or at the bottom), and over it.
	// (each only where the map has such a region).
	ul := uniq(loads)
	if len(ul) > 0 {
		stable, meta := false, false
		for _, c := range in.Cells {
			stable = stable || c.P < 0.5
			meta = meta || c.P > 0.5
		}
		// Between the two lowest (highest) rows of probes in view, so a
		// label never sits on a probe of the grid.
		ys, ym := vlo+(vhi-vlo)*0.06, vhi-(vhi-vlo)*0.06
		var rows []float64
		for _, c := range in.Cells {
			if c.Grid && c.Trigger >= vlo && c.Trigger <= vhi {
				rows = append(rows, c.Trigger)
			}
		}
		slices.Sort(rows)
		if rows = slices.Compact(rows); len(rows) >= 2 {
			ys, ym = (rows[0]+rows[1])/2, (rows[len(rows)-1]+rows[len(rows)-2])/2
		}
		var xy plotter.XYs
		var texts []string
		var styles []text.Style
		if stable {
			xy, texts = append(xy, plotter.XY{X: ul[0], Y: ys}), append(texts, "STABLE (recovers)")
			st := text.Style{Color: Blue, XAlign: draw.XLeft}
			styles = append(styles, st)
		}
		if meta {
			xy, texts = append(xy, plotter.XY{X: ul[len(ul)-1], Y: ym}), append(texts, "METASTABLE (does not recover)")
			styles = append(styles, text.Style{Color: Vermillion, XAlign: draw.XRight})
		}
		if len(xy) > 0 {
			lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: texts})
			if err != nil {
				return nil, err
			}
			for i := range lab.TextStyle {
				lab.TextStyle[i].Color, lab.TextStyle[i].XAlign = styles[i].Color, styles[i].XAlign
				lab.TextStyle[i].Font.Size = vg.Points(12)
			}
			p.Add(lab)
		}
		p.X.Min, p.X.Max = ul[0]-dx, ul[len(ul)-1]+dx
	}
	p.Y.Min, p.Y.Max = vlo, vhi
	p.X.Tick.Marker = p.Y.Tick.Marker // round ticks on both axes
	return Render(p, l)
}

// TunePoint is one evaluated candidate of a tuning run.
type TunePoint struct {
	Objective, Constraint float64 // means
	Feasible, Best        bool
}

// ParetoInput is what pareto.png needs.
type ParetoInput struct {
	Title, ObjectiveLabel, ConstraintLabel string
	// Bound is the constraint's bound, drawn as a line (NaN: none);
	// AtMost says which side is allowed; MaximizeObjective which way is
	// better.
	Bound            float64
	AtMost, Maximize bool
	Points           []TunePoint
}

// Pareto renders pareto.png: the objective against the main constraint
// metric for every candidate, the candidates no other beats on both
// highlighted and joined, the chosen one ringed.
func Pareto(in ParetoInput) ([]byte, error) {
	p := NewPlot(in.Title, in.ConstraintLabel, in.ObjectiveLabel)
	l := NewLegend()
	var feas, infeas, front, best plotter.XYs
	better := func(a, b TunePoint) bool { // a dominates b
		oa, ob, ca, cb := a.Objective, b.Objective, a.Constraint, b.Constraint
		if in.Maximize {
			oa, ob = -oa, -ob
		}
		if !in.AtMost {
			ca, cb = -ca, -cb
		}
		return oa <= ob && ca <= cb && (oa < ob || ca < cb)
	}
	for i, a := range in.Points {
		if !finite(a.Objective) || !finite(a.Constraint) {
			continue // no value (e.g. a run that never recovered): not drawn
		}
		xy := plotter.XY{X: a.Constraint, Y: a.Objective}
		if a.Feasible {
			feas = append(feas, xy)
		} else {
			infeas = append(infeas, xy)
		}
		if a.Best {
			best = append(best, xy)
		}
		dominated := false
		for j, b := range in.Points {
			if j != i && finite(b.Objective) && finite(b.Constraint) && better(b, a) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, xy)
		}
	}
	sortXY(front)
	add := func(xy plotter.XYs, st draw.GlyphStyle, name string) error {
		if len(xy) == 0 {
			return nil
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.GlyphStyle = st
		p.Add(sc)
		l.Add(name, sc)
		return nil
	}
	if len(front) > 1 {
		ln, err := plotter.NewLine(front)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = Green, vg.Points(1.5)
		p.Add(ln)
	}
	for _, a := range []struct {
		xy   plotter.XYs
		st   draw.GlyphStyle
		name string
	}{
		{infeas, draw.GlyphStyle{Color: Vermillion, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}, "candidate, violates a constraint"},
		{feas, draw.GlyphStyle{Color: Blue, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}, "candidate, feasible"},
		{front, draw.GlyphStyle{Color: Green, Radius: vg.Points(5), Shape: draw.RingGlyph{}}, "Pareto front (no candidate better on both)"},
		{best, draw.GlyphStyle{Color: Vermillion, Radius: vg.Points(7), Shape: draw.RingGlyph{}}, "chosen"},
	} {
		if err := add(a.xy, a.st, a.name); err != nil {
			return nil, err
		}
	}
	if !math.IsNaN(in.Bound) {
		ymin, ymax := math.Inf(1), math.Inf(-1)
		for _, xy := range append(append(plotter.XYs{}, feas...), infeas...) {
			ymin, ymax = math.Min(ymin, xy.Y), math.Max(ymax, xy.Y)
		}
		if !math.IsInf(ymin, 0) {
			ln, err := plotter.NewLine(plotter.XYs{{X: in.Bound, Y: ymin}, {X: in.Bound, Y: ymax}})
			if err != nil {
				return nil, err
			}
			ln.Color, ln.Dashes, ln.Width = Vermillion, []vg.Length{vg.Points(5), vg.Points(3)}, vg.Points(1.2)
			p.Add(ln)
			l.Add("constraint bound", ln)
		}
	}
	p.X.Tick.Marker = p.Y.Tick.Marker // round ticks on both axes
	return Render(p, l)
}

func sortXY(xy plotter.XYs) {
	for i := 1; i < len(xy); i++ {
		for j := i; j > 0 && xy[j].X < xy[j-1].X; j-- {
			xy[j], xy[j-1] = xy[j-1], xy[j]
		}
	}
}

// SensitivityPanel is the objective as one parameter varies, the others at
// the optimum.
type SensitivityPanel struct {
	Param        string
	Values       []float64
	Mean, Lo, Hi []float64 // the objective and its 95% interval
	Feasible     []bool
	Best         float64 // the chosen value
}

// Sensitivity renders sensitivity.png: one panel per parameter.
func Sensitivity(title, objective string, panels []SensitivityPanel) ([]byte, error) {
	var ps []*plot.Plot
	var ls []*plot.Legend
	for i, s := range panels {
		t := title
		if len(panels) > 1 {
			t = s.Param
			if i == 0 {
				t = title + "\n" + s.Param
			}
		}
		p := NewPlot(t, s.Param+" (others at the chosen values)", objective)
		l := NewLegend()
		var all, feas, infeas plotter.XYs
		var errs plotter.YErrors
		ymin, ymax := math.Inf(1), math.Inf(-1)
		for j, v := range s.Values {
			if !finite(s.Mean[j]) {
				continue
			}
			lo, hi := s.Lo[j], s.Hi[j]
			if !finite(lo) || !finite(hi) {
				lo, hi = s.Mean[j], s.Mean[j]
			}
			xy := plotter.XY{X: v, Y: s.Mean[j]}
			all = append(all, xy)
			errs = append(errs, struct{ Low, High float64 }{s.Mean[j] - lo, hi - s.Mean[j]})
			if s.Feasible[j] {
				feas = append(feas, xy)
			} else {
				infeas = append(infeas, xy)
			}
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, hi)
		}
		if len(all) == 0 {
			continue
		}
		ln, err := plotter.NewLine(all)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = Blue, vg.Points(1.5)
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{all, errs})
		if err != nil {
			return nil, err
		}
		bars.Color = Blue
		p.Add(ln, bars)
		l.Add("objective (95% interval)", ln)
		for _, a := range []struct {
			xy   plotter.XYs
			st   draw.GlyphStyle
			name string
		}{
			{feas, draw.GlyphStyle{Color: Blue, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, "meets the constraints"},
			{infeas, draw.GlyphStyle{Color: Vermillion, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}, "violates a constraint"},
		} {
			if len(a.xy) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(a.xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = a.st
			p.Add(sc)
			l.Add(a.name, sc)
		}
		pad := (ymax - ymin) * 0.05
		if pad == 0 {
			pad = math.Max(math.Abs(ymax)*0.05, 1e-9)
		}
		best, err := plotter.NewLine(plotter.XYs{{X: s.Best, Y: math.Max(ymin-pad, math.Min(0, ymin))}, {X: s.Best, Y: ymax + pad}})
		if err != nil {
			return nil, err
		}
		best.Color, best.Dashes, best.Width = Vermillion, []vg.Length{vg.Points(5), vg.Points(3)}, vg.Points(1.2)
		p.Add(best)
		l.Add("chosen value", best)
		p.X.Tick.Marker = p.Y.Tick.Marker // round ticks on both axes
		p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
		if ymin >= 0 && p.Y.Min < 0 {
			p.Y.Min = 0
		}
		ps, ls = append(ps, p), append(ls, l)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("plots: sensitivity: no values")
	}
	if len(ps) == 1 {
		return Render(ps[0], ls[0])
	}
	return RenderStack(ps, ls, Height*vg.Length(len(ps))*0.6)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
