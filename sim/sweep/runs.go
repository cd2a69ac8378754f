package sweep

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
)

// RunData is one finished run, read back from its folder.
type RunData struct {
	Spec   RunSpec
	Key    string
	Doc    *sim.SummaryDoc
	Series *metrics.Series
}

// PointData is every run of one point.
type PointData struct {
	Label string
	Runs  []RunData
}

// Stat is the mean of N values with its standard deviation and 95%
// confidence interval from Student's t with N−1 degrees of freedom (NaN
// when N < 2).
type Stat struct {
	N                int
	Mean, SD, Lo, Hi float64
}

// Describe computes a Stat.
func Describe(xs []float64) Stat {
	s := Stat{N: len(xs), Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if s.N == 0 {
		return s
	}
	if s.N == 1 {
		s.Mean = xs[0]
		return s
	}
	s.Mean, s.SD = stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(s.N - 1)}.Quantile(0.975)
	h := t * s.SD / math.Sqrt(float64(s.N))
	s.Lo, s.Hi = s.Mean-h, s.Mean+h
	return s
}

// LoadRuns reads every run of the plan from dir.
func LoadRuns(dir string, p *Plan) ([]PointData, error) {
	pts := make([]PointData, len(p.Points))
	for i, pt := range p.Points {
		pts[i].Label = pt.Label
	}
	var missing []string
	for _, r := range p.Runs() {
		rd := RunDir(dir, r)
		key, err := os.ReadFile(filepath.Join(rd, keyFile))
		if err != nil {
			missing = append(missing, filepath.Base(rd))
			continue
		}
		run, err := ReadRun(rd)
		if err != nil {
			return nil, err
		}
		run.Spec, run.Key = r, strings.TrimSpace(string(key))
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
func ReadRun(dir string) (*RunData, error) {
	doc, err := sim.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "timeseries.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ser, err := metrics.ReadCSV(f, doc.Scenario.EntryBackend().TotalWorkers())
	if err != nil {
		return nil, fmt.Errorf("%s/%w", dir, err)
	}
	return &RunData{Doc: doc, Series: ser}, nil
}
