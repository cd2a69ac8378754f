package report

import (
	"slices"
	"testing"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// A chart shades a load spike even when the scenario also has faults
// (sim.SpikeWindow does not report it then: the recovery rule measures
// from the faults), labelled as a reader names each window.
func TestChartFaults(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: t
duration: 10m
clients:
  count: 10
  arrival: {total_rate: 10/s, profile: [{at: 6m, multiplier: 3}, {at: 7m, multiplier: 1}]}
backend: {workers: 2}
faults:
  - {kind: outage, start: 2m, duration: 30s, mode: refuse}
  - {kind: capacity, start: 4m, duration: 30s, fraction: 0.5}
`), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := ChartFaults(sc)
	want := []plots.Fault{
		{Start: 360e9, End: 420e9, Label: "load spike"},
		{Start: 120e9, End: 150e9, Label: "outage (refuse)", Outage: true},
		{Start: 240e9, End: 270e9, Label: "capacity 50%"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
