package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func fp(x float64) *float64 { return &x }

// point is a point of runs with the given recovery times (nil: did not
// recover) and success ratios.
func point(label string, rec []*float64, success []float64) sweep.PointData {
	pt := sweep.PointData{Label: label}
	for i := range rec {
		doc := &rundir.SummaryDoc{Scenario: &scenario.Scenario{Name: "golden"}, Summary: metrics.Summary{
			SuccessRatio: fp(success[i]),
			Recovery:     metrics.Recovery{Applicable: true, Recovered: rec[i] != nil, RecoveryTimeS: rec[i]},
		}}
		pt.Runs = append(pt.Runs, sweep.RunData{Doc: doc})
	}
	return pt
}

// The page of a small comparison, byte for byte (go test ./report -update
// rewrites it): the verdict first, summary with intervals (shares as
// percentages), threshold verdicts in words, the matrix of differences
// from the baseline, an added section, links.
func TestHTMLGolden(t *testing.T) {
	pts := []sweep.PointData{
		point("k=2", []*float64{fp(30), fp(40), fp(35)}, []float64{0.9, 0.92, 0.91}),
		point("no throttle", []*float64{nil, fp(200), nil}, []float64{0.5, 0.6, 0.55}),
	}
	c := Comparison{Name: "golden <sweep>", Points: pts, Baseline: 0, Paired: true}
	th, err := threshold.Parse("recovery_s<=120")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := CheckPoint(pts[1], []threshold.Threshold{th})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ComparisonPage("sweep", c, []PointVerdicts{{Label: "no throttle", Verdicts: vs}}, nil,
		[]Text{{Label: "base", Body: "name: golden\nduration: 5m\n"}}, []Fact{{Name: "points", Value: "2"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Sections = []Section{{ID: "map", Title: "Map", HTML: "<p>added by another command</p>"}}
	got, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "comparison.html")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the rendered page (go test ./report -update rewrites it)", path)
	}
	s := string(got)
	for _, w := range []string{
		"golden &lt;sweep&gt;", // escaped
		`data-point="k=2" data-metric="recovery_time_s" data-stat="mean" data-value="35"`,
		"✗ 1 of 1 thresholds failed",
		"0 of 3 runs pass, 2 without a value; worst recovery time (s after the fault) = 200",
		`<a href="#map">Map</a>`, `<h2 id="map">`, "<p>added by another command</p>",
		// The verdict first, then the matrix: no throttle against k=2.
		`<div id="verdict" class="verdict"><p>k=2 recovers fastest: 35.0 s [22.6, 47.4]; no throttle recovers in 1 of 3 runs.</p><p>Highest success: k=2, 91.0% [88.5%, 93.5%].</p></div>`,
		`<td class="num worse" title="recovery time (s after the fault): 200.0 against 35.00 for k=2; ratio × 5.714; difference &#43;160.0; worse">&#43;160.0</td>`,
		`<td class="num worse" title="success: 55.0% against 91.0% for k=2; ratio × 0.6044; difference -36.0 points [-45.9, -26.1] (95% interval of the paired differences); worse">-36.0 points<span class="ci">[-45.9, -26.1]</span></td>`,
	} {
		if !strings.Contains(s, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0"}, {207, "207.0"}, {0.87330512, "0.8733"}, {251989, "251989"}, {-0.0001757, "-0.0001757"}, {1.0, "1.000"}} {
		if got := Num(c.x); got != c.want {
			t.Errorf("Num(%v): got %s, want %s", c.x, got, c.want)
		}
	}
}
