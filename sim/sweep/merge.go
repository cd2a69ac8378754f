package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
)

// Merge gathers the runs of the shards of one sweep (sweep --shard i/n)
// into dir, which it empties first: sweep.json and every run folder,
// byte for byte, each run folder checked against the plan first
// (Plan.CheckRun: a folder holding another run is refused, named). Every shard must hold the same sweep.json and together
// they must hold every run. It returns the plan; the caller aggregates.
func Merge(shards []string, dir string) (*Plan, error) {
	var plan *Plan
	var planBytes []byte
	for _, d := range shards {
		b, err := os.ReadFile(filepath.Join(d, "sweep.json"))
		if err != nil {
			if _, ierr := os.Stat(filepath.Clean(d) + ".incomplete"); ierr == nil {
				return nil, fmt.Errorf("%s: the shard is unfinished: %s.incomplete holds its finished runs; continue it with --resume", d, filepath.Clean(d))
			}
			return nil, fmt.Errorf("%s: not a sweep shard: %w", d, err)
		}
		if planBytes == nil {
			planBytes = b
			if plan, err = ReadPlan(d); err != nil {
				return nil, err
			}
		} else if string(b) != string(planBytes) {
			return nil, fmt.Errorf("%s: a shard of a different sweep (sweep.json differs from %s's)", d, shards[0])
		}
	}
	if err := checkShardSet(shards); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return nil, err
	}
	if err := resultdir.WriteFile(filepath.Join(dir, "sweep.json"), planBytes); err != nil {
		return nil, err
	}
	for _, r := range plan.Runs() {
		var src string
		for _, d := range shards {
			if _, err := os.Stat(filepath.Join(RunDir(d, r), keyFile)); err == nil {
				src = RunDir(d, r)
				break
			}
		}
		if src == "" {
			return nil, fmt.Errorf("run %s is in none of the shards: is a shard missing or unfinished?", filepath.Base(RunDir("", r)))
		}
		var files []resultdir.File
		for _, n := range []string{rundir.TimeseriesFile, rundir.SummaryFile, keyFile} {
			b, err := os.ReadFile(filepath.Join(src, n))
			if err != nil {
				return nil, err
			}
			files = append(files, resultdir.File{Name: n, Data: b})
		}
		doc, err := rundir.ReadSummary(src)
		if err != nil {
			return nil, err
		}
		if err := plan.CheckRun(src, r, files[2].Data, doc); err != nil {
			return nil, err
		}
		if err := resultdir.Write(RunDir(dir, r), files); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// checkShardSet names the shards missing from a set whose folders all say
// which shard of how many they are (shard.json, written by --shard i/n),
// and refuses shards of different counts.
func checkShardSet(dirs []string) error {
	type shardDoc struct{ Shard, Shards int }
	n := 0
	have := map[int]bool{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "shard.json"))
		if err != nil {
			return nil // not every folder is a shard: the run check below decides
		}
		var s shardDoc
		if err := json.Unmarshal(b, &s); err != nil || s.Shards < 1 || s.Shard < 0 || s.Shard >= s.Shards {
			return fmt.Errorf("%s: shard.json is not {\"shard\": i, \"shards\": n} with 0 <= i < n", d)
		}
		if n != 0 && s.Shards != n {
			return fmt.Errorf("%s: shard %d of %d, but %s is one of %d: shards of differently split sweeps", d, s.Shard, s.Shards, dirs[0], n)
		}
		n = s.Shards
		have[s.Shard] = true
	}
	return MissingShards(n, func(i int) bool { return have[i] }, len(dirs))
}

// MissingShards names the shards of 0..n-1 that have is false for, of a
// merge given `given` folders; nil when none is missing.
func MissingShards(n int, have func(int) bool, given int) error {
	var missing []string
	for i := range n {
		if !have(i) {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("shard %s of %d is missing: give every shard's folder (%d given)", missing[0], n, given)
	case len(missing) > 1:
		return fmt.Errorf("shards %s of %d are missing: give every shard's folder (%d given)", strings.Join(missing, ", "), n, given)
	}
	return nil
}
