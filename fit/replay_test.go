package fit

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// The scenario fitted from the real run (testdata/serve-outage) simulates
// what the run recorded, with its trace replaced by the load generator's
// known schedule as a profile (100 req/s, 300 from 65 s: what
// arrivals.csv holds, step by step) and the generator's 5 s timeout
// without retries; workers, queue, service histogram, error rate and the
// outage are the fit's. The simulated rejection rate (503s over answers)
// must be within 0.03 of the recorded one, and the error rate within
// 0.015 of the recorded 5% (5 SE of a binomial over ~7,400 served is
// 0.013). The arrival process differs (Poisson here, constant gaps in
// the run), which changes little: the rejections come from the 15 s at
// 300 req/s over a capacity of ~190. TestFittedScenarioAsWritten runs the
// scenario as fit writes it, trace and all.
func TestFittedScenarioSimulatesTheRecordedRun(t *testing.T) {
	r, err := Fit(context.Background(), Files{Dir: filepath.Join("testdata", "serve-outage")}, Conventions["throttlesim"], `job="serve"`, Window{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(r.Scenario(Options{Name: "replay", Clients: 100, Source: "testdata"}), &doc); err != nil {
		t.Fatal(err)
	}
	cl := doc["clients"].(map[string]any)
	cl["timeout"] = "5s"
	cl["arrival"] = map[string]any{"process": "poisson", "total_rate": "100/s", "profile": []any{map[string]any{"at": "65s", "multiplier": 3}}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(b, "replay.yaml", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	rej := float64(s.Rejected) / float64(s.Served+s.Rejected)
	if math.Abs(rej-r.RejectRate) > 0.03 {
		t.Errorf("simulated rejection rate: got %.4f (%d rejected, %d served), want the recorded %.4f ± 0.03", rej, s.Rejected, s.Served, r.RejectRate)
	}
	if er := float64(s.Errors) / float64(s.Served); math.Abs(er-0.05) > 0.015 {
		t.Errorf("simulated error rate: got %.4f, want 0.05 ± 0.015", er)
	}
	t.Logf("simulated: %d received, %d served, %d rejected (%.4f; recorded %.4f), %d errors, %d failed in the outage",
		s.Received, s.Served, s.Rejected, rej, r.RejectRate, s.Errors, s.FailedOutage)
}
