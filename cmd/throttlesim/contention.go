package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/occ"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// contentionOptions are contention's flags, as given (clients,
// strategies) and as parsed (counts, strats).
type contentionOptions struct {
	force                    bool // replace an existing results folder
	out, clients, strategies string
	runs                     int
	seed                     uint64
	counts                   []int
	strats                   []string
}

// newContentionCmd builds `throttlesim contention`; runF replaces the run
// function in tests (nil: the real one).
func newContentionCmd(e *env, runF func(context.Context, *env, *contentionOptions) error) *cobra.Command {
	o := &contentionOptions{}
	if runF == nil {
		runF = contentionRun
	}
	cmd := &cobra.Command{
		Use:   "contention",
		Short: "Brooker's backoff experiment: clients contending on one row (optimistic concurrency)",
		Long: `Contention reproduces the experiment of Marc Brooker's "Exponential Backoff
And Jitter" (AWS Architecture Blog, 2015): each of N clients updates one
versioned row once, and a stale write retries after its backoff. For every
client count and strategy it averages --runs runs and writes
contention.csv, contention.md, two charts and contention.json into --out.
It is a model of its own (sim/occ), not a scenario backend kind.
An existing results folder is refused unless --force replaces it.

More: docs/cli.md, "throttlesim contention" (the model's constants).`,
		Example: `  throttlesim contention
  throttlesim contention --clients 10,50,100 --runs 30 --strategies none,full`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns, err := parseClients(o.clients)
			if err != nil {
				return usageError{err}
			}
			ss := strings.Split(o.strategies, ",")
			for _, s := range ss {
				if !contains(occ.Strategies, s) {
					return usageError{fmt.Errorf("--strategies: unknown strategy %q (want some of %s)", s, strings.Join(occ.Strategies, ","))}
				}
			}
			if o.runs < 1 {
				return usageError{fmt.Errorf("--runs must be at least 1, got %d", o.runs)}
			}
			o.counts, o.strats = ns, ss
			return runF(cmd.Context(), e, o)
		},
	}
	addOutFlag(cmd, &o.out, filepath.Join("results", "contention"), "results folder")
	addForceFlag(cmd.Flags(), &o.force)
	cmd.Flags().StringVar(&o.clients, "clients", "10:190:20", "client counts: a list (10,50,100) or a range FROM:TO:STEP")
	cmd.Flags().StringVar(&o.strategies, "strategies", strings.Join(occ.Strategies, ","), "backoff strategies to compare")
	cmd.Flags().IntVar(&o.runs, "runs", 100, "runs averaged per point (seeds seed, seed+1, ...)")
	addSeedFlag(cmd.Flags(), &o.seed, 1, "first seed")
	return cmd
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxContenders bounds a point: without backoff the work grows as N², so
// 5,000 clients already take about 2.5 s per run.
const maxContenders = 5000

func parseClients(s string) ([]int, error) {
	bad := func() error {
		return fmt.Errorf("--clients %q: want a list of counts from 1 to %d (10,50,100) or FROM:TO:STEP (10:190:20)", s, maxContenders)
	}
	if parts := strings.Split(s, ":"); len(parts) == 3 {
		var v [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || (i < 2 && n > maxContenders) {
				return nil, bad()
			}
			v[i] = n
		}
		if v[1] < v[0] || (v[1]-v[0])/v[2] > 1000 {
			return nil, bad()
		}
		var out []int
		for n := v[0]; n <= v[1]; n += v[2] {
			out = append(out, n)
		}
		return out, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 1000 {
		return nil, bad()
	}
	var out []int
	for _, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > maxContenders {
			return nil, bad()
		}
		out = append(out, n)
	}
	return out, nil
}

func contentionRun(ctx context.Context, e *env, o *contentionOptions) error {
	clients, strategies, runs, seed, out := o.counts, o.strats, o.runs, o.seed, filepath.Clean(o.out)
	if err := checkOut(out, o.force); err != nil {
		return err
	}
	// Cells in the order of the table: client count, then strategy.
	var cells []report.ContentionCell
	for _, n := range clients {
		for _, s := range strategies {
			rs, err := occ.Runs(ctx, occ.Brooker(n, s, seed), runs)
			if ctx.Err() != nil {
				// Nothing is written: the previous results folder stays as it was.
				return fmt.Errorf("contention experiment %w; %s left unchanged", errInterrupted, out)
			}
			if err != nil {
				return err
			}
			cells = append(cells, report.ContentionCell{Clients: n, Strategy: s, Runs: runs,
				Writes: sweep.Describe(occ.Writes(rs)), CompletionMS: sweep.Describe(occ.CompletionMS(rs))})
		}
	}
	csv, err := report.ContentionCSV(cells)
	if err != nil {
		return err
	}
	md := report.ContentionMarkdown(strategies, cells)
	writes, times := report.ContentionSeries(strategies, cells)
	wpng, err := plots.Contention(fmt.Sprintf("Work: server write calls (mean of %d runs, 95%% CI)", runs), "write calls per experiment", writes)
	if err != nil {
		return err
	}
	tpng, err := plots.Contention(fmt.Sprintf("Time until every client has written (mean of %d runs)", runs), "completion time (s)", times)
	if err != nil {
		return err
	}
	manifest, _ := json.MarshalIndent(map[string]any{
		"experiment": "occ contention (Brooker 2015)", "clients": clients, "strategies": strategies,
		"runs": runs, "seed": seed, "base": "5ms", "cap": "2s", "network": "|N(10ms, 2ms)| per hop",
		"version": version,
	}, "", "  ")
	files := []resultdir.File{
		{Name: "contention.csv", Data: csv},
		{Name: "contention.md", Data: md},
		{Name: rundir.ContentionFile, Data: append(manifest, '\n')},
		{Name: "contention_writes.png", Data: wpng},
		{Name: "contention_time.png", Data: tpng},
	}
	if err := resultdir.Write(out, files); err != nil {
		return err
	}
	e.stdout.Write(md)
	fmt.Fprintf(e.stdout, "results: %s%c\n", out, filepath.Separator)
	return nil
}
