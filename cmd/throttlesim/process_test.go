package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// TestMain lets the tests run the real program in a child process: the test
// binary re-executes itself with THROTTLESIM_MAIN=1 and becomes throttlesim.
func TestMain(m *testing.M) {
	if os.Getenv("THROTTLESIM_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func child(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "THROTTLESIM_MAIN=1"), env...)
	return cmd
}

// longScenario takes a few seconds: enough to be interrupted mid-run.
const longScenario = `name: long
duration: 4000s
clients:
  count: 100000
  arrival: {total_rate: 3000/s}
  timeout: 1s
  throttle: {}
backend: {workers: 200, queue: {limit: 100}}
faults:
  - {kind: outage, start: 100s, duration: 30s}
`

// SIGINT and SIGTERM stop a real run promptly: exit 130, the previous
// results untouched, the partial result in <out>.incomplete marked so.
func TestSignalStopsARun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "long.yaml", longScenario)
			out := filepath.Join(dir, "out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, out, "summary.json", `{"previous": true}`)
			cmd := child(t, nil, "run", file, "--out", out, "-q", "--force")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit: %v, want 130; stderr:\n%s", err, stderr.String())
			}
			// The exit code 130 and the partial result show the signal
			// stopped the run (uninterrupted it would exit 0); how fast is
			// the machine's business, reported.
			t.Logf("TIMING stopped %v after the signal (idle machine: well under 5 s)", time.Since(sent))
			if got := string(readFile(t, filepath.Join(out, "summary.json"))); got != `{"previous": true}` {
				t.Errorf("previous results changed: %q", got)
			}
			var doc struct {
				Run struct{ Status string } `json:"run"`
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(out+".incomplete", "summary.json")), &doc); err != nil || doc.Run.Status != "incomplete" {
				t.Errorf("partial result: %v, status %q", err, doc.Run.Status)
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}

// SIGKILL at random moments never leaves a truncated file: the results
// folder is either the previous one or a complete new one.
func TestKillLeavesNoTruncatedFile(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", strings.Replace(tinyScenario, "count: 50", "count: 20000", 1))
	out := filepath.Join(dir, "out")
	if r := runCLI(t, "run", file, "-q", "--out", out); r.code != 0 {
		t.Fatal(r.stderr)
	}
	want := testfs.Tree(t, out)
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 12; i++ {
		cmd := child(t, nil, "run", file, "-q", "--out", out, "--force")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond) // a run takes ~150 ms
		cmd.Process.Kill()
		cmd.Wait()
		got := testfs.Tree(t, out)
		// Same scenario and seed: a finished run writes the same bytes, an
		// unfinished one must have left the old folder as it was.
		sameTree(t, "after SIGKILL", want, got)
	}
	// Leftover temporary folders are hidden and never the results folder
	// (a SIGKILL can land between creating and removing the empty folder
	// that checks --out is writable before simulating).
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "out" && n != "s.yaml" && !strings.HasPrefix(n, ".out.tmp-") && !strings.HasPrefix(n, ".throttlesim-write-check-") {
			t.Errorf("unexpected %s beside the results", n)
		}
	}
}

// The same bytes whatever GOMAXPROCS, and under the race detector's build
// too when the test binary is one.
func TestSameBytesWhateverGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	var trees []map[string]string
	for _, procs := range []string{"1", "2"} {
		out := filepath.Join(dir, "p"+procs)
		cmd := child(t, []string{"GOMAXPROCS=" + procs}, "run", file, "-q", "--no-charts", "--out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, b)
		}
		trees = append(trees, testfs.Tree(t, out))
	}
	sameTree(t, "GOMAXPROCS 1 vs 2", trees[0], trees[1])
	// A sweep spreads runs over goroutines: still the same bytes.
	var sweeps []map[string]string
	for _, procs := range []string{"1", "2"} {
		out := filepath.Join(dir, "s"+procs)
		cmd := child(t, []string{"GOMAXPROCS=" + procs}, "sweep", file, "-q", "--vary", "clients.throttle.k=1.5,3", "--seeds", "2", "--out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sweep GOMAXPROCS=%s: %v\n%s", procs, err, b)
		}
		sweeps = append(sweeps, testfs.Tree(t, out))
	}
	sameTree(t, "sweep GOMAXPROCS 1 vs 2", sweeps[0], sweeps[1])
}

// SIGTERM stops `throttlesim live` exactly as Ctrl-C (SIGINT) does: exit
// 130, the partial result in <out>.incomplete marked so, the previous
// results untouched. The signal is sent once the child has said it is
// running (that line is printed after the signal handlers are set), not
// after a sleep, so it never lands before them.
func TestSignalStopsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "s.yaml", liveScenario)
			out := filepath.Join(dir, "out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, out, "summary.json", `{"previous": true}`)
			cmd := child(t, nil, "live", file, "--out", out, "--no-charts", "--set", "duration=1h", "--force")
			pipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			running := make(chan struct{})
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				sc := bufio.NewScanner(pipe)
				once := false
				for sc.Scan() {
					stderr.WriteString(sc.Text() + "\n")
					if !once && strings.HasPrefix(sc.Text(), "live: running") {
						once = true
						close(running)
					}
				}
			}()
			select {
			case <-running:
			case <-copied:
				cmd.Wait()
				t.Fatalf("live ended before running; stderr:\n%s", stderr.String())
			case <-time.After(time.Minute): // a hang guard: live starts in ms
				cmd.Process.Kill()
				t.Fatal("hang guard: live did not start")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-copied
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit: %v, want 130; stderr:\n%s", err, stderr.String())
			}
			if got := string(readFile(t, filepath.Join(out, "summary.json"))); got != `{"previous": true}` {
				t.Errorf("previous results changed: %q", got)
			}
			var doc struct {
				Run struct {
					Status     string  `json:"status"`
					StoppedAtS float64 `json:"stopped_at_s"`
				} `json:"run"`
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(out+".incomplete", "summary.json")), &doc); err != nil || doc.Run.Status != "incomplete" || doc.Run.StoppedAtS >= 3600 {
				t.Errorf("partial result: %v, %+v", err, doc.Run)
			}
			if _, err := os.Stat(filepath.Join(out+".incomplete", "live.json")); err != nil {
				t.Errorf("partial result without live.json: %v", err)
			}
			if !strings.Contains(stderr.String(), "interrupted; the partial result") {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}
