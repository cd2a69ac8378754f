package fit

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Load is the fitted scenario as Write writes it (scenario.yaml with
// arrivals.csv beside it, in a temporary folder removed before it
// returns), decoded by scenario.Load: what `throttlesim run` of the fit's
// folder would run.
func (r *Result) Load(o Options) (*scenario.Scenario, error) {
	tmp, err := os.MkdirTemp("", "throttlesim-fit-")
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{ScenarioFile: r.Scenario(o), ArrivalsFile: r.ArrivalsCSV()} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	}
	sc, err := scenario.Load(filepath.Join(tmp, ScenarioFile), nil)
	if err != nil {
		return nil, fmt.Errorf("fit: the fitted scenario does not load: %w", err)
	}
	return sc, nil
}

// Compared is one series recorded against the fitted scenario's runs,
// per step of the window.
type Compared struct {
	Name     string `json:"name"`
	Unit     string `json:"unit"`
	Recorded Nums   `json:"recorded"`  // NaN (null in JSON) where nothing was recorded
	Runs     []Nums `json:"simulated"` // per seed, per step
	Mean     Nums   `json:"mean"`      // over the seeds
	Lo, Hi   Nums   `json:"-"`         // the seeds' smallest and largest
	// MAE is the mean absolute difference between the recorded value and
	// the seeds' mean, over the steps where both exist; Rel is MAE over
	// the recorded mean (0 when that is 0).
	MAE float64 `json:"mean_absolute_error"`
	Rel float64 `json:"relative_error"`
	// Inside is the share of those steps whose recorded value lies within
	// the seeds' range (widened by 5% of the recorded mean, so that a
	// series that is 0 everywhere matches).
	Inside float64 `json:"share_inside_seeds"`
	Steps  int     `json:"steps_compared"`
}

// Comparison is the recorded window against the fitted scenario run with
// several seeds.
type Comparison struct {
	Seeds  []uint64   `json:"seeds"`
	StepS  float64    `json:"step_s"`
	Series []Compared `json:"series"`
	// Verdict says in a sentence how close the simulation came.
	Verdict string `json:"verdict"`
}

// Series names, in the order Simulate compares them.
const (
	SeriesGoodput    = "goodput"
	SeriesRejections = "rejections"
	SeriesP50        = "latency p50"
	SeriesP99        = "latency p99"
)

// Simulate runs sc (the fitted scenario, possibly with client policies
// set) once per seed with one row per step of the window, and compares
// the recorded series with the simulated ones, step by step: goodput
// (successful answers per second: 2xx, against the simulated attempts
// served without error), rejections (429 and 503 per second, against the
// attempts the backend rejected), and latency p50 and p99 of the
// successful requests (from the request-duration histogram's increase per
// step, interpolated linearly within buckets as histogram_quantile does,
// against the simulated requests completed in the step).
func (r *Result) Simulate(ctx context.Context, sc *scenario.Scenario, seeds []uint64) (*Comparison, error) {
	if len(seeds) == 0 {
		return nil, fmt.Errorf("fit: simulate: no seeds")
	}
	steps := len(r.Arrivals)
	// One row per step; the recovery rule's windows (unused here) must
	// stay whole numbers of rows.
	m := &sc.Metrics
	m.Interval = scenario.Duration(r.Step)
	for _, d := range []*scenario.Duration{&m.RecoveryWindow, &m.Baseline} {
		if *d%m.Interval != 0 {
			*d = (*d/m.Interval + 1) * m.Interval
		}
	}
	st := r.Step.Seconds()
	c := &Comparison{Seeds: seeds, StepS: st}
	rec := [][]float64{r.Success, r.Rejected, r.LatencyP50, r.LatencyP99}
	for i, name := range []string{SeriesGoodput, SeriesRejections, SeriesP50, SeriesP99} {
		unit := "req/s"
		if i >= 2 {
			unit = "ms"
		}
		x := Compared{Name: name, Unit: unit, Recorded: make(Nums, steps)}
		for k := range x.Recorded {
			x.Recorded[k] = math.NaN()
			if k < len(rec[i]) {
				x.Recorded[k] = rec[i][k]
			}
		}
		c.Series = append(c.Series, x)
	}
	for _, seed := range seeds {
		res, err := sim.Run(ctx, sc, sim.Options{Seed: &seed})
		if err != nil {
			return nil, fmt.Errorf("fit: simulating the fitted scenario (seed %d): %w", seed, err)
		}
		got := make([]Nums, 4)
		for i := range got {
			got[i] = make(Nums, steps)
			for k := range got[i] {
				got[i][k] = math.NaN()
			}
		}
		rows := res.Series.Rows
		for k := 0; k < steps && k < len(rows); k++ {
			row := &rows[k]
			got[0][k] = float64(row.Served-row.Errors) / st
			got[1][k] = float64(row.Rejected) / st
			got[2][k] = row.LatencyP50 / 1e6
			got[3][k] = row.LatencyP99 / 1e6
		}
		for i := range c.Series {
			c.Series[i].Runs = append(c.Series[i].Runs, got[i])
		}
	}
	for i := range c.Series {
		c.Series[i].summarize()
	}
	c.Verdict = c.verdict()
	return c, nil
}

// summarize computes the seeds' mean and range per step and the error
// measures.
func (x *Compared) summarize() {
	n := len(x.Recorded)
	x.Mean, x.Lo, x.Hi = make(Nums, n), make(Nums, n), make(Nums, n)
	var recSum float64
	for k := range n {
		var s float64
		cnt := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, run := range x.Runs {
			if v := run[k]; !math.IsNaN(v) {
				s += v
				cnt++
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		x.Mean[k], x.Lo[k], x.Hi[k] = math.NaN(), math.NaN(), math.NaN()
		if cnt > 0 {
			x.Mean[k], x.Lo[k], x.Hi[k] = s/float64(cnt), lo, hi
		}
		if !math.IsNaN(x.Recorded[k]) && cnt > 0 {
			recSum += x.Recorded[k]
			x.Steps++
		}
	}
	if x.Steps == 0 {
		return
	}
	recMean := recSum / float64(x.Steps)
	slack := 0.05 * recMean
	var abs float64
	inside := 0
	for k := range n {
		if math.IsNaN(x.Recorded[k]) || math.IsNaN(x.Mean[k]) {
			continue
		}
		abs += math.Abs(x.Recorded[k] - x.Mean[k])
		if x.Recorded[k] >= x.Lo[k]-slack && x.Recorded[k] <= x.Hi[k]+slack {
			inside++
		}
	}
	x.MAE = abs / float64(x.Steps)
	if recMean > 0 {
		x.Rel = x.MAE / recMean
	}
	x.Inside = float64(inside) / float64(x.Steps)
}

// Get returns the series of that name (nil when absent).
func (c *Comparison) Get(name string) *Compared {
	for i := range c.Series {
		if c.Series[i].Name == name {
			return &c.Series[i]
		}
	}
	return nil
}

func (c *Comparison) verdict() string {
	gp, rj, p50 := c.Get(SeriesGoodput), c.Get(SeriesRejections), c.Get(SeriesP50)
	if meanOf(gp.Recorded) <= 0 {
		return fmt.Sprintf("The recording holds no successful answers (check --code-label and the metric names); the fitted scenario, over %d seeds, serves %.1f req/s on average.", len(c.Seeds), meanOf(gp.Mean))
	}
	s := fmt.Sprintf("Over %d seeds, the fitted scenario reproduces goodput within %.0f%% (mean absolute error %.1f req/s per %gs step) and rejections within %.1f req/s",
		len(c.Seeds), 100*gp.Rel, gp.MAE, c.StepS, rj.MAE)
	if p50.Steps > 0 {
		s += fmt.Sprintf("; latency p50 within %.0f%% (%.1f ms)", 100*p50.Rel, p50.MAE)
	}
	s += fmt.Sprintf(". The recorded goodput lies within the seeds' range in %.0f%% of the steps, rejections in %.0f%%.", 100*gp.Inside, 100*rj.Inside)
	return s
}

// quantiles are the q-quantiles (seconds→ms) of the requests a
// cumulative-bucket histogram counted in each step (each bucket's
// increase from the step before); NaN where none completed. Within a
// bucket the value is interpolated linearly, the first bucket from 0, as
// Prometheus's histogram_quantile does; a quantile in the +Inf bucket is
// the last finite bound.
func quantiles(bs []scenario.PromSeries, w Window, steps int, q float64) ([]float64, error) {
	type b struct {
		le float64
		v  []float64
	}
	var cols []b
	for _, s := range bs {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil {
			return nil, fmt.Errorf("fit: latency_bucket: a series without a numeric le label: %v", s.Metric)
		}
		v, _ := onGrid(s, w, steps)
		cols = append(cols, b{le, v})
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].le < cols[j].le })
	out := make([]float64, steps)
	for k := range out {
		out[k] = math.NaN()
		if k == 0 || len(cols) == 0 {
			continue // the first step has no step before it
		}
		inc := make([]float64, len(cols))
		for i, c := range cols {
			inc[i] = math.Max(c.v[k]-c.v[k-1], 0)
			if i > 0 {
				inc[i] = math.Max(inc[i], inc[i-1])
			}
		}
		total := inc[len(inc)-1]
		if total <= 0 {
			continue
		}
		rank := q * total
		for i := range cols {
			if inc[i] < rank {
				continue
			}
			if math.IsInf(cols[i].le, 1) {
				if i > 0 {
					out[k] = cols[i-1].le * 1e3
				}
				break
			}
			lo, below := 0.0, 0.0
			if i > 0 {
				lo, below = cols[i-1].le, inc[i-1]
			}
			frac := 1.0
			if inc[i] > below {
				frac = (rank - below) / (inc[i] - below)
			}
			out[k] = (lo + frac*(cols[i].le-lo)) * 1e3
			break
		}
	}
	return out, nil
}

// Nums are numbers that may be NaN (nothing there), written to JSON as
// null.
type Nums []float64

// MarshalJSON writes NaN as null.
func (ns Nums) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', 6, 64)
	}
	return append(b, ']'), nil
}
