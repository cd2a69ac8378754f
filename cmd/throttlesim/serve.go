package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
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
	// admin turns on POST /admin/faults; adminToken is its bearer token
	// (--admin-token or THROTTLESIM_ADMIN_TOKEN; generated when empty).
	admin      bool
	adminToken string
	// maxConns, maxFaults and maxFaultDuration bound what a client or
	// the admin can hold (0: the server's default).
	maxConns         int
	maxFaults        int
	maxFaultDuration time.Duration
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
		Long: `Serve runs the backend of the scenario in FILE as a real HTTP server on
127.0.0.1:8080: its workers spend the scenario's service time as real
time, with its queue, its rejections (503 with Retry-After) and its faults
on their schedule. Any path serves a request; GET /metrics gives
Prometheus metrics; with --admin, POST /admin/faults starts a fault (a
bearer token is required). It runs until Ctrl-C or SIGTERM and exits 0.

More: docs/cli.md, "throttlesim serve" (the admin API, the connection
limits, what is not served).`,
		Example: `  throttlesim serve scenarios/outage.yaml
  throttlesim serve scenarios/outage.yaml --listen 127.0.0.1:9090 --no-faults --admin`,
		Args: argsExactly(1, "one scenario FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			o.seedSet = seedGiven(cmd)
			for _, name := range []string{"max-conns", "max-faults", "max-fault-duration"} {
				if v := cmd.Flags().Lookup(name); v.Changed && (v.Value.String() == "0" || v.Value.String() == "0s") {
					return usageError{fmt.Errorf("--%s must be > 0, got %s", name, v.Value)}
				}
			}
			return runF(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to listen on, host:port (loopback by default; :PORT listens on every interface)")
	addSetFlag(cmd, &o.sets, "override a scenario field by its YAML path, e.g. backend.workers=20 (repeatable)")
	addSeedFlag(f, &o.seed, 0, "seed of the service-time draws (default: the scenario's seed)")
	f.BoolVar(&o.noFaults, "no-faults", false, "leave out the scenario's faults (start them through POST /admin/faults with --admin)")
	f.BoolVar(&o.admin, "admin", false, "turn on POST /admin/faults, guarded by a bearer token")
	f.StringVar(&o.adminToken, "admin-token", "", "the admin endpoint's bearer token (default: $THROTTLESIM_ADMIN_TOKEN, else one generated and printed on stderr)")
	f.IntVar(&o.maxConns, "max-conns", server.DefaultMaxConns, "cap on open connections; those beyond it are reset and counted (throttlesim_server_connections_refused_total)")
	f.IntVar(&o.maxFaults, "max-faults", server.DefaultMaxFaults, "admin: most faults pending or in progress at once")
	f.DurationVar(&o.maxFaultDuration, "max-fault-duration", server.DefaultMaxFaultDuration, "admin: longest fault, latest start and longest slowed service time")
	return cmd
}

func runServe(ctx context.Context, e *env, o *serveOptions) error {
	sc, err := loadScenario(e, o.file, o.sets)
	if err != nil {
		return err
	}
	switch { // the flags' defaults are the server's; 0 in code means them too
	case o.maxConns < 0:
		return usageError{fmt.Errorf("--max-conns must be >= 1, got %d", o.maxConns)}
	case o.maxFaults < 0:
		return usageError{fmt.Errorf("--max-faults must be >= 1, got %d", o.maxFaults)}
	case o.maxFaultDuration < 0:
		return usageError{fmt.Errorf("--max-fault-duration must be > 0, got %s", o.maxFaultDuration)}
	}
	opt := server.Options{NoSchedule: o.noFaults, MaxFaults: o.maxFaults, MaxFaultDuration: o.maxFaultDuration}
	if o.adminToken != "" && !o.admin {
		return usageError{errors.New("--admin-token without --admin: the admin endpoint is off")}
	}
	if o.admin {
		tok, generated := o.adminToken, false
		if tok == "" {
			tok = os.Getenv("THROTTLESIM_ADMIN_TOKEN")
		}
		if tok == "" {
			var b [16]byte
			if _, err := rand.Read(b[:]); err != nil {
				return err
			}
			tok, generated = hex.EncodeToString(b[:]), true
		}
		opt.AdminToken = tok
		if generated {
			fmt.Fprintf(e.stderr, "serve: admin token (Authorization: Bearer …): %s\n", tok)
		}
	}
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
	if everyInterface(ln.Addr()) {
		fmt.Fprintf(e.stderr, "serve: warning: listening on every interface (%s); anyone who can reach this port can send load\n", ln.Addr())
	}
	srv.Start()
	if !e.quiet {
		admin := "admin endpoint off (--admin)"
		if o.admin {
			admin = "faults at POST /admin/faults (bearer token)"
		}
		fmt.Fprintf(e.stdout, "serving %s on http://%s: %d workers, capacity %.0f req/s, %d fault(s) scheduled; metrics at /metrics, %s\n",
			sc.Name, ln.Addr(), sc.Backend.Workers, sc.Capacity(), len(sc.Faults)*b2i(!o.noFaults), admin)
	}
	if o.ready != nil {
		o.ready(ln.Addr().String())
	}
	lim := server.DefaultLimits()
	if o.maxConns > 0 {
		lim.MaxConns = o.maxConns
	}
	hs, done := srv.Serve(ln, lim)
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
	return err
}

// everyInterface reports whether a listens on an unspecified address
// (every interface), not loopback or one chosen address.
func everyInterface(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsUnspecified()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
