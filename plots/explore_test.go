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
