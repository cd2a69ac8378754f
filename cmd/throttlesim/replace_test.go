package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// Every command that writes a results folder refuses one that holds
// results already, before it runs anything, and says what to do; the
// folder is left as it was.
func TestExistingResultsAreRefused(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	tests := []struct {
		name string
		args []string // --out OUT is appended
	}{
		{"run", []string{"run", "-q", file}},
		{"sweep", []string{"sweep", "-q", file, "--vary", "clients.throttle.k=2,3", "--seeds", "2"}},
		{"compare", []string{"compare", "-q", filepath.Join(dir, "a"), filepath.Join(dir, "b")}},
		{"merge", []string{"merge", filepath.Join(dir, "s0")}},
		{"map", []string{"map", file, "--load", "clients.arrival.total_rate=50/s..100/s/2", "--trigger", "faults.0.duration=1s..5s"}},
		{"map merge", []string{"map", "merge", filepath.Join(dir, "s0")}},
		{"tune", []string{"tune", file, "--param", "clients.throttle.k=1..4", "--minimize", "amplification"}},
		{"live", []string{"live", "-q", file}},
		{"contention", []string{"contention", "--clients", "5", "--runs", "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+"-out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, out, "summary.json", "earlier results")
			before := testfs.Tree(t, out)
			r := runCLI(t, append(tc.args, "--out", out)...)
			if r.code != 1 {
				t.Errorf("exit code: got %d, want 1 (stderr %q)", r.code, r.stderr)
			}
			for _, want := range []string{out + " holds earlier results", "nothing was run", "--force", "--out"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr: got %q, want it to contain %q", r.stderr, want)
				}
			}
			if after := testfs.Tree(t, out); !reflect.DeepEqual(after, before) {
				t.Errorf("%s after a refusal: changed, want it untouched", out)
			}
			if _, err := os.Stat(out + ".incomplete"); err == nil {
				t.Errorf("%s.incomplete: exists, want nothing written", out)
			}
		})
	}
}

// An empty folder is not results: it is written into without --force.
// --force replaces earlier results whole (no file of theirs is left).
func TestForceReplacesResults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "run", "-q", "--no-charts", file, "--out", out); r.code != 0 {
		t.Fatalf("run into an empty folder: exit code got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	writeFile(t, out, "notes.txt", "from the earlier run")
	if r := runCLI(t, "run", "-q", "--no-charts", file, "--out", out, "--force"); r.code != 0 {
		t.Fatalf("run --force: exit code got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if got, want := testfs.Names(t, out), []string{"report.html", "summary.json", "timeseries.csv"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s after --force: got %q, want %q (the earlier folder replaced whole)", out, got, want)
	}
	if got, want := testfs.Names(t, dir), []string{"out", "tiny.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %q, want %q (no temporary folder left)", dir, got, want)
	}
}

// sweep --resume of a finished sweep rewrites its outputs in place from
// its own runs: intended, so not refused without --force.
func TestSweepResumeInPlaceIsNotRefused(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "sw")
	args := []string{"sweep", "-q", file, "--vary", "clients.throttle.k=2,3", "--seeds", "2", "-j", "1", "--out", out}
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("sweep: exit code got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if r := runCLI(t, append(args, "--resume")...); r.code != 0 {
		t.Errorf("sweep --resume of a finished sweep: exit code got %d, want 0 (stderr %q)", r.code, r.stderr)
	}
	if r := runCLI(t, args...); r.code != 1 || !strings.Contains(r.stderr, "holds earlier results") {
		t.Errorf("sweep again without --resume or --force: got exit %d stderr %q, want 1 and a refusal", r.code, r.stderr)
	}
}

// --replace replaces a results folder and nothing else: make run passes
// it so that a second make run works, and a run above the cost limits is
// still refused (only --force lifts them). Before --replace, make run
// passed --force, and make run SCENARIO=huge.yaml ran past the 8 GiB limit.
func TestReplaceKeepsTheCostLimits(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	out := filepath.Join(dir, "out")
	for i := range 2 {
		if r := runCLI(t, "run", "-q", "--no-charts", "--replace", file, "--out", out); r.code != 0 {
			t.Fatalf("run %d with --replace: got exit code %d, want 0 (stderr %q)", i+1, r.code, r.stderr)
		}
	}
	r := runCLI(t, "run", "-q", "--replace", file, "--set", "clients.count=1000000000", "--out", out)
	if r.code != 1 || !strings.Contains(r.stderr, "the limits are") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("too big a run with --replace: got exit code %d, stderr %q; want 1 and the limits named", r.code, r.stderr)
	}
}
