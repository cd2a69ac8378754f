package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

// A map and a tune run as a chain of rounds — --next-round, then every
// shard's --round-shard, again until --next-round finishes — write the
// bytes of the same search run in one go.
func TestMapAndTuneInRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each search twice")
	}
	for _, tc := range resumeCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{}, tc.args...)
			args[1] = copyScenario(t, dir, args[1])
			with := func(extra ...string) []string { return append(append([]string{}, args...), extra...) }
			whole := filepath.Join(dir, "whole")
			if r := runCLI(t, with("--out", whole)...); r.code != 0 {
				t.Fatalf("in one go: exit %d\n%s", r.code, r.stderr)
			}
			out := filepath.Join(dir, "rounds")
			if r := runCLI(t, with("--out", out, "--round-shard", "0/2")...); r.code != 1 || !strings.Contains(r.stderr, "no round planned: run the same command with --next-round first") {
				t.Errorf("a shard before any round: exit %d, %q", r.code, r.stderr)
			}
			rounds := 0
			for ; ; rounds++ {
				if rounds > 200 {
					t.Fatal("no end after 200 rounds")
				}
				r := runCLI(t, with("--out", out, "--next-round")...)
				if r.code == 0 {
					break
				}
				if r.code != exitMoreRounds {
					t.Fatalf("--next-round: exit %d\n%s", r.code, r.stderr)
				}
				for _, s := range []string{"1/3", "0/3", "2/3", "1/3"} { // any order; shard 1 twice, as a retry
					if r := runCLI(t, with("--out", out, "--round-shard", s, "-j", "1")...); r.code != 0 {
						t.Fatalf("round %d, shard %s: exit %d\n%s", rounds+1, s, r.code, r.stderr)
					}
				}
			}
			if rounds < 3 {
				t.Errorf("%d rounds: a sequential search in so few?", rounds)
			}
			sameTree(t, "in rounds vs in one go", testfs.Tree(t, whole), testfs.Tree(t, out))
			if _, err := os.Stat(out + ".incomplete"); err == nil {
				t.Errorf("the kept runs are still there after the results were written")
			}
			t.Logf("%s: %d rounds", tc.name, rounds)
		})
	}
}

func TestRoundRefusals(t *testing.T) {
	dir := t.TempDir()
	m := append([]string{"map"}, mapArgs...)
	tests := []struct {
		args []string
		want string
	}{
		{append(m, "--next-round", "--round-shard", "0/2"), "give one"},
		{append(m, "--next-round", "--resume"), "--resume with --next-round"},
		{append(m, "--round-shard", "0/2", "--shard", "0/2"), "--shard with --next-round or --round-shard"},
		{append(m, "--next-round", "--rare", "in_system"), "--rare with --next-round"},
		{append(m, "--round-shard", "2/2"), `--shard "2/2"`},
	}
	for i, tc := range tests {
		r := runCLI(t, append(tc.args, "--out", filepath.Join(dir, strconv.Itoa(i)))...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args[len(mapArgs)+1:], r.code, r.stderr, tc.want)
		}
	}
}

// An interrupted job of a chain of rounds is continued by running it
// again, as it is: --resume is refused with the round flags.
func TestRoundJobResumeCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", "s.yaml", "--next-round"}, "throttlesim tune s.yaml --next-round"},
		{[]string{"map", "s.yaml", "--round-shard", "1/4"}, "throttlesim map s.yaml --round-shard 1/4"},
		{[]string{"map", "s.yaml", "--round-shard=auto"}, "throttlesim map s.yaml --round-shard=auto"},
		{[]string{"map", "s.yaml"}, "throttlesim map s.yaml --resume"},
	} {
		if got := resumeCommand(tt.args); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
}
