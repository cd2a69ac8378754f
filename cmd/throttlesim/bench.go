package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/sim"
)

// newBenchCmd is `throttlesim bench`: one timed run, reported as the JSON
// line of the reference model R1's harness (shared/bench/R1.md), so that
// throttlesim can be compared with other engines run by the same harness.
func newBenchCmd(e *env, runF func(context.Context, *env, *benchOptions) error) *cobra.Command {
	o := &benchOptions{}
	if runF == nil {
		runF = benchRun
	}
	cmd := &cobra.Command{
		Use:   "bench FILE",
		Short: "Time one run and print it as a JSON line (for engine comparisons)",
		Long: `Bench runs the scenario once, writes no files, and prints one JSON line:
engine, N (clients), T (simulated seconds), seed, events, arrivals,
local_drops, rejected, admitted, completed, engine_steps, setup_s and run_s
(set-up and event loop, wall seconds). events/s is events / run_s. This is
the output format of the R1 reference model's peers (make bench-peers).`,
		Example: `  throttlesim bench scenarios/bench-r1.yaml
  throttlesim bench scenarios/bench-r1.yaml --set clients.count=100000`,
		Args:   argsExactly(1, "one scenario FILE"),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return runF(cmd.Context(), e, o)
		},
	}
	addSetFlag(cmd, &o.sets, "override a scenario field, path=value (repeatable)")
	return cmd
}

// benchOptions are bench's argument and flags.
type benchOptions struct {
	file string
	sets []string
}

func benchRun(ctx context.Context, e *env, o *benchOptions) error {
	sc, err := loadScenario(e, o.file, o.sets)
	if err != nil {
		return err
	}
	var started time.Time
	t0 := time.Now()
	res, err := sim.Run(ctx, sc, sim.Options{Started: func() { started = time.Now() }})
	if err != nil {
		return err
	}
	end := time.Now()
	s := res.Summary
	line := map[string]any{
		"engine": "throttlesim " + version, "N": sc.Clients.Count, "T": sc.Duration.Seconds(), "seed": sc.Seed,
		"events": res.Events, "arrivals": res.Arrivals, "local_drops": s.DropThrottle, "rejected": s.Rejected,
		"admitted": s.Accepted, "completed": s.Served, "engine_steps": res.Events,
		"setup_s": started.Sub(t0).Seconds(), "run_s": end.Sub(started).Seconds(),
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(b))
	return nil
}
