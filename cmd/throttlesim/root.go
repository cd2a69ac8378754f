package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Exit codes (documented in docs/cli.md).
const (
	exitOK          = 0
	exitError       = 1   // a runtime error: unreadable or invalid scenario, failed write
	exitUsage       = 2   // a command-line usage error: unknown flag, missing argument, bad --set syntax
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM
)

// env is what every command gets from the process.
type env struct {
	stdin          io.Reader // the scenario of `run -`
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal: progress bars allowed
	quiet          bool // --quiet, a flag of every command
	// args is the command line (without the program's name), for the
	// command that resumes an interrupted map or tune.
	args []string
}

// exitCoder is an error that carries the exit code the process ends
// with (as k6's errext.HasExitCode): exitCode finds it with errors.As,
// never by the error's text. An error without one exits with exitError.
type exitCoder interface {
	error
	ExitCode() int
}

// usageError is a command-line usage error: exit code 2, and a pointer at
// the command's help.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// ExitCode is exitUsage.
func (e usageError) ExitCode() int { return exitUsage }

// reportedError is an error already printed in full (e.g. every problem of
// a scenario file); exitCode only sets the code.
type reportedError struct{ code int }

func (e reportedError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// ExitCode is the code the error was made with.
func (e reportedError) ExitCode() int { return e.code }

// interrupted reports whether err says a signal stopped the command: a
// cancelled context, a run stopped part-way, a sweep's interrupted phase.
func interrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, sim.ErrInterrupted) || errors.Is(err, errInterrupted)
}

// exitCode prints err and returns the exit code. cmd is the command that
// failed: a usage error points at its help.
func exitCode(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var rep reportedError
	if errors.As(err, &rep) {
		return rep.code
	}
	if interrupted(err) {
		// Say what happened, not how the program learnt it ("context
		// canceled").
		msg := "interrupted"
		var ie *sim.InterruptedError
		if errors.As(err, &ie) {
			msg = fmt.Sprintf("interrupted at %.3fs of %.3fs", float64(ie.At)/1e9, float64(ie.End)/1e9)
		}
		fmt.Fprintln(stderr, "throttlesim: "+msg)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "throttlesim: %v\n", err)
	var ce exitCoder
	if !errors.As(err, &ce) {
		return exitError
	}
	if errors.As(err, new(usageError)) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", helpPath(cmd))
	}
	return ce.ExitCode()
}

// unknownCommand makes err, the error of the command line args, a
// usageError when cobra could not find the command args name ("unknown
// command \"x\" for \"throttlesim\"", with suggestions): cobra gives that
// error no type of its own, so it is recognised by asking cobra's Find
// again (after ExecuteC, which adds help and completion), not by its text.
func unknownCommand(root, cmd *cobra.Command, args []string, err error) error {
	if err == nil || cmd != root {
		return err
	}
	if _, _, ferr := root.Find(args); ferr != nil && !errors.As(err, new(exitCoder)) {
		return usageError{err}
	}
	return err
}

// helpPath is the command whose --help a usage error points at:
// "throttlesim map", or "throttlesim" when no command was found.
func helpPath(cmd *cobra.Command) string {
	if cmd == nil {
		return "throttlesim"
	}
	return cmd.CommandPath()
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "throttlesim",
		Short: "Simulate what clients do to a backend when it falls over",
		Long: `throttlesim simulates thousands to millions of clients running overload
policies (SRE adaptive throttling, retries with backoff and jitter, retry
budgets, circuit breakers, ...) against a backend or a graph of services
that falls over, and shows whether and how fast it recovers: a time
series, a summary, charts and one report.html per run. Sweeps compare
policies over seeds with confidence intervals, map finds where a system
tips into a metastable failure, tune picks policy parameters, and serve
and live run the same policies over real HTTP.

New here: throttlesim init writes a commented scenario to start from;
docs/tutorial.md is your first scenario in ten minutes. Every command:
docs/cli.md. Shell completion: throttlesim completion --help.`,
		Example: `  throttlesim init my-service.yaml && throttlesim run my-service.yaml
  throttlesim run scenarios/outage.yaml --set clients.throttle.k=1.1 --out results/k1.1
  throttlesim sweep scenarios/k-sweep.yaml`,
		Version:       version + " (commit " + commit + ")",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{plainFlagError(err)} })
	// Flags every command takes.
	root.PersistentFlags().BoolVarP(&e.quiet, "quiet", "q", false, "no progress bar and no summary on stdout")
	// The help lists the commands in groups, in the order of
	// commandGroups (see init below), not alphabetically.
	for _, g := range commandGroups(e) {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, c := range g.cmds {
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	root.AddCommand(newBenchCmd(e, nil)) // hidden: for engine comparisons
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
	// `throttlesim completion bash|zsh|fish|powershell` is listed in
	// --help; completion knows every scenario field after --set and --vary.
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// The help lists the commands in the order a new user needs them, not
// alphabetically. Set once: it is a global of cobra's.
func init() { cobra.EnableCommandSorting = false }

type commandGroup struct {
	id, title string
	cmds      []*cobra.Command
}

// commandGroups are the commands of the root help, in order.
func commandGroups(e *env) []commandGroup {
	return []commandGroup{
		{"start", "Start:", []*cobra.Command{newInitCmd(e, nil), newRunCmd(e, nil), newValidateCmd(e, nil)}},
		{"compare", "Simulate and compare:", []*cobra.Command{newSweepCmd(e, nil), newCompareCmd(e, nil), newSummarizeCmd(e, nil)}},
		{"search", "Search:", []*cobra.Command{newMapCmd(e, nil), newTuneCmd(e, nil)}},
		{"cluster", "Cluster:", []*cobra.Command{newMergeCmd(e, nil)}},
		{"live", "Live:", []*cobra.Command{newServeCmd(e, nil), newLiveCmd(e, nil), newFitCmd(e, nil)}},
		{"other", "Other:", []*cobra.Command{newContentionCmd(e, nil), newVersionCmd(e, nil)}},
	}
}

var numError = regexp.MustCompile(`strconv\.Parse(Uint|Int|Float|Bool): parsing "(.*?)": (invalid syntax|value out of range)`)

// plainFlagError rewrites a flag value error without the Go parser's
// name: `invalid argument "-1" for "--seed" flag: strconv.ParseUint:
// parsing "-1": invalid syntax` becomes `invalid argument "-1" for
// "--seed" flag: expected a whole number >= 0`.
func plainFlagError(err error) error {
	msg := err.Error()
	m := numError.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	what := map[string]string{"Uint": "a whole number >= 0", "Int": "a whole number", "Float": "a number", "Bool": "true or false"}[m[1]]
	if m[3] == "value out of range" {
		what += " in range"
	}
	return errors.New(strings.Replace(msg, m[0], "expected "+what, 1))
}

// completeFieldPath completes a scenario field path for --set and --vary
// ("clients.thr" -> clients.throttle, clients.throttle.k, ...), with the
// "=" that follows and no space after it.
func completeFieldPath(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, p := range scenario.FieldPaths() {
		if strings.HasPrefix(p, toComplete) {
			out = append(out, p+"=")
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// argsExactly is cobra.ExactArgs with a usage error.
func argsExactly(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("expected %s, got %d argument%s", what, len(args), plural(len(args)))}
		}
		return nil
	}
}

// versionOptions are version's flags: none.
type versionOptions struct{}

// newVersionCmd builds `throttlesim version`; runF replaces the run
// function in tests (nil: the real one).
func newVersionCmd(e *env, runF func(context.Context, *env, *versionOptions) error) *cobra.Command {
	o := &versionOptions{}
	if runF == nil {
		runF = versionRun
	}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  argsExactly(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runF(cmd.Context(), e, o)
		},
	}
}

func versionRun(_ context.Context, e *env, _ *versionOptions) error {
	fmt.Fprintf(e.stdout, "throttlesim %s (commit %s, %s)\n", version, commit, goInfo())
	return nil
}

func goInfo() string { return runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH }
