package scenario

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// setBase has a throttle, a retry policy and one fault.
const setBase = `name: base
duration: 10m
clients:
  count: 100
  arrival: {total_rate: 100/s}
  throttle: {k: 2, window: 2m}
  retry:
    max_attempts: 3
    retry_on: [rejected, timeout, unavailable]
faults:
  - {kind: outage, start: 2m, duration: 30s}
`

// setBare has no throttle, no retry and no faults.
const setBare = `name: bare
clients:
  count: 100
  arrival: {total_rate: 100/s}
`

func TestSet(t *testing.T) {
	tests := []struct {
		name  string
		base  string
		sets  []string
		check func(t *testing.T, sc *Scenario)
	}{
		{
			name: "scalar override",
			base: setBase,
			sets: []string{"clients.throttle.k=3"},
			check: func(t *testing.T, sc *Scenario) {
				th := sc.Clients.Throttle
				if th == nil || th.K != 3 {
					t.Fatalf("clients.throttle: got %+v, want k 3", th)
				}
				if th.Window != Duration(2*time.Minute) || !th.Enabled {
					t.Errorf("clients.throttle: got %+v, want the rest of the file's throttle kept", th)
				}
			},
		},
		{
			name: "top-level scalars",
			base: setBase,
			sets: []string{"name=other", "seed=7", "duration=20m"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Name != "other" || sc.Seed != 7 || sc.Duration != Duration(20*time.Minute) {
					t.Errorf("got name %q seed %d duration %s, want other, 7, 20m", sc.Name, sc.Seed, sc.Duration)
				}
			},
		},
		{
			name: "later override wins",
			base: setBase,
			sets: []string{"clients.count=5", "clients.count=6"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Clients.Count != 6 {
					t.Errorf("clients.count: got %d, want 6", sc.Clients.Count)
				}
			},
		},
		{
			name: "creates a missing section with its defaults",
			base: setBare,
			sets: []string{"clients.throttle.k=3"},
			check: func(t *testing.T, sc *Scenario) {
				th := sc.Clients.Throttle
				if th == nil {
					t.Fatal("clients.throttle: got nil, want a throttle")
				}
				if !th.Enabled || th.K != 3 || th.Window != Duration(2*time.Minute) || th.Buckets != 120 ||
					!th.CountLocalRejects || th.Scope != "client" || th.GroupSize != 1 || !reflect.DeepEqual(th.AcceptOutcomes, []string{"ok"}) {
					t.Errorf("clients.throttle: got %+v, want the defaults with k 3", th)
				}
			},
		},
		{
			name: "creates nested missing sections",
			base: setBare,
			sets: []string{"clients.retry.backoff.cap=30s"},
			check: func(t *testing.T, sc *Scenario) {
				r := sc.Clients.Retry
				if r == nil {
					t.Fatal("clients.retry: got nil, want a retry policy")
				}
				if r.Backoff.Cap != Duration(30*time.Second) || r.Backoff.Base != Duration(100*time.Millisecond) || r.MaxAttempts != 3 {
					t.Errorf("clients.retry: got %+v, want the defaults with backoff.cap 30s", r)
				}
			},
		},
		{
			name: "fills a null section",
			base: setBare + "  throttle:\n",
			sets: []string{"clients.throttle.k=1.5"},
			check: func(t *testing.T, sc *Scenario) {
				if th := sc.Clients.Throttle; th == nil || th.K != 1.5 || th.Buckets != 120 {
					t.Errorf("clients.throttle: got %+v, want the defaults with k 1.5", th)
				}
			},
		},
		{
			name: "list element by index",
			base: setBase,
			sets: []string{"faults.0.duration=60s"},
			check: func(t *testing.T, sc *Scenario) {
				if len(sc.Faults) != 1 {
					t.Fatalf("faults: got %d, want 1", len(sc.Faults))
				}
				f := sc.Faults[0]
				if f.Duration != Duration(time.Minute) || f.Start != Duration(2*time.Minute) || f.Kind != "outage" {
					t.Errorf("faults.0: got %+v, want the file's fault with duration 60s", f)
				}
			},
		},
		{
			name: "append at index equal to the length",
			base: setBase,
			sets: []string{"faults.1.kind=capacity", "faults.1.start=5m", "faults.1.duration=10s", "faults.1.fraction=0.25"},
			check: func(t *testing.T, sc *Scenario) {
				if len(sc.Faults) != 2 {
					t.Fatalf("faults: got %d, want 2", len(sc.Faults))
				}
				want := Fault{Kind: "capacity", Start: Duration(5 * time.Minute), Duration: Duration(10 * time.Second), Mode: "refuse", Fraction: 0.25}
				if sc.Faults[1] != want {
					t.Errorf("faults.1: got %+v, want %+v", sc.Faults[1], want)
				}
			},
		},
		{
			name: "append a whole element in flow syntax",
			base: setBase,
			sets: []string{"faults.1={kind: outage, start: 5m, duration: 10s, mode: blackhole}"},
			check: func(t *testing.T, sc *Scenario) {
				if len(sc.Faults) != 2 || sc.Faults[1].Mode != "blackhole" || sc.Faults[1].Start != Duration(5*time.Minute) {
					t.Errorf("faults: got %+v, want a second, blackhole fault at 5m", sc.Faults)
				}
			},
		},
		{
			name: "creates a missing list from an index",
			base: setBare,
			sets: []string{"faults.0.kind=outage", "faults.0.start=1m", "faults.0.duration=10s"},
			check: func(t *testing.T, sc *Scenario) {
				want := []Fault{{Kind: "outage", Start: Duration(time.Minute), Duration: Duration(10 * time.Second), Mode: "refuse", Fraction: 0.5}}
				if !reflect.DeepEqual(sc.Faults, want) {
					t.Errorf("faults: got %+v, want %+v", sc.Faults, want)
				}
			},
		},
		{
			name: "sets a whole list",
			base: setBare,
			sets: []string{"faults=[{kind: capacity, start: 1m, duration: 10s, fraction: 0.1}]"},
			check: func(t *testing.T, sc *Scenario) {
				if len(sc.Faults) != 1 || sc.Faults[0].Kind != "capacity" || sc.Faults[0].Fraction != 0.1 {
					t.Errorf("faults: got %+v, want one capacity fault at 10%%", sc.Faults)
				}
			},
		},
		{
			name: "null empties a list",
			base: setBase,
			sets: []string{"faults=null"},
			check: func(t *testing.T, sc *Scenario) {
				if len(sc.Faults) != 0 {
					t.Errorf("faults: got %+v, want none", sc.Faults)
				}
			},
		},
		{
			name: "replace a list element",
			base: setBase,
			sets: []string{"clients.retry.retry_on.1=unavailable"},
			check: func(t *testing.T, sc *Scenario) {
				if got, want := sc.Clients.Retry.RetryOn, []string{"rejected", "unavailable", "unavailable"}; !reflect.DeepEqual(got, want) {
					t.Errorf("clients.retry.retry_on: got %q, want %q", got, want)
				}
			},
		},
		{
			name: "null disables the throttle",
			base: setBase,
			sets: []string{"clients.throttle=null"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Clients.Throttle != nil {
					t.Errorf("clients.throttle: got %+v, want nil", sc.Clients.Throttle)
				}
				if sc.Clients.Retry == nil {
					t.Errorf("clients.retry: got nil, want the file's retry policy untouched")
				}
			},
		},
		{
			name: "flow list value",
			base: setBase,
			sets: []string{"clients.retry.retry_on=[timeout]"},
			check: func(t *testing.T, sc *Scenario) {
				if got, want := sc.Clients.Retry.RetryOn, []string{"timeout"}; !reflect.DeepEqual(got, want) {
					t.Errorf("clients.retry.retry_on: got %q, want %q", got, want)
				}
			},
		},
		{
			name: "flow mapping value replaces the section",
			base: setBase,
			sets: []string{"clients.throttle={k: 4}"},
			check: func(t *testing.T, sc *Scenario) {
				if th := sc.Clients.Throttle; th == nil || th.K != 4 || th.Window != Duration(2*time.Minute) || th.Buckets != 120 {
					t.Errorf("clients.throttle: got %+v, want the defaults with k 4", th)
				}
			},
		},
		{
			name: "value with an equals sign and spaces around the path",
			base: setBase,
			sets: []string{" description =a=b"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Description != "a=b" {
					t.Errorf("description: got %q, want %q", sc.Description, "a=b")
				}
			},
		},
		{
			name: "on an empty file",
			base: "",
			sets: []string{"name=fromset", "clients.arrival.rate=1/s"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Name != "fromset" || sc.Clients.Arrival.Rate != 1 {
					t.Errorf("got name %q rate %s, want fromset, 1/s", sc.Name, sc.Clients.Arrival.Rate)
				}
			},
		},
		{
			name: "through an alias",
			base: setBare + "  timeout: 1s\nmetrics: &m {interval: 1s}\n",
			sets: []string{"metrics.interval=2s", "metrics.recovery_window=10s", "metrics.baseline=60s"},
			check: func(t *testing.T, sc *Scenario) {
				if sc.Metrics.Interval != Duration(2*time.Second) {
					t.Errorf("metrics.interval: got %s, want 2s", sc.Metrics.Interval)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, loadOK(t, tc.base, tc.sets...))
		})
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		name string
		base string
		sets []string
		set  int    // the --set the problem is blamed on
		path string // its field path ("" for an override that cannot be applied)
		msg  []string
	}{
		{
			name: "unknown path",
			base: setBase,
			sets: []string{"clients.throtle.k=3"},
			set:  1, path: "clients.throtle",
			msg: []string{`unknown field "throtle"`, `did you mean "throttle"?`},
		},
		{
			name: "unknown path in the second override",
			base: setBase,
			sets: []string{"clients.count=5", "backend.wrokers=5"},
			set:  2, path: "backend.wrokers",
			msg: []string{`unknown field "wrokers"`, `did you mean "workers"?`},
		},
		{
			name: "wrong type",
			base: setBase,
			sets: []string{"clients.count=many"},
			set:  1, path: "clients.count",
			msg: []string{"expected a whole number", `"many"`},
		},
		{
			name: "invalid value",
			base: setBase,
			sets: []string{"clients.count=1", "clients.count=0"},
			set:  2, path: "clients.count",
			msg: []string{"must be >= 1"},
		},
		{
			name: "duration without unit",
			base: setBase,
			sets: []string{"faults.0.duration=60"},
			set:  1, path: "faults.0.duration",
			msg: []string{"no unit", "60s"},
		},
		{
			name: "quoted number",
			base: setBase,
			sets: []string{`clients.count="5"`},
			set:  1, path: "clients.count",
			msg: []string{`expected a whole number, got "5"`},
		},
		{
			name: "no equals sign",
			base: setBase,
			sets: []string{"clients.throttle.k"},
			set:  1,
			msg:  []string{"expected path=value", `"clients.throttle.k"`},
		},
		{
			name: "empty path",
			base: setBase,
			sets: []string{"=3"},
			set:  1,
			msg:  []string{"expected path=value"},
		},
		{
			name: "index out of range",
			base: setBase,
			sets: []string{"faults.5.duration=1s"},
			set:  1,
			msg:  []string{"faults is a list of 1", "index 0..1", `"5"`},
		},
		{
			name: "negative index",
			base: setBase,
			sets: []string{"faults.-1.duration=1s"},
			set:  1,
			msg:  []string{"faults is a list of 1", `"-1"`},
		},
		{
			name: "index that is not a number",
			base: setBase,
			sets: []string{"faults.first.duration=1s"},
			set:  1,
			msg:  []string{"faults is a list of 1", `"first"`},
		},
		{
			name: "field of a single value",
			base: setBase,
			sets: []string{"clients.count.max=5"},
			set:  1,
			msg:  []string{"clients.count is a single value", `"max"`},
		},
		{
			name: "value that is not YAML",
			base: setBase,
			sets: []string{"clients.retry.retry_on=[timeout"},
			set:  1,
			msg:  []string{"not valid YAML"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, errs := loadErrs(t, tc.base, tc.sets...)
			e := findErr(errs, tc.path)
			if e == nil {
				t.Fatalf("got problems at %q, want one at %q:\n%v", errPaths(errs), tc.path, errs)
			}
			if e.Pos.Set != tc.set || e.Pos.Line != 0 {
				t.Errorf("position: got %+v, want --set #%d and no line", e.Pos, tc.set)
			}
			want := file + " (--set #" + strconv.Itoa(tc.set) + "): "
			if got := e.Error(); !strings.HasPrefix(got, want) {
				t.Errorf("Error(): got %q, want prefix %q", got, want)
			}
			for _, s := range tc.msg {
				if !strings.Contains(e.Msg, s) {
					t.Errorf("message: got %q, want it to contain %q", e.Msg, s)
				}
			}
		})
	}
}

// TestSetLikeTheFile: an override gives the same scenario as the same
// value written in the file.
func TestSetLikeTheFile(t *testing.T) {
	tests := []struct {
		set, file string
	}{
		{"clients.retry=", setBare + "  retry:\n"},
		{"clients.retry=null", setBare + "  retry: null\n"},
		{"clients.retry=~", setBare + "  retry: ~\n"},
		{"clients.throttle={}", setBare + "  throttle: {}\n"},
		{"clients.throttle={k: 3}", setBare + "  throttle: {k: 3}\n"},
		{"clients.throttle.k=3", setBare + "  throttle: {k: 3}\n"},
		{"faults=[]", setBare + "faults: []\n"},
		{"faults=", setBare + "faults:\n"},
		{"backend.service={dist: lognormal}", setBare + "backend: {service: {dist: lognormal}}\n"},
		{"metrics=", setBare + "metrics:\n"},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			viaSet := loadOK(t, setBare, tc.set)
			inFile := loadOK(t, tc.file)
			if !reflect.DeepEqual(viaSet, inFile) {
				t.Errorf("--set %s: got %+v, want the same as in the file: %+v", tc.set, viaSet, inFile)
			}
		})
	}
}

// TestSetErrorsAfterFileErrors: problems from --set come after the file's
// problems, which stay sorted by line.
func TestSetErrorsAfterFileErrors(t *testing.T) {
	_, errs := loadErrs(t, `name: t
clients:
  count: many
  arrival: {total_rate: 10/s}
`, "backend.workers=0")
	if len(errs) != 2 {
		t.Fatalf("got %d problems, want 2:\n%v", len(errs), errs)
	}
	if errs[0].Path != "clients.count" || errs[0].Pos.Line != 3 {
		t.Errorf("problem 0: got %s at %+v, want clients.count at line 3", errs[0].Path, errs[0].Pos)
	}
	if errs[1].Path != "backend.workers" || errs[1].Pos.Set != 1 {
		t.Errorf("problem 1: got %s at %+v, want backend.workers at --set #1", errs[1].Path, errs[1].Pos)
	}
}

// TestApplySetDirect drives ApplySet on a parsed document.
func TestApplySetDirect(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("a: {b: 1}\nl: [x, y]\n"), &root); err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"a.b=2", "a.c.d=3", "l.2=z", "l.0=w"} {
		if err := ApplySet(&root, s, i+1); err != nil {
			t.Fatalf("ApplySet(%q): got error %v, want nil", s, err)
		}
	}
	var got map[string]any
	if err := root.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": map[string]any{"b": 2, "c": map[string]any{"d": 3}},
		"l": []any{"w", "y", "z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the overrides: got %v, want %v", got, want)
	}
	// New nodes carry the override's number, as a negative line.
	c := root.Content[0].Content[1].Content[3] // a.c
	if c.Line != -2 {
		t.Errorf("line of the mapping made by --set #2: got %d, want -2", c.Line)
	}

	var empty yaml.Node
	err := ApplySet(&empty, "a=1", 1)
	if err == nil || !strings.Contains(err.Error(), "no document") {
		t.Errorf("ApplySet on an empty node: got %v, want a \"no document\" error", err)
	}
	if err := ApplySet(&root, "nothing", 1); err == nil {
		t.Error(`ApplySet("nothing"): got nil, want an error`)
	}
}

// TestSetErrorsStopBeforeDecoding: an override that cannot be applied is
// reported alone, as an Errors, without decoding the file.
func TestSetErrorsStopBeforeDecoding(t *testing.T) {
	_, err := Parse([]byte("name: t\nclients: {count: many}\n"), "x.yaml", []string{"nope"})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want scenario.Errors", err)
	}
	if len(errs) != 1 || errs[0].Pos.Set != 1 {
		t.Errorf("got %v, want one problem at --set #1", errs)
	}
}

// Every path FieldPaths lists can be set (the value may be invalid for
// the field, but the path must exist), and the familiar ones are there.
func TestFieldPaths(t *testing.T) {
	paths := FieldPaths()
	for _, want := range []string{"name", "clients.throttle.k", "clients.retry.backoff.base", "faults.0.start", "backend.queue.limit"} {
		if !slices.Contains(paths, want) {
			t.Errorf("FieldPaths has no %q", want)
		}
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "sweep") {
			t.Errorf("FieldPaths lists %q: --set does not apply to the sweep block", p)
		}
		_, err := Parse([]byte("name: x\nfaults: [{kind: outage, start: 1s, duration: 1s}]\n"), "t.yaml", []string{p + "=null"})
		var errs Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				if strings.Contains(e.Msg, "unknown field") || strings.Contains(e.Msg, "no field") {
					t.Errorf("--set %s=null: %v", p, e)
				}
			}
		}
	}
}
