package report

import (
	"bytes"
	"context"
	"html"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// The map's axes speak the user's language: a trigger that is the end of
// a load step is measured from the step's start ("spike length", not the
// absolute time the issue found: a 3.8 s spike shown as 63.79 s on an
// axis named clients.arrival.profile.1.at (s)), a fault's field is named
// in words, the total rate is "offered load", and --load-label and
// --trigger-label win.
func TestMapAxes(t *testing.T) {
	sc, err := scenario.Parse([]byte("name: t\nduration: 100s\nclients:\n  count: 1\n  arrival:\n    total_rate: 10/s\n    profile: [{at: 60s, multiplier: 3}, {at: 64s, multiplier: 1}, {at: 90s, multiplier: 0.5}, {at: 95s, multiplier: 1}]\n"+
		"faults:\n  - {kind: outage, start: 10s, duration: 5s}\n"), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := func(s string) explore.Range {
		r, err := explore.ParseRange("--x", s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	load := rng("clients.arrival.total_rate=5/s..20/s")
	for _, tt := range []struct {
		trigger, loadLabel, trigLabel string
		wantLoad, wantTrig            string
		origin                        float64
	}{
		{"clients.arrival.profile.1.at=61s..80s", "", "", "offered load (/s)", "spike length (s), from its start at 60 s (×3 load)", 60},
		{"clients.arrival.profile.3.at=91s..99s", "", "", "offered load (/s)", "length of load step 2 (s), from its start at 90 s", 90},
		{"clients.arrival.profile.0.at=10s..20s", "", "", "offered load (/s)", "clients.arrival.profile.0.at (s)", 0},
		{"faults.0.duration=1s..9s", "", "", "offered load (/s)", "fault 0 duration (s)", 0},
		{"clients.arrival.profile.1.at=61s..80s", "rate", "how long", "rate", "how long", 60},
	} {
		t.Run(tt.trigger, func(t *testing.T) {
			tr := rng(tt.trigger)
			l, g, o := MapAxes(sc, load, tr, tt.loadLabel, tt.trigLabel)
			if g == "" {
				g = axisLabel(tr)
			}
			if l != tt.wantLoad || g != tt.wantTrig || o != tt.origin {
				t.Errorf("got %q, %q, origin %g; want %q, %q, %g", l, g, o, tt.wantLoad, tt.wantTrig, tt.origin)
			}
		})
	}
}

// The printout measures the trigger as the chart does: from its origin.
func TestPrintBoundaryShifted(t *testing.T) {
	tr, _ := explore.ParseRange("--trigger", "clients.arrival.profile.1.at=60.5s..80s")
	ld, _ := explore.ParseRange("--load", "clients.arrival.total_rate=500/s..600/s/2")
	doc := &explore.MapDoc{TriggerLabel: "spike length (s)", TriggerOrigin: 60, Result: &explore.MapResult{Load: ld, Trigger: tr, Levels: []explore.Level{
		{Load: 500, Boundary: explore.Boundary{Kind: "bracketed", Threshold: 63.8, Lo: 63.6, Hi: 64}},
		{Load: 600, Boundary: explore.Boundary{Kind: "above", Lo: 80, Hi: math.NaN(), Threshold: math.NaN()}},
	}}}
	var b strings.Builder
	WriteBoundary(&b, doc)
	for _, want := range []string{"threshold: where P(no recovery) crosses ½, in spike length (s)", "3.80s [3.60s, 4.00s]", "above 20s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printout lacks %q:\n%s", want, b.String())
		}
	}
}

// A threshold is printed to its bracket's resolution, and the printed
// bracket contains the one found.
func TestBracketed(t *testing.T) {
	for _, c := range []struct {
		x, lo, hi float64
		want      string
	}{
		{5.20089, 5.02679, 5.375, "5.20s [5.02s, 5.38s]"},
		{13.558, 13.3839, 13.7321, "13.56s [13.38s, 13.74s]"},
		{63.8, 63.6, 64, "63.80s [63.60s, 64.00s]"},
		{450, 400, 500, "450s [400s, 500s]"},
		{0.0123, 0.0121, 0.0125, "0.01230s [0.01210s, 0.01250s]"},
		{7, 7, 7, "7s [7s, 7s]"},
	} {
		if got := bracketed(c.x, c.lo, c.hi, "s"); got != c.want {
			t.Errorf("bracketed(%v, %v, %v) = %q, want %q", c.x, c.lo, c.hi, got, c.want)
		}
	}
}

// TestTuneReportSaysTheFeasibilityRule: a chosen point whose constraint
// mean is past the limit but not significantly (the drop alternates
// 0.581, 0.621 by seed: mean 0.601) is feasible by default, and the
// printout and report.html say "breach within noise" next to it and state
// the rule; under --strict nothing is feasible and the report says why.
func TestTuneReportSaysTheFeasibilityRule(t *testing.T) {
	eval := func(_ context.Context, v explore.Variant) (explore.Figures, error) {
		_, val, _ := strings.Cut(v.Sets[0], "=")
		k, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, err
		}
		d := 0.02
		if v.Seed%2 == 1 {
			d = -d
		}
		return explore.Figures{"backend_load_rps": 200 * k, "local_drop_rate": 0.601 + d}, nil
	}
	for _, tc := range []struct {
		strict     bool
		infeasible bool
		want       []string
	}{
		{false, false, []string{
			"chosen: k=1: backend_load_rps = 200",
			"local_drop_rate = 0.601 (limit ≤ 0.6: breach within noise, 95% one-sided)",
			"feasible: no constraint violated with 95% confidence (one-sided Student-t bound over the seeds, in every scenario); a breach within noise passes",
		}},
		{true, true, []string{
			"INFEASIBLE, closest: k=1",
			"local_drop_rate = 0.601 (limit ≤ 0.6: breach, and not met with 95% confidence (--strict)) (violates a constraint)",
			"feasible (--strict): every constraint met with 95% confidence",
		}},
	} {
		cfg := explore.TuneConfig{
			Params:      []explore.Range{{Path: "k", Lo: 1, Hi: 4}},
			Objective:   "backend_load_rps",
			Constraints: []explore.Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
			Budget:      100, Jobs: 2, Strict: tc.strict,
		}
		res, err := explore.Tune(context.Background(), eval, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Infeasible != tc.infeasible {
			t.Errorf("strict %v: infeasible %v, want %v", tc.strict, res.Infeasible, tc.infeasible)
		}
		var txt bytes.Buffer
		WriteTuneChoice(&txt, cfg, res)
		page, err := TuneReport("synthetic", cfg, res, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(txt.String(), w) {
				t.Errorf("strict %v: the printout lacks %q:\n%s", tc.strict, w, txt.String())
			}
			if !strings.Contains(html.UnescapeString(string(page)), w) {
				t.Errorf("strict %v: report.html lacks %q", tc.strict, w)
			}
		}
		doc := TuneJSON(nil, nil, cfg, res)
		if doc.Strict != tc.strict || doc.Chosen["constraints"].(map[string]string)["local_drop_rate<=0.6"] != "breach within noise" {
			t.Errorf("strict %v: tune.json has strict %v, constraints %v", tc.strict, doc.Strict, doc.Chosen["constraints"])
		}
	}
}
