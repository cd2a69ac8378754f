package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// ScenarioYAML is the resolved scenario as YAML, in the field order and
// units of summary.json (durations as "30s", rates as "100/s").
func ScenarioYAML(sc *scenario.Scenario) (string, error) {
	n, err := scenarioNode(sc)
	if err != nil {
		return "", err
	}
	out, err := yaml.Marshal(n)
	return string(out), err
}

// scenarioNode is the resolved scenario as a YAML document node, plain
// (block style; {} and [] for empty sections and lists).
func scenarioNode(sc *scenario.Scenario) (*yaml.Node, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil { // JSON is YAML: the node keeps the order
		return nil, err
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
	return &n, nil
}

// AsWritten is what a person gave a run: the scenario file's name, the
// fields it and the overrides gave (scenario.Given) and the overrides
// as typed ("--set clients.throttle.k=3", "--seed 2"). The run page
// shows those fields and folds the defaults away.
type AsWritten struct {
	File  string
	Given map[string]int
	Flags []string
}

// Seed records a --seed flag: the seed is given. Nil-safe.
func (w *AsWritten) Seed(seed uint64) {
	if w == nil {
		return
	}
	w.Flags = append(w.Flags, "--seed "+strconv.FormatUint(seed, 10))
	w.Given["seed"] = len(w.Flags)
}

// GivenYAML is the resolved scenario cut down to the fields given (as
// scenario.Given reports them), in the resolved scenario's units and
// order; a section given whole (a shorthand, or {} for its defaults)
// keeps every field it resolved to. The name and description are left
// out: the page shows them above. A short section of plain values is
// written on one line ({base: 100ms, cap: 10s}).
func GivenYAML(sc *scenario.Scenario, given map[string]int) (string, error) {
	doc, err := scenarioNode(sc)
	if err != nil {
		return "", err
	}
	// under reports whether a field under path was given.
	under := func(path string) bool {
		for p := range given {
			if strings.HasPrefix(p, path+".") {
				return true
			}
		}
		return false
	}
	var prune func(n *yaml.Node, path string)
	prune = func(n *yaml.Node, path string) {
		if path != "" && !under(path) {
			return // given whole: every field it resolved to
		}
		var kept []*yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				p := joinPath(path, n.Content[j].Value)
				if _, ok := given[p]; !ok || p == "name" || p == "description" {
					continue
				}
				prune(n.Content[j+1], p)
				kept = append(kept, n.Content[j], n.Content[j+1])
			}
		case yaml.SequenceNode:
			for j, c := range n.Content {
				p := joinPath(path, strconv.Itoa(j))
				if _, ok := given[p]; !ok {
					continue
				}
				prune(c, p)
				kept = append(kept, c)
			}
		default:
			return
		}
		n.Content = kept
	}
	top := doc.Content[0]
	prune(top, "")
	oneLine(top)
	if len(top.Content) == 0 {
		return "", nil
	}
	out, err := yaml.Marshal(doc)
	return string(out), err
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// oneLine writes a section (or list) of plain values in flow style when
// it fits on a short line.
func oneLine(n *yaml.Node) {
	for _, c := range n.Content {
		oneLine(c)
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return
	}
	width := 2
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return
		}
		width += len(c.Value) + 2
	}
	if width <= 72 {
		n.Style = yaml.FlowStyle
	}
}

// RunScenario is the run page's scenario: the fields given (w, when the
// caller knows them) with the overrides typed, then the whole resolved
// scenario, folded.
func RunScenario(sc *scenario.Scenario, w *AsWritten) ([]Text, error) {
	full, err := ScenarioYAML(sc)
	if err != nil {
		return nil, err
	}
	all := Text{Label: fmt.Sprintf("every field as run, defaults included (%d lines)", strings.Count(full, "\n")), Body: full, Folded: true}
	if w == nil || w.Given == nil {
		return []Text{all}, nil
	}
	given, err := GivenYAML(sc, w.Given)
	if err != nil {
		return nil, err
	}
	label := "the fields " + w.File + " gives"
	if len(w.Flags) > 0 {
		label = "the fields " + w.File + " and the command line's overrides give"
	}
	if given == "" {
		given = "# none: every field has its default\n"
	}
	out := []Text{{Label: label, Body: given}}
	if len(w.Flags) > 0 {
		var b strings.Builder
		for _, f := range w.Flags {
			b.WriteString(f + "\n")
		}
		out = append(out, Text{Label: "overrides on the command line", Body: b.String()})
	}
	return append(out, all), nil
}
