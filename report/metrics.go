package report

import (
	"slices"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

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
	{"fault_load_over_effective_capacity", "load during the fault", "received ÷ effective capacity", func(s *metrics.Summary) *float64 { return s.FaultLoadOverCapacity }, "no capacity left"},
	{"fault_success_ratio", "success during the fault", "succeeded ÷ offered while a fault lasts", func(s *metrics.Summary) *float64 { return s.FaultSuccessRatio }, "no fault"},
	{"time_above_capacity_s", "time above capacity", "seconds", func(s *metrics.Summary) *float64 { return s.TimeAboveCapacityS }, "no value"},
	{"recovery_wasted_fraction", "work wasted during the recovery", "wasted ÷ worker time spent", func(s *metrics.Summary) *float64 { return s.RecoveryWastedFraction }, "no value"},
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
	}, "not reached"},
	{"replicas_peak", "", "", func(s *metrics.Summary) *float64 {
		if s.Replicas == nil {
			return nil
		}
		x := float64(s.Replicas.Peak)
		return &x
	}, "no autoscaler"},
	{"replicas_mean", "", "", func(s *metrics.Summary) *float64 {
		if s.Replicas == nil {
			return nil
		}
		return &s.Replicas.Mean
	}, "no autoscaler"},
}

// MetricByName finds a metric of Metrics.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Values are a metric's values over a point's runs, leaving out the runs
// without one.
func (m Metric) Values(pt sweep.PointData) []float64 {
	var xs []float64
	for _, r := range pt.Runs {
		if v := m.of(r.Doc); v != nil {
			xs = append(xs, *v)
		}
	}
	return xs
}

// of is the metric of one run: nil where the run has no value, or did not
// measure it (a live run's server against a remote --target, whose
// summary.json holds null there, read back as 0).
func (m Metric) of(d *rundir.SummaryDoc) *float64 {
	if d.Live != nil && slices.Contains(d.Live.NotMeasured, m.Name) {
		return nil
	}
	return m.Get(&d.Summary)
}

// Describe is the metric's mean and confidence interval over a point's runs.
func (m Metric) Describe(pt sweep.PointData) sweep.Stat { return sweep.Describe(m.Values(pt)) }

// Paired is the mean and confidence interval of the differences pt − base,
// replication by replication (replication r of both saw the same seed
// under common random numbers), over the replications where both have a
// value.
func (m Metric) Paired(pt, base sweep.PointData) sweep.Stat {
	var ds []float64
	for j, r := range pt.Runs {
		if j >= len(base.Runs) {
			break
		}
		x, y := m.of(r.Doc), m.of(base.Runs[j].Doc)
		if x != nil && y != nil {
			ds = append(ds, *x-*y)
		}
	}
	return sweep.Describe(ds)
}
