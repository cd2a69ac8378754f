package rundir

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

var update = flag.Bool("update", false, "rewrite docs/summary.schema.json and the golden files in testdata/")

// runScenario simulates scenarios/name.
func runScenario(t testing.TB, name string, sets ...string) *sim.Result {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "..", "scenarios", name), sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return res
}

func groupNames(r *sim.Result) (out []string) {
	for _, g := range r.Groups {
		out = append(out, g.Name)
	}
	return out
}

func serviceNames(r *sim.Result) (out []string) {
	for _, s := range r.Services {
		out = append(out, s.Name)
	}
	return out
}
