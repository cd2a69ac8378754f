package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

// cancelAfter is a context that ends after its Err has been asked n
// times: a Ctrl-C that lands at a chosen point of a phase, without a
// clock.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// A Ctrl-C during a sweep's aggregation stops it (it was ignored, and a
// second one too): cancelled after reading 2 of the 6 runs, in the middle
// of the charts and before the first file, aggregateSweep returns
// context.Canceled and writes nothing. Through the CLI, merge with its
// context ended exits 130 and says the runs are kept.
func TestAggregationHonoursInterrupt(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "sw")
	if r := runCLI(t, "sweep", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "3", "--shard", "0/1", "--out", out, "-q"); r.code != 0 {
		t.Fatalf("sweep: exit %d\n%s", r.code, r.stderr)
	}
	plan, err := sweep.ReadPlan(out)
	if err != nil {
		t.Fatal(err)
	}
	// Err is asked once per run read (6), then before the charts, after
	// them, and before each file.
	for _, n := range []int64{2, 6, 7, 8} {
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		if _, err := aggregateSweep(ctx, out, plan, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: got %v, want context.Canceled", n, err)
		}
		if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
			t.Errorf("cancelled after %d checks: report.html written", n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	merged := filepath.Join(dir, "merged")
	r := runCLICtx(t, ctx, false, "merge", "--out", merged, out)
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "interrupted while aggregating") {
		t.Errorf("merge interrupted: exit %d, stderr %q; want %d and the interruption named", r.code, r.stderr, exitInterrupted)
	}
	if _, err := os.Stat(merged); err == nil {
		t.Error("an interrupted merge replaced its --out folder")
	}
}

// summarize and compare refuse results that cannot be a run's, naming the
// file and the row or field (they used to print tables of zeros or
// negative counts).
func TestReadersRefuseImpossibleResults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	good := filepath.Join(dir, "good")
	if r := runCLI(t, "run", file, "-q", "--no-charts", "--out", good); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	summary, err := os.ReadFile(filepath.Join(good, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(good, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(csv), "\n")
	for _, tt := range []struct {
		name     string
		edit     func() (name, content string)
		commands []string
		want     string
	}{
		{"negative count", func() (string, string) {
			return "summary.json", strings.Replace(string(summary), `"offered": `, `"offered": -`, 1)
		}, []string{"summarize", "compare"}, "summary.offered is -"},
		{"no summary section", func() (string, string) {
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(summary, &doc); err != nil {
				t.Fatal(err)
			}
			delete(doc, "summary")
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			return "summary.json", string(b)
		}, []string{"summarize", "compare"}, "no summary section"},
		{"decreasing t_s", func() (string, string) {
			return "timeseries.csv", lines[0] + lines[2] + lines[1] + strings.Join(lines[3:], "")
		}, []string{"compare"}, "timeseries.csv line 3: t_s is"},
		{"NaN count", func() (string, string) {
			cells := strings.Split(lines[1], ",")
			cells[2] = "NaN"
			return "timeseries.csv", lines[0] + strings.Join(cells, ",") + strings.Join(lines[2:], "")
		}, []string{"compare"}, "timeseries.csv line 2:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad")
			if err := os.CopyFS(bad, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			name, content := tt.edit()
			writeFile(t, bad, name, content)
			for _, c := range tt.commands {
				args := []string{c, good, bad}
				if c == "compare" {
					args = append(args, "--out", filepath.Join(t.TempDir(), "cmp"), "-q")
				}
				r := runCLI(t, args...)
				if r.code == 0 || !strings.Contains(r.stderr, filepath.Join(bad, name)) || !strings.Contains(r.stderr, tt.want) {
					t.Errorf("%s: exit %d, stderr %q; want an error naming %s: %s", c, r.code, r.stderr, filepath.Join(bad, name), tt.want)
				}
			}
		})
	}
}
