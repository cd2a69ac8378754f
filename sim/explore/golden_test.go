package explore

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// The CSV outputs of a map and a tuning of the synthetic models, byte for
// byte: a change of the search (its probes, seeds or stopping rules) or of
// the files' layout shows here.
func TestGoldenOutputs(t *testing.T) {
	m, err := Map(context.Background(), logisticMap(t, func(l float64) float64 { return 10 - l }, 0.2), MapConfig{
		Load:    Range{Path: "load", Lo: 1, Hi: 8, Steps: 3},
		Trigger: Range{Path: "trigger", Lo: 0, Hi: 12, Unit: "s"},
		Jobs:    3,
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "map.csv", m.MapCSV())
	golden(t, "boundary.csv", m.BoundaryCSV())
	c := TuneConfig{
		Params:      []Range{{Path: "k", Lo: 1, Hi: 4}},
		Objective:   "backend_load_rps",
		Constraints: []Constraint{{Metric: "local_drop_rate", AtMost: true, Bound: 0.6}},
		Budget:      100, Jobs: 3,
	}
	r, err := Tune(context.Background(), linearTune, c)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tune.csv", r.TuneCSV(c))
}
