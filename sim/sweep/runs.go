package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stats"
)

// RunData is one finished run, read back from its folder.
type RunData struct {
	Spec   RunSpec
	Key    string
	Doc    *rundir.SummaryDoc
	Series *metrics.Series
}

// PointData is every run of one point.
type PointData struct {
	Label string
	Runs  []RunData
}

// Stat is the mean of N values with its standard deviation and 95%
// confidence interval (package stats, where it is computed).
type Stat = stats.Stat

// Describe computes a Stat of every value of xs (stats.Describe).
func Describe(xs []float64) Stat { return stats.Describe(xs) }

// LoadRuns reads every run of the plan from dir, checking that each run
// folder holds the run the plan says it does (see CheckRun). It stops with
// ctx's error when ctx ends (an interrupted aggregation).
func LoadRuns(ctx context.Context, dir string, p *Plan) ([]PointData, error) {
	return loadRuns(ctx, dir, p, true, nil)
}

// LoadRunsEach reads every run of the plan like LoadRuns, but keeps no
// series: each run's series is given to each, in the order of p.Runs()
// (point by point, replication by replication), and then dropped, so the
// memory held is what each keeps plus the summaries. With each nil the
// series are not read at all (a table of the summaries needs none).
// A sweep of 30,000 runs of 1,200 intervals held 13 GB with LoadRuns.
func LoadRunsEach(ctx context.Context, dir string, p *Plan, each func(point int, run *RunData)) ([]PointData, error) {
	return loadRuns(ctx, dir, p, each != nil, each)
}

func loadRuns(ctx context.Context, dir string, p *Plan, series bool, each func(int, *RunData)) ([]PointData, error) {
	pts := make([]PointData, len(p.Points))
	for i, pt := range p.Points {
		pts[i].Label = pt.Label
	}
	var missing []string
	for _, r := range p.Runs() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rd := RunDir(dir, r)
		key, err := os.ReadFile(filepath.Join(rd, keyFile))
		if err != nil {
			missing = append(missing, filepath.Base(rd))
			continue
		}
		run, err := readRun(rd, series)
		if err != nil {
			return nil, err
		}
		if err := p.CheckRun(rd, r, key, run.Doc); err != nil {
			return nil, err
		}
		run.Spec, run.Key = r, strings.TrimSpace(string(key))
		if each != nil {
			each(r.Point, run)
			run.Series = nil
		}
		pts[r.Point].Runs = append(pts[r.Point].Runs, *run)
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return nil, fmt.Errorf("%s: runs missing: %s%s", dir, strings.Join(missing, ", "), more)
	}
	return pts, nil
}

// ReadRun reads a run results folder (summary.json and timeseries.csv).
func ReadRun(dir string) (*RunData, error) { return readRun(dir, true) }

// readRun reads a run folder's summary.json and, with series,
// its timeseries.csv.
func readRun(dir string, series bool) (*RunData, error) {
	doc, err := rundir.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	if !series {
		return &RunData{Doc: doc}, nil
	}
	ser, err := rundir.ReadTimeseriesFile(dir, doc.Scenario.EntryBackend().TotalWorkers())
	if err != nil {
		return nil, err
	}
	return &RunData{Doc: doc, Series: ser}, nil
}

// CheckRun checks that the run folder rd holds run r of the plan, and
// names every mismatch:
//   - key.txt is the key of the scenario in its summary.json (the two
//     files are of one run);
//   - that scenario carries r's seed, and the point's overrides (--set and
//     the point's own) change nothing in it: a summary copied from another
//     point differs in the varied field, so applying this point's value
//     changes its key;
//   - when the plan knows the scenario file (a plan made by NewPlan, not
//     one read back from sweep.json), key.txt is r's key itself.
func (p *Plan) CheckRun(rd string, r RunSpec, keyTxt []byte, doc *rundir.SummaryDoc) error {
	var bad []string
	key := strings.TrimSpace(string(keyTxt))
	if p.data != nil {
		sc, err := p.Resolve(r.Point, r.Seed)
		if err != nil {
			return err
		}
		if want := Key(sc, r.Rep); key != want {
			bad = append(bad, fmt.Sprintf("key.txt %s, the plan's key %s", key, want))
		}
	}
	if doc.Scenario == nil {
		bad = append(bad, "summary.json has no scenario")
	} else {
		got := Key(doc.Scenario, r.Rep)
		if got != key {
			bad = append(bad, fmt.Sprintf("summary.json is of another run than key.txt (its scenario's key %s, key.txt %s)", got, key))
		}
		if doc.Scenario.Seed != r.Seed {
			bad = append(bad, fmt.Sprintf("summary.json's seed %d, the plan's %d", doc.Scenario.Seed, r.Seed))
		}
		sets := append(append([]string{}, p.BaseSets...), p.Points[r.Point].Sets...)
		if len(sets) > 0 {
			b, err := json.Marshal(doc.Scenario)
			if err != nil {
				return err
			}
			// Named beside the scenario file when the plan knows it: a data
			// file the scenario names (a trace) is relative to its folder.
			name := filepath.Join(rd, "summary.json")
			if p.File != "" {
				name = filepath.Join(filepath.Dir(p.File), "summary.json of "+filepath.Base(rd))
			}
			sc, err := scenario.Parse(b, name, sets)
			if err != nil {
				bad = append(bad, fmt.Sprintf("the point's overrides do not apply to summary.json's scenario: %v", err))
			} else if sc.Seed, sc.Sweep = doc.Scenario.Seed, nil; Key(sc, r.Rep) != got {
				bad = append(bad, fmt.Sprintf("summary.json's scenario is not point %q's (%s changes it)", p.Points[r.Point].Label, strings.Join(sets, " ")))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("sweep: %s does not hold run %s of the plan: %s", rd, filepath.Base(rd), strings.Join(bad, "; "))
	}
	return nil
}
