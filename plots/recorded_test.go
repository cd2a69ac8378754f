package plots

import (
	"bytes"
	"image/png"
	"math"
	"testing"
)

// The recorded-vs-simulated chart draws series with holes (NaN: no
// latency where nothing completed, a step no seed has), a band of one
// step, a series that is 0 everywhere and no faults, one panel per series.
func TestRecordedRenders(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		name   string
		faults []Fault
		panels []RecordedPanel
	}{
		{"holes and a fault", []Fault{{Start: 10e9, End: 20e9, Label: "outage", Outage: true}}, []RecordedPanel{
			{Title: "goodput", YLabel: "req/s", Recorded: []float64{1, 2, 0, 0, 3}, Mean: []float64{1, 2, 0, 0, 3}, Lo: []float64{0.5, 1, 0, 0, 2}, High: []float64{2, 3, 0, 0, 4}},
			{Title: "p50", YLabel: "ms", Recorded: []float64{nan, 5, nan, nan, 6}, Mean: []float64{4, nan, nan, 7, 6}, Lo: []float64{3, nan, nan, 6, 5}, High: []float64{5, nan, nan, 8, 7}},
		}},
		{"nothing recorded", nil, []RecordedPanel{
			{Title: "p99", YLabel: "ms", Recorded: []float64{nan, nan}, Mean: []float64{nan, nan}, Lo: []float64{nan, nan}, High: []float64{nan, nan}},
		}},
		{"zero everywhere, no faults", nil, []RecordedPanel{
			{Title: "rejections", YLabel: "req/s", Recorded: []float64{0, 0}, Mean: []float64{0, 0}, Lo: []float64{0, 0}, High: []float64{0, 0}},
		}},
	} {
		b, err := Recorded(RecordedInput{Title: "t", StepS: 5, Seeds: 3, Faults: tt.faults, Panels: tt.panels})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || img.Bounds().Dx() < 800 {
			t.Errorf("%s: got %v, %v; want a PNG at least 800 wide", tt.name, err, img.Bounds())
		}
	}
}
