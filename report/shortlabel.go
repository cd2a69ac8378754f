package report

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

// maxShortPart is the most runes one part of a short label may take.
const maxShortPart = 28

// ShortLabels are sweep point labels for display only (the terminal's
// table): a part "name={…}" or "name=[…]" whose value is a whole YAML
// section (a generated label, retry={max_attempts: 3, budget: {kind:
// sre}}) becomes the fields in which that part's values differ between
// the points (budget.kind=sre), cut to maxShortPart runes. Labels with no
// such part stay as they are; when the short labels would not tell every
// point apart, all stay as they are. Point names, folders and files keep
// the labels themselves.
func ShortLabels(labels []string) []string {
	parts := make([][]string, len(labels))
	type member struct {
		label, part int
		leaves      map[string]string
	}
	groups := map[string][]member{} // by the part's name: its values, point by point
	var names []string
	var order = map[string][]string{}
	for i, l := range labels {
		parts[i] = splitLabel(l)
		for k, part := range parts[i] {
			n, v, found := strings.Cut(part, "=")
			if !found || !strings.HasPrefix(v, "{") && !strings.HasPrefix(v, "[") {
				continue
			}
			f, o, err := flowLeaves(v)
			if err != nil {
				continue
			}
			if _, ok := groups[n]; !ok {
				names = append(names, n)
			}
			groups[n] = append(groups[n], member{i, k, f})
			for _, p := range o {
				if !slices.Contains(order[n], p) {
					order[n] = append(order[n], p)
				}
			}
		}
	}
	changed := false
	for _, n := range names {
		ms := groups[n]
		if len(ms) < 2 {
			continue
		}
		leaves := make([]map[string]string, len(ms))
		for j, m := range ms {
			leaves[j] = m.leaves
		}
		chosen := telling(leaves, order[n])
		for j, m := range ms {
			kept := render(leaves[j], chosen)
			if len(kept) == 0 { // none of the telling fields: those it has that differ
				var own []string
				for _, p := range order[n] {
					if _, has := leaves[j][p]; has && differs(leaves, p) {
						own = append(own, p)
					}
				}
				kept = render(leaves[j], own)
			}
			s := strings.Join(kept, " ")
			if r := []rune(s); len(r) > maxShortPart {
				s = string(r[:maxShortPart-1]) + "…"
			}
			if s == "" {
				s = parts[m.label][m.part] // {} or []: as written
			}
			parts[m.label][m.part] = s
			changed = true
		}
	}
	out := slices.Clone(labels)
	if !changed {
		return out
	}
	seen := map[string]bool{}
	for i := range labels {
		out[i] = strings.Join(parts[i], ", ")
		if seen[out[i]] {
			return slices.Clone(labels)
		}
		seen[out[i]] = true
	}
	return out
}

// telling is the fewest leaves, chosen greedily, whose values tell the
// members apart: each time the leaf that splits them into the most
// classes (a missing leaf a class of its own), ties to the leaf every
// member has.
func telling(leaves []map[string]string, order []string) []string {
	var chosen []string
	classes := func(ps []string) int {
		seen := map[string]bool{}
		for _, l := range leaves {
			var k strings.Builder
			for _, p := range ps {
				v, has := l[p]
				if !has {
					v = "\x00"
				}
				k.WriteString(v + "\x01")
			}
			seen[k.String()] = true
		}
		return len(seen)
	}
	for classes(chosen) < len(leaves) {
		best, bestN, bestMissing := "", classes(chosen), true
		for _, p := range order {
			if slices.Contains(chosen, p) {
				continue
			}
			missing := false
			for _, l := range leaves {
				if _, has := l[p]; !has {
					missing = true
				}
			}
			n := classes(append(slices.Clone(chosen), p))
			if n > bestN || n == bestN && n > classes(chosen) && bestMissing && !missing {
				best, bestN, bestMissing = p, n, missing
			}
		}
		if best == "" {
			break // identical values: nothing tells them apart
		}
		chosen = append(chosen, best)
	}
	return chosen
}

// render is the leaves of ps a member has, by their last name: "cap=10s".
func render(l map[string]string, ps []string) []string {
	var out []string
	for _, p := range ps {
		if v, has := l[p]; has {
			out = append(out, p[strings.LastIndex(p, ".")+1:]+"="+v)
		}
	}
	return out
}

// WithShortLabels is pts labelled by ShortLabels, for sentences a person
// reads (the verdict); the runs are shared, not copied.
func WithShortLabels(pts []sweep.PointData) []sweep.PointData {
	labels := make([]string, len(pts))
	for i, pt := range pts {
		labels[i] = pt.Label
	}
	out := slices.Clone(pts)
	for i, l := range ShortLabels(labels) {
		out[i].Label = l
	}
	return out
}

// differs reports whether the leaf p has two values among the points.
func differs(leaves []map[string]string, p string) bool {
	first, had := leaves[0][p]
	for _, l := range leaves[1:] {
		v, has := l[p]
		if has != had || v != first {
			return true
		}
	}
	return false
}

// splitLabel is a label's parts, split at the commas outside brackets
// ("a=1, b={c: 2, d: 3}" is "a=1" and "b={c: 2, d: 3}").
func splitLabel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// flowLeaves are a YAML value's scalar leaves by dotted path (list items
// by index), in order.
func flowLeaves(v string) (map[string]string, []string, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(v), &n); err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	var order []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				walk(n.Content[j+1], joinPath(path, n.Content[j].Value))
			}
		case yaml.SequenceNode:
			for j, c := range n.Content {
				walk(c, joinPath(path, strconv.Itoa(j)))
			}
		default:
			if path == "" {
				path = "value"
			}
			out[path] = n.Value
			order = append(order, path)
		}
	}
	walk(&n, "")
	return out, order, nil
}
