package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The rough edges a new user met in the first hour (issue 14), each
// checked by the message or behaviour they should now get.
func TestFirstHourMessages(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	notFolder := writeFile(t, dir, "afile", "x")
	tests := []struct {
		name string
		args []string
		code int
		want string   // in stderr
		not  []string // never in stderr
	}{
		{"a negative seed", []string{"run", "--seed", "-1", file}, exitUsage,
			`invalid argument "-1" for "--seed" flag: expected a whole number >= 0`, []string{"strconv", "ParseUint"}},
		{"a huge seed", []string{"run", "--seed", "99999999999999999999", file}, exitUsage,
			"expected a whole number >= 0 in range", []string{"strconv"}},
		{"an unwritable --out, before simulating", []string{"run", file, "--out", filepath.Join(notFolder, "x", "y")}, exitError,
			"is not a folder", []string{"resultdir", "mkdir"}},
		{"a --vary value that does not fit", []string{"sweep", file, "--vary", "clients.count=-3", "--seeds", "1", "--out", filepath.Join(dir, "sw")}, exitError,
			"(--vary clients.count=-3): clients.count:", []string{"--set #"}},
		{"a --vary path that does not exist", []string{"sweep", file, "--vary", "clients.cont=1,2", "--seeds", "1", "--out", filepath.Join(dir, "sw")}, exitError,
			`(--vary clients.cont=1): clients.cont: unknown field "cont" (did you mean "count"?)`, []string{"--set #"}},
		{"a YAML syntax error", []string{"run", writeFile(t, dir, "bad.yaml", "name: x\nclients:\n  count: 10: 3\n")}, exitError,
			"bad.yaml:3:12: mapping values are not allowed", nil},
		{"a tab", []string{"run", writeFile(t, dir, "tab.yaml", "name: x\nclients:\n\tcount: 10\n")}, exitError,
			"tab.yaml:3:1: found character that cannot start any token (a tab: indent with spaces)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			for _, n := range tc.not {
				if strings.Contains(r.stderr, n) {
					t.Errorf("stderr quotes %q: %q", n, r.stderr)
				}
			}
		})
	}
}

// --quiet is a flag of every command: merge and compare take it too, and
// print nothing.
func TestQuietEverywhere(t *testing.T) {
	skipShort(t, "whole runs of the CLI, no goroutines of their own")
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario+"sweep:\n  vary: [{path: clients.throttle.k, values: [1.5, 2]}]\n  seeds: 1\n")
	shard := filepath.Join(dir, "shard")
	if r := runCLI(t, "sweep", "-q", file, "--shard", "0/1", "--out", shard); r.code != 0 || r.stdout != "" {
		t.Fatalf("sweep -q: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"merge", "--quiet", "--out", filepath.Join(dir, "merged"), shard},
		{"-q", "compare", filepath.Join(shard, "runs", "p000-r000"), filepath.Join(shard, "runs", "p001-r000"), "--out", filepath.Join(dir, "cmp")},
	} {
		if r := runCLI(t, args...); r.code != 0 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 0 and no output", args, r.code, r.stdout, r.stderr)
		}
	}
}

// A sweep named "...sweep" goes to results/<name>, not
// results/<name>-sweep; others keep the suffix (so that a sweep never
// replaces the run of the same scenario).
func TestSweepFolderName(t *testing.T) {
	skipShort(t, "whole runs of the CLI, no goroutines of their own")
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for name, want := range map[string]string{"k-sweep": "k-sweep", "tiny": "tiny-sweep"} {
		file := writeFile(t, dir, name+".yaml", strings.Replace(tinyScenario, "name: tiny", "name: "+name, 1))
		r := runCLI(t, "sweep", "-q", file, "--vary", "clients.throttle.k=2", "--seeds", "1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join("results", want, "sweep.json")); err != nil {
			t.Errorf("%s: no results/%s: %v", name, want, err)
		}
	}
}

// A sweep folder among run folders gets a message that says what it is
// and what to do.
func TestSummarizeSweepFolderAmongRuns(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	sw, run := filepath.Join(dir, "sw"), filepath.Join(dir, "run")
	if r := runCLI(t, "sweep", "-q", file, "--vary", "clients.throttle.k=2", "--seeds", "1", "--out", sw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runCLI(t, "run", "-q", "--no-charts", file, "--out", run); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runCLI(t, "summarize", run, sw)
	if want := "is a sweep's folder, not one run's: `throttlesim summarize " + sw + "` on its own"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if r := runCLI(t, "summarize", sw); r.code != 0 || !strings.Contains(r.stdout, "k=2") {
		t.Errorf("summarize of the sweep alone: exit %d, stdout %q", r.code, r.stdout)
	}
}

// `run -` reads the scenario from stdin (through a real process, whose
// stdin is a pipe).
func TestRunFromStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	cmd := child(t, nil, "run", "-", "--no-charts", "--out", filepath.Join(dir, "out"))
	cmd.Stdin = strings.NewReader(tinyScenario)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "tiny (seed 1)") {
		t.Errorf("output %q: not the scenario from stdin", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "summary.json")); err != nil {
		t.Error(err)
	}
}

// Shell completion is listed in --help and completes field paths after
// --set and --vary.
func TestCompletion(t *testing.T) {
	if r := runCLI(t, "--help"); !strings.Contains(r.stdout, "completion") {
		t.Errorf("--help does not list completion:\n%s", r.stdout)
	}
	for _, args := range [][]string{
		{"__complete", "run", "s.yaml", "--set", "clients.throttle.k"},
		{"__complete", "sweep", "s.yaml", "--vary", "clients.throttle.k"},
	} {
		r := runCLI(t, args...)
		if !strings.Contains(r.stdout, "clients.throttle.k=\n") {
			t.Errorf("%q: got %q, want clients.throttle.k=", args, r.stdout)
		}
	}
}

// The root help lists the commands in groups, in the order a new user
// needs them (run before sweep before map), not alphabetically.
func TestRootHelpOrder(t *testing.T) {
	r := runCLI(t, "--help")
	want := []string{"Start:", "init", "run", "validate", "Simulate and compare:", "sweep", "compare", "summarize",
		"Search:", "map", "tune", "Cluster:", "merge", "Live:", "serve", "live", "fit", "Other:", "contention", "version"}
	// The command list runs from the first group's title to Flags:.
	i := strings.Index(r.stdout, "\nStart:\n")
	if i < 0 {
		t.Fatalf("no Start: group in the root help:\n%s", r.stdout)
	}
	list, _, _ := strings.Cut(r.stdout[i:], "\nFlags:")
	var got []string
	for _, line := range strings.Split(list, "\n") {
		switch f := strings.Fields(line); {
		case strings.HasSuffix(line, ":"):
			got = append(got, line) // a group's title
		case len(f) > 0 && f[0] != "help" && f[0] != "completion":
			got = append(got, f[0])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("root help lists\n  %q\nwant\n  %q\nhelp:\n%s", got, want, r.stdout)
	}
	if strings.Contains(r.stdout, "bench") {
		t.Error("the hidden bench command is listed")
	}
}

// Every command's help starts simple: a Long of at most 15 lines (the
// method is in docs/cli.md) and two or three examples. map's used to be
// 45 lines of method before its flags.
func TestHelpStartsSimple(t *testing.T) {
	var stdout, stderr strings.Builder
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := c.CommandPath()
		if n := strings.Count(strings.TrimSpace(c.Long), "\n") + 1; n > 15 {
			t.Errorf("%s: Long is %d lines, want at most 15 (move the method to docs/cli.md)", name, n)
		}
		examples := 0
		for _, l := range strings.Split(c.Example, "\n") {
			if f := strings.Fields(l); len(f) > 0 && (f[0] == "throttlesim" || f[0] == "sed") {
				examples++
			}
		}
		if c.Name() != "version" && (examples < 2 || examples > 3) {
			t.Errorf("%s: %d examples, want two or three", name, examples)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&env{stdout: &stdout, stderr: &stderr}))
}
