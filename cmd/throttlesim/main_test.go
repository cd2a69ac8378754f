package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// tinyScenario runs in a few milliseconds: 50 clients for 20 simulated
// seconds, with a throttle, retries and one outage.
const tinyScenario = `name: tiny
duration: 20s
clients:
  count: 50
  arrival: {total_rate: 100/s}
  timeout: 1s
  throttle: {}
  retry: {}
backend:
  workers: 5
  service: {dist: exponential, mean: 50ms}
  queue: {limit: 20}
metrics: {baseline: 5s, recovery_window: 2s}
faults:
  - {kind: outage, start: 5s, duration: 3s}
`

// badScenario has three problems, on lines 3, 4 and 6.
const badScenario = `name: bad
clients:
  count: many
  arrival: {total_rate: 600}
  retry:
    backoff: {jitter: ful}
`

type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the program in-process with stderr not a terminal.
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return runCLICtx(t, context.Background(), false, args...)
}

func runCLICtx(t *testing.T, ctx context.Context, tty bool, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr, tty)
	r := result{code, stdout.String(), stderr.String()}
	for _, s := range []string{"goroutine ", "panic"} {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("throttlesim %q: output contains %q:\nstdout:\n%s\nstderr:\n%s", args, s, r.stdout, r.stderr)
		}
	}
	return r
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "version")
	if r.code != 0 {
		t.Errorf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if want := "throttlesim " + version + " (commit " + commit + ", go"; !strings.HasPrefix(r.stdout, want) {
		t.Errorf("stdout: got %q, want it to start with %q", r.stdout, want)
	}
	if r.stderr != "" {
		t.Errorf("stderr: got %q, want nothing", r.stderr)
	}

	r = runCLI(t, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, version+" (commit "+commit+")") {
		t.Errorf("--version: got exit %d stdout %q, want exit 0 and the version", r.code, r.stdout)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"help"}, {"run", "--help"}} {
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Errorf("throttlesim %q: exit code got %d, want 0", args, r.code)
		}
		if !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("throttlesim %q: stdout got %q, want the usage", args, r.stdout)
		}
	}
}

// A usage error says what is wrong and points at the help of the command
// that was typed (throttlesim map --help, not the root's), and writes
// nothing.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	tests := []struct {
		name string
		args []string
		msg  string
		help string // the command whose --help the hint names
	}{
		{"unknown flag", []string{"run", "--bogus", file}, "unknown flag: --bogus", "throttlesim run"},
		{"unknown flag before the command", []string{"--bogus", "version"}, "unknown flag: --bogus", "throttlesim"},
		{"missing argument", []string{"run"}, "expected one scenario FILE, got 0 arguments", "throttlesim run"},
		{"two arguments", []string{"run", file, file}, "expected one scenario FILE, got 2 arguments", "throttlesim run"},
		{"bad seed", []string{"run", file, "--seed", "abc"}, `invalid argument "abc" for "--seed"`, "throttlesim run"},
		{"negative seed", []string{"run", file, "--seed", "-1"}, `"--seed"`, "throttlesim run"},
		{"set without equals", []string{"run", file, "--set", "clients.count"}, `--set "clients.count": expected path=value`, "throttlesim run"},
		{"validate set without equals", []string{"validate", file, "--set", "x"}, `--set "x": expected path=value`, "throttlesim validate"},
		{"validate without files", []string{"validate"}, "expected at least one scenario FILE", "throttlesim validate"},
		{"version with an argument", []string{"version", "x"}, "expected no arguments, got 1 argument", "throttlesim version"},
		{"map without its ranges", []string{"map", file}, "--load PATH=a..b[/steps] and --trigger PATH=a..b are required", "throttlesim map"},
		{"map with an unknown flag", []string{"map", file, "--bogus"}, "unknown flag: --bogus", "throttlesim map"},
		{"map merge without --out", []string{"map", "merge", dir}, "--out", "throttlesim map merge"},
		{"tune without an objective", []string{"tune", file}, "--minimize METRIC (or --maximize METRIC) is required", "throttlesim tune"},
		{"sweep with a bad --jobs", []string{"sweep", file, "--jobs", "x"}, `invalid argument "x" for "-j, --jobs"`, "throttlesim sweep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(dir) // a run that wrongly went ahead would write here
			r := runCLI(t, tc.args...)
			if r.code != 2 {
				t.Errorf("exit code: got %d, want 2 (stderr %q)", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("stderr: got %q, want it to contain %q", r.stderr, tc.msg)
			}
			if hint := "Run '" + tc.help + " --help' for usage."; !strings.HasSuffix(r.stderr, hint+"\n") {
				t.Errorf("stderr: got %q, want it to end with the hint %q", r.stderr, hint)
			}
			if r.stdout != "" {
				t.Errorf("stdout: got %q, want nothing", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
				t.Errorf("a usage error wrote a results folder")
			}
		})
	}
}

// An unknown command is a usage error.
func TestUnknownCommand(t *testing.T) {
	r := runCLI(t, "frobnicate")
	if r.code != 2 {
		t.Errorf("exit code: got %d, want 2", r.code)
	}
	if want := `throttlesim: unknown command "frobnicate" for "throttlesim"`; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr: got %q, want it to start with %q", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "Run 'throttlesim --help' for usage.") {
		t.Errorf("stderr: got %q, want the --help hint", r.stderr)
	}
}

func TestMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch.yaml")
	for _, cmd := range []string{"run", "validate"} {
		t.Run(cmd, func(t *testing.T) {
			r := runCLI(t, cmd, missing)
			if r.code != 1 {
				t.Errorf("exit code: got %d, want 1", r.code)
			}
			if want := "throttlesim: " + missing + ": no such scenario file\n"; r.stderr != want {
				t.Errorf("stderr: got %q, want %q", r.stderr, want)
			}
			if r.stdout != "" {
				t.Errorf("stdout: got %q, want nothing", r.stdout)
			}
		})
	}
}

func TestInvalidScenario(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "bad.yaml", badScenario)
	out := filepath.Join(dir, "out")
	for _, cmd := range [][]string{{"run", file, "--out", out}, {"validate", file}} {
		t.Run(cmd[0], func(t *testing.T) {
			r := runCLI(t, cmd...)
			if r.code != 1 {
				t.Errorf("exit code: got %d, want 1", r.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout: got %q, want nothing", r.stdout)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			lineRE := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:(\d+):\d+: [a-z_.]+: `)
			var gotLines []string
			for _, l := range lines[:len(lines)-1] {
				m := lineRE.FindStringSubmatch(l)
				if m == nil {
					t.Errorf("stderr line %q: want the form FILE:LINE:COL: PATH: message", l)
					continue
				}
				gotLines = append(gotLines, m[1])
			}
			if want := []string{"3", "4", "6"}; !reflect.DeepEqual(gotLines, want) {
				t.Errorf("lines of the problems: got %q, want %q\n%s", gotLines, want, r.stderr)
			}
			if want := "throttlesim: " + file + ": 3 problems; nothing was run"; lines[len(lines)-1] != want {
				t.Errorf("last stderr line: got %q, want %q", lines[len(lines)-1], want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("an invalid scenario wrote %s", out)
			}
		})
	}
}

// TestSetProblem: a --set that cannot be applied is a scenario problem
// (exit 1) naming the override.
func TestSetProblem(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	r := runCLI(t, "validate", file, "--set", "faults.3.start=9m")
	if r.code != 1 {
		t.Errorf("exit code: got %d, want 1", r.code)
	}
	want := file + ` (--set #1): --set faults.3.start: faults is a list of 1; expected an index 0..1, got "3"` + "\n" +
		"throttlesim: " + file + ": 1 problem; nothing was run\n"
	if r.stderr != want {
		t.Errorf("stderr: got %q, want %q", r.stderr, want)
	}
}

var chartFiles = []string{"latency.png", "local_drops.png", "recovery.png", "server_load.png"}

func TestRunQuiet(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "run", "--quiet", file, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("output with --quiet: got stdout %q stderr %q, want nothing", r.stdout, r.stderr)
	}
	want := append([]string{"report.html", "summary.json", "timeseries.csv"}, chartFiles...)
	sort.Strings(want)
	if got := testfs.Names(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("results folder: got %q, want %q", got, want)
	}
	if got := testfs.Names(t, dir); !reflect.DeepEqual(got, []string{"out", "tiny.yaml"}) {
		t.Errorf("folder holding the results: got %q, want only out and tiny.yaml (no temporary folder)", got)
	}

	for _, name := range chartFiles {
		t.Run(name, func(t *testing.T) {
			img, err := png.Decode(bytes.NewReader(readFile(t, filepath.Join(out, name))))
			if err != nil {
				t.Fatalf("png.Decode: got %v, want a PNG", err)
			}
			b := img.Bounds()
			if b.Dx() < 300 || b.Dy() < 200 {
				t.Errorf("size: got %dx%d, want at least 300x200", b.Dx(), b.Dy())
			}
			if n := colours(img); n < 8 {
				t.Errorf("distinct colours: got %d, want at least 8 (a chart, not a blank image)", n)
			}
		})
	}

	csv := string(readFile(t, filepath.Join(out, "timeseries.csv")))
	rows := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	if len(rows) != 21 || !strings.HasPrefix(rows[0], "t_s,") {
		t.Errorf("timeseries.csv: got %d lines starting %q, want a header and 20 rows", len(rows), rows[0])
	}

	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Run           struct {
			Status string `json:"status"`
		} `json:"run"`
		Scenario struct {
			Name string `json:"name"`
			Seed uint64 `json:"seed"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "summary.json")), &doc); err != nil {
		t.Fatalf("summary.json: got %v, want JSON", err)
	}
	if doc.SchemaVersion != 1 || doc.Run.Status != "complete" || doc.Scenario.Name != "tiny" || doc.Scenario.Seed != 1 {
		t.Errorf("summary.json: got %+v, want schema 1, status complete, scenario tiny with seed 1", doc)
	}
}

func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func TestRunSummary(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "run", file, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	for _, s := range []string{
		"tiny (seed 1): 50 clients, 20s simulated, ",
		"application requests",
		"amplification",
		"latency",
		"recovery ",
		"results: " + out + string(filepath.Separator) + "\n",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout: got\n%s\nwant it to contain %q", r.stdout, s)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr (not a terminal): got %q, want nothing (no progress bar)", r.stderr)
	}
}

// TestRunTTYQuiet: --quiet turns the progress bar off on a terminal too.
func TestRunTTYQuiet(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	r := runCLICtx(t, context.Background(), true, "run", "-q", file, "-o", filepath.Join(dir, "out"))
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("run -q on a terminal: got exit %d stdout %q stderr %q, want 0 and no output", r.code, r.stdout, r.stderr)
	}
}

func TestRunNoCharts(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "run", "-q", "--no-charts", file, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if got, want := testfs.Names(t, out), []string{"report.html", "summary.json", "timeseries.csv"}; !reflect.DeepEqual(got, want) {
		t.Errorf("results folder: got %q, want %q", got, want)
	}
}

// TestRunDefaultOut: without --out the results go to results/<name> in
// the working directory.
func TestRunDefaultOut(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	t.Chdir(dir)
	r := runCLI(t, "run", "-q", "--no-charts", file)
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if got, want := testfs.Names(t, filepath.Join(dir, "results", "tiny")), []string{"report.html", "summary.json", "timeseries.csv"}; !reflect.DeepEqual(got, want) {
		t.Errorf("results/tiny: got %q, want %q", got, want)
	}
}

// runTiny runs tinyScenario with extra arguments into a fresh folder and
// returns that folder.
func runTiny(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, append([]string{"run", "-q", "--no-charts", file, "--out", out}, args...)...)
	if r.code != 0 {
		t.Fatalf("throttlesim run %q: exit code got %d, want 0 (stderr %q)", args, r.code, r.stderr)
	}
	return out
}

func TestRunDeterministic(t *testing.T) {
	a, b := runTiny(t), runTiny(t)
	for _, name := range []string{"timeseries.csv", "summary.json"} {
		if x, y := readFile(t, filepath.Join(a, name)), readFile(t, filepath.Join(b, name)); !bytes.Equal(x, y) {
			t.Errorf("%s of two runs of the same scenario: got different bytes, want identical", name)
		}
	}
}

func TestRunSeed(t *testing.T) {
	base, seeded := runTiny(t), runTiny(t, "--seed", "7")
	if bytes.Equal(readFile(t, filepath.Join(base, "timeseries.csv")), readFile(t, filepath.Join(seeded, "timeseries.csv"))) {
		t.Error("timeseries.csv with --seed 7: got the same as with seed 1, want different")
	}
	var doc struct {
		Manifest struct {
			Seed uint64 `json:"seed"`
		} `json:"manifest"`
		Scenario struct {
			Seed uint64 `json:"seed"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(seeded, "summary.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Manifest.Seed != 7 || doc.Scenario.Seed != 7 {
		t.Errorf("summary.json seeds: got manifest %d scenario %d, want 7 and 7", doc.Manifest.Seed, doc.Scenario.Seed)
	}
	// The seed given in the file and the same seed given with --seed agree.
	again := runTiny(t, "--set", "seed=7")
	if !bytes.Equal(readFile(t, filepath.Join(again, "timeseries.csv")), readFile(t, filepath.Join(seeded, "timeseries.csv"))) {
		t.Error("timeseries.csv with --set seed=7 and with --seed 7: got different, want identical")
	}
}

func TestRunSet(t *testing.T) {
	out := runTiny(t, "--set", "clients.throttle=null", "--set", "clients.count=20")
	var doc struct {
		Scenario struct {
			Clients struct {
				Count    int             `json:"count"`
				Throttle json.RawMessage `json:"throttle"`
			} `json:"clients"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "summary.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.Scenario.Clients; c.Count != 20 || string(c.Throttle) != "null" {
		t.Errorf("summary.json scenario.clients: got count %d throttle %s, want 20 and null", c.Count, c.Throttle)
	}
}

func TestValidateMany(t *testing.T) {
	dir := t.TempDir()
	good1 := writeFile(t, dir, "good1.yaml", tinyScenario)
	good2 := writeFile(t, dir, "good2.yaml", "name: good2\nclients: {arrival: {total_rate: 500/s}}\n")
	bad := writeFile(t, dir, "bad.yaml", badScenario)
	missing := filepath.Join(dir, "missing.yaml")

	r := runCLI(t, "validate", good1, bad, good2, missing)
	if r.code != 1 {
		t.Errorf("exit code: got %d, want 1", r.code)
	}
	want := "ok  " + good1 + `: "tiny", 50 clients, 20s, offered load 100% of capacity (100 req/s), 1 fault` + "\n" +
		"ok  " + good2 + `: "good2", 10,000 clients, 10m, offered load 50% of capacity (1000 req/s), 0 faults` + "\n"
	if r.stdout != want {
		t.Errorf("stdout: got\n%s\nwant\n%s", r.stdout, want)
	}
	for _, s := range []string{bad + ":3:", "throttlesim: " + bad + ": 3 problems; nothing was run", "throttlesim: " + missing + ": no such scenario file"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr: got\n%s\nwant it to contain %q", r.stderr, s)
		}
	}
	if strings.Contains(r.stderr, good1) || strings.Contains(r.stderr, good2) {
		t.Errorf("stderr: got\n%s\nwant nothing about the valid files", r.stderr)
	}

	r = runCLI(t, "validate", good1, good2)
	if r.code != 0 || strings.Count(r.stdout, "ok  ") != 2 || r.stderr != "" {
		t.Errorf("validate of two good files: got exit %d stdout %q stderr %q, want 0, two ok lines, no stderr", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, "validate", good1, "--set", "clients.count=0")
	if r.code != 1 || !strings.Contains(r.stderr, good1+" (--set #1): clients.count: must be >= 1") {
		t.Errorf("validate --set clients.count=0: got exit %d stderr %q, want 1 and the problem naming --set #1", r.code, r.stderr)
	}
}

func TestValidateShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("scenarios/*.yaml: got %d files (%v), want some", len(files), err)
	}
	r := runCLI(t, append([]string{"validate"}, files...)...)
	if r.code != 0 || r.stderr != "" {
		t.Errorf("validate scenarios/*.yaml: got exit %d stderr %q, want 0 and no stderr", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n != len(files) {
		t.Errorf("validate scenarios/*.yaml: got %d lines, want %d:\n%s", n, len(files), r.stdout)
	}
}

// TestFailedRunKeepsResults: a run that fails leaves the previous results
// folder as it was.
func TestFailedRunKeepsResults(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "tiny.yaml", tinyScenario)
	bad := writeFile(t, dir, "bad.yaml", badScenario)
	out := filepath.Join(dir, "out")
	if r := runCLI(t, "run", "-q", good, "--out", out); r.code != 0 {
		t.Fatalf("first run: exit code got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	before := testfs.Tree(t, out)

	tests := []struct {
		name string
		args []string
		code int
	}{
		{"invalid scenario", []string{"run", bad, "--out", out}, 1},
		{"bad override", []string{"run", good, "--out", out, "--set", "clients.count=0"}, 1},
		{"missing file", []string{"run", filepath.Join(dir, "nosuch.yaml"), "--out", out}, 1},
		{"usage error", []string{"run", good, "--out", out, "--seed", "x"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code: got %d, want %d", r.code, tc.code)
			}
			if after := testfs.Tree(t, out); !reflect.DeepEqual(after, before) {
				t.Errorf("results folder after a failed run: changed, want it untouched")
			}
			if got, want := testfs.Names(t, dir), []string{"bad.yaml", "out", "tiny.yaml"}; !reflect.DeepEqual(got, want) {
				t.Errorf("folder: got %q, want %q", got, want)
			}
		})
	}
}

func TestRunBadOut(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	afile := writeFile(t, dir, "afile", "precious")
	r := runCLI(t, "run", "-q", file, "--out", afile)
	if r.code != 1 {
		t.Errorf("--out an existing file: exit code got %d, want 1", r.code)
	}
	if !strings.HasPrefix(r.stderr, "throttlesim: ") || !strings.Contains(r.stderr, afile) || !strings.Contains(r.stderr, "is not a folder") {
		t.Errorf("stderr: got %q, want an error saying %s is not a folder", r.stderr, afile)
	}
	if got := string(readFile(t, afile)); got != "precious" {
		t.Errorf("the file named by --out: got %q, want it untouched", got)
	}

	t.Chdir(dir)
	r = runCLI(t, "run", "-q", file, "--out", ".")
	if r.code != 1 || !strings.Contains(r.stderr, "--out .: cannot be a results folder") {
		t.Errorf("--out .: got exit %d stderr %q, want 1 and \"cannot be a results folder\"", r.code, r.stderr)
	}
}

// TestRunInterrupted: a cancelled run exits 130, writes what it has to
// <out>.incomplete and leaves <out> alone.
func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	// About a million events: the run is stopped at its first check.
	file := writeFile(t, dir, "big.yaml", `name: big
duration: 20s
clients:
  count: 100
  arrival: {total_rate: 20000/s}
backend:
  workers: 100
  service: {dist: constant, mean: 2ms}
`)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, "summary.json", "previous")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runCLICtx(t, ctx, false, "run", file, "--out", out, "--no-charts", "--force")
	if r.code != 130 {
		t.Fatalf("exit code: got %d, want 130 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout: got %q, want no summary", r.stdout)
	}
	if !strings.Contains(r.stderr, "interrupted; the partial result (status \"incomplete\") is in "+out+".incomplete") {
		t.Errorf("stderr: got %q, want it to name %s.incomplete", r.stderr, out)
	}
	if got := testfs.Tree(t, out); !reflect.DeepEqual(got, map[string]string{".": "<dir>", "summary.json": "previous"}) {
		t.Errorf("previous results: got %q, want them untouched", got)
	}
	var doc struct {
		Run struct {
			Status string `json:"status"`
		} `json:"run"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out+".incomplete", "summary.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Run.Status != "incomplete" {
		t.Errorf("partial summary.json run.status: got %q, want \"incomplete\"", doc.Run.Status)
	}
}

// skipShort skips a slow test under -short, which make test-race uses:
// tests that exercise no goroutines of the CLI's own gain nothing from the
// race detector's tenfold slowdown, and make test runs them in full.
func skipShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
}

// A service graph's printout and summary.json lead with the services, the
// most overloaded first, and the top-level backend figures name the
// service they describe: in scenarios/cascade.yaml the database takes
// ~6,500 attempts/s against 800/s during its fault, while the entry
// service (the frontend, 200,000/s of local capacity) peaks at 0.02×.
func TestRunGraphLeadsWithServices(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "run", filepath.Join("..", "..", "scenarios", "cascade.yaml"), "--set", "duration=4m", "--no-charts", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	var labels []string
	for _, ln := range lines[1:] {
		if label, _, ok := strings.Cut(strings.TrimSpace(ln), "  "); ok {
			labels = append(labels, label)
		}
	}
	want := []string{"application requests", "services", "database", "frontend (entry)", "backend", "attempts", "entry frontend", "latency", "overload at frontend", "during the fault", "recovery"}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("stdout rows: got %q, want %q\n%s", labels, want, r.stdout)
	}
	var doc struct {
		Run struct {
			EntryService string `json:"entry_service"`
		}
		Graph *struct {
			EntryService   string `json:"entry_service"`
			MostOverloaded string `json:"most_overloaded"`
			Services       []struct {
				Name                 string
				PeakLoadOverCapacity float64 `json:"peak_load_over_capacity"`
			}
		}
		Summary struct {
			EntryService string `json:"entry_service"`
		}
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "summary.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Graph == nil {
		t.Fatal("summary.json: no graph")
	}
	if doc.Graph.MostOverloaded != "database" || doc.Graph.EntryService != "frontend" || doc.Run.EntryService != "frontend" || doc.Summary.EntryService != "frontend" {
		t.Errorf("summary.json: got most overloaded %q, entry %q (run %q, summary %q), want database and frontend",
			doc.Graph.MostOverloaded, doc.Graph.EntryService, doc.Run.EntryService, doc.Summary.EntryService)
	}
	if s := doc.Graph.Services; len(s) != 3 || s[0].Name != "database" || s[0].PeakLoadOverCapacity < 5 {
		t.Errorf("summary.json graph.services: got %+v, want the database first at > 5× its capacity", s)
	}
	page := string(readFile(t, filepath.Join(out, "report.html")))
	svc, sum := strings.Index(page, `<h2 id="services">`), strings.Index(page, `<h2 id="summary">`)
	if svc < 0 || svc > sum {
		t.Errorf("report.html: the services section at %d, the summary at %d; want the services first", svc, sum)
	}
	if db, fe := strings.Index(page, "<tr><td>database</td>"), strings.Index(page, "<tr><td>frontend (entry)</td>"); db < 0 || db > fe {
		t.Errorf("report.html: database row at %d, frontend at %d; want the database first", db, fe)
	}
	if !strings.Contains(page, "the entry service frontend") {
		t.Errorf("report.html: the summary's backend figures do not name the entry service")
	}
}
