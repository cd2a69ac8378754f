package scenario

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/internal/suggest"
)

// Pos is where a value came from: a line and column of the file, or the
// n-th --set override (Set > 0).
type Pos struct {
	Line, Col int
	Set       int
}

// FieldError is one problem in a scenario, located in its file.
type FieldError struct {
	File string
	Pos  Pos
	Path string // YAML path of the field, e.g. clients.throttle.k
	Msg  string
	// Source, when set, names where an override came from in place of
	// "--set #n" (e.g. a sweep's --vary value).
	Source string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Pos.Set > 0 && e.Source != "":
		fmt.Fprintf(&b, " (%s)", e.Source)
	case e.Pos.Set > 0:
		fmt.Fprintf(&b, " (--set #%d)", e.Pos.Set)
	case e.Pos.Line > 0:
		fmt.Fprintf(&b, ":%d:%d", e.Pos.Line, e.Pos.Col)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a scenario, in file order.
type Errors []*FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// scalarUnmarshaler is implemented by unit-carrying types (Duration, Rate).
type scalarUnmarshaler interface{ unmarshalScalar(string) error }

// decoder turns a yaml.Node tree into Go values, strictly: unknown keys,
// duplicate keys, wrong kinds and out-of-range numbers are all reported,
// each with its position and path, and decoding goes on to find the rest.
type decoder struct {
	file string
	errs Errors
	pos  map[string]Pos // position of every decoded path, for Validate
}

func posOf(n *yaml.Node) Pos {
	if n.Line < 0 {
		return Pos{Set: -n.Line}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{File: d.file, Pos: posOf(n), Path: path, Msg: fmt.Sprintf(format, args...)})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing (null)"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unsupported YAML node"
}

var (
	scalarType = reflect.TypeFor[scalarUnmarshaler]()
	rawType    = reflect.TypeFor[RawValue]()
)

// flowCopy is a copy of n in YAML flow style (one line).
func flowCopy(n *yaml.Node) *yaml.Node {
	c := *n
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style = yaml.FlowStyle
	}
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = flowCopy(k)
	}
	return &c
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, enum string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}
	d.pos[path] = posOf(n)
	if v.Type() == rawType {
		b, err := yaml.Marshal(flowCopy(n))
		if err != nil {
			d.fail(n, path, "cannot read this value: %v", err)
			return
		}
		v.SetString(strings.TrimSpace(string(b)))
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(scalarType) {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			d.fail(n, path, "expected a single value, got %s", kindName(n))
			return
		}
		if err := v.Addr().Interface().(scalarUnmarshaler).unmarshalScalar(n.Value); err != nil {
			d.fail(n, path, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) && n.Value != "" {
			v.SetZero() // "throttle: null" or "~": no such policy
			return
		}
		if isNull(n) { // "throttle:" with nothing after it: the defaults
			if v.IsNil() {
				nv := reflect.New(v.Type().Elem())
				if df, ok := nv.Interface().(defaulter); ok {
					df.setDefaults()
				}
				v.Set(nv)
			}
			return
		}
		if v.IsNil() {
			nv := reflect.New(v.Type().Elem())
			if df, ok := nv.Interface().(defaulter); ok {
				df.setDefaults()
			}
			v.Set(nv)
		}
		d.decode(n, v.Elem(), path, enum)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if isNull(n) {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "expected a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			e := s.Index(i)
			if df, ok := e.Addr().Interface().(defaulter); ok {
				df.setDefaults()
			}
			d.decode(item, e, path+"."+strconv.Itoa(i), enum)
		}
		v.Set(s)
	default:
		d.decodeScalar(n, v, path, enum)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return // an empty section keeps its defaults
		}
		d.fail(n, path, "expected a mapping of fields, got %s", kindName(n))
		return
	}
	t := v.Type()
	fields, names := yamlFields(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		fp := join(path, key)
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "expected a field name, got %s", kindName(k))
			continue
		}
		if seen[key] {
			d.fail(k, fp, "field given twice")
			continue
		}
		seen[key] = true
		idx, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("unknown field %q", key)
			if s := suggest.Closest(key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			msg += "; valid fields here: " + strings.Join(names, ", ")
			d.fail(k, fp, "%s", msg)
			continue
		}
		f := t.FieldByIndex(idx)
		if in, ok := v.Addr().Interface().(inheritor); ok && in.givenFlag(key) != nil { // a group's timeout (inherits.go)
			d.decodeInherited(val, v.FieldByIndex(idx), fp, EnumOf(f), in.givenFlag(key))
			continue
		}
		d.decode(val, v.FieldByIndex(idx), fp, EnumOf(f))
	}
}

// yamlFields is the decoder's table of the fields of struct type t: each
// YAML name with the index of its Go field, and the names in declaration
// order (for "valid fields here" and did-you-mean). An embedded struct
// tagged ",inline" contributes its fields as t's own. The JSON Schema of
// scenario files (schema.go) is generated from this same table.
func yamlFields(t reflect.Type) (fields map[string][]int, names []string) {
	fields = map[string][]int{}
	var collect func(t reflect.Type, prefix []int)
	collect = func(t reflect.Type, prefix []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			idx := append(append([]int(nil), prefix...), i)
			if name == "" && opts == "inline" && f.Anonymous && f.Type.Kind() == reflect.Struct {
				collect(f.Type, idx) // an embedded section's fields are this section's
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			fields[name] = idx
			names = append(names, name)
		}
	}
	collect(t, nil)
	return fields, names
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path, enum string) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.fail(n, path, "expected %s, got %s", typeWord(v.Kind(), enum), kindName(n))
		return
	}
	s := n.Value
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
	switch v.Kind() {
	case reflect.String:
		if enum != "" {
			choices := strings.Split(enum, ",")
			if !contains(choices, s) {
				msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(choices, ", "))
				if sg := suggest.Closest(s, choices); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
				d.fail(n, path, "%s", msg)
				return
			}
		}
		v.SetString(s)
	case reflect.Bool:
		if quoted || (s != "true" && s != "false") {
			d.fail(n, path, "expected true or false, got %q", s)
			return
		}
		v.SetBool(s == "true")
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if quoted || err != nil || v.OverflowInt(i) {
			d.fail(n, path, "expected a whole number, got %q", s)
			return
		}
		v.SetInt(i)
	case reflect.Uint64:
		u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
		if quoted || err != nil {
			d.fail(n, path, "expected a whole number >= 0, got %q", s)
			return
		}
		v.SetUint(u)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if quoted || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "expected a number, got %q", s)
			return
		}
		v.SetFloat(f)
	default:
		d.fail(n, path, "unsupported field type %s", v.Type())
	}
}

func typeWord(k reflect.Kind, enum string) string {
	switch k {
	case reflect.String:
		if enum != "" {
			return "one of " + strings.ReplaceAll(enum, ",", ", ")
		}
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	}
	return "a value"
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// sortErrors orders problems by where they are: file lines first, then
// --set overrides, then problems without a position.
func sortErrors(es Errors) {
	rank := func(p Pos) (int, int, int) {
		switch {
		case p.Line > 0:
			return 0, p.Line, p.Col
		case p.Set > 0:
			return 1, p.Set, 0
		}
		return 2, 0, 0
	}
	sort.SliceStable(es, func(i, j int) bool {
		a1, a2, a3 := rank(es[i].Pos)
		b1, b2, b3 := rank(es[j].Pos)
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		return a3 < b3
	})
}

var enumerated = reflect.TypeFor[Enumerated]()

// EnumOf is the comma-separated list of the values field f accepts: its
// type's names table when it is a named kind (or a pointer to one), else
// its enum tag (lists of outcomes), else "".
func EnumOf(f reflect.StructField) string {
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(enumerated) {
		return strings.Join(reflect.Zero(t).Interface().(Enumerated).Names(), ",")
	}
	return f.Tag.Get("enum")
}
