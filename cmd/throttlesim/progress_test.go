package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// A terminal whose width cannot be read (0 columns) gets a bar laid out
// for 80, never a full-width one (which collapsed to nothing there); a
// terminal with a width gets the full width.
func TestBarLayout(t *testing.T) {
	desc := "sweeping k (2 points x 3 seeds)"
	tests := []struct {
		name      string
		cols      int
		desc      string
		full      bool
		width     int
		lineAtMax int // the drawn line's width at most, 0: not drawn
	}{
		{"no size", 0, desc, false, 80 - len(desc) - 35, 80},
		{"a terminal's width", 120, desc, true, 0, 0},
		{"a description longer than the line", 0, strings.Repeat("x", 100), false, 10, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			full, width := barLayout(tc.cols, tc.desc)
			if full != tc.full || width != tc.width {
				t.Errorf("barLayout(%d): full %v, width %d; want %v, %d", tc.cols, full, width, tc.full, tc.width)
			}
			if tc.lineAtMax == 0 {
				return
			}
			// Drawn into a buffer (no terminal: 0 columns) as it is made.
			var buf bytes.Buffer
			endBar(progressBar(&buf, 456, tc.desc, true), false)
			lines := strings.Split(buf.String(), "\r")
			line := ""
			for _, l := range lines {
				if strings.Contains(l, "(0/456") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no line at 0/456 in %q", buf.String())
			}
			if n := utf8.RuneCountInString(line); n > tc.lineAtMax {
				t.Errorf("the line is %d columns, want at most %d: %q", n, tc.lineAtMax, line)
			}
			cells := regexp.MustCompile(`\|(.*)\|`).FindStringSubmatch(line)
			if cells == nil || utf8.RuneCountInString(cells[1]) != tc.width {
				t.Errorf("the bar is not %d cells wide: %q", tc.width, line)
			}
		})
	}
}

// clearedBefore checks that msg starts a clean line in a terminal's
// output: the bar was drawn, and its line was overwritten with spaces
// and the cursor put back at its start just before msg.
func clearedBefore(t *testing.T, out, msg string) {
	t.Helper()
	before, _, ok := strings.Cut(out, msg)
	if !ok {
		t.Fatalf("no %q in %q", msg, out)
	}
	if !strings.Contains(before, "%") {
		t.Fatalf("no bar drawn before %q: %q", msg, out)
	}
	parts := strings.Split(before, "\r")
	if len(parts) < 3 || parts[len(parts)-1] != "" || strings.TrimLeft(parts[len(parts)-2], " ") != "" ||
		len(parts[len(parts)-2]) < utf8.RuneCountInString(parts[len(parts)-3]) {
		t.Errorf("the bar's line is not cleared before %q: %q", msg, before)
	}
}

// Ctrl-C during a run, a sweep or a live run in a terminal: the bar's line is
// cleared before the interrupt message, which used to run on after the
// bar ("... [0s:0s]throttlesim: interrupted").
func TestBarClearedBeforeInterrupt(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	// About a million events: the run stops at its first check.
	big := writeFile(t, dir, "big.yaml", "name: big\nduration: 20s\nclients: {count: 100, arrival: {total_rate: 20000/s}}\n"+
		"backend: {workers: 100, service: {dist: constant, mean: 2ms}}\n")
	live := writeFile(t, dir, "live.yaml", liveScenario)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"run", []string{"run", big, "--no-charts", "--out", filepath.Join(dir, "run")}, "throttlesim: interrupted; the partial result"},
		{"sweep", []string{"sweep", file, "--vary", "clients.throttle.k=1.5,3", "--seeds", "2", "--jobs", "1", "--out", filepath.Join(dir, "sweep")},
			"throttlesim: interrupted; finished runs are kept in"},
		{"live", []string{"live", live, "--no-charts", "--out", filepath.Join(dir, "live")}, "throttlesim: interrupted; the partial result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Ctrl-C as it starts: the bar is drawn (empty) when it is made
			r := runCLICtx(t, ctx, true, tc.args...)
			if r.code != exitInterrupted {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, exitInterrupted, r.stderr)
			}
			clearedBefore(t, r.stderr, tc.msg)
		})
	}
}

// After --resume the bar counts only the runs left: its rate and time to
// go are those of runs simulated, not of finished runs skipped in no time
// (it counted all 6 and, 4 of them done at once, promised the end too
// soon).
func TestResumedSweepBarCountsTheRunsLeft(t *testing.T) {
	skipShort(t, "whole runs of the CLI")
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	out := filepath.Join(dir, "sw")
	args := []string{"sweep", file, "--vary", "clients.throttle.k=1.5,2,3", "--seeds", "2", "--jobs", "1", "--out", out}
	if r := runCLI(t, append(args, "-q")...); r.code != 0 {
		t.Fatalf("sweep: exit %d, %s", r.code, r.stderr)
	}
	// As if interrupted with 4 of the 6 runs done: two run folders have no
	// key (a run's last file).
	if err := os.Rename(out, out+".incomplete"); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"p001-r001", "p002-r000"} {
		if err := os.Remove(filepath.Join(out+".incomplete", "runs", run, "key.txt")); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLICtx(t, context.Background(), true, append(args, "--resume")...)
	if r.code != 0 {
		t.Fatalf("sweep --resume: exit %d, %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "4 runs done before)") || !strings.Contains(r.stderr, "(0/2") || strings.Contains(r.stderr, "/6") {
		t.Errorf("the bar does not count the 2 runs left, naming the 4 done: %q", r.stderr)
	}
}
