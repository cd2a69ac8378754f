package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// validateOptions are validate's arguments and flags.
type validateOptions struct {
	files, sets []string
}

// newValidateCmd builds `throttlesim validate`; runF replaces the run
// function in tests (nil: the real one).
func newValidateCmd(e *env, runF func(context.Context, *env, *validateOptions) error) *cobra.Command {
	o := &validateOptions{}
	if runF == nil {
		runF = validateRun
	}
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files and report every problem",
		Long: `Validate loads each scenario file (with any --set overrides), reports every
problem with its file, line, column and field path, and prints a one-line
description of each valid scenario. It runs nothing. The exit code is 1 if any
file has a problem.`,
		Example: `  throttlesim validate scenarios/*.yaml
  throttlesim validate scenarios/outage.yaml --set clients.count=1000000`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one scenario FILE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runF(cmd.Context(), e, o)
		},
	}
	addSetFlag(cmd, &o.sets, "override a scenario field by its YAML path (repeatable)")
	return cmd
}

func validateRun(_ context.Context, e *env, o *validateOptions) error {
	bad := 0
	for _, f := range o.files {
		sc, err := loadScenario(e, f, o.sets)
		if err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			var rep reportedError
			if !errors.As(err, &rep) {
				fmt.Fprintf(e.stderr, "throttlesim: %v\n", err)
			}
			bad++
			continue
		}
		load := sc.PerClientRate() * float64(sc.Clients.Count) / sc.Capacity()
		what := fmt.Sprintf("offered load %.0f%% of capacity (%.0f req/s)", 100*load, sc.Capacity())
		switch {
		case sc.Backend.Kind == scenario.BackendOCC:
			what = "backend: one versioned row (occ)"
		case sc.Backend.Service.Dist == scenario.ServiceConcurrency:
			what = fmt.Sprintf("offered load %.0f req/s, service time %s + %s per request in service", sc.PerClientRate()*float64(sc.Clients.Count), sc.Backend.Service.Mean, sc.Backend.Service.PerConcurrent)
		case sc.Clients.Arrival.Process == scenario.ArrivalOnce:
			what = fmt.Sprintf("one request per client, capacity %.0f req/s", sc.Capacity())
		}
		fmt.Fprintf(e.stdout, "ok  %s: %q, %s clients, %s, %s, %d fault%s\n",
			f, sc.Name, group(int64(sc.Clients.Count)), sc.Duration, what, len(sc.Faults), plural(len(sc.Faults)))
	}
	if bad > 0 {
		return reportedError{exitError}
	}
	return nil
}
