package sweep

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/resultdir"
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

// Metric is a summary figure aggregated over replications.
type Metric struct {
	Name, Title, YLabel string
	Get                 func(*metrics.Summary) *float64
	Missing             string // text for a replication without a value
}

// Metrics are the figures in sweep.csv, runs.csv and paired.csv; the first
// four also get a chart.
var Metrics = []Metric{
	{"recovery_time_s", "recovery time after the fault", "seconds", func(s *metrics.Summary) *float64 { return s.Recovery.RecoveryTimeS }, "did not recover"},
	{"peak_received_over_capacity", "peak load on the backend", "peak received ÷ capacity", func(s *metrics.Summary) *float64 { return s.PeakReceivedOverCapacity }, "no value"},
	{"amplification", "amplification", "attempts sent per application request", func(s *metrics.Summary) *float64 { return s.Amplification }, "no value"},
	{"success_ratio", "success ratio", "succeeded ÷ offered", func(s *metrics.Summary) *float64 { return s.SuccessRatio }, "no value"},
	{"local_drop_rate", "", "", func(s *metrics.Summary) *float64 { return s.LocalDropRate }, ""},
	{"wasted_work_fraction", "", "", func(s *metrics.Summary) *float64 { return s.WastedWorkFraction }, ""},
	{"latency_p99_ms", "", "", func(s *metrics.Summary) *float64 { return s.LatencyP99MS }, ""},
	{"last_success_s", "time of the last success", "seconds from the start", func(s *metrics.Summary) *float64 { return s.LastSuccessS }, "no success"},
	{"backend_received", "attempts received by the backend", "attempts (occ backend: write calls)", func(s *metrics.Summary) *float64 { x := float64(s.Received); return &x }, "no value"},
	{"connect_attempts", "", "", func(s *metrics.Summary) *float64 {
		if s.Connections == nil {
			return nil
		}
		x := float64(s.Connections.ConnectAttempts)
		return &x
	}, ""},
	{"reconnected_all_s", "", "", func(s *metrics.Summary) *float64 {
		if s.Connections == nil {
			return nil
		}
		return s.Connections.ReconnectedAllS
	}, ""},
}

var chartFiles = map[string]string{
	"recovery_time_s":             "compare_recovery.png",
	"peak_received_over_capacity": "compare_peak_load.png",
	"amplification":               "compare_amplification.png",
	"success_ratio":               "compare_success.png",
}

// oneShotChartFiles replace them for a sweep of one-shot clients
// (arrival process once) or of the occ row, which have no fault to
// recover from and no capacity: the work done and the completion time.
var oneShotChartFiles = map[string]string{
	"backend_received": "compare_received.png",
	"last_success_s":   "compare_completion.png",
	"amplification":    "compare_amplification.png",
	"success_ratio":    "compare_success.png",
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
	ser, err := metrics.ReadCSV(f, doc.Scenario.EntryBackend().Workers)
	if err != nil {
		return nil, fmt.Errorf("%s/%w", dir, err)
	}
	return &RunData{Doc: doc, Series: ser}, nil
}

func ff(x float64) string { return metrics.FormatFloat(x) }

// Aggregate writes sweep.csv, runs.csv, paired.csv and the comparison
// charts of the points into dir. name titles the charts, varied names what
// differs between the points, baseline is the index of the point the
// others are paired with (-1: none), paired says the replications share
// seeds (common random numbers).
func Aggregate(dir, name, varied string, pts []PointData, baseline int, paired bool) error {
	files := map[string][]byte{}
	// sweep.csv
	var b bytes.Buffer
	b.WriteString("point,label,runs")
	for _, m := range Metrics {
		for _, s := range []string{"n", "mean", "sd", "ci95_lo", "ci95_hi"} {
			b.WriteString("," + m.Name + "_" + s)
		}
	}
	b.WriteString("\n")
	stats := make([][]Stat, len(pts))
	for i, pt := range pts {
		fmt.Fprintf(&b, "%d,%s,%d", i, csvQuote(pt.Label), len(pt.Runs))
		for _, m := range Metrics {
			var xs []float64
			for _, r := range pt.Runs {
				if v := m.Get(&r.Doc.Summary); v != nil {
					xs = append(xs, *v)
				}
			}
			s := Describe(xs)
			stats[i] = append(stats[i], s)
			fmt.Fprintf(&b, ",%d,%s,%s,%s,%s", s.N, ff(s.Mean), ff(s.SD), ff(s.Lo), ff(s.Hi))
		}
		b.WriteString("\n")
	}
	files["sweep.csv"] = append([]byte(nil), b.Bytes()...)

	// runs.csv
	b.Reset()
	b.WriteString("point,label,replication,seed,key,fingerprint,status")
	for _, m := range Metrics {
		b.WriteString("," + m.Name)
	}
	b.WriteString("\n")
	for i, pt := range pts {
		for _, r := range pt.Runs {
			fmt.Fprintf(&b, "%d,%s,%d,%d,%s,%s,%s", i, csvQuote(pt.Label), r.Spec.Rep, r.Doc.Scenario.Seed, r.Key, r.Doc.Run.Fingerprint, r.Doc.Run.Status)
			for _, m := range Metrics {
				v := ""
				if x := m.Get(&r.Doc.Summary); x != nil {
					v = ff(*x)
				}
				b.WriteString("," + v)
			}
			b.WriteString("\n")
		}
	}
	files["runs.csv"] = append([]byte(nil), b.Bytes()...)

	// paired.csv: with common random numbers, replication r of every point
	// saw the same arrivals as replication r of the baseline, so the
	// per-replication differences cancel most of the noise.
	if baseline >= 0 && paired {
		b.Reset()
		b.WriteString("point,label,baseline,metric,n,mean_diff,sd,ci95_lo,ci95_hi\n")
		base := pts[baseline]
		for i, pt := range pts {
			if i == baseline {
				continue
			}
			for _, m := range Metrics {
				var ds []float64
				for j, r := range pt.Runs {
					if j >= len(base.Runs) {
						break
					}
					x, y := m.Get(&r.Doc.Summary), m.Get(&base.Runs[j].Doc.Summary)
					if x != nil && y != nil {
						ds = append(ds, *x-*y)
					}
				}
				s := Describe(ds)
				fmt.Fprintf(&b, "%d,%s,%s,%s,%d,%s,%s,%s,%s\n", i, csvQuote(pt.Label), csvQuote(base.Label), m.Name, s.N, ff(s.Mean), ff(s.SD), ff(s.Lo), ff(s.Hi))
			}
		}
		files["paired.csv"] = append([]byte(nil), b.Bytes()...)
	}

	// Charts.
	in := plots.CompareInput{Name: name, Varied: varied, XLabel: "point"}
	charts := chartFiles
	if len(pts) > 0 && len(pts[0].Runs) > 0 {
		first := pts[0].Runs[0]
		sc := first.Doc.Scenario
		in.Interval = first.Series.Interval
		in.Capacity = sc.Capacity()
		if sc.Backend.Kind == "occ" {
			in.Capacity = 0 // one row: no capacity line
		}
		if sc.Backend.Kind == "occ" || sc.Clients.Arrival.Process == "once" {
			charts = oneShotChartFiles
		}
		in.Seeds = len(pts[0].Runs)
		for _, f := range sc.Faults {
			in.Faults = append(in.Faults, plots.Fault{Start: int64(f.Start), End: int64(f.End()), Label: string(f.Kind), Outage: f.Kind == "outage"})
		}
		if start, end, ok := sim.SpikeWindow(sc); ok {
			in.Faults = append(in.Faults, plots.Fault{Start: start, End: end, Label: "load spike"})
		}
	}
	for _, pt := range pts {
		in.Points = append(in.Points, plots.ComparePoint{
			Label:    pt.Label,
			Received: band(pt, in.Interval, func(r *metrics.Row) float64 { return float64(r.Received) }, true),
			Goodput:  band(pt, in.Interval, func(r *metrics.Row) float64 { return float64(r.Succeeded) }, true),
			Drops: band(pt, in.Interval, func(r *metrics.Row) float64 {
				if r.Offered == 0 {
					return math.NaN()
				}
				return 100 * float64(r.DropThrottle+r.DropNoConn+r.DropBreaker) / float64(r.Offered)
			}, false),
		})
	}
	for mi, m := range Metrics {
		file, ok := charts[m.Name]
		if !ok {
			continue
		}
		fig := plots.Figure{File: file, Title: m.Title, YLabel: m.YLabel, MissingText: m.Missing}
		for i, pt := range pts {
			s := stats[i][mi]
			fig.Values = append(fig.Values, plots.Estimate{Mean: s.Mean, Lo: s.Lo, Hi: s.Hi, N: s.N, Missing: len(pt.Runs) - s.N})
		}
		in.Figures = append(in.Figures, fig)
	}
	pngs, err := plots.Compare(in)
	if err != nil {
		return err
	}
	for _, c := range pngs {
		files[c.File] = c.PNG
	}
	for _, n := range sortedKeys(files) {
		if err := resultdir.WriteFile(filepath.Join(dir, n), files[n]); err != nil {
			return err
		}
	}
	return nil
}

// band is the mean and min–max over a point's runs of a per-interval value
// (per second when rate is set).
func band(pt PointData, interval int64, v func(*metrics.Row) float64, rate bool) plots.Band {
	if len(pt.Runs) == 0 {
		return plots.Band{}
	}
	n := len(pt.Runs[0].Series.Rows)
	bd := plots.Band{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	sec := float64(interval) / 1e9
	for j := 0; j < n; j++ {
		var sum float64
		cnt := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range pt.Runs {
			if j >= len(r.Series.Rows) {
				continue
			}
			x := v(&r.Series.Rows[j])
			if math.IsNaN(x) {
				continue
			}
			if rate {
				x /= sec
			}
			sum += x
			cnt++
			lo, hi = min(lo, x), max(hi, x)
		}
		if cnt == 0 {
			bd.Mean[j], bd.Lo[j], bd.Hi[j] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		bd.Mean[j], bd.Lo[j], bd.Hi[j] = sum/float64(cnt), lo, hi
	}
	return bd
}

// csvQuote quotes a field as RFC 4180 does: in double quotes, with inner
// quotes doubled.
func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func sortedKeys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
