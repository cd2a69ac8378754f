package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads, overrides (each of sets is "path=value"), decodes and
// validates the scenario in file. The error, if any, is an Errors listing
// every problem found, or a single error when the file cannot be read or
// parsed at all.
func Load(file string, sets []string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such scenario file", file)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return Parse(data, file, sets)
}

// Parse is Load on bytes already read; name is used in error messages.
func Parse(data []byte, name string, sets []string) (*Scenario, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(name, data, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	var errs Errors
	for i, s := range sets {
		if err := ApplySet(&root, s, i+1); err != nil {
			errs = append(errs, &FieldError{File: name, Pos: Pos{Set: i + 1}, Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	sc := Default()
	d := &decoder{file: name, pos: map[string]Pos{}}
	if top := root.Content[0]; top.Kind != yaml.MappingNode {
		d.fail(top, "", "a scenario file is a mapping of fields (name:, clients:, backend:, ...), got %s", kindName(top))
		return nil, d.errs
	}
	d.decode(&root, reflect.ValueOf(sc).Elem(), "", "")
	if len(d.errs) == 0 {
		sc.resolve()
		d.errs = append(d.errs, sc.loadData(name, d.pos)...)
		d.errs = append(d.errs, sc.loadTrace(name, d.pos)...)
	}
	// Validate even when decoding failed, so that one pass reports every
	// problem; a field that failed to decode kept its default, and any
	// further complaint about that same field is left out.
	decodeErrs := d.errs
	related := func(p string) bool {
		for _, e := range decodeErrs {
			if e.Path == p || strings.HasPrefix(e.Path, p+".") || strings.HasPrefix(p, e.Path+".") {
				return true
			}
		}
		return false
	}
	for _, e := range sc.validate(name, d.pos) {
		// Data files are read only when the file decoded: that one was not
		// is no news then.
		unread := len(decodeErrs) > 0 && strings.HasSuffix(e.Msg, "by scenario.Load")
		if !related(e.Path) && !unread {
			d.errs = append(d.errs, e)
		}
	}
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return nil, d.errs
	}
	return sc, nil
}

// ApplySet applies one override "path=value" to a parsed YAML document:
// path is a dot-separated YAML path (list elements by index, e.g.
// faults.0.duration), value is YAML (a scalar, or flow syntax such as
// [ok, rejected] or null). Missing mappings on the way are created; the
// decoder then reports unknown fields as it would for the file. n tags the
// new nodes so errors can say which override they came from.
func ApplySet(root *yaml.Node, expr string, n int) error {
	path, value, ok := strings.Cut(expr, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return fmt.Errorf("--set %q: expected path=value, e.g. clients.throttle.k=3", expr)
	}
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &vdoc); err != nil {
		return fmt.Errorf("--set %s: value %q is not valid YAML: %s", path, value, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(vdoc.Content) > 0 {
		val = vdoc.Content[0]
	}
	markSet(val, n)
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return fmt.Errorf("--set %s: no document to set it in", path)
	}
	cur := root.Content[0]
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		last := i == len(segs)-1
		done := strings.Join(segs[:i], ".")
		if isNull(cur) {
			*cur = *container(seg, n)
		}
		switch cur.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == seg {
					if last {
						cur.Content[j+1] = val
						return nil
					}
					next = cur.Content[j+1]
				}
			}
			if next == nil {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: -n}
				next = val
				if !last {
					next = container(segs[i+1], n)
				}
				cur.Content = append(cur.Content, key, next)
				if last {
					return nil
				}
			}
			cur = next
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil {
				// A list of named elements (services, client groups) may be
				// addressed by name: services.api.workers.
				if k := namedIndex(cur, seg); k >= 0 {
					idx, err = k, nil
				}
			}
			if err != nil || idx < 0 || idx > len(cur.Content) {
				return fmt.Errorf("--set %s: %s is a list of %d; expected an index 0..%d, got %q", path, done, len(cur.Content), len(cur.Content), seg)
			}
			if idx == len(cur.Content) { // append
				next := val
				if !last {
					next = container(segs[i+1], n)
				}
				cur.Content = append(cur.Content, next)
				if last {
					return nil
				}
				cur = next
				continue
			}
			if last {
				cur.Content[idx] = val
				return nil
			}
			cur = cur.Content[idx]
		default:
			return fmt.Errorf("--set %s: %s is a single value, it has no field %q", path, done, seg)
		}
		for cur.Kind == yaml.AliasNode {
			cur = cur.Alias
		}
	}
	return nil
}

// namedIndex is the index of the element of list whose name field is
// name, or -1.
func namedIndex(list *yaml.Node, name string) int {
	for k, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(e.Content); j += 2 {
			if e.Content[j].Value == "name" && e.Content[j+1].Value == name {
				return k
			}
		}
	}
	return -1
}

// container is a new empty node to hold the path segment seg: a list when
// seg is an index, a mapping otherwise.
func container(seg string, set int) *yaml.Node {
	if _, err := strconv.Atoi(seg); err == nil {
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: -set}
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: -set}
}

func markSet(n *yaml.Node, set int) {
	n.Line, n.Column = -set, 0
	for _, c := range n.Content {
		markSet(c, set)
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError is a YAML syntax error as file:line:col: message. yaml.v3
// gives the line only; the column is where on that line the parser
// stopped making sense of it: the character that cannot start a token,
// the colon that starts a second mapping value, else the line's first
// character.
func syntaxError(name string, data []byte, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	n, _ := strconv.Atoi(m[1])
	msg := m[2]
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		return fmt.Errorf("%s:%d: %s", name, n, msg)
	}
	line := lines[n-1]
	col := len(line) - len(strings.TrimLeft(line, " ")) + 1
	switch {
	case strings.Contains(msg, "cannot start any token"):
		if i := strings.IndexAny(line, "\t@`"); i >= 0 {
			col = i + 1
		}
		if strings.Contains(line, "\t") {
			msg += " (a tab: indent with spaces)"
		}
	case strings.Contains(msg, "mapping values are not allowed"):
		if i := strings.Index(line, ": "); i >= 0 {
			if j := strings.IndexAny(line[i+2:], ":"); j >= 0 {
				col = i + 2 + j + 1
			}
		}
	}
	return fmt.Errorf("%s:%d:%d: %s", name, n, col, msg)
}
