package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// latencyChart is the latency of the requests that succeeded, per
// interval: the band from p50 to p90, the band from p90 to p99, the p50
// and p99 lines, and the maximum dotted. An interval without a success
// is a gap.
func latencyChart(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	ms := func(f func(r *metrics.Row) float64) func(r *metrics.Row) float64 {
		return func(r *metrics.Row) float64 { return f(r) / 1e6 }
	}
	p50 := ms(func(r *metrics.Row) float64 { return r.LatencyP50 })
	p90 := ms(func(r *metrics.Row) float64 { return r.LatencyP90 })
	p99 := ms(func(r *metrics.Row) float64 { return r.LatencyP99 })
	top := ms(func(r *metrics.Row) float64 { return r.LatencyMax })
	title := in.Name + ": latency of the requests that succeeded"
	p := NewPlot(title, in.timeAxis(), "milliseconds (per interval)")
	ymax := 0.0
	for i := range s.Rows {
		if v := top(&s.Rows[i]); !math.IsNaN(v) {
			ymax = max(ymax, v)
		}
	}
	ymax = niceMax(ymax)
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	for _, b := range []struct {
		name   string
		lo, hi func(r *metrics.Row) float64
		fill   color.Color
	}{
		{"p50 to p90", p50, p90, color.NRGBA{0x00, 0x72, 0xB2, 0x55}},
		{"p90 to p99", p90, p99, color.NRGBA{0x00, 0x72, 0xB2, 0x22}},
	} {
		polys := bands(s, b.lo, b.hi)
		for i, poly := range polys {
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return nil, nil, err
			}
			pg.Color, pg.LineStyle.Width = b.fill, 0
			p.Add(tagged(b.name, pg))
			if i == 0 {
				l.Add(b.name, pg)
			}
		}
	}
	for _, ln := range []struct {
		name   string
		f      func(r *metrics.Row) float64
		c      color.Color
		dashes []vg.Length
	}{
		{"p50 (median)", p50, Blue, nil},
		{"p99", p99, Vermillion, nil},
		{"max", top, Black, []vg.Length{vg.Points(1), vg.Points(2)}},
	} {
		for i, seg := range steps(s, ln.f) {
			line, err := plotter.NewLine(seg)
			if err != nil {
				return nil, nil, err
			}
			line.Color, line.Width, line.Dashes = ln.c, vg.Points(1.3), ln.dashes
			p.Add(tagged(ln.name, line))
			if i == 0 {
				l.Add(ln.name, line)
			}
		}
	}
	SetYRange(p, ymax)
	return p, l, nil
}

// steps are f's values as step lines, one per run of intervals with a
// value (NaN: no request succeeded in the interval).
func steps(s *metrics.Series, f func(r *metrics.Row) float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.Rows {
		v := f(&s.Rows[i])
		x0, x1 := float64(int64(i)*s.Interval)/1e9, float64(int64(i+1)*s.Interval)/1e9
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: x0, Y: v}, plotter.XY{X: x1, Y: v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// bands are the polygons between the step lines lo and hi, one per run
// of intervals where both have a value.
func bands(s *metrics.Series, lo, hi func(r *metrics.Row) float64) []plotter.XYs {
	los := steps(s, lo)
	his := steps(s, hi)
	var out []plotter.XYs
	for k := range min(len(los), len(his)) {
		a, b := los[k], his[k]
		if len(a) != len(b) {
			continue
		}
		poly := append(plotter.XYs{}, b...)
		for i := len(a) - 1; i >= 0; i-- {
			poly = append(poly, a[i])
		}
		out = append(out, poly)
	}
	return out
}
