// Command throttlesim simulates fleets of cooperative (or not) clients
// against a capacity-limited backend. See `throttlesim --help`.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Set at link time by the Makefile: -X main.version=... -X main.commit=...
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels ctx and every phase winds down (a run, a
	// sweep's runs or its aggregation) keeping what is done; stop then
	// gives the signals back to their default, so a second Ctrl-C ends
	// the process at once instead of being swallowed.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// run is the whole program behind main, with its I/O passed in so tests can
// drive it in-process. It returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, tty bool) int {
	root := newRootCmd(&env{stdin: os.Stdin, stdout: stdout, stderr: stderr, tty: tty, args: args})
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(cmd, unknownCommand(root, cmd, args, err), stderr)
}
