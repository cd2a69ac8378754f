package sweep

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

const small = `name: tiny
duration: 60s
clients:
  count: 200
  arrival: {total_rate: 60/s}
  timeout: 1s
  throttle: {k: 2}
  retry: {max_attempts: 3}
backend: {workers: 10, queue: {limit: 20}, reject_cost: 5ms}
faults:
  - {kind: outage, start: 20s, duration: 10s}
sweep:
  vary:
    - {path: clients.throttle.k, values: [1.5, 3]}
  points:
    - {label: no throttle, set: ["clients.throttle=null"]}
  seeds: 3
`

func plan(t *testing.T, o PlanOptions) *Plan {
	t.Helper()
	p, err := NewPlan("tiny.yaml", []byte(small), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanPointsAndSeeds(t *testing.T) {
	p := plan(t, PlanOptions{})
	var labels []string
	for _, pt := range p.Points {
		labels = append(labels, pt.Label)
	}
	if got := strings.Join(labels, "|"); got != "k=1.5|k=3|no throttle" {
		t.Errorf("points %q", got)
	}
	runs := p.Runs()
	if len(runs) != 9 {
		t.Fatalf("%d runs, want 3 points x 3 seeds", len(runs))
	}
	// Common random numbers: replication r has seed base + r at every point.
	for _, r := range runs {
		if r.Seed != 1+uint64(r.Rep) {
			t.Errorf("run %d (point %d rep %d): seed %d, want %d", r.Index, r.Point, r.Rep, r.Seed, 1+r.Rep)
		}
	}
	// Independent seeds: all distinct, and stable (part of the result format).
	ind := plan(t, PlanOptions{Independent: true}).Runs()
	seen := map[uint64]bool{}
	for _, r := range ind {
		if seen[r.Seed] {
			t.Errorf("independent seed %d repeats", r.Seed)
		}
		seen[r.Seed] = true
	}
	if again := plan(t, PlanOptions{Independent: true}).Runs(); again[4].Seed != ind[4].Seed {
		t.Error("independent seeds are not stable")
	}
	// --vary replaces the file's vary; a grid of two fields.
	g := plan(t, PlanOptions{Vary: []string{"clients.throttle.k=1.1,2", "clients.throttle.window=30s,2m"}})
	if len(g.Points) != 5 || g.Points[1].Label != "k=1.1, window=2m" {
		t.Errorf("grid points: %+v", g.Points)
	}
}

func TestBadVaryIsAClearError(t *testing.T) {
	tests := []struct {
		vary string
		want []string
	}{
		{"clients.throtle.k=1,2", []string{`unknown field "throtle"`, `did you mean "throttle"`, "valid fields here"}},
		{"clients.throttle.scope=pod", []string{`"pod" is not one of client, group`}},
		{"clients.throttle.k=abc", []string{"clients.throttle.k", `expected a number, got "abc"`}},
		{"clients.throttle.k", []string{"expected path=v1,v2"}},
		// Bounded as sweep.vary in a scenario: the path and values label the points.
		{strings.Repeat("p", scenario.MaxLabelLen+1) + "=1", []string{"the path is 101 characters long; at most 100"}},
		{"clients.throttle.k=2," + strings.Repeat("9", scenario.MaxValueLen+1), []string{"--vary clients.throttle.k: value 2 is 1001 characters long; at most 1000"}},
	}
	for _, tt := range tests {
		_, err := NewPlan("tiny.yaml", []byte(small), PlanOptions{Vary: []string{tt.vary}})
		if err == nil {
			t.Errorf("--vary %s: no error", tt.vary)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("--vary %s: error %q does not say %q", tt.vary, err, w)
			}
		}
	}
}

// Confidence intervals against values computed by hand: for {1, 2, 3, 4}
// the mean is 2.5, the sample sd sqrt(5/3) = 1.290994, and Student's t with
// 3 degrees of freedom at 0.975 is 3.182446, so the half-width is
// 3.182446 × 1.290994 / 2 = 2.054261.
func TestDescribe(t *testing.T) {
	s := Describe([]float64{1, 2, 3, 4})
	for _, c := range []struct{ name, got, want float64 }{
		{0, s.Mean, 2.5}, {0, s.SD, 1.290994}, {0, s.Hi - s.Mean, 2.054261}, {0, s.Mean - s.Lo, 2.054261},
	} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("got %.6f, want %.6f", c.got, c.want)
		}
	}
	// Two values: t(1) = 12.7062; {10, 12}: sd sqrt(2), half-width 12.7062.
	if s := Describe([]float64{10, 12}); math.Abs(s.Hi-s.Mean-12.706205) > 1e-5 {
		t.Errorf("n=2 half-width %.6f, want 12.706205", s.Hi-s.Mean)
	}
	if s := Describe([]float64{7}); s.Mean != 7 || !math.IsNaN(s.Lo) {
		t.Errorf("n=1: %+v", s)
	}
	if s := Describe(nil); s.N != 0 || !math.IsNaN(s.Mean) {
		t.Errorf("n=0: %+v", s)
	}
}

func execute(t *testing.T, dir string, p *Plan, o Options) {
	t.Helper()
	if err := WritePlan(dir, p); err != nil {
		t.Fatal(err)
	}
	if err := Execute(context.Background(), p, dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRuns(context.Background(), dir, p); err != nil {
		t.Fatal(err)
	}
}

// files maps every file under dir to its bytes.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		m[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameFiles(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d files vs %d", len(a), len(b))
	}
	for n, x := range a {
		if y, ok := b[n]; !ok {
			t.Errorf("%s missing", n)
		} else if !bytes.Equal(x, y) {
			t.Errorf("%s differs", n)
		}
	}
}

func TestSameBytesWhateverJobs(t *testing.T) {
	p := plan(t, PlanOptions{})
	a, b := t.TempDir(), t.TempDir()
	execute(t, a, p, Options{Jobs: 1})
	execute(t, b, p, Options{Jobs: 2})
	fa := files(t, a)
	if len(fa) != 9*3+1 { // three files per run, and sweep.json
		t.Fatalf("only %d files", len(fa))
	}
	sameFiles(t, fa, files(t, b))
}

// A sweep killed after a few runs and resumed gives the same bytes as one
// that ran through, and the resumed part does only the missing runs.
func TestResumeAfterInterruption(t *testing.T) {
	p := plan(t, PlanOptions{})
	whole := t.TempDir()
	execute(t, whole, p, Options{Jobs: 2})

	dir := t.TempDir()
	if err := WritePlan(dir, p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := Execute(ctx, p, dir, Options{Jobs: 1, Progress: func(done, _ int) {
		if done == 4 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep: got %v", err)
	}
	left := 0
	resumed := 0
	for _, r := range p.Runs() {
		if _, err := os.Stat(filepath.Join(RunDir(dir, r), keyFile)); err != nil {
			left++
		}
	}
	if left == 0 || left == 9 {
		t.Fatalf("%d of 9 runs left after the interruption", left)
	}
	// The resumed execution says how many runs it found done and how many
	// are left before it starts, and counts only the runs it simulates:
	// a progress bar's rate and time to go are then those of real runs.
	started, startLeft, total := -1, -1, -1
	execute(t, dir, p, Options{Jobs: 2,
		Start:    func(done, left int) { started, startLeft = done, left },
		Progress: func(done, n int) { resumed, total = done, n }})
	if started != 9-left || startLeft != left {
		t.Errorf("Start(%d, %d), want Start(%d, %d): the runs found done and those left", started, startLeft, 9-left, left)
	}
	if resumed != left || total != left {
		t.Errorf("progress counted %d of %d runs, want %d of %d: only the runs simulated", resumed, total, left, left)
	}
	sameFiles(t, files(t, whole), files(t, dir))
}

func TestResumeRefusesAChangedScenario(t *testing.T) {
	p := plan(t, PlanOptions{})
	dir := t.TempDir()
	execute(t, dir, p, Options{Jobs: 2})
	changed := plan(t, PlanOptions{Sets: []string{"backend.workers=11"}})
	if err := WritePlan(dir, changed); !errors.Is(err, ErrChanged) {
		t.Errorf("sweep.json of another plan: got %v, want ErrChanged", err)
	}
	// Even with sweep.json bypassed, every run folder checks its key.
	err := Execute(context.Background(), changed, dir, Options{Jobs: 1})
	if !errors.Is(err, ErrChanged) {
		t.Errorf("runs of another scenario: got %v, want ErrChanged", err)
	}
}

// With common random numbers replication r of every point uses the same
// seed: the same arrivals.
func TestCommonRandomNumbers(t *testing.T) {
	p := plan(t, PlanOptions{})
	dir := t.TempDir()
	execute(t, dir, p, Options{Jobs: 2})
	pts, err := LoadRuns(context.Background(), dir, p)
	if err != nil {
		t.Fatal(err)
	}
	for r := range pts[0].Runs {
		if pts[0].Runs[r].Doc.Run.Arrivals != pts[2].Runs[r].Doc.Run.Arrivals {
			t.Errorf("replication %d: arrivals %d vs %d under common random numbers", r, pts[0].Runs[r].Doc.Run.Arrivals, pts[2].Runs[r].Doc.Run.Arrivals)
		}
	}
}

// Shards merged give the folder an unsharded execution gives, byte for
// byte; a missing shard is an error naming a missing run.
func TestMergeShards(t *testing.T) {
	p := plan(t, PlanOptions{})
	whole := t.TempDir()
	execute(t, whole, p, Options{Jobs: 2})
	var shards []string
	for i := 0; i < 2; i++ {
		d := t.TempDir()
		if err := WritePlan(d, p); err != nil {
			t.Fatal(err)
		}
		if err := Execute(context.Background(), p, d, Options{Jobs: 1, Shard: i, Shards: 2}); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if _, err := Merge(shards, merged); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, files(t, whole), files(t, merged))
	_, err := Merge(shards[:1], filepath.Join(t.TempDir(), "half"))
	if err == nil || !strings.Contains(err.Error(), "is in none of the shards") {
		t.Errorf("one shard of two: got %v, want a missing-run error", err)
	}
}

// swap exchanges one file of two run folders, as a hand edit might.
func swap(t *testing.T, a, b, name string) {
	t.Helper()
	pa, pb := filepath.Join(a, name), filepath.Join(b, name)
	da, err := os.ReadFile(pa)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pa, db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, da, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Merge and LoadRuns refuse a run folder that holds another run than the
// plan says, and name it: a summary swapped with another point's (it
// silently moved a mean recovery from 438.5 to 386.5 s in review), a
// whole folder swapped with another point's (key.txt and all: the point's
// override k=1.5 changes the scenario read back), and two seeds of one
// point swapped. Merge reads the plan back from sweep.json, without the
// scenario file, so it checks the folder against itself and the plan's
// overrides and seeds.
func TestMergeRefusesAnotherRunsFolder(t *testing.T) {
	p := plan(t, PlanOptions{})
	runs := p.Runs() // point 0 (k=1.5) and point 1 (k=3), seeds 0..2
	var r00, r10, r01 RunSpec
	for _, r := range runs {
		switch {
		case r.Point == 0 && r.Rep == 0:
			r00 = r
		case r.Point == 1 && r.Rep == 0:
			r10 = r
		case r.Point == 0 && r.Rep == 1:
			r01 = r
		}
	}
	for _, tt := range []struct {
		name  string
		a, b  RunSpec
		files []string
		want  string
	}{
		{"summary of another point", r00, r10, []string{"summary.json"}, "summary.json is of another run than key.txt"},
		{"folder of another point", r00, r10, []string{"summary.json", "timeseries.csv", keyFile}, `is not point "k=1.5"'s`},
		{"folder of another seed", r00, r01, []string{"summary.json", "timeseries.csv", keyFile}, "summary.json's seed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shard := t.TempDir()
			execute(t, shard, p, Options{Jobs: 2})
			for _, f := range tt.files {
				swap(t, RunDir(shard, tt.a), RunDir(shard, tt.b), f)
			}
			_, err := Merge([]string{shard}, filepath.Join(t.TempDir(), "merged"))
			if err == nil || !strings.Contains(err.Error(), RunDir(shard, tt.a)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("merge: got %v, want an error naming %s: %s", err, RunDir(shard, tt.a), tt.want)
			}
			back, err := ReadPlan(shard)
			if err != nil {
				t.Fatal(err)
			}
			for _, pl := range []*Plan{p, back} {
				if _, err := LoadRuns(context.Background(), shard, pl); err == nil || !strings.Contains(err.Error(), RunDir(shard, tt.a)) {
					t.Errorf("LoadRuns: got %v, want an error naming %s", err, RunDir(shard, tt.a))
				}
			}
		})
	}
}

// LoadRuns stops when its context ends: an interrupted aggregation does
// not read on.
func TestLoadRunsHonoursContext(t *testing.T) {
	p := plan(t, PlanOptions{})
	dir := t.TempDir()
	execute(t, dir, p, Options{Jobs: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadRuns(ctx, dir, p); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
