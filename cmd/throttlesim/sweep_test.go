package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

func sameTree(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d files vs %d", what, len(a), len(b))
	}
	for n, x := range a {
		if y, ok := b[n]; !ok {
			t.Errorf("%s: %s missing", what, n)
		} else if x != y {
			t.Errorf("%s: %s differs", what, n)
		}
	}
}

func TestSweepShardsMergeToTheSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("byte identity of sweep shards: make test runs it; the -short race pass (CI) keeps to the tests of concurrency")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	vary := "clients.throttle.k=1.5,2,3"
	whole := filepath.Join(dir, "whole")
	if r := runCLI(t, "sweep", file, "--vary", vary, "--seeds", "2", "-j", "2", "--out", whole); r.code != 0 {
		t.Fatalf("sweep: exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"sweep.csv", "runs.csv", "paired.csv", "sweep.json", "compare_recovery.png", "compare_server_load.png",
		"compare_local_drops.png", "compare_peak_load.png", "compare_amplification.png", "compare_success.png"} {
		if _, err := os.Stat(filepath.Join(whole, f)); err != nil {
			t.Errorf("sweep wrote no %s", f)
		}
	}
	var shards []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		out := filepath.Join(dir, "shard"+s[:1])
		if r := runCLI(t, "sweep", file, "--vary", vary, "--seeds", "2", "--shard", s, "--out", out, "-q"); r.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", s, r.code, r.stderr)
		}
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	if r := runCLI(t, append([]string{"merge", "--out", merged}, shards...)...); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	sameTree(t, "merged vs unsharded", testfs.Tree(t, whole), testfs.Tree(t, merged))

	// A missing shard is an error naming it.
	if r := runCLI(t, "merge", "--out", filepath.Join(dir, "m2"), shards[0], shards[1]); r.code != 1 || !strings.Contains(r.stderr, "shard 2 of 3 is missing") {
		t.Errorf("merge without a shard: exit %d, %s", r.code, r.stderr)
	}
	// --jobs does not change a byte.
	one := filepath.Join(dir, "one")
	if r := runCLI(t, "sweep", file, "--vary", vary, "--seeds", "2", "-j", "1", "--out", one, "-q"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	sameTree(t, "--jobs 1 vs 2", testfs.Tree(t, whole), testfs.Tree(t, one))
}

func TestSweepUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", file, "--vary", "clients.throtle.k=1,2"}, 1, `did you mean "throttle"`},
		{[]string{"sweep", file, "--vary", "clients.throttle.scope=pod"}, 1, "is not one of client, group"},
		{[]string{"sweep", file}, 1, "nothing to sweep"},
		{[]string{"sweep", file, "--vary", "clients.throttle.k=2", "--shard", "3/3"}, 2, "expected i/n"},
		{[]string{"sweep", file, "--vary", "clients.throttle.k=2", "-j", "0"}, 2, "--jobs 0"},
		{[]string{"merge", dir}, 2, "--out DIR is required"},
		{[]string{"compare"}, 2, "at least one results folder"},
	}
	for _, tt := range tests {
		r := runCLI(t, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}

func TestCompareRuns(t *testing.T) {
	skipShort(t, "whole runs of the CLI, no goroutines of their own")
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runCLI(t, "run", file, "-q", "--out", a)
	runCLI(t, "run", file, "-q", "--out", b, "--set", "clients.throttle=null")
	out := filepath.Join(dir, "cmp")
	r := runCLI(t, "compare", a, b, "--out", out)
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	csv, err := os.ReadFile(filepath.Join(out, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Two runs of one scenario: both points are named by their folders.
	if s := string(csv); !strings.Contains(s, "0,a,1") || !strings.Contains(s, "1,b,1") {
		t.Errorf("sweep.csv:\n%s", s)
	}
	checkPNG(t, filepath.Join(out, "compare_goodput.png"))
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 || colours(img) < 8 {
		t.Errorf("%s: %dx%d with %d colours: not a chart", path, b.Dx(), b.Dy(), colours(img))
	}
}

// A folder that is not a results folder is never replaced, by run or sweep.
func TestOutRefusesAForeignFolder(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	foreign := filepath.Join(dir, "mine")
	os.MkdirAll(foreign, 0o755)
	writeFile(t, foreign, "notes.txt", "keep me")
	for _, args := range [][]string{
		{"run", file, "-q", "--out", foreign},
		{"sweep", file, "-q", "--vary", "clients.throttle.k=2,3", "--seeds", "1", "--out", foreign},
	} {
		r := runCLI(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "not a throttlesim results folder") {
			t.Errorf("%q: exit %d, %q", args, r.code, r.stderr)
		}
		if got := string(readFile(t, filepath.Join(foreign, "notes.txt"))); got != "keep me" {
			t.Fatalf("%q replaced the folder", args)
		}
	}
}

// Shards made from different contents of the scenario file never merge.
func TestMergeRefusesShardsOfDifferentFiles(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runCLI(t, "sweep", file, "-q", "--vary", "clients.throttle.k=2,3", "--seeds", "1", "--shard", "0/2", "--out", a)
	writeFile(t, dir, "s.yaml", strings.Replace(tinyScenario, "workers: 5", "workers: 3", 1))
	runCLI(t, "sweep", file, "-q", "--vary", "clients.throttle.k=2,3", "--seeds", "1", "--shard", "1/2", "--out", b)
	r := runCLI(t, "merge", "--out", filepath.Join(dir, "m"), a, b)
	if r.code != 1 || !strings.Contains(r.stderr, "a shard of a different sweep") {
		t.Errorf("merge of shards from two versions of the file: exit %d, %q", r.code, r.stderr)
	}
}

// merge names the shards it was not given, and an unfinished one, instead
// of a run it cannot find.
func TestMergeNamesMissingShards(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	shard := func(i string) string {
		out := filepath.Join(dir, "shard-"+i)
		if r := runCLI(t, "sweep", file, "-q", "--vary", "clients.throttle.k=1.5,2,3", "--seeds", "2", "--shard", i+"/4", "--out", out); r.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", i, r.code, r.stderr)
		}
		return out
	}
	s0, s2 := shard("0"), shard("2")
	tests := []struct {
		name   string
		shards []string
		want   string
	}{
		{"two of four", []string{s0, s2}, "shards 1, 3 of 4 are missing: give every shard's folder (2 given)"},
		{"three of four", []string{s0, s2, shard("3")}, "shard 1 of 4 is missing"},
	}
	for _, tc := range tests {
		r := runCLI(t, append([]string{"merge", "--out", filepath.Join(dir, "m")}, tc.shards...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want %q", tc.name, r.code, r.stderr, tc.want)
		}
	}
	// Shard 1 interrupted: its runs are in shard-1.incomplete.
	if err := os.MkdirAll(filepath.Join(dir, "shard-1.incomplete"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "merge", "--out", filepath.Join(dir, "m"), s0, filepath.Join(dir, "shard-1"), s2, filepath.Join(dir, "shard-3"))
	if r.code != 1 || !strings.Contains(r.stderr, "the shard is unfinished") || !strings.Contains(r.stderr, "--resume") {
		t.Errorf("an unfinished shard: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); err == nil {
		t.Errorf("a refused merge wrote its folder")
	}
}

// A sweep of one-shot clients against the occ row has nothing to recover
// from and no capacity: its table shows the write calls and the
// completion time instead (and --columns still picks any column).
func TestSweepTableForOneShotClients(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "occ.yaml", `name: occ
duration: 1m
clients:
  count: 20
  arrival: {process: once}
  timeout: 0s
  retry: {max_attempts: 255, retry_on: [error], backoff: {base: 10ms, cap: 2s, jitter: full}}
network: {delay: {dist: normal, mean: 10ms, sd: 2ms}}
backend: {kind: occ}
sweep:
  vary: [{path: clients.retry.backoff.jitter, values: [full, equal]}]
  seeds: 3
`)
	out := filepath.Join(dir, "sw")
	r := runCLI(t, "sweep", "-q", file, "--out", out)
	if r.code != 0 {
		t.Fatalf("sweep: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, "summarize", out)
	header := strings.SplitN(r.stdout, "\n", 2)[0]
	if want := "| point | runs | backend received | last success (s) | amplification | success | dropped locally |"; header != want {
		t.Errorf("header:\n got %s\nwant %s", header, want)
	}
	r = runCLI(t, "summarize", "--columns", "point,recovered", out)
	if !strings.Contains(r.stdout, "| jitter=full | n/a (no fault) |") {
		t.Errorf("--columns point,recovered: got\n%s", r.stdout)
	}
}
