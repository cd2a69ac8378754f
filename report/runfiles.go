package report

import (
	"fmt"
	"slices"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

// RunDrawers are the functions RunFiles draws a run's charts with:
// plots.All, and for a service graph plots.ServicesOverload,
// plots.ServicesLoad and plots.Amplification (report computes the inputs,
// plots draws).
type RunDrawers struct {
	All              func(plots.Input) ([]plots.Chart, error)
	ServicesOverload func(name string, svcs []plots.ServiceInput, faults []plots.Fault) ([]byte, error)
	ServicesLoad     func(name string, svcs []plots.ServiceInput) ([]byte, error)
	Amplification    func(name string, svcs []plots.ServiceInput) ([]byte, error)
}

// RunFiles renders every file of a run's folder: the tables and
// summary.json (rundir), the charts (unless charts is false, or the run
// has no rows) and report.html, which shows the threshold verdicts; extra
// files (a live run's live.json) go before summary.json. w, when not
// nil, is what the person gave: the page shows those fields first.
func RunFiles(run rundir.Run, b rundir.Build, charts bool, verdicts []threshold.Verdict, draw RunDrawers, w *AsWritten, extra ...resultdir.File) ([]resultdir.File, error) {
	res := run.Result
	var cs []plots.Chart
	if charts && len(res.Series.Rows) > 0 {
		var err error
		if cs, err = draw.All(RunInput(run)); err != nil {
			return nil, err
		}
		if svcs := ServicesInput(res); svcs != nil {
			// A graph's first chart compares every service with its own
			// capacity: the entry service's server_load.png is flat
			// against a capacity far above the tier that is overloaded.
			over, err := draw.ServicesOverload(res.Scenario.Name, svcs, GraphFaults(res.Scenario))
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", rundir.ServicesOverloadChart, err)
			}
			cs = append([]plots.Chart{{File: rundir.ServicesOverloadChart, PNG: over}}, cs...)
			load, err := draw.ServicesLoad(res.Scenario.Name, svcs)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", rundir.ServicesLoadChart, err)
			}
			amp, err := draw.Amplification(res.Scenario.Name, svcs)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", rundir.AmplificationChart, err)
			}
			cs = append(cs, plots.Chart{File: rundir.ServicesLoadChart, PNG: load}, plots.Chart{File: rundir.AmplificationChart, PNG: amp})
		}
	}
	if run.Live != nil && len(run.Live.NotMeasured) > 0 {
		// Against a remote --target the backend's series are not
		// measured: its chart would draw zeros as if they were.
		cs = slices.DeleteFunc(cs, func(c plots.Chart) bool { return c.File == "server_load.png" })
	}
	var pngs []resultdir.File
	for _, c := range cs {
		pngs = append(pngs, resultdir.File{Name: c.File, Data: c.PNG})
	}
	doc := run.Doc(b)
	var vs []PointVerdicts
	if len(verdicts) > 0 {
		vs = []PointVerdicts{{Label: res.Scenario.Name, Verdicts: verdicts}}
	}
	page, err := RunPage(&doc, vs, Charts(cs), w)
	if err != nil {
		return nil, err
	}
	html, err := HTML(page)
	if err != nil {
		return nil, err
	}
	return run.Files(b, pngs, html, extra...)
}
