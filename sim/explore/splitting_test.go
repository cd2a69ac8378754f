package explore

import (
	"math"
	"testing"

	"github.com/throttlesim/throttlesim/sim/rng"
)

// walk is a random walk on 0, 1, 2, ...: up with probability up, down
// otherwise, absorbed at 0 — a queue that drains unless arrivals outrun it.
// Its progress is its position.
type walk struct {
	x  int
	up float64
}

func (w *walk) Clone() Path { c := *w; return &c }

func (w *walk) Advance(level float64, key uint64) bool {
	for n := uint64(0); ; n++ {
		if float64(w.x) >= level {
			return true
		}
		if w.x == 0 {
			return false
		}
		if rng.Float64(key, n) < w.up {
			w.x++
		} else {
			w.x--
		}
	}
}

// ruin is the gambler's-ruin probability of reaching top before 0 from 1,
// with r = q/p: (1 − r)/(1 − r^top).
func ruin(up float64, top int) float64 {
	r := (1 - up) / up
	return (1 - r) / (1 - math.Pow(r, float64(top)))
}

func TestSplittingMatchesGamblersRuin(t *testing.T) {
	const up, top = 0.3, 12
	exact := ruin(up, top) // ≈ 5.1e-5
	var levels []float64
	for l := 2; l <= top; l++ {
		levels = append(levels, float64(l))
	}
	res, err := Splitting(func() Path { return &walk{x: 1, up: up} }, levels, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Tolerance: 4 of the estimator's own relative standard errors (its
	// first-order variance, sqrt(Σ(1−p_k)/(N p_k)) ≈ 9% here).
	if math.Abs(res.P-exact) > 4*res.RelErr*exact {
		t.Errorf("splitting: got %.3g ± %.0f%%, exact %.3g", res.P, 100*res.RelErr, exact)
	}
	t.Logf("splitting %.4g ± %.1f%% with %d paths; exact %.4g", res.P, 100*res.RelErr, res.Paths, exact)

	// Brute force where it is affordable: a less rare target (top 7,
	// exact ≈ 3.6e-3) by plain Monte Carlo and by splitting.
	const top2 = 7
	exact2 := ruin(up, top2)
	const n = 400000
	hits := 0
	for i := uint64(0); i < n; i++ {
		if (&walk{x: 1, up: up}).Advance(top2, rng.Mix(i+12345)) {
			hits++
		}
	}
	brute := float64(hits) / n
	seBrute := math.Sqrt(exact2 * (1 - exact2) / n) // binomial standard error
	if math.Abs(brute-exact2) > 4*seBrute {
		t.Errorf("brute force: got %.4g, exact %.4g ± %.2g", brute, exact2, seBrute)
	}
	res2, err := Splitting(func() Path { return &walk{x: 1, up: up} }, levels[:top2-1], 2000, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Splitting and brute force agree within 4 standard errors of their
	// difference.
	seDiff := math.Hypot(seBrute, res2.RelErr*res2.P)
	if math.Abs(res2.P-brute) > 4*seDiff {
		t.Errorf("splitting %.4g vs brute force %.4g (se of the difference %.2g)", res2.P, brute, seDiff)
	}
	t.Logf("top %d: splitting %.4g (%d paths), brute force %.4g (%d paths), exact %.4g", top2, res2.P, res2.Paths, brute, n, exact2)
}

func TestSplittingErrors(t *testing.T) {
	if _, err := Splitting(func() Path { return &walk{x: 1, up: 0.3} }, []float64{3, 2}, 10, 1); err == nil {
		t.Error("decreasing levels: got no error")
	}
	if _, err := Splitting(func() Path { return &walk{x: 1, up: 0} }, []float64{2}, 10, 1); err != ErrExtinct {
		t.Errorf("an impossible event: got %v, want ErrExtinct", err)
	}
}
