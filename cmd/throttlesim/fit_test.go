package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// throttlesim fit: usage errors exit 2 and write nothing; a recording read
// back with --from-files writes the scenario, its trace and the report; an
// unreachable Prometheus exits 1 and writes nothing.
func TestFitCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	rec := filepath.Join("..", "..", "fit", "testdata", "serve-outage")
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"fit", "--out", out}, 2, "give --prometheus URL or --from-files DIR"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--from-files", rec, "--out", out}, 2, "give one source"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--out", out}, 2, "give --last (e.g. 10m) or --start"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--last", "-5m", "--out", out}, 2, "--last must be > 0"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--last", "10m", "--start", "1700000000", "--out", out}, 2, "--start and --last name the window twice"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--last", "10m", "--step", "1500ms", "--out", out}, 2, "--step must be a whole number of seconds"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--last", "10m", "--convention", "statsd", "--out", out}, 2, `--convention "statsd": one of prometheus, otel, throttlesim`},
		{[]string{"fit", "--from-files", rec, "--last", "10m", "--out", out}, 2, "the files hold their own window"},
		{[]string{"fit", "--prometheus", "http://127.0.0.1:1", "--last", "10m", "--out", out}, 1, "cannot reach Prometheus at http://127.0.0.1:1"},
		{[]string{"fit", "--from-files", dir, "--out", out}, 1, "no arrivals.json or arrivals.csv"},
		{[]string{"fit", "--from-files", rec, "--seeds", "-1", "--out", out}, 2, "--seeds must be 0 to 1000"},
	} {
		r := runCLI(t, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("%q: got exit %d, %q; want exit %d and …%s…", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q wrote %s", tt.args, out)
		}
	}
	r := runCLI(t, "fit", "--from-files", rec, "--convention", "throttlesim", "--selector", `{job="serve"}`, "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, "4 workers, queue 20") || !strings.Contains(r.stdout, "workers from workers gauge") ||
		!strings.Contains(r.stdout, "verdict: Over 5 seeds, the fitted scenario reproduces goodput within") {
		t.Fatalf("from files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"scenario.yaml", "arrivals.csv", "report.md", "fit.json", "queries/arrivals.json", "recorded_vs_simulated.png", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("from files: %v", err)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "| goodput (req/s) |") {
		t.Errorf("report.md: no recorded-against-simulated table:\n%s", md)
	}
	if page, _ := os.ReadFile(filepath.Join(out, "report.html")); !strings.Contains(string(page), "reproduces goodput within") {
		t.Errorf("report.html: no verdict")
	}
	if r := runCLI(t, "validate", filepath.Join(out, "scenario.yaml")); r.code != 0 {
		t.Errorf("validate of the fitted scenario: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// --seeds 0: no simulation, no chart.
	out0 := filepath.Join(dir, "fit0")
	if r := runCLI(t, "fit", "--from-files", rec, "--convention", "throttlesim", "--seeds", "0", "--out", out0); r.code != 0 {
		t.Fatalf("--seeds 0: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out0, "report.html")); err == nil {
		t.Errorf("--seeds 0 wrote report.html")
	}
	// The window of --last ends now, in whole steps.
	w, err := fitWindow(&fitOptions{last: 10 * time.Minute, step: 5 * time.Second, end: "2026-12-06T02:00:03Z"}, time.Time{})
	if err != nil || w.End.Sub(w.Start) != 10*time.Minute || w.End.Format(time.RFC3339) != "2026-12-06T02:00:03Z" {
		t.Errorf("--last 10m --end 02:00:03: got %s to %s, %v", w.Start, w.End, err)
	}
}
