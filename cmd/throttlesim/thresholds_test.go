package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Thresholds on run: ✓/✗ lines, exit 99 after the results are written, a
// run that never recovers fails recovery_s, and a bad --threshold is a
// usage error before anything runs.
func TestRunThresholds(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario+"thresholds: [recovery_s<=60]\n")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // each must appear
		stderr string   // must appear ("" : stderr empty)
		writes bool     // a results folder is written
	}{
		{name: "scenario threshold passes", args: nil, code: 0,
			stdout: []string{"  thresholds\n", "✓ recovery_s<=60  recovery_s = "}, writes: true},
		{name: "a --threshold fails", args: []string{"--threshold", "recovery_s < 0", "--threshold", "success_ratio>=50%"}, code: exitThresholds,
			stdout: []string{"✓ recovery_s<=60 ", "✗ recovery_s<0 ", "✓ success_ratio>=0.5 "}, stderr: "throttlesim: 1 of 3 thresholds failed\n", writes: true},
		{name: "a run that never recovers", args: []string{"--set", "faults.0.duration=15s"}, code: exitThresholds,
			stdout: []string{"DID NOT RECOVER", "✗ recovery_s<=60  no recovery_s: the run did not recover"}, stderr: "1 of 1 threshold failed", writes: true},
		{name: "quiet", args: []string{"-q", "--threshold", "amplification<0.5"}, code: exitThresholds,
			stderr: "throttlesim: 1 of 2 thresholds failed\n", writes: true},
		{name: "misspelt metric", args: []string{"--threshold", "recovery<=120"}, code: exitUsage,
			stderr: `--threshold "recovery<=120": unknown metric "recovery" (did you mean "recovery_s"?)`},
		{name: "not an expression", args: []string{"--threshold", "recovery_s"}, code: exitUsage,
			stderr: "expected METRIC OP VALUE, e.g. recovery_s<=120"},
		{name: "bad scenario threshold", args: []string{"--set", "thresholds=[amplification<=x]"}, code: exitError,
			stderr: `thresholds.0: "amplification<=x": the value "x" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			r := runCLI(t, append([]string{"run", "--no-charts", file, "--out", out}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit code: got %d, want %d (stderr %q)", r.code, c.code, r.stderr)
			}
			for _, s := range c.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if c.stderr == "" && r.stderr != "" || !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("stderr: got %q, want %q", r.stderr, c.stderr)
			}
			_, err := os.Stat(filepath.Join(out, "report.html"))
			if c.writes != (err == nil) {
				t.Errorf("report.html written: %v, want %v", err == nil, c.writes)
			}
		})
	}
}

// A sweep point passes a threshold only when all its runs do; compare
// --baseline prints ratios and differences and writes paired.csv.
func TestSweepThresholdsAndCompareBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("draws comparison charts: slow under the race detector")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	sw := filepath.Join(dir, "sw")
	r := runCLI(t, "sweep", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "2", "--out", sw, "--threshold", "amplification<=1.0", "--threshold", "success_ratio>=0")
	if r.code != exitThresholds {
		t.Fatalf("sweep: exit %d, want %d (stderr %q)", r.code, exitThresholds, r.stderr)
	}
	for _, s := range []string{"  thresholds, k=1.5\n", "  thresholds, k=3\n", "✓ success_ratio>=0  2 of 2 runs pass", "✗ amplification<=1  0 of 2 runs pass; worst amplification = "} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("sweep stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(sw, "report.html")); err != nil {
		t.Errorf("sweep: %v", err)
	}
	// Shards are not judged; merge is, with the same verdicts.
	var shards []string
	for i := 0; i < 2; i++ {
		d := filepath.Join(dir, "shard"+strconv.Itoa(i))
		if r := runCLI(t, "sweep", "-q", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "2", "--shard", strconv.Itoa(i)+"/2", "--out", d); r.code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		shards = append(shards, d)
	}
	r = runCLI(t, append([]string{"merge", "--out", filepath.Join(dir, "merged"), "--threshold", "amplification<=1.0"}, shards...)...)
	if r.code != exitThresholds || !strings.Contains(r.stdout, "✗ amplification<=1  0 of 2 runs pass") || !strings.Contains(r.stdout, "\nverdict: ") {
		t.Errorf("merge --threshold: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	r = runCLI(t, "sweep", file, "--vary", "clients.throttle.k=1.5", "--shard", "0/2", "--threshold", "amplification<=1", "--out", filepath.Join(dir, "x"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "give --threshold to 'throttlesim merge'") {
		t.Errorf("sweep --shard --threshold: exit %d, stderr %q", r.code, r.stderr)
	}

	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range []struct{ out, k string }{{a, "1.5"}, {b, "3"}} {
		if r := runCLI(t, "run", "-q", file, "--set", "clients.throttle.k="+c.k, "--out", c.out); r.code != 0 {
			t.Fatalf("run: exit %d: %s", r.code, r.stderr)
		}
	}
	cmp := filepath.Join(dir, "cmp")
	r = runCLI(t, "compare", "--baseline", a, b, "--out", cmp) // a not among the folders: compared first
	if r.code != 0 {
		t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
	}
	for _, s := range []string{"compared 2 runs\n", "\nverdict: b ", "against the baseline a:\n", "  b  ", "    amplification  ", "× "} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("compare stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	var manifest struct{ Baseline string }
	if b, err := os.ReadFile(filepath.Join(cmp, "compare.json")); err != nil || json.Unmarshal(b, &manifest) != nil || manifest.Baseline != "a" {
		t.Errorf("compare.json: baseline %q (%v), want a", manifest.Baseline, err)
	}
	if _, err := os.Stat(filepath.Join(cmp, "paired.csv")); err != nil {
		t.Errorf("compare --baseline: %v", err)
	}
	r = runCLI(t, "compare", "--baseline", "nosuch", a, b, "--out", filepath.Join(dir, "cmp-nosuch"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "--baseline nosuch: not a run folder nor the label of a compared run (the labels are a, b)") {
		t.Errorf("compare --baseline nosuch: exit %d, stderr %q", r.code, r.stderr)
	}
}

// csv and json carry raw numbers: no %, ±, – in any cell, intervals as
// columns of their own.
func TestSummarizeRawFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("draws a sweep's charts: slow under the race detector")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "tiny.yaml", tinyScenario)
	a, sw := filepath.Join(dir, "a"), filepath.Join(dir, "sw")
	if r := runCLI(t, "run", "-q", "--no-charts", file, "--out", a); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runCLI(t, "sweep", "-q", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "2", "--out", sw); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--format", "csv", a}, []string{"run,status,recovered,recovery_applicable,recovery_time_s,", "\ntiny,complete,1,1,"}},
		{[]string{"--format", "csv", sw}, []string{"point,runs,recovered,recovery_applicable,recovery_time_s_n,recovery_time_s_mean,recovery_time_s_ci95_lo,recovery_time_s_ci95_hi,"}},
		{[]string{"--format", "csv", "--columns", "point,success_ratio_mean,success_ratio_ci95_lo", sw}, []string{"point,success_ratio_mean,success_ratio_ci95_lo\nk=1.5,0."}},
		{[]string{"--format", "json", sw}, []string{`"kind": "sweep"`, `"ci95_lo": `}},
		{[]string{"--format", "json", a}, []string{`"kind": "runs"`, `"status": "complete"`}},
	} {
		r := runCLI(t, append([]string{"summarize"}, c.args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, r.stdout)
			}
		}
		if strings.ContainsAny(r.stdout, "%±–") {
			t.Errorf("%v: a cell holds %%, ± or –:\n%s", c.args, r.stdout)
		}
		if c.args[1] == "json" && !json.Valid([]byte(r.stdout)) {
			t.Errorf("%v: not JSON", c.args)
		}
	}
	if r := runCLI(t, "summarize", "--format", "json", "--columns", "point", sw); r.code != exitUsage {
		t.Errorf("json with --columns: exit %d, want %d", r.code, exitUsage)
	}
	if r := runCLI(t, "summarize", "--format", "xml", sw); r.code != exitUsage || !strings.Contains(r.stderr, "expected table, csv, json or markdown") {
		t.Errorf("--format xml: exit %d, stderr %q", r.code, r.stderr)
	}
	r := runCLI(t, "summarize", "--format", "table", a)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "  run ") {
		t.Errorf("--format table: exit %d, stdout %q", r.code, r.stdout)
	}
}
