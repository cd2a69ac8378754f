package main

import (
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flags several commands take, each defined once: the name, shorthand,
// default and completion are the same everywhere; the help line says what
// the flag means for the command.

// addSetFlag adds --set path=value (repeatable), completing field paths.
func addSetFlag(cmd *cobra.Command, p *[]string, usage string) {
	cmd.Flags().StringArrayVar(p, "set", nil, usage)
	cmd.RegisterFlagCompletionFunc("set", completeFieldPath)
}

// addSeedFlag adds --seed; a command that defaults to the scenario's seed
// asks seedGiven whether it was given.
func addSeedFlag(f *pflag.FlagSet, p *uint64, def uint64, usage string) {
	f.Uint64Var(p, "seed", def, usage)
}

// seedGiven reports whether --seed was given on cmd's command line.
func seedGiven(cmd *cobra.Command) bool { return cmd.Flags().Changed("seed") }

// addOutFlag adds --out/-o, a results folder.
func addOutFlag(cmd *cobra.Command, p *string, def, usage string) {
	cmd.Flags().StringVarP(p, "out", "o", def, usage)
	cmd.MarkFlagDirname("out")
}

// addJobsFlag adds --jobs/-j, runs in parallel (default: GOMAXPROCS).
func addJobsFlag(f *pflag.FlagSet, p *int) {
	f.IntVarP(p, "jobs", "j", runtime.GOMAXPROCS(0), "runs in parallel")
}

// addForceFlag adds --force: replace the results folder if it exists.
// Without it a command refuses a folder that holds results before it runs
// anything (checkOut), so nothing the user had is replaced by surprise.
func addForceFlag(f *pflag.FlagSet, p *bool) {
	f.BoolVar(p, "force", false, "replace the results folder if it exists (without it an existing one is refused)")
}
