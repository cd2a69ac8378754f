package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// bin is how many metrics intervals one step of a binned chart averages.
type bin struct {
	n        int
	interval int64 // ns
}

// maxBins is the most steps a binned chart draws: a reconnect storm that
// swings by ten times every few seconds reads as a solid comb at one step
// per interval, and as a level with a band at thirty. (Bins of ten
// periods or more also hide the aliasing of a periodic storm.)
const maxBins = 30

// readableBin is the smallest round bin (1, 2, 5, 10, 15, 30 s, 1, 2, 5,
// 10 min, in whole intervals) that gives at most maxBins steps.
func readableBin(interval int64, rows int) bin {
	if interval <= 0 || rows <= maxBins {
		return bin{1, interval}
	}
	for _, s := range []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		ns := s * 1e9
		if ns < interval || ns%interval != 0 {
			continue
		}
		if n := int(ns / interval); (rows+n-1)/n <= maxBins {
			return bin{n, interval}
		}
	}
	return bin{(rows + maxBins - 1) / maxBins, interval}
}

// note is the chart-title note saying what a step and the band are.
func (b bin) note() string {
	if b.n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%s means, band: %s min–max)", secs(float64(int64(b.n)*b.interval)/1e9), secs(float64(b.interval)/1e9))
}

func secs(s float64) string {
	if s >= 60 && math.Mod(s, 60) == 0 {
		return fmt.Sprintf("%g min", s/60)
	}
	return fmt.Sprintf("%g s", s)
}

// binnedSeries is a per-interval value averaged over bins, with the
// minimum and maximum of the intervals in each bin.
type binnedSeries struct {
	b             bin
	mean, lo, hi  []float64
	rows          int
	allZero, flat bool
}

func binned(s *metrics.Series, b bin, f func(r *metrics.Row) float64) binnedSeries {
	bs := binnedSeries{b: b, rows: len(s.Rows), allZero: true, flat: true}
	for i := 0; i < len(s.Rows); i += b.n {
		var sum float64
		lo, hi := math.Inf(1), math.Inf(-1)
		n := 0
		for j := i; j < min(i+b.n, len(s.Rows)); j++ {
			v := zeroNaN(f(&s.Rows[j]))
			sum += v
			lo, hi = min(lo, v), max(hi, v)
			n++
		}
		bs.mean = append(bs.mean, sum/float64(n))
		bs.lo, bs.hi = append(bs.lo, lo), append(bs.hi, hi)
		bs.allZero = bs.allZero && hi == 0 && lo == 0
		bs.flat = bs.flat && hi-lo <= 1e-9*max(1, hi)
	}
	return bs
}

// axisMax is the y range the series needs: its highest bin mean, and its
// band's top when that is not far above (a band twice as high as the
// means is cut off rather than squash them).
func (bs binnedSeries) axisMax() (ymax float64, cut bool) {
	var m, h float64
	for i := range bs.mean {
		m, h = max(m, bs.mean[i]), max(h, bs.hi[i])
	}
	if h <= 2*m || bs.b.n <= 1 {
		return h, false
	}
	return 1.3 * m, true
}

// add draws the band (when the bins hold more than one interval and the
// values vary) and the means as steps; a series that is zero throughout
// is left out.
func (bs binnedSeries) add(p *plot.Plot, l *plot.Legend, name string, c color.Color, dashes []vg.Length, band bool) error {
	if bs.allZero {
		return nil
	}
	w := float64(int64(bs.b.n)*bs.b.interval) / 1e9
	end := float64(int64(bs.rows)*bs.b.interval) / 1e9
	x := func(i int) float64 { return min(float64(i)*w, end) }
	if band && bs.b.n > 1 && !bs.flat {
		ring := make(plotter.XYs, 0, 4*len(bs.mean))
		for i := range bs.mean {
			ring = append(ring, plotter.XY{X: x(i), Y: bs.hi[i]}, plotter.XY{X: x(i + 1), Y: bs.hi[i]})
		}
		for i := len(bs.mean) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: x(i + 1), Y: bs.lo[i]}, plotter.XY{X: x(i), Y: bs.lo[i]})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return err
		}
		poly.Color = translucent(c, 0x38)
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	// Explicit steps: gonum's clipping of a StepStyle line at the top of
	// the axis moves the vertical edges of a step that is cut off.
	pts := make(plotter.XYs, 0, 2*len(bs.mean))
	for i, v := range bs.mean {
		pts = append(pts, plotter.XY{X: x(i), Y: v}, plotter.XY{X: x(i + 1), Y: v})
	}
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	ln.Color, ln.Dashes, ln.Width = c, dashes, vg.Points(1.6)
	if band {
		// The banded series is the total (attempts, handshakes): wider,
		// so that an outcome equal to it (all refused) does not hide it.
		ln.Width = vg.Points(3.2)
	}
	p.Add(ln)
	l.Add(name, ln)
	return nil
}

func translucent(c color.Color, alpha uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), alpha}
}

// Connections renders connections.png: connected clients (top) and
// connection attempts and their outcomes per second (bottom), the rates
// as means over readable bins with the per-interval spread as a band.
func Connections(in Input, clients int) ([]byte, error) {
	s := in.Series
	sec := perSecond(s)
	top := NewPlot(in.Name+": connected clients", in.timeAxis(), "clients")
	ymax := niceMax(float64(clients))
	if err := Shade(top, in.Faults, ymax); err != nil {
		return nil, err
	}
	lt := NewLegend()
	cl, err := StepLine(s, Blue, nil, func(r *metrics.Row) float64 { return float64(r.Connected) })
	if err != nil {
		return nil, err
	}
	cl.Width = vg.Points(2)
	top.Add(cl)
	lt.Add("connected (end of interval)", cl)
	all, err := StepLine(s, Black, []vg.Length{vg.Points(6), vg.Points(3)}, func(*metrics.Row) float64 { return float64(clients) })
	if err != nil {
		return nil, err
	}
	top.Add(all)
	lt.Add(fmt.Sprintf("all %s clients", Thousands(float64(clients))), all)
	SetYRange(top, ymax)

	b := readableBin(s.Interval, len(s.Rows))
	series := []struct {
		name   string
		c      color.Color
		dashes []vg.Length
		bs     binnedSeries
	}{
		{"attempts", Blue, nil, binned(s, b, func(r *metrics.Row) float64 { return float64(r.ConnectAttempts) / sec })},
		{"connected", Green, nil, binned(s, b, func(r *metrics.Row) float64 { return float64(r.ConnectsOK) / sec })},
		{"refused or rejected", Vermillion, nil, binned(s, b, func(r *metrics.Row) float64 { return float64(r.ConnectsFailed) / sec })},
		{"timed out at the client", Purple, []vg.Length{vg.Points(2), vg.Points(2)}, binned(s, b, func(r *metrics.Row) float64 { return float64(r.ConnectTimeouts) / sec })},
	}
	// The y range follows the attempts while the backend is up: attempts
	// refused during an outage cost nothing and would flatten the rest.
	var bmax, outageMax float64
	cut := false
	for _, sr := range series {
		m, c := sr.bs.axisMax()
		bmax, cut = max(bmax, m), cut || c
	}
	att := series[0].bs
	w := int64(b.n) * s.Interval
	upMax := 0.0
	for i, v := range att.mean {
		from, to := int64(i)*w, int64(i+1)*w
		down := false
		for _, f := range in.Faults {
			down = down || (f.Outage && from < f.End && to > f.Start)
		}
		if down {
			outageMax = max(outageMax, v)
		} else {
			upMax = max(upMax, v)
		}
	}
	title := in.Name + ": connection attempts" + b.note()
	if outageMax > 1.5*upMax && upMax > 0 {
		title = fmt.Sprintf("%s: connection attempts%s; outage peak %s/s cut off", in.Name, b.note(), Thousands(outageMax))
		bmax = 1.3 * upMax
		cut = false
	} else if cut {
		title += fmt.Sprintf("; peaks to %s/s cut off", Thousands(att.hiMax()))
	}
	bottom := NewPlot(title, in.timeAxis(), "per second")
	if c := in.ConnectCapacityRPS; c > 0 && c < 3*bmax {
		bmax = max(bmax, c) // show the capacity line when it is in range
	}
	bmax = niceMax(bmax)
	if err := Shade(bottom, in.Faults, bmax); err != nil {
		return nil, err
	}
	lb := NewLegend()
	for i, sr := range series {
		if err := sr.bs.add(bottom, lb, sr.name, sr.c, sr.dashes, i == 0); err != nil {
			return nil, err
		}
	}
	if in.ConnectCapacityRPS > 0 && in.ConnectCapacityRPS < bmax {
		// Handshake capacity: workers available ÷ connect_cost.
		if err := addSteps(bottom, lb, s, []stepSeries{{name: capacityName(in, "handshake capacity"), c: Black,
			dashes: []vg.Length{vg.Points(6), vg.Points(3)}, always: true, f: func(r *metrics.Row) float64 {
				return float64(r.CapacityNS) / float64(s.Interval) / float64(max(in.Workers, 1)) * in.ConnectCapacityRPS
			}}}); err != nil {
			return nil, err
		}
	}
	SetYRange(bottom, bmax)
	return RenderStack([]*plot.Plot{top, bottom}, []*plot.Legend{lt, lb}, 2*Height)
}

func (bs binnedSeries) hiMax() float64 {
	var h float64
	for _, v := range bs.hi {
		h = max(h, v)
	}
	return h
}
