package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/sweep"
)

func TestShortLabels(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		want   []string
	}{
		{"plain values stay", []string{"k=2", "k=3", "no throttle"}, []string{"k=2", "k=3", "no throttle"}},
		{"a section: the fields that differ", []string{"x=1, budget={kind: sre, ratio: 0.1}", "x=1, budget={kind: finagle, ratio: 0.1}"},
			[]string{"x=1, kind=sre", "x=1, kind=finagle"}},
		{"nested and missing fields", []string{"retry={max_attempts: 3, budget: {kind: sre}}", "retry={max_attempts: 3, budget: null}"},
			[]string{"kind=sre", "budget=null"}},
		{"cut long", []string{"a={p: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}", "a={p: b}"}, []string{"p=aaaaaaaaaaaaaaaaaaaaaaaaa…", "p=b"}},
		{"not told apart: as they were", []string{"a={p: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaX}", "a={p: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaY}"},
			[]string{"a={p: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaX}", "a={p: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaY}"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ShortLabels(c.labels)
			if len(c.want) == 0 { // only: unique and shorter
				for i, g := range got {
					if len(g) >= len(c.labels[i]) {
						t.Errorf("got %q, want shorter than %q", g, c.labels[i])
					}
				}
				if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
					t.Errorf("got %q, want every point told apart", got)
				}
				return
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// The shipped sweeps' generated labels, as the terminal's table shows
// them: every point told apart, none longer than 50 runes (the
// structured ones were up to 105).
func TestShortLabelsShippedSweeps(t *testing.T) {
	var files []string
	for _, g := range []string{"../scenarios/*.yaml", "../docs/experiments/*/*.yaml"} {
		fs, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A sweep file; not a fragment that an experiment appends to a
		// scenario it makes (replay's whatif-sweep.yaml has no name:).
		if !strings.Contains(string(data), "\nsweep:") || !strings.HasPrefix(string(data), "name:") && !strings.Contains(string(data), "\nname:") {
			continue
		}
		p, err := sweep.NewPlan(f, data, sweep.PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var labels []string
		for _, pt := range p.Points {
			labels = append(labels, pt.Label)
		}
		got := ShortLabels(labels)
		if !slices.Equal(got, labels) {
			t.Logf("%s: %q", filepath.Base(f), got)
		}
		seen := map[string]bool{}
		for i, g := range got {
			if seen[g] {
				t.Errorf("%s: %q shown twice", f, g)
			}
			seen[g] = true
			if r := len([]rune(g)); r > 50 {
				t.Errorf("%s: got %q (%d runes) for %q, want at most 50", filepath.Base(f), g, r, labels[i])
			}
		}
		n++
	}
	if n < 10 {
		t.Errorf("found %d sweeps, want the shipped ones", n)
	}
}

// A sweep's page heads its columns with the short labels, the full name
// on hover; data-point keeps the name.
func TestSweepPageShortLabels(t *testing.T) {
	pts := []sweep.PointData{point("budget=null", []*float64{fp(30)}, []float64{0.9}), point("budget={kind: sre, ratio: 0.1}", []*float64{fp(20)}, []float64{0.95}),
		point("budget={kind: grpc}", []*float64{fp(25)}, []float64{0.93})}
	p, err := ComparisonPage("sweep", Comparison{Name: "s", Points: pts, Baseline: 0, Paired: true}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{p.Summary.Rows[0].Shown, p.Summary.Rows[1].Shown, p.Summary.Rows[2].Shown}; !slices.Equal(got, []string{"budget=null", "kind=sre", "kind=grpc"}) {
		t.Errorf("got summary headers %q, want budget=null, kind=sre and kind=grpc", got)
	}
	if p.Matrix == nil || !slices.Equal(p.Matrix.Shown, []string{"kind=sre", "kind=grpc"}) {
		t.Errorf("got matrix %+v, want its columns shown as kind=sre and kind=grpc", p.Matrix)
	}
	if got := strings.Join(p.Verdict, " "); !strings.HasPrefix(got, "kind=sre recovers fastest") {
		t.Errorf("got verdict %q, want it to name the point kind=sre", got)
	}
	html, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<th data-point="budget={kind: sre, ratio: 0.1}" title="budget={kind: sre, ratio: 0.1}">kind=sre</th>`; !strings.Contains(string(html), want) {
		t.Errorf("page lacks %q", want)
	}
}
