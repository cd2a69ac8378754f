package scenario

import (
	"bytes"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Given is the fields a scenario's text and its overrides (each of sets
// is "path=value", as for Parse) give, by dotted path (list elements by
// index: faults.0.start), each with the number of the override that gave
// it last (1 for the first of sets), or 0 when the text did: what a
// person set, as against the defaults a resolved scenario also holds.
// Sections count as given with their fields (clients, clients.throttle,
// clients.throttle.k). It reads the text as Parse does and checks nothing
// more: call it on a scenario Parse accepted.
func Given(data []byte, sets []string) (map[string]int, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	for i, s := range sets {
		if err := ApplySet(&root, s, i+1); err != nil {
			return nil, err
		}
	}
	out := map[string]int{}
	open := map[*yaml.Node]bool{} // the nodes being walked: an alias may point back at one
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if open[n] {
			return
		}
		open[n] = true
		defer delete(open, n)
		if path != "" {
			out[path] = max(-n.Line, 0) // ApplySet marks its nodes with -(its number)
		}
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				walk(n.Content[j+1], join(path, n.Content[j].Value))
			}
		case yaml.SequenceNode:
			for j, c := range n.Content {
				walk(c, join(path, strconv.Itoa(j)))
			}
		}
	}
	walk(root.Content[0], "")
	return out, nil
}
