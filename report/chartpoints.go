package report

import (
	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// ChartFaults are the windows a chart of the scenario shades: its load
// spike and its faults, labelled as a reader would name them.
func ChartFaults(sc *scenario.Scenario) []plots.Fault {
	var out []plots.Fault
	if start, end, ok := spike(sc); ok {
		out = append(out, plots.Fault{Start: start, End: end, Label: "load spike"})
	}
	for _, f := range sc.Faults {
		label := faultLabel(f)
		if sc.IsGraph() {
			label += " at " + sc.Nodes()[sc.FaultService(f)].Name
		}
		out = append(out, plots.Fault{Start: int64(f.Start), End: int64(f.End()), Label: label, Outage: f.Kind == scenario.FaultOutage})
	}
	return out
}

// chartPoint adds to a comparison point what its own runs say about the
// backend: its fault windows, its effective capacity per interval (the
// mean over the runs; nil for the occ row) and, with persistent
// connections, the handshakes and the handshake work.
func chartPoint(cp *plots.ComparePoint, pt sweep.PointData, pb *pointBands) {
	if len(pt.Runs) == 0 {
		return
	}
	sc := pt.Runs[0].Doc.Scenario
	cp.Faults = ChartFaults(sc)
	if cp.Faults == nil {
		cp.Faults = []plots.Fault{}
	}
	if pb.capacity != nil {
		cp.Capacity = pb.capacity.band().Mean
	}
	if pb.handshakes != nil {
		cp.Handshakes = pb.handshakes.band()
		cp.HandshakeWork = pb.handshakeWork.band()
	}
}

// hasCapacity: a pool backend whose service time does not depend on
// concurrency has a capacity (workers ÷ mean service time) worth drawing;
// the occ row has none, and with dist: concurrency workers ÷ mean is a
// number the backend never reaches (validate says so).
func hasCapacity(sc *scenario.Scenario) bool {
	return sc.Backend.Kind != scenario.BackendOCC && sc.EntryBackend().Service.Dist != scenario.ServiceConcurrency
}

// spike is the span of the arrival profile where the multiplier is above
// 1, as sim's recovery rule finds it; unlike sim.SpikeWindow it is found
// with faults too: a chart shades the spike whatever else happens.
func spike(sc *scenario.Scenario) (start, end int64, ok bool) { return sc.Spike() }
