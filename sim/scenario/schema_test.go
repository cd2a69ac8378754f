package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

const (
	schemaFile    = "../../docs/scenario.schema.json"
	referenceFile = "../../docs/scenario-reference.md"
)

// docs/scenario.schema.json is what the generator makes of the decoder's
// tables and the reference today: a field added to types.go, a kind added
// to a Names table or a row changed in the reference and not regenerated
// fails here.
func TestSchemaFileIsCurrent(t *testing.T) {
	ref, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := FieldDocs(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := JSONSchema(ref, docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./sim/scenario (or make schema)", schemaFile)
	}
}

// compiledSchema is docs/scenario.schema.json compiled by a draft 2020-12
// validator, which also checks the schema against the draft's meta-schema.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("%s does not compile as JSON Schema: %v", schemaFile, err)
	}
	return s
}

// instance is a YAML document as an editor's YAML language server gives it
// to the schema: the same tree as JSON values. An empty document is an
// empty mapping, as for the loader.
func instance(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		v = map[string]any{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// decodeOnly is the decoder's verdict on data alone: its problems of
// field names, kinds and types, without validate.go's rules.
func decodeOnly(t *testing.T, data []byte) Errors {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil
	}
	return decodeNode(&root)
}

func decodeNode(root *yaml.Node) Errors {
	d := &decoder{file: "t.yaml", pos: map[string]Pos{}}
	d.decode(root, reflect.ValueOf(Default()).Elem(), "", "")
	return d.errs
}

// Every shipped scenario, the experiments' and the tests' scenario files,
// the reference's annotated example and the tutorial's scenario are valid
// against the schema: an editor with the schema flags nothing in them.
func TestShippedScenariosMatchSchema(t *testing.T) {
	s := compiledSchema(t)
	var files []string
	for _, g := range []string{"../../scenarios/*.yaml", "../../docs/experiments/*/*.yaml",
		"../../cmd/throttlesim/testdata/*.yaml", "../../sim/explore/testdata/*.yaml"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("found %d scenario files; the globs have gone wrong", len(files))
	}
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = b
	}
	for _, blk := range []struct{ file, after string }{
		{referenceFile, "## Complete annotated example"},
		{"../../docs/tutorial.md", ""},
	} {
		md, err := os.ReadFile(blk.file)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(md), blk.after)
		_, block, ok2 := strings.Cut(rest, "```yaml\n")
		block, _, ok3 := strings.Cut(block, "```")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("%s: no yaml block after %q", blk.file, blk.after)
		}
		docs[filepath.Base(blk.file)+" (yaml block)"] = []byte(block)
	}
	for name, b := range docs {
		if errs := decodeOnly(t, b); len(errs) > 0 {
			t.Errorf("%s: the decoder rejects it: %v", name, errs)
		}
		if err := s.Validate(instance(t, b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Files the decoder rejects for a field name, a kind or a type are
// rejected by the schema too, at the same place; and forms the decoder
// accepts that look odd (null sections, 0 as a duration, a number as a
// name) are accepted by both.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	s := compiledSchema(t)
	tests := []struct {
		name string
		yaml string
		at   string // JSON pointer of the place the schema complains about; "" if valid
	}{
		{"unknown top-level field", "nmae: x\n", "''"},
		{"unknown field in a section", "clients:\n  throttle:\n    kk: 3\n", "'/clients/throttle'"},
		{"unknown field of a service", "services:\n  - name: api\n    wrokers: 3\n", "'/services/0'"},
		{"unknown field in a sweep", "sweep:\n  vary:\n    - path: clients.count\n      valuez: [1]\n", "'/sweep/vary/0'"},
		{"misspelt distribution", "backend:\n  service:\n    dist: exponentail\n", "'/backend/service/dist'"},
		{"misspelt load balancer", "services: [{name: a, lb: round-robin}]\n", "'/services/0/lb'"},
		{"outcome a list may not hold", "clients:\n  retry:\n    retry_on: [timeout, ok]\n", "'/clients/retry/retry_on/1'"},
		{"word for a whole number", "clients:\n  count: ten\n", "'/clients/count'"},
		{"fraction for a whole number", "clients:\n  count: 2.5\n", "'/clients/count'"},
		{"negative seed", "seed: -1\n", "'/seed'"},
		{"null for a number", "seed: null\n", "'/seed'"},
		{"quoted number", "clients:\n  throttle:\n    k: \"3\"\n", "'/clients/throttle/k'"},
		{"duration without a unit", "duration: 300\n", "'/duration'"},
		{"duration in words", "duration: 5 minutes\n", "'/duration'"},
		{"rate without a unit", "clients:\n  arrival:\n    rate: 600\n", "'/clients/arrival/rate'"},
		{"rate per sec", "clients:\n  arrival:\n    rate: 10/sec\n", "'/clients/arrival/rate'"},
		{"yes for a boolean", "clients:\n  throttle:\n    enabled: yes\n", "'/clients/throttle/enabled'"},
		{"list for a section", "metrics: [1, 2]\n", "'/metrics'"},
		{"section for a list", "faults: {kind: outage}\n", "'/faults'"},
		{"section for a string", "name: {a: 1}\n", "'/name'"},

		{"empty file", "", ""},
		{"optional section off", "clients:\n  throttle: ~\n  retry: null\n", ""},
		{"optional section on with its defaults", "clients:\n  throttle:\n  breaker: {}\n", ""},
		{"0 for a duration", "clients:\n  timeout: 0\n  deadline: \"0\"\n", ""},
		{"rates with periods", "clients:\n  arrival:\n    rate: 5/100ms\n    total_rate: 10 / s\n", ""},
		{"a number as a name", "name: 2024\n", ""},
		{"null list and null element", "faults:\nthresholds: ~\nservices: [~]\n", ""},
		{"a group's timeout absent", "clients:\n  groups:\n    - {name: a, share: 1, timeout: null}\n", ""},
		{"a backend field of a service", "services:\n  - {name: a, workers: 3, queue: {limit: 5}}\n", ""},
		{"sweep values of any shape", "sweep:\n  vary:\n    - path: clients.throttle\n      values: [null, {k: 3}, 1, [a]]\n", ""},
		{"largest seed", "seed: 18446744073709551615\n", ""},
		{"budget field null", "clients:\n  retry:\n    budget: {ratio: null}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			decErr := decodeOnly(t, []byte(tc.yaml))
			schErr := s.Validate(instance(t, []byte(tc.yaml)))
			if tc.at == "" {
				if decErr != nil {
					t.Errorf("the decoder rejects it: %v", decErr)
				}
				if schErr != nil {
					t.Errorf("the schema rejects it: %v", schErr)
				}
				return
			}
			if decErr == nil {
				t.Errorf("the decoder accepts it; the case is wrong")
			}
			if schErr == nil {
				t.Fatalf("the schema accepts it; want an error at %s", tc.at)
			}
			if !strings.Contains(schErr.Error(), "at "+tc.at+":") && !strings.Contains(schErr.Error(), "at "+tc.at+"\n") {
				t.Errorf("the schema's error is not at %s:\n%v", tc.at, schErr)
			}
		})
	}
}

// probeField is the probe's field name, which no section has.
const probeField = "zz_probe"

// decoderFields asks the decoder, by its behaviour, which fields the
// section at path has: it sets path.zz_probe and reads the fields the
// "unknown field" error lists. ok is false when path is not a section.
func decoderFields(t *testing.T, path string) (fields []string, ok bool) {
	t.Helper()
	root := yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	if err := ApplySet(&root, join(path, probeField)+"=1", 1); err != nil {
		t.Fatal(err)
	}
	for _, e := range decodeNode(&root) {
		if e.Path != join(path, probeField) || !strings.Contains(e.Msg, `unknown field "`+probeField+`"`) {
			continue
		}
		_, list, found := strings.Cut(e.Msg, "valid fields here: ")
		if !found {
			t.Fatalf("%s: unknown field without the list of fields: %s", path, e.Msg)
		}
		return strings.Split(list, ", "), true
	}
	return nil, false
}

// decoderPaths is every field path the decoder accepts (list elements as
// 0), found by probing it from the top: independent of the generator's
// walk of the types.
func decoderPaths(t *testing.T) (paths, sections []string) {
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		if depth > 12 {
			t.Fatalf("%s: sections nest too deep", path)
		}
		sections = append(sections, path)
		fields, _ := decoderFields(t, path)
		for _, f := range fields {
			p := join(path, f)
			paths = append(paths, p)
			if _, ok := decoderFields(t, p); ok {
				walk(p, depth+1)
			} else if _, ok := decoderFields(t, p+".0"); ok {
				walk(p+".0", depth+1)
			}
		}
	}
	walk("", 0)
	return paths, sections
}

// schemaPaths is every field path of the schema document (list elements
// as 0), following $ref and anyOf.
func schemaPaths(t *testing.T) []string {
	raw, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	var out []string
	var walk func(s map[string]any, path string, depth int)
	walk = func(s map[string]any, path string, depth int) {
		if depth > 40 {
			t.Fatalf("%s: the schema nests too deep", path)
		}
		if ref, ok := s["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/$defs/")
			def, isMap := defs[name].(map[string]any)
			if !found || !isMap {
				t.Fatalf("%s: $ref %q goes nowhere", path, ref)
			}
			walk(def, path, depth+1)
		}
		if alts, ok := s["anyOf"].([]any); ok {
			for _, a := range alts {
				walk(a.(map[string]any), path, depth+1)
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for k, v := range props {
				out = append(out, join(path, k))
				walk(v.(map[string]any), join(path, k), depth+1)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, path+".0", depth+1)
		}
	}
	walk(root, "", 0)
	return out
}

// The schema has exactly the fields the decoder accepts, section by
// section, and every section of the decoder's is closed in the schema
// (an unknown field there fails it).
func TestSchemaFieldsMatchDecoder(t *testing.T) {
	dec, sections := decoderPaths(t)
	if len(dec) < 300 {
		t.Fatalf("probing the decoder found %d fields; the probe is broken", len(dec))
	}
	sch := schemaPaths(t)
	sort.Strings(dec)
	sort.Strings(sch)
	inDec, inSch := map[string]bool{}, map[string]bool{}
	for _, p := range dec {
		inDec[p] = true
	}
	for _, p := range sch {
		if inSch[p] {
			t.Errorf("schema: %s reached twice", p)
		}
		inSch[p] = true
	}
	for _, p := range dec {
		if !inSch[p] {
			t.Errorf("the decoder accepts %s; the schema has no such field", p)
		}
	}
	for _, p := range sch {
		if !inDec[p] {
			t.Errorf("the schema has %s; the decoder rejects it", p)
		}
	}
	s := compiledSchema(t)
	for _, sec := range sections {
		root := yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
		if err := ApplySet(&root, join(sec, probeField)+"=1", 1); err != nil {
			t.Fatal(err)
		}
		b, err := yaml.Marshal(&root)
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(instance(t, b)) == nil {
			t.Errorf("the schema accepts an unknown field in %q", sec)
		}
	}
}

// For every field, and a set of values of every shape, the schema accepts
// a value exactly when the decoder does: types, nulls, durations, rates,
// kinds and lists alike.
func TestSchemaTypesMatchDecoder(t *testing.T) {
	s := compiledSchema(t)
	paths, _ := decoderPaths(t)
	// check sets path=value and compares the two verdicts; it returns the
	// decoder's problems.
	check := func(p, v string) Errors {
		root := yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
		if err := ApplySet(&root, p+"="+v, 1); err != nil {
			t.Fatal(err)
		}
		b, err := yaml.Marshal(&root)
		if err != nil {
			t.Fatal(err)
		}
		errs := decodeNode(&root)
		schErr := s.Validate(instance(t, b))
		if (len(errs) == 0) != (schErr == nil) {
			t.Errorf("%s=%s: the decoder accepts it: %v; the schema: %v", p, v, len(errs) == 0, schErr)
		}
		return errs
	}
	values := []string{"1", "-1", "0", "2.5", `"word"`, "true", "30s", "10/s", "[]", "[word]", "{}", "null"}
	checked, kinds := 0, 0
	for _, p := range paths {
		for _, v := range values {
			errs := check(p, v)
			checked++
			// A kind: the decoder lists its choices ("word" is not one
			// of a, b); the schema must take each of them.
			if v != `"word"` && v != "[word]" {
				continue
			}
			for _, e := range errs {
				_, list, ok := strings.Cut(e.Msg, `"word" is not one of `)
				if !ok {
					continue
				}
				list, _, _ = strings.Cut(list, " (did you mean")
				kinds++
				for _, c := range strings.Split(list, ", ") {
					if v == "[word]" {
						c = "[" + c + "]"
					}
					if errs := check(p, c); len(errs) > 0 {
						t.Errorf("%s=%s: the decoder rejects a choice it lists: %v", p, c, errs)
					}
					checked++
				}
			}
		}
	}
	if kinds < 50 {
		t.Errorf("found %d fields of a kind by their errors; the probe is broken", kinds)
	}
	t.Logf("%d field values checked, %d kinds", checked, kinds)
}

// The duration and rate patterns accept a string exactly when units.go
// does, but for the cases the generator's comment lists, which differ the
// way it says.
func TestSchemaPatternsMatchUnits(t *testing.T) {
	dur := regexp.MustCompile(DurationPattern)
	rate := regexp.MustCompile(RatePattern)
	durations := []string{
		"30s", "2m", "1h30m", "250ms", "0", "0s", "1.5s", "10us", "7ns", "  45s ", "-5s", "+5s",
		"1.s", ".5s", "1µs", "1μs", "0s0ms", "1h2m3s4ms5us6ns", " 0 ",
		"30", "-0", "+0", "0.0", "00", "1.5", "abc", "", "   ", "30 seconds", "s", "10/s",
		"1_000ms", "1min", "1sec", ".s", "1..5s", "1.5.5s", "--1s", "1s-", "5 s", "1e3s",
	}
	for _, in := range durations {
		var d Duration
		decOK := d.unmarshalScalar(in) == nil
		if decOK != dur.MatchString(in) {
			t.Errorf("duration %q: units.go accepts it: %v; the pattern: %v", in, decOK, !decOK)
		}
	}
	rates := []string{
		"10/s", "600/m", "5/100ms", "36000/h", "0.5/s", "1/2s", "3000/1m", "1e3/s", "0/s", " 10 / s ",
		"1/us", "1_000/s", "1/+1s", "-5/s", ".5/s", "5./s", "1E3/s", "1e-3/s", "1/1µs", "1/1.5s", "1_000.5/s",
		"10", "2.5", "abc", "", "10/parsec", "NaN/s", "Inf/s", "-Inf/s", "ten/s", "/s", "10/", "10/-1s",
		"10/s/s", "10/sec", "10/µs", "10/0", "1__0/s", "_1/s", "1_/s", "10/1_000ms",
	}
	for _, in := range rates {
		var r Rate
		decOK := r.unmarshalScalar(in) == nil
		if decOK != rate.MatchString(in) {
			t.Errorf("rate %q: units.go accepts it: %v; the pattern: %v", in, decOK, !decOK)
		}
	}
	// The known differences (schema.go's comment): each still differs,
	// the way it says.
	known := []struct {
		in     string
		decOK  bool
		reason string
	}{
		{"10/0s", false, "a zero period: the pattern cannot tell 0s from 1s"},
		{"0x1p4/s", true, "a hexadecimal number: strconv.ParseFloat reads it"},
		{"1e400/s", false, "out of float64's range"},
	}
	for _, k := range known {
		var r Rate
		if got := r.unmarshalScalar(k.in) == nil; got != k.decOK || rate.MatchString(k.in) == k.decOK {
			t.Errorf("rate %q (%s): units.go accepts it: %v, the pattern: %v; want %v and %v: update schema.go's comment",
				k.in, k.reason, got, rate.MatchString(k.in), k.decOK, !k.decOK)
		}
	}
	var d Duration
	if d.unmarshalScalar("9999999h") == nil || !dur.MatchString("9999999h") {
		t.Errorf(`duration "9999999h" (out of time.Duration's range): want units.go to reject it and the pattern to accept it: update schema.go's comment`)
	}
}

// FieldPaths (shell completion of --set and --vary) offers every field
// the decoder accepts outside the sweep block, an ",inline" section's
// fields included (services.0.workers).
func TestFieldPathsMatchDecoder(t *testing.T) {
	dec, _ := decoderPaths(t)
	var want []string
	for _, p := range dec {
		if p != "sweep" && !strings.HasPrefix(p, "sweep.") {
			want = append(want, p)
		}
	}
	got := FieldPaths()
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		for _, p := range want {
			if !slices.Contains(got, p) {
				t.Errorf("FieldPaths has no %s", p)
			}
		}
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Errorf("FieldPaths has %s; the decoder has no such field", p)
			}
		}
	}
}
