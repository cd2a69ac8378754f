package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// replicasPanel is the server-load chart's panel of an autoscaled
// backend: the replicas taking work and the replicas the autoscaler
// wanted (taking work or still provisioning), each an interval mean.
func replicasPanel(in Input) (*plot.Plot, *plot.Legend, error) {
	s := in.Series
	iv := float64(s.Interval)
	var ymax float64
	for _, r := range s.Rows {
		ymax = max(ymax, float64(r.ReplicasPeak), float64(r.DesiredNS)/iv)
	}
	ymax = niceMax(ymax)
	p := NewPlot(in.Name+": replicas (autoscaler)", in.timeAxis(), "replicas")
	if err := Shade(p, in.Faults, ymax); err != nil {
		return nil, nil, err
	}
	l := NewLegend()
	if err := addSteps(p, l, s, []stepSeries{
		{name: "desired (incl. provisioning)", c: Vermillion, dashes: []vg.Length{vg.Points(4), vg.Points(2)},
			f: func(r *metrics.Row) float64 { return float64(r.DesiredNS) / iv }, always: true},
		{name: "taking work", c: Blue, f: func(r *metrics.Row) float64 { return float64(r.ReplicasNS) / iv }, always: true, width: vg.Points(2)},
	}); err != nil {
		return nil, nil, err
	}
	SetYRange(p, ymax)
	return p, l, nil
}
