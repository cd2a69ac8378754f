package plots

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// RenderStack draws plots stacked vertically, x axes aligned, each with its
// legend to the right, and returns PNG bytes.
func RenderStack(ps []*plot.Plot, ls []*plot.Legend, height vg.Length) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(Width, height), vgimg.UseDPI(DPI))
	dc := draw.Crop(draw.New(img), vg.Millimeter, -2*vg.Millimeter, vg.Millimeter, -vg.Millimeter)
	var lw vg.Length
	for _, l := range ls {
		r := l.Rectangle(dc)
		lw = max(lw, r.Max.X-r.Min.X)
	}
	strip := draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, 0)
	plotsArea := draw.Crop(dc, 0, -lw-4*vg.Millimeter, 0, 0)
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadY: 5 * vg.Millimeter}
	grid := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		grid[i] = []*plot.Plot{p}
	}
	cs := plot.Align(grid, tiles, plotsArea)
	for i, p := range ps {
		p.Draw(cs[i][0])
		l := ls[i]
		l.Top = true
		l.YOffs = -p.Title.TextStyle.FontExtents().Height - 3*vg.Millimeter
		l.Draw(tiles.At(strip, 0, i))
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Connections renders connections.png: connected clients (top) and
// connection attempts and their outcomes per second (bottom).
func Connections(in Input, clients int) ([]byte, error) {
	s := in.Series
	sec := perSecond(s)
	top := NewPlot(in.Name+": connected clients", "simulated time (s)", "clients")
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
	lt.Add(fmt.Sprintf("all %d clients", clients), all)
	SetYRange(top, ymax)

	// The y range follows the attempts while the backend is up: attempts
	// refused during an outage cost nothing and would flatten the rest.
	var bmax, outageMax float64
	for i, r := range s.Rows {
		v := float64(r.ConnectAttempts) / sec
		from, to := int64(i)*s.Interval, int64(i+1)*s.Interval
		down := false
		for _, f := range in.Faults {
			down = down || (f.Outage && from < f.End && to > f.Start)
		}
		if down {
			outageMax = max(outageMax, v)
		} else {
			bmax = max(bmax, v)
		}
	}
	title := in.Name + ": connection attempts"
	if outageMax > 1.5*bmax && bmax > 0 {
		title += fmt.Sprintf(" (peak of %.0f/s during the outage cut off)", outageMax)
	} else {
		bmax = max(bmax, outageMax)
	}
	bottom := NewPlot(title, "simulated time (s)", "per second")
	if c := in.ConnectCapacityRPS; c > 0 && c < 3*bmax {
		bmax = max(bmax, c) // show the capacity line when it is in range
	}
	bmax = niceMax(bmax)
	if err := Shade(bottom, in.Faults, bmax); err != nil {
		return nil, err
	}
	lb := NewLegend()
	for _, sr := range []struct {
		name   string
		c      color.Color
		dashes []vg.Length
		f      func(r *metrics.Row) float64
	}{
		{"attempts", Blue, nil, func(r *metrics.Row) float64 { return float64(r.ConnectAttempts) / sec }},
		{"connected", Green, nil, func(r *metrics.Row) float64 { return float64(r.ConnectsOK) / sec }},
		{"refused or rejected", Vermillion, nil, func(r *metrics.Row) float64 { return float64(r.ConnectsFailed) / sec }},
		{"timed out at the client", Purple, []vg.Length{vg.Points(2), vg.Points(2)}, func(r *metrics.Row) float64 { return float64(r.ConnectTimeouts) / sec }},
	} {
		ln, err := StepLine(s, sr.c, sr.dashes, sr.f)
		if err != nil {
			return nil, err
		}
		bottom.Add(ln)
		lb.Add(sr.name, ln)
	}
	if in.ConnectCapacityRPS > 0 && in.ConnectCapacityRPS < bmax {
		// Handshake capacity: workers available ÷ connect_cost.
		capl, err := StepLine(s, Black, []vg.Length{vg.Points(6), vg.Points(3)}, func(r *metrics.Row) float64 {
			return float64(r.CapacityNS) / float64(s.Interval) / float64(max(in.Workers, 1)) * in.ConnectCapacityRPS
		})
		if err != nil {
			return nil, err
		}
		bottom.Add(capl)
		lb.Add("handshake capacity", capl)
	}
	SetYRange(bottom, bmax)
	return RenderStack([]*plot.Plot{top, bottom}, []*plot.Legend{lt, lb}, 2*Height)
}
