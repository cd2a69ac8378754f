package main

// A map or a tune in rounds, for batch engines (issue: adaptive searches
// beyond one machine). The search is sequential, so a cluster runs it as a
// chain of two alternating jobs sharing <out>.incomplete:
//
//	--next-round       replays the search on the kept runs: complete, it
//	                   writes the results (exit 0); otherwise it writes
//	                   the runs it needs next to round.json (exit 10).
//	--round-shard i/n  runs share i of n of round.json's runs and keeps them.
//
// explore.NextRuns finds the runs a search needs next as a pure function of
// the runs kept, so the final results are the bytes of the same search run
// on one machine. round.json is written by one job between rounds and only
// read by the shards, so shards that start late, or again, all run the
// same round.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

// exitMoreRounds is --next-round's "the search needs another round".
const exitMoreRounds = 10

const roundFile = "round.json"

type roundOptions struct {
	next  bool
	shard string
}

// roundFlags are not inputs of a search: every job of a chain differs in
// them and they must not make resume.json differ.
var roundFlags = map[string]bool{"next-round": true, "round-shard": true}

func addRoundFlags(f *pflag.FlagSet, o *roundOptions, what string) {
	f.BoolVar(&o.next, "next-round", false, "for batch engines: replay the "+what+" on the runs kept in <out>.incomplete; if it is complete write its results, else write the runs it needs next (round.json) and exit 10 (docs/sweeps.md)")
	f.StringVar(&o.shard, "round-shard", "", "for batch engines: run share i of n (i/n, or auto) of the runs the last --next-round asked for, and keep them")
}

type roundPlan struct {
	Round int               `json:"round"`
	Kept  int               `json:"kept"`
	Runs  []explore.Variant `json:"runs"`
}

// check refuses what rounds cannot do.
func (o roundOptions) check(resume bool, others map[string]bool) error {
	if o.next && o.shard != "" {
		return usageError{errors.New("--next-round and --round-shard are two jobs of a chain: give one")}
	}
	if !o.next && o.shard == "" {
		return nil
	}
	if resume {
		return usageError{errors.New("--resume with --next-round or --round-shard: the rounds always continue from the kept runs")}
	}
	for name, set := range others {
		if set {
			return usageError{fmt.Errorf("%s with --next-round or --round-shard: not available in rounds", name)}
		}
	}
	return nil
}

// known reads the runs kept in k's folder.
func (k *keeper) known(v explore.Variant) (explore.Figures, bool, error) {
	key, _ := runKey(v)
	return readKept(filepath.Join(k.dir, "runs", key+".json"), v)
}

// ensure makes the kept-runs folder with its resume.json, as keep does at
// the first run.
func (k *keeper) ensure() error {
	if err := os.MkdirAll(filepath.Join(k.dir, "runs"), 0o755); err != nil {
		return err
	}
	return resultdir.WriteFile(filepath.Join(k.dir, keepPlanFile), k.plan)
}

// searchRound does --next-round or --round-shard. With finish true the
// caller goes on to write the results: the search needs no more runs.
func searchRound(ctx context.Context, e *env, o roundOptions, k *keeper, eval explore.Eval, jobs int, quiet bool,
	search func(ctx context.Context, eval explore.Eval) error) (finish bool, err error) {
	path := filepath.Join(k.dir, roundFile)
	if o.shard != "" {
		shard, shards, err := parseShard(o.shard)
		if err != nil {
			return false, err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("%s: no round planned: run the same command with --next-round first", k.dir)
		} else if err != nil {
			return false, err
		}
		var p roundPlan
		if err := json.Unmarshal(b, &p); err != nil {
			return false, fmt.Errorf("%s: %v", path, err)
		}
		n, err := explore.RunShare(ctx, k.wrap(eval), p.Runs, shard, shards, jobs)
		if err != nil {
			if ctx.Err() != nil {
				return false, k.interrupted(e)
			}
			return false, err
		}
		if !quiet {
			fmt.Fprintf(e.stdout, "round %d: shard %d/%d ran its %d of the round's %d runs; %d runs kept in all\n", p.Round, shard, shards, n, len(p.Runs), k.count())
		}
		return false, nil
	}
	need, err := explore.NextRuns(ctx, k.known, func(ctx context.Context) error { return search(ctx, nil) })
	if err != nil {
		if ctx.Err() != nil {
			return false, k.interrupted(e)
		}
		return false, err
	}
	if len(need) == 0 {
		return true, nil
	}
	prev := 0
	if b, err := os.ReadFile(path); err == nil {
		var p roundPlan
		if json.Unmarshal(b, &p) == nil {
			prev = p.Round
		}
	}
	for i := range need {
		if need[i].Sets == nil {
			need[i].Sets = []string{}
		}
	}
	p := roundPlan{Round: prev + 1, Kept: k.count(), Runs: need}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return false, err
	}
	if err := k.ensure(); err != nil {
		return false, err
	}
	if err := resultdir.WriteFile(path, append(b, '\n')); err != nil {
		return false, err
	}
	if !quiet {
		fmt.Fprintf(e.stdout, "round %d: the %s needs %d more runs (%d kept); run them with --round-shard i/n, then --next-round again\n", p.Round, k.command, len(need), p.Kept)
	}
	return false, reportedError{exitMoreRounds}
}
