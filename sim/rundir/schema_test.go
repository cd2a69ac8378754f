package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// docs/summary.schema.json is generated from the Go types of summary.json
// (SummaryDoc): `go test ./sim/rundir -run Schema -update` rewrites it, and this
// test fails when the file and the types disagree.
func TestSchemaFileIsCurrent(t *testing.T) {
	b, err := json.MarshalIndent(summarySchema(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("..", "..", "docs", "summary.schema.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(old) != string(b) {
		t.Errorf("%s is out of date with the Go types: run go test ./sim/rundir -run Schema -update", path)
	}
}

func summarySchema() map[string]any {
	s := schemaOf(reflect.TypeFor[SummaryDoc]())
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://github.com/throttlesim/throttlesim/docs/summary.schema.json"
	s["title"] = "throttlesim summary.json, schema_version 1"
	props := s["properties"].(map[string]any)
	props["schema_version"] = map[string]any{"const": 1}
	return s
}

var (
	durationType = reflect.TypeFor[scenario.Duration]()
	rateType     = reflect.TypeFor[scenario.Rate]()
)

// schemaOf is the JSON Schema of the JSON encoding of t (the subset this
// project uses: type, enum, pattern, properties, required,
// additionalProperties, items).
func schemaOf(t reflect.Type) map[string]any {
	switch t {
	case durationType:
		return map[string]any{"type": "string", "pattern": "^-?[0-9]+(ns|us|ms|s|m|h)$", "description": "a duration with a unit"}
	case rateType:
		return map[string]any{"type": "string", "pattern": "/s$", "description": "a rate per second, e.g. \"600/s\""}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaOf(t.Elem())
		s["type"] = []any{s["type"], "null"}
		return s
	case reflect.Struct:
		props := map[string]any{}
		var required []any
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
				// encoding/json writes an embedded struct's fields as
				// this object's own.
				emb := schemaOf(f.Type)
				for k, v := range emb["properties"].(map[string]any) {
					if scenario.Inherited(t, k) { // written null while unset
						v.(map[string]any)["type"] = []any{v.(map[string]any)["type"], "null"}
					}
					props[k] = v
				}
				required = append(required, emb["required"].([]any)...)
				continue
			}
			if name == "" {
				name = f.Name
			}
			ps := schemaOf(f.Type)
			if f.Tag.Get("measured") == "server" && ps["type"] == "integer" {
				// null when not measured (a live run against --target).
				ps["type"] = []any{"integer", "null"}
			}
			if e := scenario.EnumOf(f); e != "" {
				var vals []any
				for _, v := range strings.Split(e, ",") {
					vals = append(vals, v)
				}
				if f.Type.Kind() == reflect.Slice {
					ps["items"] = map[string]any{"enum": vals}
				} else {
					ps = map[string]any{"enum": vals}
				}
			}
			props[name] = ps
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
		}
		sort.Slice(required, func(i, j int) bool { return required[i].(string) < required[j].(string) })
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required}
	case reflect.Slice:
		return map[string]any{"type": []any{"array", "null"}, "items": schemaOf(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Uint32, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	}
	panic("schemaOf: unsupported type " + t.String())
}

// summary.json must match docs/summary.schema.json: every key the document
// has is declared, every required key is present, enums and patterns hold,
// and nullable figures are the only nulls. (A small structural checker: the
// schema uses only type, enum, const, pattern, properties, required,
// additionalProperties and items.)
func TestSummaryMatchesSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "summary.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"outage.yaml", "overload.yaml", "reconnect-storm-jitter.yaml", "mixed-fleet.yaml"} {
		res := runScenario(t, sc)
		b, err := Run{Result: res}.SummaryJSON(Build{Version: "test", Commit: "abc"})
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range checkSchema(schema, doc, "$") {
			t.Errorf("%s: %s", sc, p)
		}
	}
}

func checkSchema(s map[string]any, v any, at string) (problems []string) {
	bad := func(format string) { problems = append(problems, at+": "+format) }
	if c, ok := s["const"]; ok {
		if !jsonEqual(c, v) {
			bad("not the constant")
		}
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || jsonEqual(x, v)
		}
		if !found {
			bad("not one of the enum values")
		}
	}
	if ty, ok := s["type"]; ok {
		var types []string
		switch x := ty.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, y := range x {
				types = append(types, y.(string))
			}
		}
		if !typeMatches(types, v) {
			bad("wrong type for " + jsonType(v))
			return
		}
	}
	if pat, ok := s["pattern"].(string); ok {
		if str, ok := v.(string); ok && !regexp.MustCompile(pat).MatchString(str) {
			bad("does not match " + pat)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range s["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				bad("missing required " + r.(string))
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				bad("undeclared key " + k)
				continue
			}
			problems = append(problems, checkSchema(ps, obj[k], at+"."+k)...)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for _, x := range arr {
				problems = append(problems, checkSchema(items, x, at+"[]")...)
			}
		}
	}
	return problems
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func typeMatches(types []string, v any) bool {
	got := jsonType(v)
	for _, t := range types {
		if t == got || (t == "number" && got == "integer") {
			return true
		}
	}
	return false
}
