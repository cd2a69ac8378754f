package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A sweep of a scenario whose trace file sits beside it resumes: the
// check of each finished run re-reads its summary.json as if beside the
// scenario, where the trace's relative path points (it looked for the
// trace in the run's folder and refused every run).
func TestResumedSweepOfATrace(t *testing.T) {
	skipShort(t, "whole runs of the CLI")
	dir := t.TempDir()
	writeFile(t, dir, "rate.csv", "time,rate\n0,80\n5,150\n10,100\n15,100\n")
	y := strings.Replace(tinyScenario, "arrival: {total_rate: 100/s}", "arrival: {process: poisson, trace: {file: rate.csv, format: csv}}", 1)
	file := writeFile(t, dir, "s.yaml", y)
	args := []string{"sweep", "-q", file, "--vary", "clients.arrival.trace.scale=1,1.5", "--seeds", "2", "--jobs", "1", "--out", filepath.Join(dir, "sw")}
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("sweep: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, append(args, "--resume")...); r.code != 0 {
		t.Fatalf("sweep --resume: exit %d, %s", r.code, r.stderr)
	}
}
