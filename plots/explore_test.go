package plots

import (
	"bytes"
	"image/png"
	"math"
	"testing"
)

func TestExploreChartsRender(t *testing.T) {
	inf := math.Inf(1)
	charts := map[string]func() ([]byte, error){
		"map": func() ([]byte, error) {
			return Map(MapInput{Title: "t", LoadLabel: "load (/s)", TriggerLabel: "trigger (s)", TriggerLo: 0, TriggerHi: 10,
				Cells:    []MapCell{{1, 0, 0, true}, {1, 10, 1, true}, {2, 0, 0.5, true}, {2, 10, 1, true}, {1, 5, 0.3, false}},
				Boundary: []MapBoundary{{Load: 1, Threshold: 5, Lo: 4, Hi: 6, Kind: "bracketed"}, {Load: 2, Threshold: math.NaN(), Lo: math.NaN(), Hi: 0, Kind: "below"}}})
		},
		// Candidates without a value (a recovery time that never came) are
		// left out, not an error.
		"pareto": func() ([]byte, error) {
			return Pareto(ParetoInput{Title: "t", ObjectiveLabel: "o", ConstraintLabel: "c", Bound: 0.6, AtMost: true,
				Points: []TunePoint{{1, 0.5, true, true}, {2, 0.4, true, false}, {0.5, 0.7, false, false}, {inf, 0.1, false, false}, {1, math.NaN(), false, false}}})
		},
		"sensitivity": func() ([]byte, error) {
			return Sensitivity("t", "o", []SensitivityPanel{
				{Param: "k", Values: []float64{1, 2, 3}, Mean: []float64{1, 2, inf}, Lo: []float64{0.9, 1.9, inf}, Hi: []float64{1.1, 2.1, inf}, Feasible: []bool{false, true, true}, Best: 2},
				{Param: "n", Values: []float64{1, 2}, Mean: []float64{3, 4}, Lo: []float64{math.NaN(), 3.9}, Hi: []float64{math.NaN(), 4.1}, Feasible: []bool{true, true}, Best: 1}})
		},
	}
	for name, f := range charts {
		b, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || img.Bounds().Dx() < 800 || img.Bounds().Dy() < 400 {
			t.Errorf("%s: got %v, %v; want a PNG of at least 800×400", name, err, img.Bounds())
		}
	}
}

// map.png zooms to the boundary when it lies in a small part of the
// trigger range (issue 21: a 3.8 s spike's boundary lived in the bottom
// 15% of a plot that was one block), and not otherwise.
func TestMapView(t *testing.T) {
	br := func(lo, hi float64) MapBoundary {
		return MapBoundary{Load: 1, Threshold: (lo + hi) / 2, Lo: lo, Hi: hi, Kind: "bracketed"}
	}
	for _, tt := range []struct {
		name   string
		b      []MapBoundary
		lo, hi float64
		zoom   bool
	}{
		{"narrow band near the bottom", []MapBoundary{br(1, 2), br(2.5, 3)}, 0, 4, true}, // band 2, pad 1, clipped at 0
		{"narrow band in the middle", []MapBoundary{br(10, 11)}, 9, 12, true},            // pad max(0.5, 1) = 1
		{"band over half the range", []MapBoundary{br(2, 12)}, 0, 20, false},
		{"no bracketed level", []MapBoundary{{Load: 1, Kind: "above"}}, 0, 20, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, zoom := MapView(MapInput{TriggerLo: 0, TriggerHi: 20, Boundary: tt.b})
			if lo != tt.lo || hi != tt.hi || zoom != tt.zoom {
				t.Errorf("got [%g, %g] zoomed %v, want [%g, %g] %v", lo, hi, zoom, tt.lo, tt.hi, tt.zoom)
			}
		})
	}
}

// The shaded regions follow the boundary line: the line through the
// levels' thresholds (a level above the range at the view's top), held
// flat to the outer cells' edges, and clipped exactly to the view.
func TestBoundaryLineClipped(t *testing.T) {
	in := MapInput{TriggerLo: 0, TriggerHi: 20, Boundary: []MapBoundary{
		{Load: 2, Threshold: 5, Lo: 4, Hi: 6, Kind: "bracketed"},
		{Load: 1, Kind: "above"},
		{Load: 3, Threshold: 1, Lo: 0.5, Hi: 1.5, Kind: "bracketed"},
	}}
	got := clipY(boundaryLine(in, 0.5, 0, 10), 0, 10)
	want := []struct{ X, Y float64 }{{0.5, 10}, {1, 10}, {2, 5}, {3, 1}, {3.5, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A line drawn in the full range [0, 20], then clipped to [0, 10],
	// crosses y = 10 between the level above (1, 20) and (2, 5): x = 1 + 10/15.
	if full := clipY(boundaryLine(in, 0.5, 0, 20), 0, 10); len(full) != 6 || math.Abs(full[2].X-(1+10.0/15)) > 1e-12 || full[2].Y != 10 {
		t.Errorf("clipped from the full range: got %v", full)
	}
	for i := range want {
		if math.Abs(got[i].X-want[i].X) > 1e-12 || math.Abs(got[i].Y-want[i].Y) > 1e-12 {
			t.Errorf("point %d: got %v, want %v", i, got[i], want[i])
		}
	}
	// A view of [2, 8]: the level above the range sits at its top (8), and
	// the segment (2,5)–(3,1) is cut where it crosses y = 2 (x = 2.75).
	got = clipY(boundaryLine(in, 0.5, 2, 8), 2, 8)
	want = []struct{ X, Y float64 }{{0.5, 8}, {1, 8}, {2, 5}, {2.75, 2}, {3, 2}, {3.5, 2}}
	if len(got) != len(want) {
		t.Fatalf("clipped: got %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i].X-want[i].X) > 1e-12 || math.Abs(got[i].Y-want[i].Y) > 1e-12 {
			t.Errorf("clipped point %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
