package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestGiven(t *testing.T) {
	for _, c := range []struct {
		name, text string
		sets       []string
		want       map[string]int
	}{
		{"empty", "", nil, map[string]int{}},
		{"file only", "name: t\nclients: {count: 5, throttle: {}}\n", nil,
			map[string]int{"name": 0, "clients": 0, "clients.count": 0, "clients.throttle": 0}},
		{"a set replaces a field", "name: t\nclients: {throttle: {k: 2}}\n", []string{"clients.throttle.k=3"},
			map[string]int{"name": 0, "clients": 0, "clients.throttle": 0, "clients.throttle.k": 1}},
		{"a set adds a section", "name: t\n", []string{"seed=2", "clients.retry.max_attempts=4"},
			map[string]int{"name": 0, "seed": 1, "clients": 2, "clients.retry": 2, "clients.retry.max_attempts": 2}},
		{"a set removes a section", "clients: {throttle: {k: 2}}\n", []string{"clients.throttle=null"},
			map[string]int{"clients": 0, "clients.throttle": 1}},
		{"lists by index", "faults: [{kind: outage, start: 1m}]\n", []string{"faults.1={kind: capacity}"},
			map[string]int{"faults": 0, "faults.0": 0, "faults.0.kind": 0, "faults.0.start": 0, "faults.1": 1, "faults.1.kind": 1}},
		{"an alias is followed", "a: &x {k: 1}\nb: *x\n", nil,
			map[string]int{"a": 0, "a.k": 0, "b": 0, "b.k": 0}},
		{"an alias into itself stops", "c: &c {k: 1, t: *c}\n", nil,
			map[string]int{"c": 0, "c.k": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Given([]byte(c.text), c.sets)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// Every shipped scenario's given fields are fields of its resolved
// scenario's: the paths Given reports are those the decoder reads.
func TestGivenShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios (%v)", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		given, err := Given(data, []string{"clients.throttle.k=3"})
		if err != nil {
			t.Errorf("%s: got error %v, want none", file, err)
			continue
		}
		if got := given["clients.throttle.k"]; got != 1 {
			t.Errorf("%s: clients.throttle.k given by %d, want the first --set", file, got)
		}
		for p := range given {
			if strings.HasPrefix(p, "sweep") {
				continue
			}
			if top, _, _ := strings.Cut(p, "."); !slices.Contains(yamlKeys, top) {
				t.Errorf("%s: given %s, not a field of a scenario", file, p)
			}
		}
	}
}

var yamlKeys = func() []string {
	_, names := yamlFields(reflect.TypeFor[Scenario]())
	return names
}()

// FuzzGiven: any text and overrides give the fields or an error, never a
// panic or a loop; a text Parse accepts always gives its fields.
func FuzzGiven(f *testing.F) {
	f.Add([]byte("name: t\nclients: {throttle: {k: 2}}\n"), "clients.throttle.k=3")
	f.Add([]byte("c: &c {k: 1, t: *c}\n"), "c.t.k=2")
	f.Add([]byte("faults: [{kind: outage}]\n"), "faults.1.kind=capacity")
	f.Add([]byte(validBase), "")
	f.Add([]byte(""), "name=x")
	f.Add([]byte("- a\n"), "0=b")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\n")
		}
		given, err := Given(data, sets)
		if _, perr := Parse(data, "f.yaml", sets); perr == nil && err != nil {
			t.Fatalf("Parse accepts the text, Given fails: %v", err)
		}
		for p := range given {
			if p == "" {
				t.Fatalf("an empty path in %v", given)
			}
		}
	})
}
