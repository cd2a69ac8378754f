package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// Every command parses its arguments and flags into its options and hands
// them to runF: a test can check the parsing without running anything.
func TestCommandsHandTheirOptionsToRunF(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	var got string // the options runF saw, formatted
	capture := func(o any) error { got = fmt.Sprintf("%+v", o); return nil }
	for _, tt := range []struct {
		name string
		cmd  *cobra.Command
		args []string
		want string
	}{
		{"init", newInitCmd(e, func(_ context.Context, _ *env, o *initOptions) error { return capture(*o) }),
			[]string{"--template", "chain", "x.yaml"}, "{file:x.yaml tmpl:chain force:false list:false}"},
		{"validate", newValidateCmd(e, func(_ context.Context, _ *env, o *validateOptions) error { return capture(*o) }),
			[]string{"a.yaml", "b.yaml", "--set", "seed=2"}, "{files:[a.yaml b.yaml] sets:[seed=2]}"},
		{"summarize", newSummarizeCmd(e, func(_ context.Context, _ *env, o *summarizeOptions) error { return capture(*o) }),
			[]string{"r1", "--format", "csv", "--columns", "point,success"}, "{dirs:[r1] format:csv columns:[point success]}"},
		{"compare", newCompareCmd(e, func(_ context.Context, _ *env, o *compareOptions) error { return capture(*o) }),
			[]string{"r1", "r2", "--baseline", "r1", "-o", "c", "--force"}, "{force:true dirs:[r1 r2] out:c title: baseline:r1 thresholds:[]}"},
		{"merge", newMergeCmd(e, func(_ context.Context, _ *env, o *mergeOptions) error { return capture(*o) }),
			[]string{"--out", "m", "s0", "s1"}, "{force:false shards:[s0 s1] out:m thresholds:[]}"},
		{"map merge", newMapMergeCmd(e, func(_ context.Context, _ *env, o *mapMergeOptions) error { return capture(*o) }),
			[]string{"--out", "m", "s0"}, "{force:false shards:[s0] out:m}"},
		{"contention", newContentionCmd(e, func(_ context.Context, _ *env, o *contentionOptions) error { return capture(*o) }),
			[]string{"--clients", "10,20", "--strategies", "none", "--runs", "3", "--seed", "7", "-o", "c"},
			"{force:false out:c clients:10,20 strategies:none runs:3 seed:7 counts:[10 20] strats:[none]}"},
		{"bench", newBenchCmd(e, func(_ context.Context, _ *env, o *benchOptions) error { return capture(*o) }),
			[]string{"r1.yaml", "--set", "clients.count=10"}, "{file:r1.yaml sets:[clients.count=10]}"},
		{"version", newVersionCmd(e, func(_ context.Context, _ *env, o *versionOptions) error { return capture(*o) }),
			nil, "{}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got = ""
			tt.cmd.SetArgs(slices.Clone(tt.args))
			tt.cmd.SetOut(io.Discard)
			tt.cmd.SetErr(io.Discard)
			if err := tt.cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got != tt.want {
				t.Errorf("got options %s, want %s", got, tt.want)
			}
		})
	}
}

// The sweep's runF sees whether --seed was given (the scenario's seed
// otherwise), through the shared flag helper.
func TestSweepSeedGiven(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"f.yaml"}, false}, {[]string{"f.yaml", "--seed", "0"}, true}} {
		var seen *sweepOptions
		cmd := newSweepCmd(e, func(_ context.Context, _ *env, o *sweepOptions) error { seen = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if seen == nil || seen.seedSet != tt.want {
			t.Errorf("%v: got seedSet %v, want %v", tt.args, seen != nil && seen.seedSet, tt.want)
		}
	}
}
