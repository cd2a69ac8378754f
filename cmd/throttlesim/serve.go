package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/live/server"
)

type serveOptions struct {
	file     string
	listen   string
	sets     []string
	seed     uint64
	seedSet  bool
	noFaults bool
	// ready, in tests, is called with the address once the server listens.
	ready func(addr string)
}

// newServeCmd builds `throttlesim serve`; runF replaces the run function
// in tests (nil: the real one).
func newServeCmd(e *env, runF func(context.Context, *env, *serveOptions) error) *cobra.Command {
	o := &serveOptions{}
	if runF == nil {
		runF = runServe
	}
	cmd := &cobra.Command{
		Use:   "serve FILE",
		Short: "Serve the scenario's backend as a real HTTP server",
		Long: `Serve runs the backend of the scenario in FILE as a real HTTP server: its
workers (each serves one request at a time, spending the scenario's service
time as real time), its bounded queue and queue timeout, rejections (503,
with Retry-After in whole seconds) that cost worker time (reject_cost), the
accept backlog, and the scenario's faults on their schedule from the
moment it starts. Any path serves a request, except:

  GET  /metrics        Prometheus metrics (requests by result, worker time,
                       queue length, busy and available workers)
  POST /admin/faults   start a fault now, e.g.
                       curl -d '{"kind":"outage","duration":"30s"}' localhost:8080/admin/faults

An outage in "refuse" mode aborts connections, in "blackhole" mode holds
requests unanswered. Service graphs, replicas, client connections, LIFO
and CoDel queues, the server rate limit and disconnect faults are not
served (an error says which). It runs until interrupted (Ctrl-C), then
stops cleanly and exits 0.`,
		Example: `  throttlesim serve scenarios/outage.yaml
  throttlesim serve scenarios/outage.yaml --listen 127.0.0.1:9090 --no-faults
  throttlesim serve scenarios/outage.yaml --set backend.workers=20`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = cmd.Flags().Changed("seed")
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", ":8080", "address to listen on, host:port")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario field by its YAML path, e.g. backend.workers=20 (repeatable)")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the service-time draws (default: the scenario's seed)")
	f.BoolVar(&o.noFaults, "no-faults", false, "leave out the scenario's faults (start them through POST /admin/faults)")
	cmd.RegisterFlagCompletionFunc("set", completeFieldPath)
	return cmd
}

func runServe(ctx context.Context, e *env, o *serveOptions) error {
	sc, err := loadScenario(e, o.file, o.sets)
	if err != nil {
		return err
	}
	opt := server.Options{NoSchedule: o.noFaults}
	if o.seedSet {
		opt.Seed = &o.seed
	}
	srv, err := server.New(sc, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", o.listen, err)}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	srv.Start()
	if !e.quiet {
		fmt.Fprintf(e.stdout, "serving %s on http://%s: %d workers, capacity %.0f req/s, %d fault(s) scheduled; metrics at /metrics, faults at POST /admin/faults\n",
			sc.Name, ln.Addr(), sc.Backend.Workers, sc.Capacity(), len(sc.Faults)*b2i(!o.noFaults))
	}
	if o.ready != nil {
		o.ready(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	// Held requests (blackhole, full backlog) are released first, so that
	// the shutdown does not wait for clients to give up.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
