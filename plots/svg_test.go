package plots

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

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

// compactPath: axis-aligned L as H and V, anything else left alone.
func TestCompactPath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"M1,2L3,2L3,5L4,6", "M1,2H3V5L4,6", true},
		{"M1,2L3,2L3,5Z", "M1,2H3V5Z", true},
		{"M1,2L3,4ZM5,6L5,8", "M1,2L3,4ZM5,6V8", true},
		{"M1,2L1,2", "M1,2V2", true}, // a dot stays
		{"M1,2L3,2L3,2L5,2L5,4L5,6", "M1,2H5V6", true},
		{"M1,2L3,2L2,2", "M1,2H3H2", true}, // back: both drawn
		{"M1,2L3,2M4,2L6,2", "M1,2H3M4,2H6", true},
		{"M-1.5,2e-05L-1.5,7", "M-1.5,2e-05V7", true},
		{"M1,2A3,3 0 0 1 4,5", "", false},
		{"M1,2L3", "", false},
		{"M1,2Lx,3", "", false},
		{"", "", true},
	} {
		got, ok := compactPath(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("compactPath(%q): got %q, %v, want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Compare's charts over time are SVG too: a group per point (its band
// and its line) and the capacity, a hover column per interval with every
// point's value; its dot charts are PNG alone.
func TestCompareSVG(t *testing.T) {
	band := func(f float64) Band {
		b := Band{}
		for i := range 10 {
			v := f * float64(i)
			b.Mean, b.Lo, b.Hi = append(b.Mean, v), append(b.Lo, v-1), append(b.Hi, v+1)
		}
		return b
	}
	pt := func(label string, f float64) ComparePoint {
		return ComparePoint{Label: label, Received: band(f), Drops: band(f), Goodput: band(f), Handshakes: band(f), HandshakeWork: band(f)}
	}
	in := CompareInput{Name: "c", Varied: "k", Seeds: 3, Interval: 1e9, Capacity: 100,
		Points:  []ComparePoint{pt("k=1", 10), pt("k=2", 20)},
		Figures: []Figure{{File: "f.png", Title: "x", YLabel: "y", Values: []Estimate{{Mean: 1, Lo: 0.5, Hi: 1.5, N: 3}, {Mean: 2, Lo: 1.5, Hi: 2.5, N: 3}}}}}
	charts, err := Compare(in)
	if err != nil {
		t.Fatal(err)
	}
	wantTitles := map[string]int{"compare_server_load.png": 10, "compare_local_drops.png": 10, "compare_goodput.png": 10,
		"compare_connections.png": 20, "f.png": 0}
	for _, c := range charts {
		want, ok := wantTitles[c.File]
		if !ok {
			t.Errorf("unexpected chart %s", c.File)
			continue
		}
		if want == 0 {
			if c.SVG != nil {
				t.Errorf("%s: got an SVG, want PNG alone", c.File)
			}
			continue
		}
		svg := string(c.SVG)
		if len(c.Series) < 2 || c.Series[0] != "k=1" || c.Series[1] != "k=2" {
			t.Errorf("%s: got series %q, want k=1, k=2 first", c.File, c.Series)
		}
		for k := range c.Series {
			if n := strings.Count(svg, fmt.Sprintf(`<g class="ser ser-%d">`, k)); n < 1 {
				t.Errorf("%s: no group for series %d (%s)", c.File, k, c.Series[k])
			}
		}
		titles := regexp.MustCompile(`<title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
		if len(titles) != want {
			t.Errorf("%s: got %d hover titles, want %d (one per interval and panel)", c.File, len(titles), want)
			continue
		}
		if got, want := titles[3][1], "t = 3 s\nk=1: 30\nk=2: 60"; !strings.HasPrefix(got, want) {
			t.Errorf("%s: got title %q, want it to start %q", c.File, got, want)
		}
	}
}

// A panel with more values than maxCells gets columns of several x's,
// titled with the range and each series' mean over it.
func TestWriteColumnsThinned(t *testing.T) {
	pan := &hoverPanel{rect: vg.Rectangle{Max: vg.Point{X: 1000, Y: 100}}}
	var names []string
	for k := range 100 {
		names = append(names, fmt.Sprintf("s%d", k))
		for x := range 100 {
			pan.pts = append(pan.pts, hoverPoint{series: k, x: float64(x), y: float64(x + k), cx: float64(10 * x)})
		}
	}
	var b strings.Builder
	writeColumns(&b, pan, names, "t", " s")
	titles := regexp.MustCompile(`<title>([^<]*)</title>`).FindAllStringSubmatch(b.String(), -1)
	if got, want := len(titles), 50; got != want { // 10,000 values: 2 x's a column
		t.Fatalf("got %d columns, want %d", got, want)
	}
	for _, c := range []struct {
		i    int
		want string
	}{
		{0, "t = 0–2 s, means\ns0: 0.5\ns1: 1.5\n"},
		{49, "t = 98–100 s, means\ns0: 98.5\n"},
	} {
		if got := html.UnescapeString(titles[c.i][1]); !strings.HasPrefix(got, c.want) {
			t.Errorf("column %d: got title %.60q, want it to start %q", c.i, got, c.want)
		}
	}
}
