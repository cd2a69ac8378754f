package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

func describeCandidate(cfg explore.TuneConfig, x *explore.Candidate) string {
	o := x.Objective()
	s := fmt.Sprintf("%s: %s = %.6g [%.6g, %.6g] over %d seeds", strings.Join(cfg.Sets(x), " "), cfg.Objective, o.Mean, o.Lo, o.Hi, x.Seeds)
	for i, c := range cfg.Constraints {
		s += fmt.Sprintf("; %s = %.6g", c.Metric, x.ConstraintMean(i, c))
		if note := standingNote(cfg, x.Standing(i, c)); note != "" {
			s += fmt.Sprintf(" (limit %s: %s)", limitText(c), note)
		}
	}
	if !cfg.Feasible(x) {
		s += " (violates a constraint)"
	}
	return s
}

// limitText is "≤ 0.6" or "≥ 0.999".
func limitText(c explore.Constraint) string {
	op := "≥"
	if c.AtMost {
		op = "≤"
	}
	return op + " " + strconv.FormatFloat(c.Bound, 'g', -1, 64)
}

// standingNote says why a constraint's mean is where it is against the
// limit, when that is not plain: a breach that passes (default rule), a
// mean that meets the limit but fails --strict, a violation.
func standingNote(cfg explore.TuneConfig, st explore.Standing) string {
	switch {
	case st == explore.BreachWithinNoise && !cfg.Strict:
		return "breach within noise, 95% one-sided"
	case st == explore.BreachWithinNoise:
		return "breach, and not met with 95% confidence (--strict)"
	case st == explore.MetWithinNoise && cfg.Strict:
		return "not met with 95% confidence (--strict)"
	case st == explore.Violated:
		return "violated with 95% confidence"
	}
	return ""
}

// feasibilityRule is the rule's line in the report.
func feasibilityRule(cfg explore.TuneConfig) string {
	if cfg.Strict {
		return "feasible (--strict): every constraint met with 95% confidence (one-sided Student-t bound over the seeds, in every scenario)"
	}
	return "feasible: no constraint violated with 95% confidence (one-sided Student-t bound over the seeds, in every scenario); a breach within noise passes (--strict: must be met with confidence)"
}

func WriteTuneChoice(w io.Writer, cfg explore.TuneConfig, res *explore.TuneResult) {
	verdict := "chosen"
	if res.Infeasible {
		verdict = "INFEASIBLE, closest"
	}
	fmt.Fprintf(w, "%s: %s\n", verdict, describeCandidate(cfg, res.Best))
	if res.RunnerUp != nil {
		fmt.Fprintf(w, "runner-up: %s\n", describeCandidate(cfg, res.RunnerUp))
		sig := "not significant"
		if res.Significant {
			sig = "significant"
		}
		fmt.Fprintf(w, "runner-up − chosen: %.4g [%.4g, %.4g] (paired by seed, 95%%): %s\n", res.Diff.Mean, res.Diff.Lo, res.Diff.Hi, sig)
	}
	if len(cfg.Constraints) > 0 {
		fmt.Fprintln(w, feasibilityRule(cfg))
	}
}

// TuneDoc is tune.json: how the tuning was asked for and what it chose.
type TuneDoc struct {
	Scenarios   []string        `json:"scenarios"`
	Sets        []string        `json:"sets"`
	Params      []explore.Range `json:"params"`
	Objective   string          `json:"objective"`
	Maximize    bool            `json:"maximize"`
	Worst       bool            `json:"worst_case"`
	Strict      bool            `json:"strict"`
	Constraints []string        `json:"constraints"`
	Budget      int             `json:"budget"`
	BaseSeed    uint64          `json:"base_seed"`
	Runs        int             `json:"runs"`
	SensRuns    int             `json:"sensitivity_runs"`
	Candidates  int             `json:"candidates"`
	Infeasible  bool            `json:"infeasible"`
	Chosen      map[string]any  `json:"chosen"`
	RunnerUp    map[string]any  `json:"runner_up"`
	Diff        map[string]any  `json:"runner_up_minus_chosen"`
}

func jnum(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

func candJSON(cfg explore.TuneConfig, x *explore.Candidate) map[string]any {
	if x == nil {
		return nil
	}
	o := x.Objective()
	m := map[string]any{"sets": cfg.Sets(x), "seeds": x.Seeds, "objective": jnum(o.Mean), "ci_lo": jnum(o.Lo), "ci_hi": jnum(o.Hi), "feasible": cfg.Feasible(x)}
	checks := map[string]string{}
	for i, c := range cfg.Constraints {
		m[c.Metric] = jnum(x.ConstraintMean(i, c))
		checks[c.String()] = x.Standing(i, c).String()
	}
	if len(checks) > 0 {
		m["constraints"] = checks
	}
	return m
}

// TuneJSON is tune.json; the wall time is left out so that the file is
// the same on every machine.
func TuneJSON(files, sets []string, cfg explore.TuneConfig, res *explore.TuneResult) TuneDoc {
	d := TuneDoc{Scenarios: files, Sets: sets, Params: cfg.Params, Objective: cfg.Objective, Maximize: cfg.Maximize, Worst: cfg.Worst, Strict: cfg.Strict,
		Budget: cfg.Budget, BaseSeed: cfg.BaseSeed, Runs: res.Runs, SensRuns: res.SensitivityRuns, Candidates: len(res.Candidates),
		Infeasible: res.Infeasible, Chosen: candJSON(cfg, res.Best), RunnerUp: candJSON(cfg, res.RunnerUp)}
	for _, c := range cfg.Constraints {
		d.Constraints = append(d.Constraints, c.String())
	}
	if res.RunnerUp != nil {
		d.Diff = map[string]any{"mean": jnum(res.Diff.Mean), "ci_lo": jnum(res.Diff.Lo), "ci_hi": jnum(res.Diff.Hi), "significant": res.Significant}
	}
	return d
}

// TuneFiles is a tuning's folder: tune.csv, the chosen scenario(s)
// (best.yaml, or best-<i>-<file> for several scenarios: each source with
// sets and the chosen values applied), tune.json, the charts drawn with
// draw and report.html. chartErr is why there are no charts (the rest is
// written anyway); err, why there is no folder.
func TuneFiles(name string, scenarios, sets []string, srcs []explore.Source, cfg explore.TuneConfig, res *explore.TuneResult, draw TuneDrawers) (files []resultdir.File, chartErr, err error) {
	files = []resultdir.File{{Name: "tune.csv", Data: res.TuneCSV(cfg)}}
	best := cfg.Sets(res.Best)
	for i, src := range srcs {
		y, err := explore.WithSets(src.Data, src.File, append(append([]string{}, sets...), best...))
		if err != nil {
			return nil, nil, err
		}
		n := "best.yaml"
		if len(srcs) > 1 {
			n = fmt.Sprintf("best-%d-%s", i+1, filepath.Base(src.File))
		}
		files = append(files, resultdir.File{Name: n, Data: y})
	}
	js, err := json.MarshalIndent(TuneJSON(scenarios, sets, cfg, res), "", "  ")
	if err != nil {
		return nil, nil, err
	}
	files = append(files, resultdir.File{Name: "tune.json", Data: append(js, '\n')})
	charts, chartErr := TuneCharts(name, cfg, res, draw)
	files = append(files, charts...)
	html, err := TuneReport(name, cfg, res, files)
	if err != nil {
		return nil, nil, err
	}
	return append(files, resultdir.File{Name: "report.html", Data: html}), chartErr, nil
}

// TuneDrawers are the functions TuneCharts draws with: plots.Pareto and
// plots.Sensitivity (report computes the inputs, plots draws).
type TuneDrawers struct {
	Pareto      func(plots.ParetoInput) ([]byte, error)
	Sensitivity func(title, objective string, panels []plots.SensitivityPanel) ([]byte, error)
}

// TuneCharts draws pareto.png (objective against the first constraint,
// every candidate) and sensitivity.png (the objective as each parameter
// varies around the choice), each where it applies.
func TuneCharts(name string, cfg explore.TuneConfig, res *explore.TuneResult, draw TuneDrawers) ([]resultdir.File, error) {
	var files []resultdir.File
	if len(cfg.Constraints) > 0 {
		k := cfg.Constraints[0]
		in := plots.ParetoInput{
			Title:           fmt.Sprintf("%s: %s against %s, every candidate", name, objectiveName(cfg.Objective), objectiveName(k.Metric)),
			ObjectiveLabel:  objectiveName(cfg.Objective) + ", mean over seeds",
			ConstraintLabel: fmt.Sprintf("%s, mean (constraint %s)", objectiveName(k.Metric), limitText(k)),
			Bound:           k.Bound, AtMost: k.AtMost, Maximize: cfg.Maximize,
		}
		for _, x := range res.Candidates {
			in.Points = append(in.Points, plots.TunePoint{Objective: x.Objective().Mean, Constraint: x.ConstraintMean(0, k), Feasible: cfg.Feasible(x), Best: x == res.Best})
		}
		png, err := draw.Pareto(in)
		if err != nil {
			return nil, err
		}
		files = append(files, resultdir.File{Name: "pareto.png", Data: png})
	}
	if len(res.Sensitivity) > 0 {
		var panels []plots.SensitivityPanel
		for i, scan := range res.Sensitivity {
			p := plots.SensitivityPanel{Param: ParamLabel(cfg.Params[i].Path), Best: res.Best.Values[i]}
			for _, s := range scan {
				p.Values = append(p.Values, s.Value)
				p.Mean, p.Lo, p.Hi = append(p.Mean, s.Objective.Mean), append(p.Lo, s.Objective.Lo), append(p.Hi, s.Objective.Hi)
				p.Feasible = append(p.Feasible, s.Feasible)
			}
			panels = append(panels, p)
		}
		png, err := draw.Sensitivity(fmt.Sprintf("%s: %s as each parameter varies", name, objectiveName(cfg.Objective)), objectiveName(cfg.Objective), panels)
		if err != nil {
			return nil, err
		}
		files = append(files, resultdir.File{Name: "sensitivity.png", Data: png})
	}
	return files, nil
}

// TuneReport is the tuning's report.html: the choice as printed, every
// candidate, the charts, and the chosen scenario(s).
func TuneReport(name string, cfg explore.TuneConfig, res *explore.TuneResult, files []resultdir.File) ([]byte, error) {
	var txt bytes.Buffer
	WriteTuneChoice(&txt, cfg, res)
	goal := "minimise "
	if cfg.Maximize {
		goal = "maximise "
	}
	if cfg.Worst {
		goal += "the worst scenario's "
	}
	facts := []Fact{{Name: "objective", Value: goal + objectiveName(cfg.Objective)}}
	for _, c := range cfg.Constraints {
		facts = append(facts, Fact{Name: "subject to", Value: objectiveName(c.Metric) + " " + limitText(c)})
	}
	facts = append(facts, Fact{Name: "candidates", Value: strconv.Itoa(len(res.Candidates))}, Fact{Name: "runs", Value: strconv.Itoa(res.Runs)})
	p := Page{Title: name + ": tuning", Kind: "tune", Verdict: TuneVerdict(cfg, res), Facts: facts,
		Sections: []Section{TextSection("choice", "The choice, as printed", txt.String())}}
	for _, f := range files {
		switch {
		case f.Name == "tune.csv":
			sec, err := CSVSection("candidates", "Every candidate", f.Name, f.Data, 300)
			if err != nil {
				return nil, err
			}
			p.Sections = append(p.Sections, sec)
		case strings.HasSuffix(f.Name, ".png"):
			title := map[string]string{"pareto.png": "every candidate: the objective against the first constraint",
				"sensitivity.png": "the objective as each parameter moves away from the choice"}[f.Name]
			p.Charts = append(p.Charts, Chart{Title: cmp.Or(title, strings.TrimSuffix(f.Name, ".png")), File: f.Name, PNG: f.Data})
		case strings.HasPrefix(f.Name, "best"):
			p.Scenario = append(p.Scenario, Text{Label: f.Name + " (the scenario with the chosen values)", Body: string(f.Data)})
		}
	}
	return HTML(p)
}
