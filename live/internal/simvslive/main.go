// Command simvslive tabulates docs/experiments/sim-vs-live.md: for each
// point (policy), the band holding the middle 95% of the simulated seeds
// for each metric, and each live run's value, marked when outside it.
//
//	go run ./live/internal/simvslive -dir results/experiments/sim-vs-live -points k1.5,k3,none
//
// It reads DIR/sim-POINT-SEED/summary.json and DIR/live-POINT-SEED/
// summary.json and live.json (as make experiment-live-runs writes them).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/throttlesim/throttlesim/live"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
)

type metric struct {
	name string
	prec int
	get  func(d *rundir.SummaryDoc) (float64, bool)
}

func ptr(p *float64, scale float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p * scale, true
}

var ms = []metric{
	{"success (%)", 1, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.SuccessRatio, 100) }},
	{"dropped locally (%)", 1, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.LocalDropRate, 100) }},
	{"received (req/s)", 1, func(d *rundir.SummaryDoc) (float64, bool) {
		return float64(d.Summary.Received) / d.Run.StoppedAtS, d.Run.StoppedAtS > 0
	}},
	{"load in fault / eff. capacity", 2, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.FaultLoadOverCapacity, 1) }},
	{"amplification", 3, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.Amplification, 1) }},
	{"recovery (s)", 0, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.Recovery.RecoveryTimeS, 1) }},
	{"latency p50 (ms)", 1, func(d *rundir.SummaryDoc) (float64, bool) { return ptr(d.Summary.LatencyP50MS, 1) }},
}

// quantile is the q-quantile of sorted xs by linear interpolation between
// order statistics (Hyndman and Fan's type 7, R's default).
func quantile(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-lo)*(xs[i+1]-xs[i])
}

func runs(dir, kind, point string) ([]*rundir.SummaryDoc, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, kind+"-"+point+"-*"))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(paths)
	var docs []*rundir.SummaryDoc
	for _, p := range paths {
		d, err := rundir.ReadSummary(p)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, d)
	}
	return docs, paths, nil
}

type lag struct {
	P99 float64 `json:"schedule_lag_p99_ms"`
	Max float64 `json:"schedule_lag_max_ms"`
}

func main() {
	dir := flag.String("dir", "results/experiments/sim-vs-live", "folder of the runs")
	points := flag.String("points", "k1.5,k3,none", "points, comma-separated")
	flag.Parse()
	if err := write(os.Stdout, *dir, strings.Split(*points, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "simvslive:", err)
		os.Exit(1)
	}
}

func write(w io.Writer, dir string, points []string) error {
	outside, total, stalled, runsN := 0, 0, 0, 0
	for _, pt := range points {
		simDocs, _, err := runs(dir, "sim", pt)
		if err != nil {
			return err
		}
		liveDocs, livePaths, err := runs(dir, "live", pt)
		if err != nil {
			return err
		}
		var lags []string
		kept := make([]bool, len(livePaths))
		for i, p := range livePaths {
			b, err := os.ReadFile(filepath.Join(p, "live.json"))
			if err != nil {
				return err
			}
			var l lag
			if err := json.Unmarshal(b, &l); err != nil {
				return err
			}
			kept[i] = live.ScheduleKept(l.P99, l.Max)
			cell := fmt.Sprintf("%.1f / %.0f", l.P99, l.Max)
			runsN++
			if !kept[i] {
				cell += " †"
				stalled++
			}
			lags = append(lags, cell)
		}
		if len(simDocs) < 10 || len(liveDocs) == 0 {
			return fmt.Errorf("point %s: %d simulated and %d live runs; want >= 10 and >= 1", pt, len(simDocs), len(liveDocs))
		}
		fmt.Fprintf(w, "\n**%s** (%d simulated seeds, %d live runs; live seeds %s)\n\n", pt, len(simDocs), len(liveDocs), seeds(liveDocs))
		fmt.Fprintf(w, "| metric | sim median | sim 95%% band |%s\n", strings.Repeat(" live |", len(liveDocs)))
		fmt.Fprintf(w, "|---|---|---|%s\n", strings.Repeat("---|", len(liveDocs)))
		for _, m := range ms {
			var xs []float64
			for _, d := range simDocs {
				if v, ok := m.get(d); ok {
					xs = append(xs, v)
				}
			}
			slices.Sort(xs)
			row := fmt.Sprintf("| %s | ", m.name)
			var lo, hi float64
			band := len(xs) > 0
			if band {
				lo, hi = quantile(xs, 0.025), quantile(xs, 0.975)
				row += fmt.Sprintf("%s | %s – %s |", f(quantile(xs, 0.5), m.prec), f(lo, m.prec), f(hi, m.prec))
			} else {
				row += "– | – |"
			}
			if len(xs) < len(simDocs) { // recovery: some seeds did not recover
				row = strings.TrimSuffix(row, " |") + fmt.Sprintf(" (%d of %d recovered) |", len(xs), len(simDocs))
			}
			for i, d := range liveDocs {
				v, ok := m.get(d)
				cell := "–"
				if ok {
					cell = f(v, m.prec)
				}
				if kept[i] {
					total++
				}
				// Outside: a value beyond the band (rounded as printed),
				// or a value where the simulation mostly has none or the
				// reverse (recovery).
				out := false
				switch {
				case ok && band:
					out = round(v, m.prec) < round(lo, m.prec) || round(v, m.prec) > round(hi, m.prec)
				case ok != (len(xs)*2 > len(simDocs)):
					out = true
				}
				if out {
					cell = "**" + cell + "** ✗"
					if kept[i] {
						outside++
					}
				}
				row += " " + cell + " |"
			}
			fmt.Fprintln(w, row)
		}
		fmt.Fprintf(w, "| schedule lag p99 / max (ms) | – | – | %s |\n", strings.Join(lags, " | "))
	}
	fmt.Fprintf(w, "\n%d of %d live runs did not keep their schedule (†: arrival lag p99 over 50 ms or a stall of 1 s or more, live.ScheduleKept); their values are shown but not judged.\n", stalled, runsN)
	fmt.Fprintf(w, "Of the runs that kept it, %d of %d live values fall outside the simulation's 95%% band (✗).\n", outside, total)
	return nil
}

func seeds(ds []*rundir.SummaryDoc) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprint(d.Manifest.Seed))
	}
	return strings.Join(s, ", ")
}

func round(x float64, prec int) float64 {
	p := math.Pow(10, float64(prec))
	return math.Round(x*p) / p
}

func f(x float64, prec int) string { return metrics.FormatFloat(round(x, prec)) }
