package report

import (
	"fmt"
	"math"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

var chartFiles = map[string]string{
	"recovery_time_s":             "compare_recovery.png",
	"peak_received_over_capacity": "compare_peak_load.png",
	"amplification":               "compare_amplification.png",
	"success_ratio":               "compare_success.png",
	// The figures that separate policies where the peak does not.
	"fault_load_over_effective_capacity": "compare_fault_load.png",
	"time_above_capacity_s":              "compare_time_above_capacity.png",
	"recovery_wasted_fraction":           "compare_recovery_waste.png",
}

// oneShotChartFiles replace them for a sweep of one-shot clients
// (arrival process once) or of the occ row, which have no fault to
// recover from and no capacity: the work done and the completion time.
var oneShotChartFiles = map[string]string{
	"backend_received": "compare_received.png",
	"last_success_s":   "compare_completion.png",
	"amplification":    "compare_amplification.png",
	"success_ratio":    "compare_success.png",
}

// CompareInput is the input of plots.Compare for the points: per-interval
// bands of received load, goodput and local drops over each point's runs,
// and one figure per charted metric. name titles the charts and varied
// names what differs between the points. The interval and the shared
// faults and capacity are the first run's; each point also carries its
// own faults, effective capacity and handshake work (chartPoint).
func CompareInput(name, varied string, pts []sweep.PointData) plots.CompareInput {
	return CompareInputBands(name, varied, pts, bandsOf(pts))
}

// CompareInputBands is CompareInput with the bands accumulated already
// (the points' runs need no series).
func CompareInputBands(name, varied string, pts []sweep.PointData, bands *Bands) plots.CompareInput {
	in := plots.CompareInput{Name: name, Varied: varied} // no Varied (compare): the x axis says "run"
	charts := chartFiles
	if len(pts) > 0 && len(pts[0].Runs) > 0 {
		first := pts[0].Runs[0]
		sc := first.Doc.Scenario
		in.Interval = bands.interval
		in.Capacity = sc.Capacity()
		if !hasCapacity(sc) {
			in.Capacity = 0 // the occ row, or dist: concurrency: no capacity line
		}
		if sc.Backend.Kind == scenario.BackendOCC || sc.Clients.Arrival.Process == scenario.ArrivalOnce {
			charts = oneShotChartFiles
		}
		in.Seeds = len(pts[0].Runs)
		in.Faults = ChartFaults(sc)
	}
	for i, pt := range pts {
		pb := &bands.pts[i]
		in.Points = append(in.Points, plots.ComparePoint{
			Label:    pt.Label,
			Received: pb.received.band(),
			Goodput:  pb.goodput.band(),
			Drops:    pb.drops.band(),
		})
		chartPoint(&in.Points[len(in.Points)-1], pt, pb)
	}
	for _, m := range Metrics {
		file, ok := charts[m.Name]
		if !ok {
			continue
		}
		fig := plots.Figure{File: file, Title: m.Title, YLabel: m.YLabel, MissingText: m.Missing}
		for _, pt := range pts {
			s := m.Describe(pt)
			fig.Values = append(fig.Values, plots.Estimate{Mean: s.Mean, Lo: s.Lo, Hi: s.Hi, N: s.N, Missing: len(pt.Runs) - s.N})
		}
		in.Figures = append(in.Figures, fig)
	}
	return in
}

// RunInput is the input of plots.All for one run: its series, capacity,
// recovery settings and the fault and spike windows, labelled; a live
// run's time axis is wall time.
func RunInput(run rundir.Run) plots.Input {
	res, sc := run.Result, run.Result.Scenario
	in := plots.Input{
		Name: sc.Name, Series: res.Series, CapacityRPS: sc.Capacity(), Workers: sc.EntryBackend().TotalWorkers(),
		Summary: res.Summary, RecoveryWindow: int64(sc.Metrics.RecoveryWindow),
		RecoverFraction: sc.Metrics.RecoverFraction, StayFraction: sc.Metrics.StayFraction,
		Contention: sc.Backend.Kind == scenario.BackendOCC, WallClock: run.Live != nil,
	}
	if sc.Clients.Connection != nil {
		in.Clients = sc.Clients.Count
		if cc := sc.EntryBackend().Connections.ConnectCost; cc > 0 {
			in.ConnectCapacityRPS = float64(sc.EntryBackend().TotalWorkers()) / cc.Seconds() // every replica's workers
		}
	}
	if sc.EntryBackend().Service.Dist == scenario.ServiceConcurrency {
		in.CapacityRPS = 0 // workers ÷ mean is not a capacity it has: no line
	}
	in.Faults = ChartFaults(sc)
	if sc.IsGraph() {
		entry := sc.Nodes()[0]
		in.Service = entry.Name
		if len(entry.Calls) > 0 {
			// Its workers wait on its calls: workers ÷ its local work is
			// far above what it can take, and flattens every curve.
			in.CapacityRPS = 0
		}
	}
	return in
}

// GraphFaults are a service graph's faults for a chart of every service:
// each labelled with the service it hit.
func GraphFaults(sc *scenario.Scenario) []plots.Fault {
	nodes := sc.Nodes()
	var out []plots.Fault
	for _, f := range sc.Faults {
		out = append(out, plots.Fault{Start: int64(f.Start), End: int64(f.End()), Label: faultLabel(f) + " at " + nodes[sc.FaultService(f)].Name, Outage: f.Kind == scenario.FaultOutage})
	}
	return out
}

func faultLabel(f scenario.Fault) string {
	switch f.Kind {
	case scenario.FaultOutage:
		return "outage (" + string(f.Mode) + ")"
	case scenario.FaultCapacity:
		return fmt.Sprintf("capacity %.0f%%", 100*f.Fraction)
	case scenario.FaultDisconnect:
		return fmt.Sprintf("disconnect %.0f%%", 100*f.Fraction)
	}
	return string(f.Kind)
}

// ServicesInput is the per-service chart input of a service-graph run
// (nil for a run with one backend).
func ServicesInput(res *sim.Result) []plots.ServiceInput {
	sc := res.Scenario
	if !sc.IsGraph() {
		return nil
	}
	nodes := sc.Nodes()
	var out []plots.ServiceInput
	for i, sv := range res.Services {
		nd := nodes[i].Backend
		in := plots.ServiceInput{Name: sv.Name, Series: sv.Series, Workers: nd.TotalWorkers(),
			CapacityRPS: float64(nd.TotalWorkers()) / nd.Service.Mean.Seconds(), AttemptsPerRequest: math.NaN(), Calls: len(nodes[i].Calls) > 0}
		if a := sv.Summary.AttemptsPerRequest; a != nil {
			in.AttemptsPerRequest = *a
		}
		for _, f := range sc.Faults {
			label := faultLabel(f)
			if j := sc.FaultService(f); j != i {
				label += " at " + nodes[j].Name // shown on every panel, named where it is not this service's
			}
			in.Faults = append(in.Faults, plots.Fault{Start: int64(f.Start), End: int64(f.End()), Label: label, Outage: f.Kind == scenario.FaultOutage})
		}
		out = append(out, in)
	}
	return out
}
