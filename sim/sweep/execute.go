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
)

// Options of an execution.
type Options struct {
	Jobs          int // parallel runs; < 1 means 1
	Shard, Shards int // run only the runs with index % Shards == Shard (Shards 0: all)
	Build         sim.Build
	// Progress is called after every finished (or skipped) run with the
	// number done and the number this execution has to do. Calls are
	// serialised.
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
	jobs := max(o.Jobs, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan RunSpec)
	var mu sync.Mutex
	var firstErr error
	done := 0
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
			cancel()
		}
		if err == nil {
			done++
			if o.Progress != nil {
				o.Progress(done, len(todo))
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

func runOne(ctx context.Context, p *Plan, dir string, r RunSpec, b sim.Build) error {
	sc, err := p.Resolve(r.Point, r.Seed)
	if err != nil {
		return err
	}
	key := Key(sc, r.Rep)
	rd := RunDir(dir, r)
	if old, err := os.ReadFile(filepath.Join(rd, keyFile)); err == nil {
		if string(old) == key+"\n" {
			return nil // done before: resume
		}
		return fmt.Errorf("%s: %w (run key %s, now %s)", rd, ErrChanged, old[:len(old)-1], key)
	}
	res, err := sim.Run(ctx, sc, sim.Options{})
	if err != nil {
		return err
	}
	csv, err := res.TimeseriesCSV()
	if err != nil {
		return err
	}
	js, err := res.SummaryJSON(b)
	if err != nil {
		return err
	}
	return resultdir.Write(rd, []resultdir.File{
		{Name: "timeseries.csv", Data: csv},
		{Name: "summary.json", Data: js},
		{Name: keyFile, Data: []byte(key + "\n")}, // last: the run is complete
	})
}
