package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

// noFault is a point of runs without a fault: the given success ratios
// and amplifications.
func noFault(label string, success, amp []float64) sweep.PointData {
	pt := sweep.PointData{Label: label}
	for i := range success {
		doc := &rundir.SummaryDoc{Scenario: &scenario.Scenario{Name: "x"}, Summary: metrics.Summary{
			SuccessRatio: fp(success[i]), Amplification: fp(amp[i]),
			Recovery: metrics.Recovery{Reason: "no fault in the scenario"},
		}}
		pt.Runs = append(pt.Runs, sweep.RunData{Doc: doc})
	}
	return pt
}

// The sweep's verdict names the point that recovers fastest with its
// interval, says whether the next is within noise (by the paired
// differences under common random numbers, else by the intervals),
// and names the points that recover in some runs or none.
func TestSweepVerdict(t *testing.T) {
	for _, c := range []struct {
		name   string
		pts    []sweep.PointData
		paired bool
		want   []string // in the verdict
		not    []string // not in it
	}{
		{"clear winner",
			[]sweep.PointData{
				point("k=3", []*float64{fp(30), fp(31), fp(32)}, []float64{0.9, 0.9, 0.9}),
				point("k=2", []*float64{fp(60), fp(61), fp(62)}, []float64{0.8, 0.8, 0.8}),
				point("no throttle", []*float64{nil, nil, nil}, []float64{0.2, 0.2, 0.2}),
			}, true,
			[]string{"k=3 recovers fastest: 31.0 s [28.5, 33.5]; next k=2, 61.0 s [58.5, 63.5]; no throttle never recovers.",
				"Highest success: k=3, 90.0%"},
			[]string{"within noise"}},
		// The intervals overlap, but every seed is 1 s slower: paired, the
		// two are told apart; independent, they are not.
		{"paired tells apart",
			[]sweep.PointData{
				point("a", []*float64{fp(30), fp(40), fp(35)}, []float64{0.9, 0.9, 0.9}),
				point("b", []*float64{fp(31), fp(41), fp(36)}, []float64{0.9, 0.9, 0.9}),
			}, true,
			[]string{"a recovers fastest: 35.0 s [22.6, 47.4]; next b, 36.0 s"}, []string{"within noise of it;", "the fastest"}},
		{"independent within noise",
			[]sweep.PointData{
				point("a", []*float64{fp(30), fp(40), fp(35)}, []float64{0.9, 0.9, 0.9}),
				point("b", []*float64{fp(31), fp(41), fp(36)}, []float64{0.9, 0.9, 0.9}),
			}, false,
			[]string{"a recovers fastest: 35.0 s [22.6, 47.4], but b (36.0 s [23.6, 48.4]) is within noise of it."}, []string{"next"}},
		// The fastest is not the most successful: the verdict gives its
		// success too.
		{"trade-off",
			[]sweep.PointData{
				point("k=10", []*float64{fp(90), fp(91)}, []float64{0.84, 0.84}),
				point("k=3", []*float64{fp(95), fp(96)}, []float64{0.88, 0.88}),
			}, true,
			[]string{"k=10 recovers fastest: 90.5 s", "Highest success: k=3, 88.0% [88.0%, 88.0%]; the fastest, k=10, has 84.0% [84.0%, 84.0%]."}, nil},
		{"partial and never",
			[]sweep.PointData{
				point("k=1.1", []*float64{nil, nil}, []float64{0.3, 0.3}),
				point("k=1.5", []*float64{fp(300), nil}, []float64{0.6, 0.7}),
				point("k=2", []*float64{fp(150), fp(150)}, []float64{0.8, 0.8}),
				point("none", []*float64{nil, nil}, []float64{0.2, 0.2}),
			}, true,
			[]string{"k=2 recovers fastest: 150 s [150, 150]; k=1.5 recovers in 1 of 2 runs; k=1.1 and none never recover."}, nil},
		{"none recovers",
			[]sweep.PointData{point("a", []*float64{nil}, []float64{0.3}), point("b", []*float64{nil}, []float64{0.4})}, true,
			[]string{"No point recovers in every run; a and b never recover.", "Highest success: b, 40.0%."}, []string{"["}},
		{"no fault",
			[]sweep.PointData{noFault("1 attempt", []float64{0.9, 0.9}, []float64{1, 1}), noFault("3 attempts", []float64{0.99, 0.99}, []float64{1.5, 1.5})}, true,
			[]string{"Highest success: 3 attempts, 99.0% [99.0%, 99.0%].", "Least amplification: 1 attempt, 1.00 attempts per request [1.00, 1.00]."}, []string{"recover"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(SweepVerdict(c.pts, c.paired), " ")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("verdict %q lacks %q", got, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got, w) {
					t.Errorf("verdict %q has %q", got, w)
				}
			}
		})
	}
}

// The comparison's verdict: how many times faster or slower each run
// recovers than the baseline, and its success against the baseline's in
// percentage points.
func TestCompareVerdict(t *testing.T) {
	one := func(label string, rec *float64, success float64) sweep.PointData {
		return point(label, []*float64{rec}, []float64{success})
	}
	for _, c := range []struct {
		name     string
		pts      []sweep.PointData
		baseline int
		want     string
	}{
		{"faster", []sweep.PointData{one("A", fp(152), 0.82), one("B", fp(10), 0.874)}, 0,
			"B recovers 15× faster than A (10.0 s vs 152 s); success +5.4 points (87.4% vs 82.0%)."},
		{"slower, baseline second", []sweep.PointData{one("A", fp(152), 0.82), one("B", fp(47.5), 0.874)}, 1,
			"A recovers 3.2× slower than B (152 s vs 47.5 s); success -5.4 points (82.0% vs 87.4%)."},
		{"only the baseline recovers", []sweep.PointData{one("A", fp(30), 0.9), one("B", nil, 0.5)}, -1,
			"B does not recover; A does (30.0 s after the fault); success -40.0 points (50.0% vs 90.0%)."},
		{"only the other recovers", []sweep.PointData{one("A", nil, 0.5), one("B", fp(30), 0.9)}, 0,
			"B recovers (30.0 s after the fault); A does not; success +40.0 points (90.0% vs 50.0%)."},
		{"replications give an interval", []sweep.PointData{
			point("A", []*float64{fp(100), fp(110)}, []float64{0.80, 0.81}),
			point("B", []*float64{fp(50), fp(55)}, []float64{0.90, 0.93})}, 0,
			"B recovers 2.0× faster than A (52.5 s vs 105 s); success +11.0 points [-1.7, +23.7] (91.5% vs 80.5%)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(CompareVerdict(c.pts, c.baseline), " ")
			if got != c.want {
				t.Errorf("verdict\n %q, want\n %q", got, c.want)
			}
		})
	}
}

// A run's verdict: whether and when it recovered, its success and its
// peak load.
func TestRunVerdict(t *testing.T) {
	for _, c := range []struct {
		name string
		doc  rundir.SummaryDoc
		want string
	}{
		{"recovered", rundir.SummaryDoc{Run: rundir.RunInfo{Status: "complete"}, Summary: metrics.Summary{SuccessRatio: fp(0.8201), PeakReceivedOverCapacity: fp(2.995), FaultLoadOverCapacity: fp(3.281),
			Recovery: metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: fp(152), RecoveredAtS: fp(332)}}},
			"Recovered 152 s after the fault ended (at 332 s). Success 82.0%; peak load 3.00× capacity; 3.28× the capacity left during the fault."},
		{"second outage", rundir.SummaryDoc{Summary: metrics.Summary{SuccessRatio: fp(0.5),
			Recovery: metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: fp(20), RecoveredAtS: fp(200), SecondOutage: true, SecondOutageAtS: fp(260)}}},
			"Recovered 20 s after the fault ended (at 200 s), then lost its goodput again at 260 s. Success 50.0%."},
		{"did not recover", rundir.SummaryDoc{Run: rundir.RunInfo{Status: "incomplete"}, Summary: metrics.Summary{SuccessRatio: fp(0.18),
			Recovery: metrics.Recovery{Applicable: true, Reason: "goodput did not return"}}},
			"Did not recover: goodput did not return. Success 18.0%. The run is incomplete: these figures cover only the part that ran."},
		{"no fault", rundir.SummaryDoc{Summary: metrics.Summary{Recovery: metrics.Recovery{Reason: "no fault in the scenario"}}},
			"Nothing to recover from (no fault in the scenario)."},
		// A service graph: the most overloaded service's peak, not the
		// entry's (whose workers wait on their calls).
		{"graph", rundir.SummaryDoc{Summary: metrics.Summary{SuccessRatio: fp(0.252), PeakReceivedOverCapacity: fp(0.0194), FaultLoadOverCapacity: fp(0.0116),
			Recovery: metrics.Recovery{Applicable: true, Reason: "no return"}},
			Graph: &sim.GraphSummary{EntryService: "frontend", MostOverloaded: "database", Services: []sim.GraphLine{
				{Name: "database", PeakLoadOverCapacity: fp(2.41)}, {Name: "frontend", PeakLoadOverCapacity: fp(0.0194)}}}},
			"Did not recover: no return. Success 25.2%; most overloaded: database, peak load 2.41× its capacity."},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(RunVerdict(&c.doc), " "); got != c.want {
				t.Errorf("verdict\n %q, want\n %q", got, c.want)
			}
		})
	}
}

// Every metric of the pages, and every figure a threshold can name, has
// a name for people: no underscores.
func TestMetricLabels(t *testing.T) {
	names := threshold.Names()
	for _, m := range Metrics {
		names = append(names, m.Name)
	}
	for _, n := range names {
		if l := MetricLabel(n); strings.Contains(l, "_") {
			t.Errorf("%s: label %q", n, l)
		}
	}
}

func TestShow(t *testing.T) {
	for _, c := range []struct {
		metric string
		x      float64
		want   string
	}{
		{"success_ratio", 0.7907, "79.1%"},
		{"success_ratio", 1, "100.0%"},
		{"local_drop_rate", 0, "0.0%"},
		{"fault_success_ratio", 0.003364, "0.34%"},
		{"backend_received", 533394, "533,394"},
		{"backend_received", 530578.4, "530,578"},
		{"connect_attempts", 1e6, "1,000,000"},
		{"peak_received_over_capacity", 2.995, "2.995"},
		{"fault_load_over_effective_capacity", 3.281, "3.281"},
		{"latency_p99_ms", 2142.3, "2,142"},
		{"recovery_time_s", -60.41, "-60.41"},
		{"time_above_capacity_s", 12345.6, "12,346"},
	} {
		if got := Show(c.metric, c.x); got != c.want {
			t.Errorf("Show(%s, %v) = %q, want %q", c.metric, c.x, got, c.want)
		}
	}
}

func TestParamLabel(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"clients.throttle.k", "throttle K"},
		{"clients.retry.max_attempts", "max attempts"},
		{"clients.arrival.profile.1.at (s)", "profile #1 at (s)"},
		{"backend.queue.codel_target", "queue codel target"},
		{"faults.0.duration", "faults #0 duration"},
		{"seed", "seed"},
	} {
		if got := ParamLabel(c.path); got != c.want {
			t.Errorf("ParamLabel(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

// The fields two scenarios differ in: a changed value old → new, and a
// section one has and the other sets to null as one row.
func TestScenarioDiff(t *testing.T) {
	a := &scenario.Scenario{Name: "a", Seed: 1, Clients: scenario.Clients{Count: 10, Policies: scenario.Policies{Throttle: &scenario.Throttle{K: 2}}}}
	b := &scenario.Scenario{Name: "b", Seed: 2, Clients: scenario.Clients{Count: 10}}
	d, err := ScenarioDiff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FieldDiff{}
	for _, f := range d {
		got[f.Path] = f
	}
	if f := got["seed"]; f.Old != "1" || f.New != "2" {
		t.Errorf("seed: %+v", f)
	}
	if f := got["clients.throttle"]; !strings.HasPrefix(f.Old, "{") || !strings.Contains(f.Old, "k: 2") || f.New != "null" {
		t.Errorf("clients.throttle: %+v", f)
	}
	for p := range got {
		if strings.HasPrefix(p, "clients.throttle.") || p == "name" || p == "clients.count" {
			t.Errorf("%s listed: %+v", p, got[p])
		}
	}
	// And the other way round.
	d, err = ScenarioDiff(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || d[0].Path != "seed" || d[1].Path != "clients.throttle" || d[1].Old != "null" || !strings.Contains(d[1].New, "k: 2") {
		t.Errorf("b against a: %+v", d)
	}
	if d, err := ScenarioDiff(a, a); err != nil || len(d) != 0 {
		t.Errorf("a against itself: %v, %v", d, err)
	}
}

// A list of plain values is one field; a list one scenario has and the
// other does not is one row, not a row per field of every item.
func TestScenarioDiffLists(t *testing.T) {
	a := &scenario.Scenario{Clients: scenario.Clients{Policies: scenario.Policies{Retry: &scenario.Retry{RetryOn: []string{"rejected", "timeout"}}}}}
	b := &scenario.Scenario{Clients: scenario.Clients{Policies: scenario.Policies{Retry: &scenario.Retry{RetryOn: []string{"timeout"}}}},
		Faults: []scenario.Fault{{Kind: scenario.FaultOutage}, {Kind: scenario.FaultCapacity}}}
	d, err := ScenarioDiff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"clients.retry.retry_on": {"[rejected, timeout]", "[timeout]"},
	}
	for _, f := range d {
		if f.Path == "faults" {
			if f.Old != "[]" && f.Old != "null" || !strings.HasPrefix(f.New, "{0.kind: outage") {
				t.Errorf("faults: %+v", f)
			}
			continue
		}
		w, ok := want[f.Path]
		if !ok {
			t.Errorf("unexpected row %+v", f)
			continue
		}
		if f.Old != w[0] || f.New != w[1] {
			t.Errorf("%s: %q → %q, want %q → %q", f.Path, f.Old, f.New, w[0], w[1])
		}
		delete(want, f.Path)
	}
	if len(d) != 2 || len(want) != 0 {
		t.Errorf("rows %+v; missing %v", d, want)
	}
}

// Several runs' differences are one table: a row per field in which any
// run differs from the reference, every run's value in it (the value of
// a run that does not differ too, and of a field a run has not).
func TestScenarioDiffs(t *testing.T) {
	th := func(k float64) *scenario.Throttle { return &scenario.Throttle{K: k} }
	scs := []*scenario.Scenario{
		{Name: "a", Seed: 1, Clients: scenario.Clients{Policies: scenario.Policies{Throttle: th(2)}}},
		{Name: "b", Seed: 1, Clients: scenario.Clients{}},
		{Name: "c", Seed: 3, Clients: scenario.Clients{Policies: scenario.Policies{Throttle: th(3)}}},
	}
	rows, err := ScenarioDiffs(scs, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	var paths []string
	for _, r := range rows {
		got[r.Path] = r.Values
		paths = append(paths, r.Path)
	}
	if want := []string{"clients.throttle", "seed", "clients.throttle.k"}; !slices.Equal(paths, want) {
		t.Fatalf("got rows %v, want %v", paths, want)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{"seed", []string{"1", "1", "3"}},
		{"clients.throttle.k", []string{"2", "", "3"}},
	} {
		if !slices.Equal(got[c.path], c.want) {
			t.Errorf("%s: got %q, want %q", c.path, got[c.path], c.want)
		}
	}
	if v := got["clients.throttle"]; !strings.Contains(v[0], "k: 2") || v[1] != "null" || !strings.Contains(v[2], "k: 3") {
		t.Errorf("clients.throttle: got %q, want the sections of a and c and null for b", v)
	}

	// Compared without a baseline, the page reads the runs against the
	// first: a matrix, marked so.
	var pts []sweep.PointData
	for _, sc := range scs {
		pts = append(pts, sweep.PointData{Label: sc.Name, Runs: []sweep.RunData{{Doc: &rundir.SummaryDoc{Scenario: sc,
			Summary: metrics.Summary{SuccessRatio: fp(0.5)}}}}})
	}
	p, err := ComparisonPage("compare", Comparison{Name: "x", Points: pts, Baseline: -1}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Matrix == nil || !p.Matrix.First || p.Matrix.Baseline != "a" || !slices.Equal(p.Matrix.Points, []string{"b", "c"}) {
		t.Errorf("got matrix %+v, want b and c against the first run a", p.Matrix)
	}
	if len(p.Diff.Rows) != 3 || !slices.Equal(p.Diff.Runs, []string{"a", "b", "c"}) {
		t.Errorf("got diff %+v, want 3 rows over a, b, c", p.Diff)
	}
}
