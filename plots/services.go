package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// ServiceInput is one service of a service-graph run.
type ServiceInput struct {
	Name        string
	Series      *metrics.Series
	CapacityRPS float64 // nominal: workers / mean service time
	Workers     int
	Faults      []Fault // the scenario's faults, labelled with the service they hit when it is another
	// Calls: the service calls others, so its local-work capacity says
	// little about what it can take (its workers may wait on its calls);
	// no capacity line is drawn for it.
	Calls bool
	// AttemptsPerRequest is attempts received per external request, with
	// its confidence half-width (0 for one run).
	AttemptsPerRequest, HalfWidth float64
}

// ServicesLoad renders services_load.png: the load on every service of a
// graph as small multiples on one shared time axis, each with its
// capacity and its fault windows, top to bottom in the order given.
func ServicesLoad(name string, svcs []ServiceInput) ([]byte, error) {
	var ps []*plot.Plot
	var ls []*plot.Legend
	var xmax float64
	for _, sv := range svcs {
		xmax = max(xmax, float64(int64(len(sv.Series.Rows))*sv.Series.Interval)/1e9)
	}
	for i, sv := range svcs {
		s := sv.Series
		sec := perSecond(s)
		capPerWorker := sv.CapacityRPS / float64(max(sv.Workers, 1))
		var ymax float64
		for _, r := range s.Rows {
			ymax = max(ymax, float64(r.Received+r.FailedOutage)/sec)
			if !sv.Calls {
				ymax = max(ymax, float64(r.CapacityNS)/float64(s.Interval)*capPerWorker)
			}
		}
		ymax = niceMax(ymax)
		title := fmt.Sprintf("%s (%d workers, %.0f/s capacity)", sv.Name, sv.Workers, sv.CapacityRPS)
		if s.Autoscaled {
			title = fmt.Sprintf("%s (autoscaled: %d workers, %.0f/s capacity at the start)", sv.Name, sv.Workers, sv.CapacityRPS)
		}
		if sv.Calls {
			title = fmt.Sprintf("%s (%d workers; calls others)", sv.Name, sv.Workers)
		}
		if i == 0 {
			title = name + ": load on each service — " + title
		}
		xlabel := ""
		if i == len(svcs)-1 {
			xlabel = "simulated time (s)"
		}
		p := NewPlot(title, xlabel, "attempts/s")
		p.Title.TextStyle.Font.Size = vg.Points(11)
		if err := Shade(p, sv.Faults, ymax); err != nil {
			return nil, err
		}
		l := NewLegend()
		series := []stepSeries{
			// received wide under served, which often equals it
			{name: "received", c: Blue, f: func(r *metrics.Row) float64 { return float64(r.Received+r.FailedOutage) / sec }, width: vg.Points(3.5)},
			{name: "served", c: Sky, f: func(r *metrics.Row) float64 { return float64(r.Served) / sec }},
			{name: "succeeded (callers)", c: Green, f: func(r *metrics.Row) float64 { return float64(r.Succeeded) / sec }},
			{name: "rejected", c: Vermillion, f: func(r *metrics.Row) float64 { return float64(r.Rejected+r.QueueTimeouts+r.Unanswered) / sec }},
		}
		if !sv.Calls {
			capName := "capacity"
			for _, f := range sv.Faults {
				if strings.HasPrefix(f.Label, "capacity") && !strings.Contains(f.Label, " at ") {
					capName = "effective capacity (workers left)" // a capacity fault on this service
				}
			}
			series = append(series, stepSeries{name: capName, c: Black, dashes: []vg.Length{vg.Points(6), vg.Points(3)}, f: func(r *metrics.Row) float64 {
				return float64(r.CapacityNS) / float64(s.Interval) * capPerWorker
			}, always: true})
		}
		if err := addSteps(p, l, s, series); err != nil {
			return nil, err
		}
		SetYRange(p, ymax)
		p.X.Min, p.X.Max = 0, xmax
		ps, ls = append(ps, p), append(ls, l)
	}
	h := vg.Length(len(svcs))*5*vg.Centimeter + 2*vg.Centimeter
	return RenderStack(ps, ls, h)
}

// Amplification renders amplification.png: the attempts that reached each
// service (refused ones in an outage included) per external request, one
// bar per tier (with its 95% interval when there are several runs).
func Amplification(name string, svcs []ServiceInput) ([]byte, error) {
	p := NewPlot(name+": attempts that reached each service per external request (whole run, refused ones included)", "", "attempts per external request")
	var vals plotter.Values
	var ymax float64
	for _, sv := range svcs {
		v := sv.AttemptsPerRequest
		if math.IsNaN(v) {
			v = 0
		}
		vals = append(vals, v)
		ymax = max(ymax, v+sv.HalfWidth)
	}
	bars, err := plotter.NewBarChart(vals, vg.Centimeter*1.6)
	if err != nil {
		return nil, err
	}
	bars.Color = Blue
	bars.LineStyle.Width = 0
	p.Add(bars)
	var names []string
	var labels plotter.XYLabels
	for i, sv := range svcs {
		names = append(names, sv.Name)
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: vals[i] + sv.HalfWidth})
		txt := fmt.Sprintf("%.3g", vals[i])
		if sv.HalfWidth > 0 {
			txt = fmt.Sprintf("%.3g ± %.2g", vals[i], sv.HalfWidth)
		}
		labels.Labels = append(labels.Labels, txt)
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = -0.5
		lb.TextStyle[i].YAlign = 0
		lb.TextStyle[i].Font.Size = vg.Points(10)
	}
	p.Add(lb)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(svcs))-0.5 // whole bars and labels, not halves at the edges
	SetYRange(p, niceMax(ymax)*1.08)
	return Render(p, nil)
}

// ServicesOverload renders services_overload.png, the first chart of a
// graph run: every service's load (attempts that reached it, refused ones
// in an outage included) ÷ its own capacity, on one axis with the 1×
// line, so that the tier that is overloaded stands out whatever the
// services' sizes. Services are listed by peak, highest first; a
// capacity fault on a service draws the share of its capacity left in
// its colour. faults are shaded with their labels, which should name the
// service each hit.
func ServicesOverload(name string, svcs []ServiceInput, faults []Fault) ([]byte, error) {
	type line struct {
		sv   ServiceInput
		f    func(r *metrics.Row) float64
		peak float64
	}
	var ls []line
	for _, sv := range svcs {
		if sv.CapacityRPS <= 0 {
			continue
		}
		sec := perSecond(sv.Series)
		c := sv.CapacityRPS
		f := func(r *metrics.Row) float64 { return float64(r.Received+r.FailedOutage) / sec / c }
		var peak float64
		for i := range sv.Series.Rows {
			peak = max(peak, f(&sv.Series.Rows[i]))
		}
		ls = append(ls, line{sv, f, peak})
	}
	slices.SortStableFunc(ls, func(a, b line) int { return cmp.Compare(b.peak, a.peak) })
	title := name + ": load on each service ÷ its capacity"
	if len(ls) > 0 {
		title += fmt.Sprintf(" — most overloaded: %s, peak %.2g×", ls[0].sv.Name, ls[0].peak)
	}
	p := NewPlot(title, "simulated time (s)", "attempts/s ÷ the service's capacity")
	ymax := 1.0
	var xmax float64
	for _, l := range ls {
		ymax = max(ymax, l.peak)
		xmax = max(xmax, float64(int64(len(l.sv.Series.Rows))*l.sv.Series.Interval)/1e9)
	}
	ymax = niceMax(ymax)
	if err := Shade(p, faults, ymax); err != nil {
		return nil, err
	}
	lg := NewLegend()
	colours := []color.Color{Vermillion, Blue, Green, Purple, Orange, Sky, Grey}
	for i, l := range ls {
		col := colours[i%len(colours)]
		label := l.sv.Name
		if l.sv.Calls {
			label += " (calls others: local work only)"
		}
		width := vg.Points(1.3)
		if i == 0 {
			width = vg.Points(2.5)
		}
		if err := addSteps(p, lg, l.sv.Series, []stepSeries{{name: label, c: col, f: l.f, always: true, width: width}}); err != nil {
			return nil, err
		}
		s, workers := l.sv.Series, float64(max(l.sv.Workers, 1))
		left := func(r *metrics.Row) float64 { return float64(r.CapacityNS) / float64(s.Interval) / workers }
		changed := false
		for j := range s.Rows {
			changed = changed || math.Abs(left(&s.Rows[j])-1) > 1e-9
		}
		if changed && !s.Autoscaled {
			if err := addSteps(p, lg, s, []stepSeries{{name: l.sv.Name + " capacity left", c: col, dashes: []vg.Length{vg.Points(3), vg.Points(2)}, f: left, always: true}}); err != nil {
				return nil, err
			}
		}
	}
	one, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: xmax, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Color, one.Dashes, one.Width = Black, []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1)
	p.Add(one)
	lg.Add("capacity (1×)", one)
	SetYRange(p, ymax)
	p.X.Min, p.X.Max = 0, xmax
	return Render(p, lg)
}
