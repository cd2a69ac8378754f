package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/rundir"
)

// Against a remote --target the server's figures are not measured: the
// terminal, summary.json (null, and named in live.not_measured) and
// report.html say so instead of showing zeros, no backend chart is drawn,
// and the page's time is wall time.
func TestLiveTargetSaysNotMeasured(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "live", file, "--target", srv.URL, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "not measured") || strings.Contains(r.stdout, "received") {
		t.Errorf("stdout: got\n%s\nwant the backend line to say not measured, and no received count", r.stdout)
	}

	raw := readFile(t, filepath.Join(out, "summary.json"))
	var doc struct {
		Summary map[string]json.RawMessage `json:"summary"`
		Live    struct {
			NotMeasured []string `json:"not_measured"`
		} `json:"live"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"backend_received", "backend_rejected", "utilisation", "wasted_work_fraction", "peak_received_over_capacity"} {
		if got := string(doc.Summary[f]); got != "null" {
			t.Errorf("summary.%s: got %s, want null", f, got)
		}
		if !slices.Contains(doc.Live.NotMeasured, f) {
			t.Errorf("live.not_measured: got %q, want it to name %s", doc.Live.NotMeasured, f)
		}
	}
	if got := string(doc.Summary["offered"]); got == "null" || got == "0" {
		t.Errorf("summary.offered: got %s, want the count the client measured", got)
	}
	if _, err := rundir.ReadSummary(out); err != nil {
		t.Errorf("summary.json with nulls does not read back: %v", err)
	}

	page := string(readFile(t, filepath.Join(out, "report.html")))
	for _, want := range []string{"not measured", "wall time (live)", `data-metric="latency_p50_ms"`, `data-metric="latency_max_ms"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "server_load.png")); err == nil {
		t.Error("server_load.png drawn for a backend that was not measured")
	}
	if _, err := os.Stat(filepath.Join(out, "recovery.png")); err != nil {
		t.Errorf("recovery.png (the clients' view): %v", err)
	}
}

// summarize reads a remote target's run back without the zeros: the
// server's figures have no value.
func TestSummarizeLiveTargetRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	out := filepath.Join(dir, "out")
	if r := runCLI(t, "live", "-q", "--no-charts", file, "--target", srv.URL, "--out", out); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, "summarize", "--format", "csv", out)
	if r.code != 0 {
		t.Fatalf("summarize: exit %d: %s", r.code, r.stderr)
	}
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(rows) != 2 {
		t.Fatalf("summarize --format csv: got %d lines, want 2:\n%s", len(rows), r.stdout)
	}
	// No run has a value: the column is left out, not filled with 0.
	if head := strings.Split(rows[0], ","); slices.Contains(head, "backend_received") || !slices.Contains(head, "success_ratio") {
		t.Errorf("summarize header: got %q, want success_ratio and no backend_received", head)
	}
}
