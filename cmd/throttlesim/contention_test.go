package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseClients(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"10:190:20", []int{10, 30, 50, 70, 90, 110, 130, 150, 170, 190}, true},
		{"5:5:1", []int{5}, true},
		{"10, 50,100", []int{10, 50, 100}, true},
		{"0", nil, false},
		{"10:5:1", nil, false},
		{"10:20:0", nil, false},
		{"1:1000000000:1", nil, false},
		{"ten", nil, false},
		{"", nil, false},
	} {
		got, err := parseClients(tc.in)
		if (err == nil) != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseClients(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// A small experiment writes its five files, prints the table, and gives
// the same bytes twice; bad flags are usage errors (exit 2).
func TestContentionCommand(t *testing.T) {
	dir := t.TempDir()
	var first map[string][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "c")
		// The second writes over the first: --force.
		r := runCLI(t, "contention", "--clients", "5,20", "--runs", "3", "--strategies", "none,full", "--out", out, "--force")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "| clients | none | full |") || !strings.Contains(r.stdout, "| 20 |") {
			t.Errorf("table missing from stdout:\n%s", r.stdout)
		}
		files := map[string][]byte{}
		for _, name := range []string{"contention.csv", "contention.md", "contention.json", "contention_writes.png", "contention_time.png"} {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil || len(b) == 0 {
				t.Fatalf("%s: %v (%d bytes)", name, err, len(b))
			}
			files[name] = b
		}
		if lines := strings.Count(string(files["contention.csv"]), "\n"); lines != 5 {
			t.Errorf("contention.csv has %d lines, want header + 4", lines)
		}
		if first == nil {
			first = files
		} else if !reflect.DeepEqual(first, files) {
			t.Error("a second run with the same seed wrote different files")
		}
	}
	for _, args := range [][]string{
		{"contention", "--strategies", "full,ful"},
		{"contention", "--clients", "0"},
		{"contention", "--runs", "0"},
	} {
		if r := runCLI(t, append(args, "--out", filepath.Join(dir, "bad"))...); r.code != 2 || r.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, r.code, r.stderr)
		}
	}
}

// Any --clients text gives counts within 1..maxContenders or an error.
func FuzzParseClients(f *testing.F) {
	for _, s := range []string{"10:190:20", "1,2,3", "5:5:1", "0", "-1:3:1", "9223372036854775807:1:1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseClients(s)
		if err != nil {
			return
		}
		if len(ns) == 0 || len(ns) > 1001 {
			t.Fatalf("%q: %d counts", s, len(ns))
		}
		for _, n := range ns {
			if n < 1 || n > maxContenders {
				t.Fatalf("%q: count %d out of range", s, n)
			}
		}
	})
}

// A cancelled experiment (Ctrl-C) writes nothing and exits 130.
func TestContentionInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "c")
	r := runCLICtx(t, ctx, false, "contention", "--clients", "5", "--runs", "3", "--out", out)
	if r.code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr %q", r.code, exitInterrupted, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after an interrupted run (%v)", out, err)
	}
}
