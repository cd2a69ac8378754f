package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// summary.json must match docs/summary.schema.json: every key the document
// has is declared, every required key is present, enums and patterns hold,
// and nullable figures are the only nulls. (A small structural checker: the
// schema uses only type, enum, const, pattern, properties, required,
// additionalProperties and items.)
func TestSummaryMatchesSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "summary.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"outage.yaml", "overload.yaml", "reconnect-storm-jitter.yaml"} {
		res := mustRun(t, loadScenario(t, sc))
		b, err := res.SummaryJSON(Build{Version: "test", Commit: "abc"})
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
