package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/rundir"
)

// docs/tutorial.md's scenario block is a valid scenario, and the answers
// the tutorial gives from it still hold: with 4 attempts and no budget
// the backend does not recover and 18.0% of requests succeed; with the
// SRE retry budget it recovers in one recovery window (10 s).
func TestTutorialScenario(t *testing.T) {
	skipShort(t, "whole runs of the CLI, no goroutines of their own")
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	yml, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/tutorial.md has no ```yaml block")
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "first.yaml", yml)
	if r := runCLI(t, "validate", file); r.code != 0 {
		t.Fatalf("validate: exit %d: %s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		name      string
		sets      []string
		recovered bool
		success   string // as the tutorial prints it
		recovery  float64
	}{
		{"first", nil, false, "18.0%", 0},
		{"first-budget", []string{"--set", "clients.retry.budget={kind: sre}"}, true, "76.4%", 10},
	} {
		out := filepath.Join(dir, tc.name)
		r := runCLI(t, append([]string{"run", "-q", "--no-charts", file, "--out", out}, tc.sets...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, r.code, r.stderr)
		}
		doc, err := rundir.ReadSummary(out)
		if err != nil {
			t.Fatal(err)
		}
		s := doc.Summary
		if got := pct(s.SuccessRatio); got != tc.success || s.Recovery.Recovered != tc.recovered {
			t.Errorf("%s: success %s, recovered %v; the tutorial says %s, %v", tc.name, got, s.Recovery.Recovered, tc.success, tc.recovered)
		}
		if tc.recovered && (s.Recovery.RecoveryTimeS == nil || *s.Recovery.RecoveryTimeS != tc.recovery) {
			t.Errorf("%s: recovery %v s; the tutorial says %g s", tc.name, s.Recovery.RecoveryTimeS, tc.recovery)
		}
	}
}
