package explore

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

func writeCSV(rows [][]string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows) // a bytes.Buffer does not fail
	return b.Bytes()
}

// MapCSV is map.csv: one row per probe.
func (m *MapResult) MapCSV() []byte {
	rows := [][]string{{"load", "trigger", "phase", "seeds", "no_recovery", "p_no_recovery", "ci_lo", "ci_hi", "decision"}}
	for _, l := range m.Levels {
		for _, p := range l.Probes {
			rows = append(rows, []string{m.Load.Format(l.Load), m.Trigger.Format(p.Trigger), p.Phase, strconv.Itoa(p.N), strconv.Itoa(p.K),
				num(p.P()), num(p.Lo), num(p.Hi), p.Decision.String()})
		}
	}
	return writeCSV(rows)
}

// BoundaryCSV is boundary.csv: one row per load level.
func (m *MapResult) BoundaryCSV() []byte {
	rows := [][]string{{"load", "kind", "threshold", "lo", "hi", "probes", "runs", "non_monotone"}}
	for _, l := range m.Levels {
		b := l.Boundary
		rows = append(rows, []string{m.Load.Format(l.Load), b.Kind, num(b.Threshold), num(b.Lo), num(b.Hi), strconv.Itoa(len(l.Probes)), strconv.Itoa(l.Runs), l.NonMonotone})
	}
	return writeCSV(rows)
}

// RareCSV is rare.csv: one row per splitting estimate.
func (m *MapResult) RareCSV() []byte {
	rows := [][]string{{"load", "trigger", "map_seeds", "map_no_recovery", "p_no_recovery", "rel_err", "ci_lo", "ci_hi", "levels", "stages", "paths", "pilot_paths", "error",
		"method", "tilt_factors", "collapsed", "ess", "warning"}}
	for _, r := range m.Rare {
		var lv, st []string
		for _, x := range r.Result.Levels {
			lv = append(lv, num(x))
		}
		for _, x := range r.Result.Stage {
			st = append(st, num(x))
		}
		p := num(r.P)
		if r.Err != "" {
			p = ""
		}
		method, relErr, paths, pilot := "split", num(r.Result.RelErr), r.Result.Paths, r.Result.PilotPaths
		factor, collapsed, ess := "", "", ""
		if t := r.Tilt; t != nil {
			method, relErr, paths, pilot = "tilt", num(t.RelErr), t.Paths, t.PilotPaths
			var fs []string
			for _, x := range t.Factors {
				fs = append(fs, num(x))
			}
			factor, collapsed, ess = strings.Join(fs, " "), strconv.Itoa(t.Collapsed), num(t.ESS)
		}
		rows = append(rows, []string{m.Load.Format(r.Load), m.Trigger.Format(r.Trigger), strconv.Itoa(r.N), strconv.Itoa(r.K), p, relErr,
			num(r.Lo), num(r.Hi), strings.Join(lv, " "), strings.Join(st, " "), strconv.Itoa(paths), strconv.Itoa(pilot), r.Err,
			method, factor, collapsed, ess, r.Warning})
	}
	return writeCSV(rows)
}

// TuneCSV is tune.csv: one row per candidate evaluated.
func (r *TuneResult) TuneCSV(c TuneConfig) []byte {
	head := []string{"candidate", "round"}
	for _, p := range c.Params {
		head = append(head, p.Path)
	}
	head = append(head, "seeds", c.Objective, "ci_lo", "ci_hi")
	for _, k := range c.Constraints {
		head = append(head, k.Metric+" (worst scenario mean)")
	}
	head = append(head, "feasible", "chosen")
	rows := [][]string{head}
	for i, x := range r.Candidates {
		row := []string{strconv.Itoa(i), strconv.Itoa(x.Round)}
		if x.Round < 0 {
			row[1] = "sensitivity"
		}
		for j, p := range c.Params {
			row = append(row, p.Format(x.Values[j]))
		}
		o := x.Objective()
		row = append(row, strconv.Itoa(x.Seeds), num(o.Mean), num(o.Lo), num(o.Hi))
		for j, k := range c.Constraints {
			row = append(row, num(x.ConstraintMean(j, k)))
		}
		row = append(row, strconv.FormatBool(c.Feasible(x)), strconv.FormatBool(x == r.Best))
		rows = append(rows, row)
	}
	return writeCSV(rows)
}

// Sets are the overrides that give a candidate's values.
func (c TuneConfig) Sets(x *Candidate) []string {
	s := make([]string, len(x.Values))
	for i, v := range x.Values {
		s[i] = c.Params[i].Set(v)
	}
	return s
}

// WithSets returns the scenario file's YAML with the overrides applied
// (comments kept where the YAML library keeps them), for best.yaml; the
// result is checked to load.
func WithSets(data []byte, file string, sets []string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, s := range sets {
		if err := scenario.ApplySet(&root, s, i+1); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if _, err := scenario.Parse(out, file, nil); err != nil {
		return nil, err
	}
	header := "# Chosen by throttlesim tune: " + strings.Join(sets, " ") + "\n"
	return append([]byte(header), out...), nil
}
