package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// ScenarioYAML is the resolved scenario as YAML, in the field order and
// units of summary.json (durations as "30s", rates as "100/s").
func ScenarioYAML(sc *scenario.Scenario) (string, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return "", err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil { // JSON is YAML: the node keeps the order
		return "", err
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			if len(n.Content) == 0 {
				n.Style = yaml.FlowStyle // {} and []
			}
		}
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	out, err := yaml.Marshal(&n)
	return string(out), err
}

// chartTitle is a chart's file name in words: compare_server_load.png is
// "server load".
func chartTitle(file string) string {
	s := strings.TrimSuffix(path.Base(file), path.Ext(file))
	s = strings.TrimPrefix(s, "compare_")
	return strings.ReplaceAll(s, "_", " ")
}

// Charts are PNG charts for a page, in the order given.
func Charts(cs []plots.Chart) []Chart {
	out := make([]Chart, len(cs))
	for i, c := range cs {
		out[i] = Chart{Title: chartTitle(c.File), File: c.File, PNG: c.PNG}
	}
	return out
}

// chartOrder puts the comparison charts over time first, then the
// figures; other charts follow by name.
var chartOrder = []string{"compare_server_load.png", "compare_local_drops.png", "compare_goodput.png",
	"compare_recovery.png", "compare_received.png", "compare_completion.png", "compare_peak_load.png",
	"compare_amplification.png", "compare_success.png"}

// ChartFiles are the PNG files among a results folder's files, as page
// charts: those of chartOrder in its order, then the others by name.
func ChartFiles(files map[string][]byte) []Chart {
	rank := func(n string) int {
		if i := slices.Index(chartOrder, n); i >= 0 {
			return i
		}
		return len(chartOrder)
	}
	names := slices.Sorted(maps.Keys(files))
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	var out []Chart
	for _, n := range names {
		if strings.HasSuffix(n, ".png") {
			out = append(out, Chart{Title: chartTitle(n), File: n, PNG: files[n]})
		}
	}
	return out
}

// RunPage is the report of one run: its summary, the verdicts of its
// thresholds, its charts and its scenario.
func RunPage(doc *sim.SummaryDoc, vs []PointVerdicts, charts []Chart) (Page, error) {
	sc := doc.Scenario
	y, err := ScenarioYAML(sc)
	if err != nil {
		return Page{}, err
	}
	pt := sweep.PointData{Label: sc.Name, Runs: []sweep.RunData{{Doc: doc}}}
	return Page{
		Title: sc.Name,
		Kind:  "run",
		Facts: []Fact{
			{"seed", fmt.Sprint(sc.Seed)}, {"simulated", sc.Duration.String()}, {"clients", fmt.Sprint(sc.Clients.Count)},
			{"status", doc.Run.Status}, {"fingerprint", doc.Run.Fingerprint},
		},
		Summary:  NewGrid("runs", []sweep.PointData{pt}),
		Verdicts: vs,
		Charts:   charts,
		Scenario: []Text{{Body: y}},
	}, nil
}

// ComparisonPage is the report of a sweep (kind "sweep") or of compared
// runs (kind "compare"): the summary of every point, verdicts, the paired
// differences from the baseline, charts, and scenario texts the caller
// chose (a sweep's base scenario and points, or every compared run's).
func ComparisonPage(kind string, c Comparison, vs []PointVerdicts, charts []Chart, scen []Text, facts []Fact) Page {
	grid := "sweep"
	if kind == "compare" {
		grid = "runs"
	}
	p := Page{
		Title:    c.Name,
		Kind:     kind,
		Facts:    facts,
		Summary:  NewGrid(grid, c.Points),
		Verdicts: vs,
		Charts:   charts,
		Scenario: scen,
	}
	if c.Baseline >= 0 {
		p.Paired = Paired(c.Points, c.Baseline)
	}
	return p
}
