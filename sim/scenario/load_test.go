package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeScenario writes content to a file in a fresh temporary folder and
// returns its path.
func writeScenario(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadOK loads content (with sets) and fails the test on any error.
func loadOK(t *testing.T, content string, sets ...string) *Scenario {
	t.Helper()
	sc, err := Load(writeScenario(t, content), sets)
	if err != nil {
		t.Fatalf("Load: got error\n%v\nwant none", err)
	}
	if sc == nil {
		t.Fatal("Load: got a nil scenario and no error")
	}
	return sc
}

// loadErrs loads content (with sets), which must fail with an Errors. It
// returns the file's path and the errors.
func loadErrs(t *testing.T, content string, sets ...string) (string, Errors) {
	t.Helper()
	path := writeScenario(t, content)
	sc, err := Load(path, sets)
	if err == nil {
		t.Fatalf("Load: got no error (scenario %+v), want errors", sc)
	}
	if sc != nil {
		t.Errorf("Load: got a scenario with the error, want nil")
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load: got error %T %q, want scenario.Errors", err, err)
	}
	if len(errs) == 0 {
		t.Fatal("Load: got an empty Errors, want at least one problem")
	}
	return path, errs
}

// findErr returns the first problem with the given path, or nil.
func findErr(errs Errors, path string) *FieldError {
	for _, e := range errs {
		if e.Path == path {
			return e
		}
	}
	return nil
}

func errPaths(errs Errors) []string {
	var ps []string
	for _, e := range errs {
		ps = append(ps, e.Path)
	}
	return ps
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		path      string // field path of the problem
		line, col int
		msg       []string // substrings of the message
	}{
		{
			name: "unknown top-level key",
			content: `name: t
clinets:
  count: 5
`,
			path: "clinets", line: 2, col: 1,
			msg: []string{`unknown field "clinets"`, `did you mean "clients"?`, "valid fields here: name,"},
		},
		{
			name: "unknown nested key",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
  throtle: {k: 2}
`,
			path: "clients.throtle", line: 4, col: 3,
			msg: []string{`unknown field "throtle"`, `did you mean "throttle"?`},
		},
		{
			name: "unknown key with no close match",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
backend:
  zzzzzzzzzz: 1
`,
			path: "backend.zzzzzzzzzz", line: 5, col: 3,
			msg: []string{`unknown field "zzzzzzzzzz"`, "valid fields here: kind, workers, replicas, lb, ewma_decay, service, queue"},
		},
		{
			name: "word for a whole number",
			content: `name: t
clients:
  count: many
  arrival: {total_rate: 10/s}
`,
			path: "clients.count", line: 3, col: 10,
			msg: []string{"expected a whole number", `"many"`},
		},
		{
			name: "fraction for a whole number",
			content: `name: t
clients:
  count: 2.5
  arrival: {total_rate: 10/s}
`,
			path: "clients.count", line: 3, col: 10,
			msg: []string{"expected a whole number", `"2.5"`},
		},
		{
			name: "quoted number",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
  throttle:
    k: "2"
`,
			path: "clients.throttle.k", line: 5, col: 8,
			msg: []string{"expected a number", `"2"`},
		},
		{
			name: "quoted whole number",
			content: `name: t
clients:
  count: '10'
  arrival: {total_rate: 10/s}
`,
			path: "clients.count", line: 3, col: 10,
			msg: []string{"expected a whole number"},
		},
		{
			name: "bool given as yes",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
  throttle:
    count_local_rejects: yes
`,
			path: "clients.throttle.count_local_rejects", line: 5, col: 26,
			msg: []string{"expected true or false", `"yes"`},
		},
		{
			name: "negative rate",
			content: `name: t
clients:
  arrival:
    total_rate: -10/s
`,
			path: "clients.arrival.total_rate", line: 4, col: 17,
			msg: []string{"must be > 0", "-10/s"},
		},
		{
			name: "negative per-client rate",
			content: `name: t
clients:
  arrival:
    rate: -1/s
`,
			path: "clients.arrival.rate", line: 4, col: 11,
			msg: []string{"must be > 0"},
		},
		{
			name: "zero rate",
			content: `name: t
clients:
  arrival: {total_rate: 0/s}
`,
			path: "clients.arrival", line: 3, col: 12,
			msg: []string{"set rate", "total_rate"},
		},
		{
			name: "rate without unit of time",
			content: `name: t
clients:
  arrival: {total_rate: 600}
`,
			path: "clients.arrival.total_rate", line: 3, col: 25,
			msg: []string{"no unit of time", "600/s"},
		},
		{
			name: "duration without unit",
			content: `name: t
duration: 30
clients:
  arrival: {total_rate: 10/s}
`,
			path: "duration", line: 2, col: 11,
			msg: []string{"no unit", "30s"},
		},
		{
			name: "enum typo",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
  retry:
    backoff:
      jitter: ful
`,
			path: "clients.retry.backoff.jitter", line: 6, col: 15,
			msg: []string{`"ful" is not one of none, full, equal, decorrelated`, `did you mean "full"?`},
		},
		{
			name: "enum typo in a list",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
  retry:
    retry_on: [timeout, rejcted]
`,
			path: "clients.retry.retry_on.1", line: 5, col: 25,
			msg: []string{`"rejcted" is not one of rejected, timeout, unavailable`, `did you mean "rejected"?`},
		},
		{
			name: "duplicate key",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
name: u
`,
			path: "name", line: 4, col: 1,
			msg: []string{"given twice"},
		},
		{
			name: "list where a mapping is expected",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
backend: [1, 2]
`,
			path: "backend", line: 4, col: 10,
			msg: []string{"expected a mapping", "a list"},
		},
		{
			name: "mapping where a single value is expected",
			content: `name: t
duration: {minutes: 2}
clients:
  arrival: {total_rate: 10/s}
`,
			path: "duration", line: 2, col: 11,
			msg: []string{"expected a single value", "a mapping"},
		},
		{
			name: "single value where a list is expected",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
faults: outage
`,
			path: "faults", line: 4, col: 9,
			msg: []string{"expected a list", `"outage"`},
		},
		{
			name: "empty value for a number",
			content: `name: t
clients:
  count:
  arrival: {total_rate: 10/s}
`,
			path: "clients.count", line: 3, col: 9,
			msg: []string{"expected a whole number", "nothing (null)"},
		},
		{
			name: "mapping as a field name",
			content: `name: t
clients:
  arrival: {total_rate: 10/s}
? {a: 1}
: 2
`,
			path: "", line: 4, col: 3,
			msg: []string{"expected a field name", "a mapping"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, errs := loadErrs(t, tc.content)
			e := findErr(errs, tc.path)
			if e == nil {
				t.Fatalf("got problems at paths %q, want one at %q:\n%v", errPaths(errs), tc.path, errs)
			}
			if e.File != file {
				t.Errorf("File: got %q, want %q", e.File, file)
			}
			if e.Pos.Line != tc.line || e.Pos.Col != tc.col {
				t.Errorf("position: got %d:%d, want %d:%d (%v)", e.Pos.Line, e.Pos.Col, tc.line, tc.col, e)
			}
			for _, s := range tc.msg {
				if !strings.Contains(e.Msg, s) {
					t.Errorf("message: got %q, want it to contain %q", e.Msg, s)
				}
			}
			// The one-line form is file:line:col: path: message.
			want := file + ":" + strconv.Itoa(tc.line) + ":" + strconv.Itoa(tc.col) + ": "
			if tc.path != "" {
				want += tc.path + ": "
			}
			if got := e.Error(); !strings.HasPrefix(got, want) {
				t.Errorf("Error(): got %q, want prefix %q", got, want)
			}
		})
	}
}

// TestLoadReportsEveryProblem: one load reports every problem of the file,
// decoding and validation alike, sorted by line.
func TestLoadReportsEveryProblem(t *testing.T) {
	content := `name: bad/name
duration: 30
clients:
  count: many
  arrival: {total_rate: 10/s}
  throttle: {k: -1}
  retry:
    backoff: {jitter: ful}
backend:
  workerz: 5
`
	file, errs := loadErrs(t, content)
	want := []struct {
		path string
		line int
	}{
		{"name", 1},                         // validation
		{"duration", 2},                     // decoding
		{"clients.count", 4},                // decoding
		{"clients.throttle.k", 6},           // validation
		{"clients.retry.backoff.jitter", 8}, // decoding
		{"backend.workerz", 10},             // decoding
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		e := errs[i]
		if e.Path != w.path || e.Pos.Line != w.line {
			t.Errorf("problem %d: got %s at line %d, want %s at line %d", i, e.Path, e.Pos.Line, w.path, w.line)
		}
		if e.File != file {
			t.Errorf("problem %d: File got %q, want %q", i, e.File, file)
		}
	}
	lines := strings.Split(errs.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("Errors.Error(): got %d lines, want %d:\n%s", len(lines), len(want), errs.Error())
	}
	for i, l := range lines {
		if l != errs[i].Error() {
			t.Errorf("Errors.Error() line %d: got %q, want %q", i, l, errs[i].Error())
		}
	}
}

// TestLoadFailedFieldNotReportedTwice: a field that failed to decode is not
// also reported by validation.
func TestLoadFailedFieldNotReportedTwice(t *testing.T) {
	_, errs := loadErrs(t, `name: t
clients:
  count: 0x10
  arrival: {total_rate: 10/s}
  throttle: {buckets: "7"}
`)
	for _, p := range []string{"clients.count", "clients.throttle.buckets"} {
		n := 0
		for _, e := range errs {
			if e.Path == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("problems at %s: got %d, want 1:\n%v", p, n, errs)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	sc, err := Load(path, nil)
	if err == nil {
		t.Fatalf("Load of a missing file: got %+v and no error, want an error", sc)
	}
	if sc != nil {
		t.Errorf("Load of a missing file: got a scenario, want nil")
	}
	want := path + ": no such scenario file"
	if err.Error() != want {
		t.Errorf("error: got %q, want %q", err, want)
	}
}

func TestLoadFolder(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir, nil)
	if err == nil {
		t.Fatal("Load of a folder: got no error, want one")
	}
	if !strings.HasPrefix(err.Error(), dir+": ") {
		t.Errorf("error: got %q, want it to start with %q", err, dir+": ")
	}
}

func TestLoadEmptyFile(t *testing.T) {
	for _, content := range []string{"", "\n\n", "# only a comment\n", "\xef\xbb\xbf"} {
		t.Run(strings.TrimSpace(content), func(t *testing.T) {
			file, errs := loadErrs(t, content)
			e := findErr(errs, "name")
			if e == nil {
				t.Fatalf("got problems at %q, want one at name:\n%v", errPaths(errs), errs)
			}
			if !strings.Contains(e.Msg, "is required") {
				t.Errorf("message: got %q, want it to say the name is required", e.Msg)
			}
			if e.File != file {
				t.Errorf("File: got %q, want %q", e.File, file)
			}
			if findErr(errs, "clients.arrival") == nil {
				t.Errorf("got problems at %q, want one at clients.arrival (no rate)", errPaths(errs))
			}
		})
	}
}

// A syntax error says file:line:col: what. yaml.v3 gives the line; the
// column is where on it the parser gave up (the tab, the second colon),
// else where the line's text starts.
func TestLoadSyntaxError(t *testing.T) {
	tests := []struct {
		name    string
		content string
		pos     string // ":line:col", or "" when the parser gives no line
		want    string
	}{
		{"unclosed flow mapping", "name: t\nclients: {count: 5\n", ":1:1", "did not find expected ',' or '}'"},
		{"bad indentation", "name: t\nclients:\n  count: 5\n   arrival: x\n", ":4:4", "mapping values are not allowed"},
		{"a second colon", "name: t\nclients:\n  count: 5: 6\n", ":3:11", "mapping values are not allowed"},
		{"tab indentation", "name: t\nclients:\n\tcount: 5\n", ":3:1", "found character that cannot start any token (a tab: indent with spaces)"},
		{"unclosed quote", "name: t\ndescription: \"abc\nclients: {}\n", ":2:1", "found unexpected end of stream"},
		{"undefined alias", "name: *nothing\n", "", "unknown anchor 'nothing'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScenario(t, tc.content)
			sc, err := Load(path, nil)
			if err == nil {
				t.Fatalf("Load: got %+v and no error, want a syntax error", sc)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+tc.pos+": ") {
				t.Errorf("error: got %q, want it to start with %q", msg, path+tc.pos+": ")
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error: got %q, want it to contain %q", msg, tc.want)
			}
			if strings.Contains(strings.TrimPrefix(msg, path), "yaml: ") {
				t.Errorf("error: got %q, want no %q prefix from the YAML library", msg, "yaml: ")
			}
		})
	}
}

func TestLoadTopLevelNotAMapping(t *testing.T) {
	tests := []struct {
		content string
		got     string
	}{
		{"- name: t\n- clients: {}\n", "a list"},
		{"just a string\n", `"just a string"`},
		{"~\n", "nothing (null)"},
		{"42\n", `"42"`},
	}
	for _, tc := range tests {
		t.Run(tc.got, func(t *testing.T) {
			file, errs := loadErrs(t, tc.content)
			if len(errs) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(errs), errs)
			}
			e := errs[0]
			if e.File != file || e.Pos.Line != 1 || e.Pos.Col != 1 || e.Path != "" {
				t.Errorf("got %s:%d:%d path %q, want %s:1:1 path \"\"", e.File, e.Pos.Line, e.Pos.Col, e.Path, file)
			}
			if !strings.Contains(e.Msg, "a scenario file is a mapping") || !strings.Contains(e.Msg, tc.got) {
				t.Errorf("message: got %q, want it to say a scenario is a mapping and name %s", e.Msg, tc.got)
			}
		})
	}
}

const minimal = `name: minimal
clients:
  arrival:
    total_rate: 600/s
`

func TestDefaults(t *testing.T) {
	sc := loadOK(t, minimal)
	checks := []struct {
		field     string
		got, want any
	}{
		{"name", sc.Name, "minimal"},
		{"seed", sc.Seed, uint64(1)},
		{"duration", sc.Duration, Duration(10 * time.Minute)},
		{"metrics.interval", sc.Metrics.Interval, Duration(time.Second)},
		{"metrics.recovery_window", sc.Metrics.RecoveryWindow, Duration(10 * time.Second)},
		{"metrics.baseline", sc.Metrics.Baseline, Duration(time.Minute)},
		{"metrics.recover_fraction", sc.Metrics.RecoverFraction, 0.95},
		{"metrics.stay_fraction", sc.Metrics.StayFraction, 0.90},
		{"clients.count", sc.Clients.Count, 10000},
		{"clients.arrival.process", sc.Clients.Arrival.Process, ArrivalPoisson},
		{"clients.arrival.total_rate", sc.Clients.Arrival.TotalRate, Rate(600)},
		{"clients.arrival.rate", sc.Clients.Arrival.Rate, Rate(0)},
		{"clients.timeout", sc.Clients.Timeout, Duration(2 * time.Second)},
		{"clients.throttle", sc.Clients.Throttle, (*Throttle)(nil)},
		{"clients.retry", sc.Clients.Retry, (*Retry)(nil)},
		{"backend.workers", sc.Backend.Workers, 100},
		{"backend.service.dist", sc.Backend.Service.Dist, ServiceExponential},
		{"backend.service.mean", sc.Backend.Service.Mean, Duration(100 * time.Millisecond)},
		{"backend.queue.limit", sc.Backend.Queue.Limit, 1000},
		{"backend.queue.timeout", sc.Backend.Queue.Timeout, Duration(0)},
		{"backend.reject_cost", sc.Backend.RejectCost, Duration(0)},
		{"faults", len(sc.Faults), 0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.field, c.got, c.want)
		}
	}
	if got, want := sc.PerClientRate(), 0.06; got != want {
		t.Errorf("PerClientRate: got %v, want %v", got, want)
	}
	if got, want := sc.Capacity(), 1000.0; got != want {
		t.Errorf("Capacity: got %v, want %v", got, want)
	}
}

func TestDefaultsThrottle(t *testing.T) {
	want := &Throttle{
		Enabled:           true,
		K:                 2,
		Window:            Duration(2 * time.Minute),
		Buckets:           120,
		CountLocalRejects: true,
		Scope:             "client",
		GroupSize:         1,
		AcceptOutcomes:    []string{"ok"},
		Padding:           1,
		Aggression:        1,
		MaxProbability:    1,
	}
	for _, section := range []string{"throttle: {}", "throttle:\n    enabled: true"} {
		t.Run(section, func(t *testing.T) {
			sc := loadOK(t, minimal+"  "+section+"\n")
			if !reflect.DeepEqual(sc.Clients.Throttle, want) {
				t.Errorf("clients.throttle: got %+v, want %+v", sc.Clients.Throttle, want)
			}
		})
	}
	t.Run("one field given", func(t *testing.T) {
		sc := loadOK(t, minimal+"  throttle: {k: 1.5, window: 1m, buckets: 60}\n")
		w := *want
		w.K, w.Window, w.Buckets = 1.5, Duration(time.Minute), 60
		if !reflect.DeepEqual(sc.Clients.Throttle, &w) {
			t.Errorf("clients.throttle: got %+v, want %+v", sc.Clients.Throttle, &w)
		}
	})
	t.Run("null section", func(t *testing.T) {
		sc := loadOK(t, minimal+"  throttle: null\n")
		if sc.Clients.Throttle != nil {
			t.Errorf("clients.throttle: got %+v, want nil (no throttle)", sc.Clients.Throttle)
		}
	})
}

func TestDefaultsRetry(t *testing.T) {
	sc := loadOK(t, minimal+"  retry: {}\n")
	r := sc.Clients.Retry
	if r == nil {
		t.Fatal("clients.retry: got nil, want the default policy")
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"max_attempts", r.MaxAttempts, 3},
		{"backoff.base", r.Backoff.Base, Duration(100 * time.Millisecond)},
		{"backoff.cap", r.Backoff.Cap, Duration(10 * time.Second)},
		{"backoff.multiplier", r.Backoff.Multiplier, 2.0},
		{"backoff.jitter", r.Backoff.Jitter, JitterFull},
		{"retry_on", r.RetryOn, []string{"rejected", "timeout", "unavailable", "error"}},
		{"honor_retry_after", r.HonorRetryAfter, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("clients.retry.%s: got %v, want %v", c.field, c.got, c.want)
		}
	}

	sc = loadOK(t, minimal+"  retry:\n    backoff: {cap: 30s}\n    retry_on: []\n")
	r = sc.Clients.Retry
	if r.Backoff.Cap != Duration(30*time.Second) || r.Backoff.Base != Duration(100*time.Millisecond) || r.Backoff.Jitter != "full" || r.MaxAttempts != 3 {
		t.Errorf("clients.retry with backoff.cap only: got %+v, want the defaults with cap 30s", r)
	}
	if r.RetryOn == nil || len(r.RetryOn) != 0 {
		t.Errorf("clients.retry.retry_on: []: got %#v, want an empty list", r.RetryOn)
	}
}

func TestDefaultsListElements(t *testing.T) {
	sc := loadOK(t, `name: t
clients:
  arrival:
    total_rate: 600/s
    profile:
      - {at: 1m}
faults:
  - {kind: outage, start: 2m, duration: 30s}
  - {kind: capacity, start: 4m, duration: 30s}
`)
	if got := sc.Clients.Arrival.Profile; len(got) != 1 || got[0].Multiplier != 1 || got[0].At != Duration(time.Minute) {
		t.Errorf("profile: got %+v, want [{At:1m Multiplier:1}]", got)
	}
	wantFaults := []Fault{
		{Kind: "outage", Start: Duration(2 * time.Minute), Duration: Duration(30 * time.Second), Mode: "refuse", Fraction: 0.5},
		{Kind: "capacity", Start: Duration(4 * time.Minute), Duration: Duration(30 * time.Second), Mode: "refuse", Fraction: 0.5},
	}
	if !reflect.DeepEqual(sc.Faults, wantFaults) {
		t.Errorf("faults: got %+v, want %+v", sc.Faults, wantFaults)
	}
}

// TestLoadYAMLFeatures: anchors, aliases, a BOM and underscores in numbers
// load as YAML says.
func TestLoadYAMLFeatures(t *testing.T) {
	sc := loadOK(t, "\xef\xbb\xbf"+`name: t
clients:
  count: 10_000
  arrival: {total_rate: 600/s}
  timeout: &t 3s
backend:
  queue: {timeout: *t}
`)
	if sc.Clients.Count != 10000 {
		t.Errorf("clients.count: got %d, want 10000", sc.Clients.Count)
	}
	if sc.Backend.Queue.Timeout != Duration(3*time.Second) {
		t.Errorf("backend.queue.timeout (an alias): got %s, want 3s", sc.Backend.Queue.Timeout)
	}
}

func TestValidateCodeBuilt(t *testing.T) {
	sc := Default()
	if err := sc.Validate(); err == nil {
		t.Error("Default().Validate(): got nil, want errors (no name, no rate)")
	}
	sc.Name = "x"
	sc.Clients.Arrival.Rate = 0.1
	if err := sc.Validate(); err != nil {
		t.Errorf("Validate of Default() with a name and a rate: got %v, want nil", err)
	}
	sc.Clients.Count = 0
	err := sc.Validate()
	var errs Errors
	if !errors.As(err, &errs) || findErr(errs, "clients.count") == nil {
		t.Fatalf("Validate with count 0: got %v, want a problem at clients.count", err)
	}
	if e := findErr(errs, "clients.count"); e.File != "scenario" || e.Pos != (Pos{}) {
		t.Errorf("code-built problem: got file %q pos %+v, want file \"scenario\" and no position", e.File, e.Pos)
	}
}

func TestIntervals(t *testing.T) {
	tests := []struct {
		duration, interval time.Duration
		want               int
	}{
		{20 * time.Second, time.Second, 20},
		{10 * time.Second, 3 * time.Second, 4},
		{10 * time.Minute, time.Second, 600},
		{time.Second, time.Second, 1},
	}
	for _, tc := range tests {
		sc := &Scenario{Duration: Duration(tc.duration), Metrics: Metrics{Interval: Duration(tc.interval)}}
		if got := sc.Intervals(); got != tc.want {
			t.Errorf("Intervals() of %v by %v: got %d, want %d", tc.duration, tc.interval, got, tc.want)
		}
	}
}
