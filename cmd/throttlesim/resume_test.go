package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// onKeptRun calls f with the number of runs kept so far (by any search
// of the test) after every run is kept, until the test ends.
func onKeptRun(t *testing.T, f func(n int64)) {
	var n atomic.Int64
	testKeptRun = func() { f(n.Add(1)) }
	t.Cleanup(func() { testKeptRun = nil })
}

// countKept is the number of kept runs in dir/runs.
func countKept(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "runs"))
	if err != nil {
		t.Fatalf("no kept runs: %v", err)
	}
	n := 0
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// copyScenario copies a scenario into dir (so that a test can change it).
func copyScenario(t *testing.T, dir, from string) string {
	t.Helper()
	return writeFile(t, dir, filepath.Base(from), string(readFile(t, from)))
}

// resumeCases are a tiny map and a tiny tune: the same flags are used by
// every step of TestMapAndTuneResume (the scenario is args[1], copied
// first).
var resumeCases = []struct {
	name   string
	args   []string
	stopAt int64 // interrupt after this many kept runs
	// changes --resume must refuse: a flag, its other value, and what the
	// error names. --seed 0 is not the default (the scenario's seed, 1).
	changes [][3]string
}{
	{"map", append([]string{"map"}, mapArgs...), 7, [][3]string{{"--grid", "5", `--grid "4" then, "5" now`}, {"--seed", "0", `base seed "1" then, "0" now`}}},
	{"tune", []string{"tune", "../../scenarios/tune-retries.yaml", "--set", "duration=30s", "--set", "clients.arrival.profile=[]",
		"--param", "clients.retry.max_attempts=1..6", "--minimize", "amplification", "--subject-to", "success_ratio>=0.99",
		"--budget", "60", "--final-seeds", "3", "--final", "2", "--sensitivity", "3", "-q"}, 9, [][3]string{{"--budget", "50", `--budget "60" then, "50" now`}, {"--seed", "0", "base seed"}}},
}

// An interrupted map or tune keeps its finished runs in <out>.incomplete
// and says how to resume; --resume runs only the others and writes the
// same bytes as an uninterrupted search; resuming with a changed scenario
// or flag, or running again without --resume, is refused.
func TestMapAndTuneResume(t *testing.T) {
	for _, tc := range resumeCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{}, tc.args...)
			args[1] = copyScenario(t, dir, args[1])
			with := func(extra ...string) []string { return append(append([]string{}, args...), extra...) }

			// Uninterrupted, counting the runs.
			var total, resumed atomic.Int64
			var stop context.CancelFunc
			phase := "whole"
			onKeptRun(t, func(int64) {
				switch phase {
				case "whole":
					total.Add(1)
				case "part":
					if n := resumed.Add(1); n == tc.stopAt {
						stop()
					}
				case "resume":
					resumed.Add(1)
				}
			})
			whole := filepath.Join(dir, "whole")
			if r := runCLI(t, with("--out", whole, "-j", "2")...); r.code != 0 {
				t.Fatalf("uninterrupted: exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(whole + ".incomplete"); err == nil {
				t.Errorf("a finished %s left %s.incomplete", tc.name, whole)
			}

			// Interrupted before any run: nothing kept, and said so.
			gone, cancelNow := context.WithCancel(context.Background())
			cancelNow()
			early := filepath.Join(dir, "early")
			if r := runCLICtx(t, gone, false, with("--out", early)...); r.code != exitInterrupted || !strings.Contains(r.stderr, "nothing is kept") {
				t.Errorf("interrupted at once: exit %d, stderr %q; want %d and nothing kept", r.code, r.stderr, exitInterrupted)
			}
			if _, err := os.Stat(early + ".incomplete"); err == nil {
				t.Errorf("interrupted at once: %s.incomplete made", early)
			}

			// Interrupted after stopAt runs (one at a time, so that no
			// other run is under way).
			phase = "part"
			part := filepath.Join(dir, "part")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop = cancel
			r := runCLICtx(t, ctx, false, with("--out", part, "-j", "1")...)
			if r.code != exitInterrupted {
				t.Fatalf("interrupted: exit %d, want %d\n%s", r.code, exitInterrupted, r.stderr)
			}
			work := part + ".incomplete"
			if n := countKept(t, work); n != int(tc.stopAt) {
				t.Errorf("kept %d runs, want the %d finished", n, tc.stopAt)
			}
			want := "interrupted; " + strconv.Itoa(int(tc.stopAt)) + " finished runs are kept in " + work + "; continue with:\n  " + resumeCommand(with("--out", part, "-j", "1"))
			if !strings.Contains(r.stderr, want) || !strings.HasSuffix(r.stderr, " --resume\n") {
				t.Errorf("stderr:\n%s\nwant %q", r.stderr, want)
			}
			if _, err := os.Stat(part); err == nil {
				t.Errorf("an interrupted %s wrote %s", tc.name, part)
			}

			// Not resumed: refused, naming --resume.
			if r := runCLI(t, with("--out", part)...); r.code != exitError || !strings.Contains(r.stderr, work+" exists") || !strings.Contains(r.stderr, "--resume") {
				t.Errorf("again without --resume: exit %d, stderr %q; want a refusal naming --resume", r.code, r.stderr)
			}
			// A changed flag, a changed scenario: refused, naming what.
			for _, c := range tc.changes {
				if r := runCLI(t, with("--out", part, "--resume", c[0], c[1])...); r.code != exitError ||
					!strings.Contains(r.stderr, "kept runs are of a different "+tc.name) || !strings.Contains(r.stderr, c[2]) || !strings.Contains(r.stderr, "delete the folder") {
					t.Errorf("resumed with %s %s: exit %d, stderr %q; want a refusal naming %s", c[0], c[1], r.code, r.stderr, c[2])
				}
			}
			orig := readFile(t, args[1])
			writeFile(t, dir, filepath.Base(args[1]), string(orig)+"\n# changed\n")
			if r := runCLI(t, with("--out", part, "--resume")...); r.code != exitError || !strings.Contains(r.stderr, "scenario 1 sha256") {
				t.Errorf("resumed with a changed scenario: exit %d, stderr %q; want a refusal naming the scenario", r.code, r.stderr)
			}
			writeFile(t, dir, filepath.Base(args[1]), string(orig))
			if n := countKept(t, work); n != int(tc.stopAt) {
				t.Errorf("after the refusals %d runs are kept, want %d", n, tc.stopAt)
			}

			// A kept run cut short (a crash of the machine: they are not
			// synced) is run again.
			es, err := os.ReadDir(filepath.Join(work, "runs"))
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(work, "runs", es[0].Name())
			writeFile(t, filepath.Dir(cut), filepath.Base(cut), string(readFile(t, cut)[:20]))

			// Resumed (with other --jobs): only the rest run, the same bytes.
			phase = "resume"
			resumed.Store(0)
			if r := runCLI(t, with("--out", part, "-j", "2", "--resume")...); r.code != 0 {
				t.Fatalf("resumed: exit %d\n%s", r.code, r.stderr)
			}
			if got, want := resumed.Load(), total.Load()-tc.stopAt+1; got != want {
				t.Errorf("resumed: ran %d runs, want %d (%d in all, %d kept, 1 of them cut short)", got, want, total.Load(), tc.stopAt)
			}
			sameTree(t, "resumed vs uninterrupted", testfs.Tree(t, whole), testfs.Tree(t, part))
			if _, err := os.Stat(work); err == nil {
				t.Errorf("a resumed %s left %s", tc.name, work)
			}
		})
	}
}

// Two copies of the same map shard in the same folder at once (a batch
// engine's speculative retry, both with --resume): the second starts while
// the first is part-way, uses its kept runs, finishes and removes the
// kept runs under the first, which carries on. Both succeed and the folder
// is the same bytes as the shard run alone. --resume with nothing kept
// starts the search (one job template serves the first try and retries).
func TestMapShardTwiceAtOnce(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"map", "--shard", "1/2"}, mapArgs...)
	args[3] = copyScenario(t, dir, args[3])
	with := func(extra ...string) []string { return append(append([]string{}, args...), extra...) }
	alone := filepath.Join(dir, "alone")
	if r := runCLI(t, with("--out", alone, "--resume")...); r.code != 0 {
		t.Fatalf("shard alone, --resume with nothing kept: exit %d\n%s", r.code, r.stderr)
	}
	same := filepath.Join(dir, "same")
	var second *result
	keptBefore := 0
	onKeptRun(t, func(n int64) {
		if n == 5 {
			keptBefore = countKept(t, same+".incomplete")
			r := runCLI(t, with("--out", same, "-j", "1", "--resume")...)
			second = &r
		}
	})
	first := runCLI(t, with("--out", same, "-j", "1", "--resume")...)
	if second == nil || keptBefore != 5 {
		t.Fatalf("the second copy did not start part-way (%v, %d runs kept before it)", second, keptBefore)
	}
	if first.code != 0 || second.code != 0 {
		t.Fatalf("first copy: exit %d\n%s\nsecond copy: exit %d\n%s", first.code, first.stderr, second.code, second.stderr)
	}
	sameTree(t, "two copies at once vs alone", testfs.Tree(t, alone), testfs.Tree(t, same))
	if _, err := os.Stat(same + ".incomplete"); err == nil {
		t.Errorf("the copies left %s.incomplete", same)
	}
}
