package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

//go:generate go run ./internal/schemagen ../../docs/scenario-reference.md . ../../docs/scenario.schema.json

// The JSON Schema of a scenario file (docs/scenario.schema.json), for
// editors: a "# yaml-language-server: $schema=..." line at the top of a
// scenario makes VS Code (and any editor using yaml-language-server)
// complete and check its fields. It is generated, never written by hand:
// the fields come from yamlFields (the decoder's own table, ",inline"
// sections included), the choices of every kind from its type's Names
// (the table the decoder checks with), and the descriptions from the
// "Path | ... | Meaning" tables of docs/scenario-reference.md, else from
// the field's Go doc comment (FieldDocs).
//
// What the schema says follows what the decoder accepts (decode.go):
//   - every section is a mapping with exactly the decoder's fields
//     (additionalProperties: false), or null: a section given as null or
//     left empty keeps its defaults, an optional one is turned off or on;
//   - every list may be null (an empty list);
//   - a field of pointer type may be null (absent), and so may a field
//     that is otherwise inherited (Inherited: a group's timeout);
//   - a plain string field takes any scalar: the decoder reads `name: 2024`
//     as the text "2024";
//   - a kind takes exactly its Names;
//   - a duration is a string in time.ParseDuration's syntax, or 0; a rate
//     is NUMBER/PERIOD (units.go).
//
// What a schema cannot see, and is left to the decoder and validate.go
// (`throttlesim validate` reports it, with file:line:col):
//   - how a scalar was spelled: YAML turns `1.0`, `1e6`, `True` and `0.0`
//     into the same JSON values as `1`, `1000000`, `true` and `0`, but the
//     decoder rejects the first four where a whole number, a boolean or a
//     duration is expected (docs/scenario-reference.md, "File format");
//   - YAML 1.1 forms: the decoder reads `10_000` as a whole number, an
//     editor (YAML 1.2) as a string, which the schema rejects;
//   - a rate's period of zero (`10/0s`) and numbers out of range
//     (`1e400/s`, `9999999h`), which the patterns accept, and a rate
//     written with a hexadecimal number (`0x1p4/s`), which the decoder
//     accepts and its pattern does not;
//   - every range and every rule between fields (validate.go): a schema
//     derived from the types has the types only. Writing the rules twice,
//     once as Go and once as JSON Schema, would let them drift.

// DurationPattern is the pattern of a duration written as a string:
// time.ParseDuration's syntax with a unit on every number, or "0".
const DurationPattern = `^\s*(0|[-+]?(` + decimal + `(ns|us|µs|μs|ms|s|m|h))+)\s*$`

// RatePattern is the pattern of a rate: NUMBER/PERIOD, PERIOD a bare unit
// or a duration (units.go).
const RatePattern = `^\s*[-+]?` + floatNumber + `\s*/\s*(ns|us|ms|s|m|h|\+?(` + decimal + `(ns|us|µs|μs|ms|s|m|h))+)\s*$`

const (
	// decimal is a number as time.ParseDuration reads it: digits with an
	// optional fraction, or a fraction alone.
	decimal = `([0-9]+(\.[0-9]*)?|\.[0-9]+)`
	// floatNumber is a decimal number as strconv.ParseFloat reads it,
	// underscores between digits and an exponent allowed.
	floatNumber = `(` + digits + `(\.(` + digits + `)?)?|\.` + digits + `)([eE][-+]?` + digits + `)?`
	digits      = `[0-9](_?[0-9])*`
)

// SchemaID is the $id of docs/scenario.schema.json.
const SchemaID = "https://github.com/throttlesim/throttlesim/docs/scenario.schema.json"

// JSONSchema is the JSON Schema (draft 2020-12) of a scenario file,
// indented, with a final newline. reference is the text of
// docs/scenario-reference.md, whose field tables give the descriptions;
// fieldDocs (FieldDocs) gives those of the fields the reference has no
// row for. With nil and nil the schema has no descriptions.
func JSONSchema(reference []byte, fieldDocs map[string]string) ([]byte, error) {
	g := &schemaGen{
		defs:      map[string]any{},
		types:     map[string]reflect.Type{},
		rows:      referenceRows(reference),
		fieldDocs: fieldDocs,
		paths:     map[fieldKey][]string{},
		sections:  map[reflect.Type]bool{},
	}
	top := reflect.TypeFor[Scenario]()
	g.collectSections(top, 0)
	g.collectPaths(top, "", 0)
	root, err := g.object(top)
	if err != nil {
		return nil, err
	}
	if g.err != nil {
		return nil, g.err
	}
	root["type"] = "object" // the file itself must be a mapping (an empty file counts as one)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["$comment"] = "Generated from the scenario decoder's field tables by `go generate ./sim/scenario` (make schema); do not edit."
	root["title"] = "throttlesim scenario file"
	root["description"] = "One simulation: clients and their policies, a backend or a graph of services, faults. Every field: docs/scenario-reference.md."
	g.defs["Duration"] = map[string]any{
		"description": "A duration with a unit (ns, us or µs, ms, s, m, h), combinable and fractional: 30s, 2m, 1h30m, 1.5s. A bare number is an error, except 0.",
		"anyOf": []any{
			map[string]any{"type": "string", "pattern": DurationPattern},
			map[string]any{"const": 0},
		},
	}
	g.defs["Rate"] = map[string]any{
		"description": "NUMBER/PERIOD: 10/s, 600/m, 5/100ms (PERIOD a unit, or a duration > 0). A bare number is an error.",
		"type":        "string",
		"pattern":     RatePattern,
	}
	g.defs["Bound"] = map[string]any{
		"description": "A histogram bucket's upper bound (le): seconds (0.005), a duration (5ms) or +Inf.",
		"anyOf": []any{
			map[string]any{"type": "number", "minimum": 0},
			map[string]any{"type": "string", "pattern": DurationPattern},
			map[string]any{"type": "string", "pattern": `^\s*[+]?(?i:inf|\.inf)\s*$`},
		},
	}
	root["$defs"] = g.defs
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // descriptions hold <= and >=
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// fieldKey is one field where it is described: the struct type that has
// it (declaring), its YAML name and its Go name, and the name of the Go
// type that declares it (its doc comment's).
type fieldKey struct {
	decl         reflect.Type
	name, goName string
	goDecl       string
}

// key is the fieldKey of the field of t at index idx, named name.
func (g *schemaGen) key(t reflect.Type, idx []int, name string) fieldKey {
	d := t
	for _, i := range idx[:len(idx)-1] {
		d = d.Field(i).Type
	}
	return fieldKey{g.declaring(t, idx), name, t.FieldByIndex(idx).Name, d.Name()}
}

type schemaGen struct {
	defs      map[string]any          // $defs, by Go type name
	types     map[string]reflect.Type // the type of each def, to catch two types of one name
	rows      map[string]refRow       // docs/scenario-reference.md, by path (list elements as N)
	fieldDocs map[string]string       // Go doc comments, by Type.Field
	paths     map[fieldKey][]string   // every path a field is reached by, in file order
	sections  map[reflect.Type]bool   // the struct types some field holds by name (collectSections)
	err       error
}

// collectPaths records every path (list elements as "N") by which each
// field of t is reached below path.
func (g *schemaGen) collectPaths(t reflect.Type, path string, depth int) {
	if depth > 12 {
		g.fail(fmt.Errorf("scenario schema: %s: the types nest too deep (a cycle?)", path))
		return
	}
	fields, names := yamlFields(t)
	for _, name := range names {
		idx := fields[name]
		p := join(path, name)
		f := t.FieldByIndex(idx)
		k := g.key(t, idx, name)
		g.paths[k] = append(g.paths[k], p)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && !isScalar(ft):
			g.collectPaths(ft, p, depth+1)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !isScalar(ft.Elem()):
			g.collectPaths(ft.Elem(), p+".N", depth+1)
		}
	}
}

// declaring is the struct type whose field the field of t at index idx is
// described as: the type that declares it, for a field of an embedded
// section that is also a section of its own (services.N.workers is
// described as backend.workers); else t, for the fields of Policies,
// which is embedded only, and whose timeout means one thing in the fleet,
// another in a group and another in a call.
func (g *schemaGen) declaring(t reflect.Type, idx []int) reflect.Type {
	d := t
	for _, i := range idx[:len(idx)-1] {
		d = d.Field(i).Type
		if !g.sections[d] {
			return t
		}
	}
	return d
}

// collectSections records every struct type some field of t, or below it,
// holds by name (not inline): the sections that stand on their own.
func (g *schemaGen) collectSections(t reflect.Type, depth int) {
	if depth > 12 {
		return // collectPaths reports it
	}
	fields, names := yamlFields(t)
	for _, name := range names {
		ft := t.FieldByIndex(fields[name]).Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !isScalar(ft) && !g.sections[ft] {
			g.sections[ft] = true
			g.collectSections(ft, depth+1)
		}
	}
}

func (g *schemaGen) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// object is the schema of struct type t: its fields, and no others.
func (g *schemaGen) object(t reflect.Type) (map[string]any, error) {
	fields, names := yamlFields(t)
	props := map[string]any{}
	for _, name := range names {
		idx := fields[name]
		f := t.FieldByIndex(idx)
		s, err := g.field(f)
		if err != nil {
			return nil, fmt.Errorf("scenario schema: %s.%s: %w", t.Name(), name, err)
		}
		if Inherited(t, name) && f.Type.Kind() != reflect.Pointer {
			s = orNull(s) // unset: taken from elsewhere (inherits.go)
		}
		if d := g.describe(g.key(t, idx, name)); d != "" {
			s["description"] = d
		}
		props[name] = s
	}
	return map[string]any{"type": []any{"object", "null"}, "additionalProperties": false, "properties": props}, nil
}

// field is the schema of one struct field's value.
func (g *schemaGen) field(f reflect.StructField) (map[string]any, error) {
	t := f.Type
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	s, err := g.value(t, EnumOf(f))
	if err != nil || !ptr {
		return s, err
	}
	return orNull(s), nil
}

// value is the schema of a value of type t; enum, when set, lists the
// strings it may be (EnumOf).
func (g *schemaGen) value(t reflect.Type, enum string) (map[string]any, error) {
	switch {
	case t == rawType:
		return map[string]any{"description": "Any YAML value, applied to the field at path as --set would."}, nil
	case t == reflect.TypeFor[Duration]():
		return map[string]any{"$ref": "#/$defs/Duration"}, nil
	case t == reflect.TypeFor[Rate]():
		return map[string]any{"$ref": "#/$defs/Rate"}, nil
	case t == reflect.TypeFor[Bound]():
		return map[string]any{"$ref": "#/$defs/Bound"}, nil
	case isScalar(t):
		return nil, fmt.Errorf("type %s is read from one scalar, and the schema generator does not know its syntax", t)
	}
	switch t.Kind() {
	case reflect.Struct:
		name := t.Name()
		if old, ok := g.types[name]; ok {
			if old != t {
				return nil, fmt.Errorf("two types named %s (%s and %s): one $defs name each is needed", name, old, t)
			}
		} else {
			g.types[name] = t
			g.defs[name] = nil // taken, while its fields are done
			s, err := g.object(t)
			if err != nil {
				return nil, err
			}
			g.defs[name] = s
		}
		return map[string]any{"$ref": "#/$defs/" + name}, nil
	case reflect.Slice:
		items, err := g.value(t.Elem(), enum)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []any{"array", "null"}, "items": items}, nil
	case reflect.String:
		if enum != "" {
			var vals []any
			for _, v := range strings.Split(enum, ",") {
				vals = append(vals, v)
			}
			return map[string]any{"type": "string", "enum": vals}, nil
		}
		// The decoder reads any scalar into a string field (decodeScalar).
		return map[string]any{"type": []any{"string", "number", "boolean"}}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float64:
		return map[string]any{"type": "number"}, nil
	}
	return nil, fmt.Errorf("no schema for Go type %s", t)
}

// orNull lets s be null too (a pointer field: absent). A section's $ref
// needs nothing: every section may be null already.
func orNull(s map[string]any) map[string]any {
	switch s["$ref"] {
	case nil:
	case "#/$defs/Duration", "#/$defs/Rate":
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	default:
		return s
	}
	switch ty := s["type"].(type) {
	case string:
		s["type"] = []any{ty, "null"}
	case []any:
		s["type"] = append(ty, "null")
	}
	if e, ok := s["enum"].([]any); ok {
		s["enum"] = append(e, nil)
	}
	return s
}

// describe is a field's description: the Meaning of the first
// docs/scenario-reference.md row for a path it is reached by, and its
// Default when every row for it gives the same one (the reconnect backoff
// and the retry backoff share a type, not their defaults); else its Go
// doc comment.
func (g *schemaGen) describe(k fieldKey) string {
	var meaning, dflt string
	agree := true
	for _, p := range g.paths[k] {
		r, ok := g.rows[p]
		if !ok {
			continue
		}
		if meaning == "" {
			meaning, dflt = r.meaning, r.dflt
		} else if r.dflt != dflt {
			agree = false
		}
	}
	if meaning == "" {
		if d, ok := g.fieldDocs[k.decl.Name()+"."+k.goName]; ok {
			return d
		}
		return g.fieldDocs[k.goDecl+"."+k.goName] // the Go doc comment where the field is written
	}
	if agree && dflt != "" && !strings.HasPrefix(dflt, "see ") {
		meaning = strings.TrimRight(meaning, " ") + " Default: " + dflt + "."
	}
	return meaning
}

// refRow is one row of a field table of docs/scenario-reference.md.
type refRow struct{ dflt, meaning string }

var (
	mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdBold = regexp.MustCompile(`\*\*([^*]*)\*\*`)
)

// referenceRows reads the field tables of docs/scenario-reference.md: the
// tables whose header starts "| Path |" and ends "| Meaning |", one row
// per field path (list elements written N). Links keep their text.
func referenceRows(md []byte) map[string]refRow {
	rows := map[string]refRow{}
	var header []string
	for _, line := range strings.Split(string(md), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := splitRow(line)
		if header == nil {
			if len(cells) > 2 && cells[0] == "Path" && cells[len(cells)-1] == "Meaning" {
				header = cells
			}
			continue
		}
		if len(cells) != len(header) || !strings.HasPrefix(cells[0], "`") {
			continue // the |---| line, or a row that is not a field
		}
		r := refRow{meaning: clean(cells[len(cells)-1])}
		for i, h := range header {
			if strings.HasPrefix(h, "Default") {
				r.dflt = clean(cells[i])
			}
		}
		rows[strings.Trim(cells[0], "`")] = r
	}
	return rows
}

// splitRow is the cells of a Markdown table row (a \| is not a border).
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func clean(s string) string {
	return mdBold.ReplaceAllString(mdLink.ReplaceAllString(s, "$1"), "$1")
}
