package sweep

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/resultdir"
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
		for _, n := range []string{"timeseries.csv", "summary.json", keyFile} {
			b, err := os.ReadFile(filepath.Join(src, n))
			if err != nil {
				return nil, err
			}
			files = append(files, resultdir.File{Name: n, Data: b})
		}
		doc, err := sim.ReadSummary(src)
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
