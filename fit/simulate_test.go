package fit

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/trace"
)

// The scenario fitted from the real run (testdata/serve-outage), loaded
// as Write writes it (scenario.yaml with arrivals.csv beside it, read by
// scenario.Load, no edit) and run by sim.Run over 5 seeds, simulates what
// Prometheus recorded. Only the client timeout is the load generator's
// (5 s, no retries; the fitted default is 2 s, which no request in this
// run reaches). Tolerances:
//   - served and rejected over the window: the simulated rejection rate
//     within 0.03 of the recorded 18.1% (the 15 s at 300 req/s decide it;
//     the recording's arrivals were evenly spaced, the simulation's are
//     Poisson), goodput within 5% of the recorded 2xx total;
//   - per 5 s step, goodput within 10% on average (mean absolute error
//     over the recorded mean) and the recorded p50 within 30% of the
//     simulated one on average (the recorded quantile is interpolated in
//     buckets 5–10–25–50 ms wide).
func TestFittedScenarioAsWritten(t *testing.T) {
	r, err := Fit(context.Background(), Files{Dir: filepath.Join("testdata", "serve-outage")}, Conventions["throttlesim"], `job="serve"`, Window{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Name: "replay", Clients: 100, Source: "testdata"}
	sc, err := r.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Clients.Arrival.Trace == nil {
		t.Fatal("the fitted scenario has no arrival trace")
	}
	sc.Clients.Timeout = scenario.Duration(5e9)
	c, err := r.Simulate(context.Background(), sc, []uint64{1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	var recOK, recRej, simOK, simRej float64
	gp, rj := c.Get(SeriesGoodput), c.Get(SeriesRejections)
	for k := range gp.Recorded {
		recOK += gp.Recorded[k]
		recRej += rj.Recorded[k]
		simOK += gp.Mean[k]
		simRej += rj.Mean[k]
	}
	if rel := math.Abs(simOK-recOK) / recOK; rel > 0.05 {
		t.Errorf("goodput over the window: got %.0f simulated, want the recorded %.0f ± 5%% (off by %.1f%%)", simOK*5, recOK*5, 100*rel)
	}
	rejRate := simRej / (simOK/(1-r.ErrorRate) + simRej)
	if math.Abs(rejRate-r.RejectRate) > 0.03 {
		t.Errorf("rejection rate: got %.4f simulated, want the recorded %.4f ± 0.03", rejRate, r.RejectRate)
	}
	if gp.Rel > 0.10 {
		t.Errorf("goodput per step: got a mean absolute error of %.1f%% of the recorded mean, want <= 10%%", 100*gp.Rel)
	}
	if p := c.Get(SeriesP50); p.Steps < 10 || p.Rel > 0.30 {
		t.Errorf("latency p50 per step: got %d steps compared with a relative error of %.0f%%, want >= 10 steps within 30%%", p.Steps, 100*p.Rel)
	}
	t.Logf("%s", c.Verdict)
	for _, x := range c.Series {
		t.Logf("%s: recorded %v\n  simulated %v", x.Name, x.Recorded, x.Mean)
	}
}

// fit's arrivals.csv is read by the trace contract's CSV reader as fit
// means it: a header, time from 0 by the step, and the last row's rate
// holding to the end of the window (duration = rows × step).
func TestArrivalsCSVReadsBack(t *testing.T) {
	r, err := Fit(context.Background(), Files{Dir: filepath.Join("testdata", "serve-outage")}, Conventions["throttlesim"], `job="serve"`, Window{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ParseCSV(r.ArrivalsCSV(), "time", "rate", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(r.Arrivals)) * int64(r.Step); tr.End != want {
		t.Errorf("the trace's end: got %d ns, want rows × step = %d ns", tr.End, want)
	}
	if len(tr.T) != len(r.Arrivals) {
		t.Fatalf("rows: got %d, want %d", len(tr.T), len(r.Arrivals))
	}
	for k := range tr.T {
		if want := int64(k) * int64(r.Step); tr.T[k] != want || tr.Rate[k] != r.Arrivals[k] {
			t.Errorf("row %d: got (%d ns, %g), want (%d ns, %g)", k, tr.T[k], tr.Rate[k], want, r.Arrivals[k])
		}
	}
	var want float64
	for _, v := range r.Arrivals {
		want += v * r.Step.Seconds()
	}
	sc, err := r.Load(Options{Name: "x", Clients: 100, Source: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(sc.Duration) / 1e9; got != float64(len(r.Arrivals))*r.Step.Seconds() {
		t.Errorf("duration: got %gs, want %d rows × %s", got, len(r.Arrivals), r.Step)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Poisson: the count within 4 standard deviations of the trace's integral.
	if got := float64(res.Summary.Offered); math.Abs(got-want) > 4*math.Sqrt(want) {
		t.Errorf("requests simulated: got %.0f, want the trace's %.0f ± %.0f", got, want, 4*math.Sqrt(want))
	}
}
