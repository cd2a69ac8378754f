package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/rundir"
)

// Options of an execution.
type Options struct {
	Jobs          int // parallel runs; < 1 means 1
	Shard, Shards int // run only the runs with index % Shards == Shard (Shards 0: all)
	Build         rundir.Build
	// Start, if set, is called once, before the first run, with the runs
	// of this execution that a resumed sweep finds done (their folders
	// hold a run key: they are checked, not run again) and the runs left
	// to simulate.
	Start func(done, left int)
	// Progress is called after every run this execution simulates, with
	// the number simulated so far and the number it had left (Start's
	// left): runs found done are not counted, so a progress bar's rate
	// and time to go are those of real runs. Calls are serialised.
	Progress func(done, total int)
}

// RunDir is the folder of one run inside a sweep folder.
func RunDir(dir string, r RunSpec) string {
	return filepath.Join(dir, "runs", fmt.Sprintf("p%03d-r%03d", r.Point, r.Rep))
}

const keyFile = "key.txt"

// ErrChanged says a folder holds results of another sweep.
var ErrChanged = errors.New("the folder holds results of a different scenario or model version")

// WritePlan writes sweep.json, or checks that an existing one is the same
// plan (a resumed sweep must not mix results).
func WritePlan(dir string, p *Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	path := filepath.Join(dir, "sweep.json")
	if old, err := os.ReadFile(path); err == nil {
		if string(old) != string(b) {
			return fmt.Errorf("%s: %w (sweep.json differs); use another --out, or delete the folder", dir, ErrChanged)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return resultdir.WriteFile(path, b)
}

// ReadPlan reads a sweep folder's sweep.json.
func ReadPlan(dir string) (*Plan, error) {
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		return nil, fmt.Errorf("%s: not a sweep folder: %w", dir, err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s/sweep.json: %w", dir, err)
	}
	return &p, nil
}

// Execute runs the plan's runs (its shard's share) into dir/runs, skipping
// every run whose folder already holds the result of the same key (a
// resumed sweep). A run folder with another key is an error: results are
// never mixed.
func Execute(ctx context.Context, p *Plan, dir string, o Options) error {
	var todo []RunSpec
	for _, r := range p.Runs() {
		if o.Shards > 0 && r.Index%o.Shards != o.Shard {
			continue
		}
		todo = append(todo, r)
	}
	found := 0
	for _, r := range todo {
		if _, err := os.Stat(filepath.Join(RunDir(dir, r), keyFile)); err == nil {
			found++
		}
	}
	left := len(todo) - found
	if o.Start != nil {
		o.Start(found, left)
	}
	jobs := max(o.Jobs, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan RunSpec)
	var mu sync.Mutex
	var firstErr error
	done := 0
	report := func(ran bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
			cancel()
		}
		if err == nil && ran {
			done++
			if o.Progress != nil {
				o.Progress(done, left)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				report(runOne(ctx, p, dir, r, o.Build))
			}
		}()
	}
feed:
	for _, r := range todo {
		select {
		case work <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// runOne simulates run r into its folder, or finds it done there (ran
// false).
func runOne(ctx context.Context, p *Plan, dir string, r RunSpec, b rundir.Build) (ran bool, err error) {
	sc, err := p.Resolve(r.Point, r.Seed)
	if err != nil {
		return false, err
	}
	key := Key(sc, r.Rep)
	rd := RunDir(dir, r)
	if old, err := os.ReadFile(filepath.Join(rd, keyFile)); err == nil {
		if string(old) == key+"\n" {
			return false, nil // done before: resume
		}
		return false, fmt.Errorf("%s: %w (run key %s, now %s)", rd, ErrChanged, old[:len(old)-1], key)
	}
	res, err := sim.Run(ctx, sc, sim.Options{})
	if err != nil {
		return false, err
	}
	csv, err := rundir.TimeseriesCSV(res)
	if err != nil {
		return false, err
	}
	js, err := rundir.Run{Result: res}.SummaryJSON(b)
	if err != nil {
		return false, err
	}
	return true, resultdir.Write(rd, []resultdir.File{
		{Name: rundir.TimeseriesFile, Data: csv},
		{Name: rundir.SummaryFile, Data: js},
		{Name: keyFile, Data: []byte(key + "\n")}, // last: the run is complete
	})
}
