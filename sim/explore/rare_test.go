package explore

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// rareSource is testdata/rare.yaml with its spike ending at `at`: a
// small retry-storm system whose P(no recovery) rises from ~0 at a 1.5 s
// spike to ~0.5 at 2 s (1,000 seeds: 4/1000 at 31.6 s, 20/1000 at 31.7 s).
func rareSource(t testing.TB, at string) (Source, func() (*scenario.Scenario, error)) {
	t.Helper()
	data, err := os.ReadFile("testdata/rare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := Source{File: "testdata/rare.yaml", Data: data, Sets: []string{"clients.arrival.profile.1.at=" + at}}
	return src, func() (*scenario.Scenario, error) { return scenario.Parse(src.Data, src.File, src.Sets) }
}

// TestRareMatchesBruteForce checks splitting (copies by replay and
// branch, levels from the pilot, "no recovery" as the last stage) and
// importance sampling on the simulator against plain Monte Carlo where both are affordable: a 1.8 s
// spike, P(no recovery) ≈ 7%. The tolerance is 3 standard errors of the
// log ratio, from both estimates' relative errors (splitting's own
// estimate, brute force's sqrt((1−p)/(np))); the splitting's relative
// error ignores the correlation of paths copied from one entrance, so it
// is on the small side and 3 of them is not generous.
func TestRareMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of simulation")
	}
	src, parse := rareSource(t, "31.8s")
	ctx := context.Background()
	eval := SimEval([]Source{src})
	const n = 300
	k := 0
	for s := range n {
		f, err := eval(ctx, Variant{Seed: 10_000 + uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		if f["recovery.recovered"] != 1 {
			k++
		}
	}
	bf := float64(k) / n
	res, err := Rare(ctx, parse, RareConfig{Measure: "in_system", FromS: 30, Paths: 100, Seed: 3, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(res.RelErr*res.RelErr + (1-bf)/(n*bf))
	t.Logf("brute force %d/%d = %.4f; splitting %.4f (rel. err. %.2f), levels %v, stages %v, %d+%d paths",
		k, n, bf, res.P, res.RelErr, res.Levels, res.Stage, res.Paths, res.PilotPaths)
	if k < 5 {
		t.Fatalf("brute force saw %d collapses in %d: the test's point is not where it should be", k, n)
	}
	if d := math.Abs(math.Log(res.P / bf)); d > 3*se {
		t.Errorf("splitting %.4f vs brute force %.4f: |log ratio| %.2f > 3 × %.2f", res.P, bf, d, se)
	}
	if len(res.Levels) == 0 {
		t.Error("the pilot chose no level: nothing was split")
	}
	// Importance sampling of the arrivals against the same brute force:
	// 300 runs at the factor the cross-entropy pilot picks, the window
	// from the spike's start to 200 ms after it. Tolerance: 3 standard
	// errors of the difference (both estimates are means of independent
	// runs, close to normal at P ≈ 0.1).
	ts, err := Tilt(ctx, parse, TiltConfig{Measure: "in_system", FromS: 30, UntilS: 32, Paths: 300, PilotPaths: 100, Seed: 3, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(ts.SE*ts.SE + bf*(1-bf)/n)
	t.Logf("importance sampling %.4f ± %.4f at factors %s (%d of %d collapsed, ESS %.0f; %d pilot runs)", ts.P, ts.SE, FactorRange(ts.Factors), ts.Collapsed, ts.Paths, ts.ESS, ts.PilotPaths)
	if d := math.Abs(ts.P - bf); d > 3*sd {
		t.Errorf("importance sampling %.4f vs brute force %.4f: %.1f standard errors apart", ts.P, bf, d/sd)
	}
}

func TestRareErrors(t *testing.T) {
	_, parse := rareSource(t, "31.8s")
	ctx := context.Background()
	var ce *ConfigError
	if _, err := Rare(ctx, parse, RareConfig{Measure: "queue_len"}); !errors.As(err, &ce) || !errors.Is(err, ErrUnknownMeasure) {
		t.Errorf("unknown measure: %v", err)
	}
	if _, err := Rare(ctx, parse, RareConfig{Measure: "in_system", P0: 1.5}); !errors.As(err, &ce) {
		t.Errorf("p0 1.5: %v", err)
	}
	// Levels far above anything a recovering run reaches, with too few
	// paths: extinct, reported as such.
	_, short := rareSource(t, "30.2s")
	if _, err := Rare(ctx, short, RareConfig{Measure: "in_system", Levels: []float64{5000}, Paths: 4, Seed: 1}); !errors.Is(err, ErrExtinct) {
		t.Errorf("unreachable level: %v, want ErrExtinct", err)
	}
}

// TestRareBruteForceLarge is the brute-force side of the check at
// P ≈ 10⁻⁴ in docs/experiments/metastability-map.md, too long for CI:
// THROTTLESIM_BRUTE=50000 go test ./sim/explore -run RareBruteForceLarge -v -timeout 2h
// runs that many seeds of rare.yaml (100 ms intervals, as the doc's
// estimates) with the spike ending at $THROTTLESIM_BRUTE_AT (default
// 31.5s) and the load $THROTTLESIM_BRUTE_RATE (default the file's
// 300/s), in memory, and prints how many did not recover.
func TestRareBruteForceLarge(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("THROTTLESIM_BRUTE"))
	if n == 0 {
		t.Skip("set THROTTLESIM_BRUTE to the number of runs")
	}
	at := cmp.Or(os.Getenv("THROTTLESIM_BRUTE_AT"), "31.5s")
	data, err := os.ReadFile("testdata/rare.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rate := cmp.Or(os.Getenv("THROTTLESIM_BRUTE_RATE"), "300/s")
	eval := SimEval([]Source{{File: "testdata/rare.yaml", Data: data,
		Sets: []string{"metrics.interval=100ms", "clients.arrival.profile.1.at=" + at, "clients.arrival.total_rate=" + rate}}})
	var collapsed atomic.Int64
	var failed atomic.Value
	stage(n, 2, func(i int) {
		f, err := eval(context.Background(), Variant{Seed: 1_000_000 + uint64(i)})
		if err != nil {
			failed.Store(err)
			return
		}
		if f["recovery.recovered"] != 1 {
			collapsed.Add(1)
		}
	})
	if err, ok := failed.Load().(error); ok {
		t.Fatal(err)
	}
	k := int(collapsed.Load())
	lo, hi := ClopperPearson(k, n, 0.05)
	t.Logf("%s, at=%s: %d of %d runs did not recover (seeds from 1,000,000): P %.3g, 95%% Clopper-Pearson [%.3g, %.3g]", rate, at, k, n, float64(k)/float64(n), lo, hi)
}
