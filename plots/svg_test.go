package plots

import (
	"regexp"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// RenderSVG: a group per named series, a hover column per interval with
// every series' value, no XML declaration, nothing fetched.
func TestRenderSVG(t *testing.T) {
	s := &metrics.Series{Interval: 1e9}
	for i := range 10 {
		s.Rows = append(s.Rows, metrics.Row{Received: int64(1000 * i), Succeeded: int64(i)})
	}
	ps, ls, err := serverLoadPanels(Input{Name: "t", Series: s, CapacityRPS: 100, Workers: 10})
	if err != nil {
		t.Fatal(err)
	}
	b, names, err := RenderSVG(ps, ls, Height, "t", " s")
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	if len(names) < 2 || names[0] != "received" {
		t.Fatalf("got series %q, want received first and the capacity", names)
	}
	for k := range names {
		if !strings.Contains(svg, `<g class="ser ser-`+string(rune('0'+k))+`">`) {
			t.Errorf("no group for series %d (%s)", k, names[k])
		}
	}
	titles := regexp.MustCompile(`<title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
	if len(titles) != 10 {
		t.Fatalf("got %d hover titles, want one per interval (10)", len(titles))
	}
	if got, want := titles[3][1], "t = 3 s\nreceived: 3,000"; !strings.HasPrefix(got, want) {
		t.Errorf("got title %q, want it to start %q", got, want)
	}
	if !strings.HasPrefix(svg, "<svg") || strings.Contains(svg, "translate(0, -1e-09)") {
		t.Errorf("got %.80q…, want an <svg> element with its markers replaced", svg)
	}
}
