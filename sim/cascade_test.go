package sim_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

var cascadeTable = flag.String("cascade", "", "run the cascade experiment (docs/experiments/cascade.md) and write its table to this file")

// cascadeVariants are the policies docs/experiments/cascade.md compares
// on scenarios/cascade.yaml, as --set overrides.
var cascadeVariants = []struct {
	label string
	sets  []string
}{
	{"retries at every hop (4 attempts × 3 hops)", nil},
	{"retries at the clients only", []string{"services.frontend.calls.0.retry=null", "services.backend.calls.0.retry=null"}},
	{"SRE retry budget (10%) at every hop", []string{"clients.retry.budget={kind: sre}", "services.frontend.calls.0.retry.budget={kind: sre}", "services.backend.calls.0.retry.budget={kind: sre}"}},
	{"retries at every hop + deadline propagation", []string{"clients.propagate_deadline=true", "services.frontend.propagate_deadline=true", "services.backend.propagate_deadline=true"}},
	{"retry budget + deadline propagation", []string{"clients.retry.budget={kind: sre}", "services.frontend.calls.0.retry.budget={kind: sre}", "services.backend.calls.0.retry.budget={kind: sre}",
		"clients.propagate_deadline=true", "services.frontend.propagate_deadline=true", "services.backend.propagate_deadline=true"}},
}

// cascadeFigures are one run's figures for the table.
type cascadeFigures struct {
	success, dbAmpFault, dbAmp, feAmp, wastedDB, dropped float64
	recovered                                            bool
	recoveryS                                            float64
}

func cascadeRun(t testing.TB, sets []string, seed uint64) cascadeFigures {
	sc, err := scenario.Load("../scenarios/cascade.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	var f cascadeFigures
	f.success = *res.Summary.SuccessRatio
	fe, db := res.Services[0], res.Services[len(res.Services)-1]
	f.dbAmp, f.feAmp = *db.Summary.AttemptsPerRequest, *fe.Summary.AttemptsPerRequest
	if w := db.Summary.WastedWorkFraction; w != nil {
		f.wastedDB = *w
	}
	f.dropped = float64(db.Summary.DeadlineDropped) / float64(res.Summary.Offered)
	// Attempts at the database per external request that arrived during
	// the fault.
	flt := sc.Faults[0]
	var offered, dbAttempts int64
	for i, r := range res.Series.Rows {
		at := int64(i) * res.Series.Interval
		if at >= int64(flt.Start) && at < int64(flt.End()) {
			offered += r.Offered
			d := db.Series.Rows[i]
			dbAttempts += d.Received + d.FailedOutage
		}
	}
	f.dbAmpFault = float64(dbAttempts) / float64(offered)
	if rec := res.Summary.Recovery; rec.Recovered {
		f.recovered, f.recoveryS = true, *rec.RecoveryTimeS
	}
	return f
}

// TestCascadeExperiment regenerates the table of
// docs/experiments/cascade.md (make experiment-cascade: 10 seeds per
// variant). Without -cascade it checks what the doc states on 2 seeds of
// the two variants it needs, and the (r+1)^L bound.
func TestCascadeExperiment(t *testing.T) {
	seeds := 2
	if *cascadeTable != "" {
		seeds = 10
	} else if testing.Short() {
		t.Skip("runs 10 cascades of 8 simulated minutes")
	}
	figs := make([][]cascadeFigures, len(cascadeVariants))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for v := range cascadeVariants {
		figs[v] = make([]cascadeFigures, seeds)
		if *cascadeTable == "" && v != 0 && v != 2 {
			continue // the check needs naive retries and the budget only
		}
		for s := 0; s < seeds; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				figs[v][s] = cascadeRun(t, cascadeVariants[v].sets, uint64(s+1))
			}()
		}
	}
	wg.Wait()
	stat := func(v int, get func(cascadeFigures) float64) sweep.Stat {
		var xs []float64
		for _, f := range figs[v] {
			xs = append(xs, get(f))
		}
		return sweep.Describe(xs)
	}
	ci := func(s sweep.Stat, scale float64, prec int) string {
		if s.N < 2 {
			return fmt.Sprintf("%.*f", prec, s.Mean*scale)
		}
		return fmt.Sprintf("%.*f ± %.*f", prec, s.Mean*scale, prec, (s.Hi-s.Mean)*scale)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| policy | success | database attempts per request (during the fault) | database attempts per request (whole run) | frontend attempts per request | database work wasted | dropped at the database for a passed deadline (per request) | recovered | recovery time (s) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|\n")
	for v, cv := range cascadeVariants {
		n, sum := 0, 0.0
		for _, f := range figs[v] {
			if f.recovered {
				n++
				sum += f.recoveryS
			}
		}
		rec := "–"
		if n > 0 {
			var xs []float64
			for _, f := range figs[v] {
				if f.recovered {
					xs = append(xs, f.recoveryS)
				}
			}
			rec = ci(sweep.Describe(xs), 1, 0)
		}
		fmt.Fprintf(&b, "| %s | %s%% | %s | %s | %s | %s%% | %s | %d of %d | %s |\n", cv.label,
			ci(stat(v, func(f cascadeFigures) float64 { return f.success }), 100, 1),
			ci(stat(v, func(f cascadeFigures) float64 { return f.dbAmpFault }), 1, 2),
			ci(stat(v, func(f cascadeFigures) float64 { return f.dbAmp }), 1, 2),
			ci(stat(v, func(f cascadeFigures) float64 { return f.feAmp }), 1, 2),
			ci(stat(v, func(f cascadeFigures) float64 { return f.wastedDB }), 100, 1),
			ci(stat(v, func(f cascadeFigures) float64 { return f.dropped }), 1, 3),
			n, seeds, rec)
	}
	if *cascadeTable != "" {
		t.Log("\n" + b.String())
		if err := os.WriteFile(*cascadeTable, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for v := range cascadeVariants {
		for s, f := range figs[v] {
			// Emergent amplification can never exceed the (r+1)^L = 64 of
			// a bottom that fails every attempt.
			if f.dbAmpFault > 64 {
				t.Errorf("%s, seed %d: %.2f database attempts per request during the fault, more than (r+1)^L = 64", cascadeVariants[v].label, s+1, f.dbAmpFault)
			}
		}
	}
	// What the doc states: naive retries at every hop leave the system
	// collapsed after the fault; the retry budget recovers, in every seed.
	for s := 0; s < seeds; s++ {
		if figs[0][s].recovered {
			t.Errorf("seed %d: retries at every hop recovered; the doc says the chain stays collapsed", s+1)
		}
		if !figs[2][s].recovered {
			t.Errorf("seed %d: the retry budget at every hop did not recover", s+1)
		}
		if figs[2][s].dbAmpFault >= figs[0][s].dbAmpFault {
			t.Errorf("seed %d: the budget sent %.2f attempts per request to the database during the fault, not fewer than naive retries' %.2f", s+1, figs[2][s].dbAmpFault, figs[0][s].dbAmpFault)
		}
	}
}
