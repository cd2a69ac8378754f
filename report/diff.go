package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// FieldDiff is a scenario field whose value differs between two
// scenarios: its path and the two values ("" where a scenario does not
// have the field).
type FieldDiff struct {
	Path, Old, New string
}

// ScenarioDiff is every field (in the units of summary.json, "30s",
// "100/s") whose value differs between scenarios a and b, in the order
// of the fields; the name and description are left out (they name the
// runs).
func ScenarioDiff(a, b *scenario.Scenario) ([]FieldDiff, error) {
	fa, err := flatten(a)
	if err != nil {
		return nil, err
	}
	fb, err := flatten(b)
	if err != nil {
		return nil, err
	}
	var paths []string
	seen := map[string]bool{}
	for _, f := range [][]field{fa, fb} {
		for _, x := range f {
			if !seen[x.path] {
				seen[x.path] = true
				paths = append(paths, x.path)
			}
		}
	}
	// A section one scenario has and the other does not (sets to null,
	// or leaves out: a list of services) is one row: the section's
	// fields, shortened, against null or nothing.
	var out []FieldDiff
	done := map[string]bool{}
	for _, p := range paths {
		if p == "name" || p == "description" {
			continue
		}
		va, oka := get(fa, p)
		vb, okb := get(fb, p)
		if oka && okb {
			if va != vb {
				out = append(out, FieldDiff{Path: p, Old: va, New: vb})
			}
			continue
		}
		// p is on one side only: the row is the outermost section that
		// holds p and that the other side has nothing under, or that the
		// other side has as a value of its own (null).
		q := p
		for i := 0; i < len(p); i++ {
			if p[i] != '.' {
				continue
			}
			sec := p[:i]
			if _, ok := get(fa, sec); ok && !oka {
				q = sec
				break
			}
			if _, ok := get(fb, sec); ok && !okb {
				q = sec
				break
			}
			if !oka && !hasUnder(fa, sec) || !okb && !hasUnder(fb, sec) {
				q = sec
				break
			}
		}
		if done[q] {
			continue
		}
		done[q] = true
		out = append(out, FieldDiff{Path: q, Old: valueAt(fa, q), New: valueAt(fb, q)})
	}
	return out, nil
}

// valueAt is the value at path q: a field's, a section's fields in one
// line, or "" where there is neither.
func valueAt(f []field, q string) string {
	if v, ok := get(f, q); ok {
		return v
	}
	if hasUnder(f, q) {
		return section(f, q)
	}
	return ""
}

// DiffRow is a field in which some of several scenarios differ: its path
// and each scenario's value ("" where it has no such field).
type DiffRow struct {
	Path   string
	Values []string
}

// ScenarioDiffs is every field (a section one scenario lacks: one row)
// in which scs differ from scs[ref], in the order ScenarioDiff finds them
// run after run; each row has every scenario's value, so that one table
// shows several runs.
func ScenarioDiffs(scs []*scenario.Scenario, ref int) ([]DiffRow, error) {
	flat := make([][]field, len(scs))
	for i, sc := range scs {
		var err error
		if flat[i], err = flatten(sc); err != nil {
			return nil, err
		}
	}
	var rows []DiffRow
	seen := map[string]bool{}
	for i, sc := range scs {
		if i == ref {
			continue
		}
		d, err := ScenarioDiff(scs[ref], sc)
		if err != nil {
			return nil, err
		}
		for _, f := range d {
			if seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			r := DiffRow{Path: f.Path, Values: make([]string, len(scs))}
			for k := range scs {
				r.Values[k] = valueAt(flat[k], f.Path)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// section is a section's fields in one line, shortened: "{k: 2, window: 2m, …}".
func section(f []field, q string) string {
	var parts []string
	for _, x := range f {
		if rest, ok := strings.CutPrefix(x.path, q+"."); ok {
			parts = append(parts, rest+": "+x.value)
		}
	}
	s := strings.Join(parts, ", ")
	if r := []rune(s); len(r) > 70 {
		s = string(r[:69]) + "…"
	}
	return "{" + s + "}"
}

type field struct{ path, value string }

// get is the value of the field at path p.
func get(f []field, p string) (string, bool) {
	i := slices.IndexFunc(f, func(x field) bool { return x.path == p })
	if i < 0 {
		return "", false
	}
	return f[i].value, true
}

// hasUnder reports whether f has a field under the section q.
func hasUnder(f []field, q string) bool {
	return slices.ContainsFunc(f, func(x field) bool { return strings.HasPrefix(x.path, q+".") })
}

// flatten is a scenario's leaf fields by dotted path (list items by
// index), in the order of its JSON; an empty list or map, or null, is a
// leaf.
func flatten(sc *scenario.Scenario) ([]field, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out []field
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			n, start := 0, len(out)
			for dec.More() {
				var key string
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					key = k.(string)
				} else {
					key = strconv.Itoa(n)
				}
				p := key
				if prefix != "" {
					p = prefix + "." + key
				}
				if err := walk(p); err != nil {
					return err
				}
				n++
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return err
			}
			if n == 0 {
				v := "{}"
				if t == '[' {
					v = "[]"
				}
				out = append(out, field{prefix, v})
			}
			// A list of plain values is one value: [rejected, timeout].
			if t == '[' && n > 0 && len(out)-start == n {
				vs := make([]string, n)
				for k, f := range out[start:] {
					vs[k] = f.value
				}
				out = append(out[:start], field{prefix, "[" + strings.Join(vs, ", ") + "]"})
			}
		case nil:
			out = append(out, field{prefix, "null"})
		case string:
			out = append(out, field{prefix, t})
		default:
			out = append(out, field{prefix, fmt.Sprint(t)})
		}
		return nil
	}
	return out, walk("")
}
