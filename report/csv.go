package report

import (
	"bytes"
	"encoding/csv"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

func ff(x float64) string { return metrics.FormatFloat(x) }

// writeCSV renders records with encoding/csv: RFC 4180 quoting, "\n"
// line ends.
func writeCSV(records [][]string) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(records); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SweepCSV is sweep.csv: one row per point with, for every metric, the
// number of runs with a value, the mean, the standard deviation and the
// 95% confidence interval.
func SweepCSV(pts []sweep.PointData) ([]byte, error) {
	header := []string{"point", "label", "runs"}
	for _, m := range Metrics {
		for _, s := range []string{"n", "mean", "sd", "ci95_lo", "ci95_hi"} {
			header = append(header, m.Name+"_"+s)
		}
	}
	recs := [][]string{header}
	for i, pt := range pts {
		rec := []string{strconv.Itoa(i), pt.Label, strconv.Itoa(len(pt.Runs))}
		for _, m := range Metrics {
			s := m.Describe(pt)
			rec = append(rec, strconv.Itoa(s.N), ff(s.Mean), ff(s.SD), ff(s.Lo), ff(s.Hi))
		}
		recs = append(recs, rec)
	}
	return writeCSV(recs)
}

// RunsCSV is runs.csv: one row per run with its seed, key, fingerprint,
// status and every metric (empty where the run has no value).
func RunsCSV(pts []sweep.PointData) ([]byte, error) {
	header := []string{"point", "label", "replication", "seed", "key", "fingerprint", "status"}
	for _, m := range Metrics {
		header = append(header, m.Name)
	}
	recs := [][]string{header}
	for i, pt := range pts {
		for _, r := range pt.Runs {
			rec := []string{strconv.Itoa(i), pt.Label, strconv.Itoa(r.Spec.Rep), strconv.FormatUint(r.Doc.Scenario.Seed, 10), r.Key, r.Doc.Run.Fingerprint, r.Doc.Run.Status}
			for _, m := range Metrics {
				v := ""
				if x := m.of(r.Doc); x != nil {
					v = ff(*x)
				}
				rec = append(rec, v)
			}
			recs = append(recs, rec)
		}
	}
	return writeCSV(recs)
}

// PairedCSV is paired.csv: for every point but the baseline and every
// metric, the paired differences from the baseline (Metric.Paired). With
// common random numbers replication r of every point saw the same
// arrivals as replication r of the baseline, so the per-replication
// differences cancel most of the noise.
func PairedCSV(pts []sweep.PointData, baseline int) ([]byte, error) {
	recs := [][]string{{"point", "label", "baseline", "metric", "n", "mean_diff", "sd", "ci95_lo", "ci95_hi"}}
	base := pts[baseline]
	for i, pt := range pts {
		if i == baseline {
			continue
		}
		for _, m := range Metrics {
			s := m.Paired(pt, base)
			recs = append(recs, []string{strconv.Itoa(i), pt.Label, base.Label, m.Name, strconv.Itoa(s.N), ff(s.Mean), ff(s.SD), ff(s.Lo), ff(s.Hi)})
		}
	}
	return writeCSV(recs)
}
