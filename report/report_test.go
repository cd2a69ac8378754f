package report

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/sweep"
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
    - {label: "no throttle, \"none\"", set: ["clients.throttle=null"]}
  seeds: 3
`

// tinySweep runs the small sweep once per test binary.
func tinySweep(t *testing.T) (*sweep.Plan, []sweep.PointData) {
	t.Helper()
	p, dir := tinySweepDir(t)
	pts, err := sweep.LoadRuns(context.Background(), dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return p, pts
}

// tinySweepDir runs the small sweep into a folder and returns its plan.
func tinySweepDir(t *testing.T) (*sweep.Plan, string) {
	t.Helper()
	p, err := sweep.NewPlan("tiny.yaml", []byte(small), sweep.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := sweep.WritePlan(dir, p); err != nil {
		t.Fatal(err)
	}
	if err := sweep.Execute(context.Background(), p, dir, sweep.Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// paired.csv has one row per other point and figure; a label with a comma
// and quotes is quoted as RFC 4180 says.
func TestComparisonFiles(t *testing.T) {
	p, pts := tinySweep(t)
	files, err := Comparison{Name: p.Name, Points: pts, Baseline: p.Baseline, Paired: !p.Independent}.Files(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file      string
		lines     int
		rowPrefix string
	}{
		{"paired.csv", 1 + 2*len(Metrics), "1,k=3,k=1.5,recovery_time_s,"},
		{"sweep.csv", 1 + 3, "0,k=1.5,3,"},
		{"runs.csv", 1 + 9, "0,k=1.5,0,"},
	} {
		lines := strings.Split(strings.TrimSuffix(string(files[c.file]), "\n"), "\n")
		if len(lines) != c.lines {
			t.Errorf("%s: %d lines, want %d", c.file, len(lines), c.lines)
		}
		if !strings.HasPrefix(lines[1], c.rowPrefix) {
			t.Errorf("%s: first row %q, want prefix %q", c.file, lines[1], c.rowPrefix)
		}
	}
	if !strings.Contains(string(files["sweep.csv"]), "\n2,\"no throttle, \"\"none\"\"\",3,") {
		t.Errorf("sweep.csv: the quoted label is not RFC 4180:\n%s", files["sweep.csv"])
	}
	nopaired, err := Comparison{Points: pts, Baseline: -1}.Files(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nopaired["paired.csv"]; ok {
		t.Errorf("paired.csv written without a baseline")
	}
}

func ExampleTable_Write() {
	t := Table{Header: []string{"point", "success"}, Rows: [][]string{{"k=2", "99.1%"}, {"no throttle", "97.0%"}}}
	t.Write(os.Stdout, "markdown")
	t.Write(os.Stdout, "csv")
	// Output:
	// | point | success |
	// |---|---|
	// | k=2 | 99.1% |
	// | no throttle | 97.0% |
	// point,success
	// k=2,99.1%
	// no throttle,97.0%
}

// Compared runs (NoFigures) get no chart of one figure per point: with
// one run each it would repeat two numbers of the summary table; a
// sweep's charts keep them.
func TestNoFigures(t *testing.T) {
	p, pts := tinySweep(t)
	for _, no := range []bool{false, true} {
		var figures int
		draw := func(in plots.CompareInput) ([]plots.Chart, error) {
			figures = len(in.Figures)
			return nil, nil
		}
		if _, err := (Comparison{Name: p.Name, Points: pts, Baseline: -1, NoFigures: no}).Files(draw); err != nil {
			t.Fatal(err)
		}
		if no && figures != 0 || !no && figures == 0 {
			t.Errorf("NoFigures %v: %d figures drawn", no, figures)
		}
	}
}
