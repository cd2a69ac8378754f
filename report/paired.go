package report

import (
	"math"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

// better is +1 where a higher value of a metric is better, −1 where lower
// is better, 0 where neither is (a count of work, say).
var better = map[string]int{
	"recovery_time_s":             -1,
	"peak_received_over_capacity": -1,
	"amplification":               -1,
	"success_ratio":               +1,
	"local_drop_rate":             -1,
	"wasted_work_fraction":        -1,
	"latency_p99_ms":              -1,
	"last_success_s":              -1,
	"connect_attempts":            -1,
	"reconnected_all_s":           -1,
	// Pushing less than the capacity left, for less time, and wasting
	// less of it while recovering.
	"fault_load_over_effective_capacity": -1,
	"time_above_capacity_s":              -1,
	"fault_success_ratio":                +1,
	"recovery_wasted_fraction":           -1,
}

// PairedRow is one metric of one point against the baseline point.
type PairedRow struct {
	Point, Baseline string
	Metric          string
	// Mean and BaseMean are the metric's means over the runs of the point
	// and of the baseline (nil: no run has a value).
	Mean, BaseMean *float64
	// Ratio is Mean ÷ BaseMean (nil when either is missing or the base is 0).
	Ratio *float64
	// Diff is the mean and interval of the paired differences point −
	// baseline, replication by replication (Metric.Paired).
	Diff Estimate
}

// Verdict says whether the point did better, worse or the same as the
// baseline on this metric: "better", "worse", "same" (no difference, or
// the interval of a paired difference covers zero: "no clear difference"),
// or "" where the metric has no better direction or no difference.
func (r PairedRow) Verdict() string {
	d := r.Diff
	if d.Mean == nil || better[r.Metric] == 0 {
		return ""
	}
	if *d.Mean == 0 {
		return "same"
	}
	if d.Lo != nil && d.Hi != nil && *d.Lo <= 0 && *d.Hi >= 0 {
		return "no clear difference"
	}
	if (*d.Mean > 0) == (better[r.Metric] > 0) {
		return "better"
	}
	return "worse"
}

// Paired is every point but the baseline against it, metric by metric,
// leaving out metrics neither has a value of.
func Paired(pts []sweep.PointData, baseline int) []PairedRow {
	if baseline < 0 || baseline >= len(pts) {
		return nil
	}
	base := pts[baseline]
	var rows []PairedRow
	for i, pt := range pts {
		if i == baseline {
			continue
		}
		for _, m := range Metrics {
			r := PairedRow{Point: pt.Label, Baseline: base.Label, Metric: m.Name,
				Mean: NewEstimate(m.Describe(pt)).Mean, BaseMean: NewEstimate(m.Describe(base)).Mean,
				Diff: NewEstimate(m.Paired(pt, base))}
			if r.Mean == nil && r.BaseMean == nil {
				continue
			}
			if r.Mean != nil && r.BaseMean != nil && *r.BaseMean != 0 {
				r.Ratio = finite(*r.Mean / *r.BaseMean)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Num formats a number for people: four significant digits, no exponent,
// thousands not grouped (so that it parses back).
func Num(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', Decimals(x), 64)
}

// Decimals is the number of decimals Num shows of x.
func Decimals(x float64) int {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return min(max(0, 3-int(math.Floor(math.Log10(math.Abs(x))))), 8)
}
