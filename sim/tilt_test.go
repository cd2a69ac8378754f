package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func TestProfileTilted(t *testing.T) {
	tests := []struct {
		name        string
		steps       []scenario.Step
		from, until int64
		f           float64
		// the multiplier at these times after the tilt
		at   []int64
		want []float64
	}{
		{"flat", nil, 5e9, 8e9, 3, []int64{0, 4.9e9, 5e9, 7.9e9, 8e9, 20e9}, []float64{1, 1, 3, 3, 1, 1}},
		{"across a step", []scenario.Step{{At: scenario.Duration(6e9), Multiplier: 2}}, 5e9, 8e9, 0.5,
			[]int64{0, 5e9, 6e9, 7.9e9, 8e9}, []float64{1, 0.5, 1, 1, 2}},
		{"on the steps", []scenario.Step{{At: 0, Multiplier: 4}, {At: scenario.Duration(5e9), Multiplier: 2}, {At: scenario.Duration(8e9), Multiplier: 1}}, 5e9, 8e9, 2,
			[]int64{0, 5e9, 7e9, 8e9}, []float64{4, 4, 4, 1}},
		{"from 0", nil, 0, 1e9, 2, []int64{0, 1e9}, []float64{2, 1}},
	}
	// Two slots with their own factors, across a step.
	p := newProfile([]scenario.Step{{At: scenario.Duration(5e9), Multiplier: 2}})
	q := p.tilted([]int64{4e9, 6e9, 8e9}, []float64{3, 0.5})
	for i, at := range []int64{3e9, 4e9, 5e9, 6e9, 7.9e9, 8e9} {
		if got, want := q.mult[q.seg(at)], []float64{1, 3, 6, 1, 1, 2}[i]; got != want {
			t.Errorf("two slots: multiplier at %.1fs: %g, want %g", float64(at)/1e9, got, want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProfile(tt.steps)
			q := p.tilted([]int64{tt.from, tt.until}, []float64{tt.f})
			for i, at := range tt.at {
				if got := q.mult[q.seg(at)]; got != tt.want[i] {
					t.Errorf("multiplier at %.1fs: %g, want %g", float64(at)/1e9, got, tt.want[i])
				}
			}
			// Λ is the same outside the window and f times larger inside.
			win := p.cum(tt.until) - p.cum(tt.from)
			if d := q.cum(tt.until) - q.cum(tt.from) - tt.f*win; math.Abs(d) > 1e-9 {
				t.Errorf("tilted window holds %g, want %g", q.cum(tt.until)-q.cum(tt.from), tt.f*win)
			}
			if d := q.cum(tt.from) - p.cum(tt.from); math.Abs(d) > 1e-9 {
				t.Errorf("before the window: %g, want %g", q.cum(tt.from), p.cum(tt.from))
			}
		})
	}
}

// The tilt's likelihood ratio is exact: under the tilt, E[LR] = 1 and
// E[N·LR] = Λ (the untilted mean count), and E[N] = f·Λ. 300 runs of 100
// clients whose uniform start spreads over the window's first half (so Λ
// counts each client from its start); tolerances are 4 standard errors
// of each sample mean. The tilt is mild because the ratio's variance is
// exp(Λ(f−1)²/f) − 1: about 1.2 here (Λ ≈ 88, f = 1.1), while E[N] moves
// by 15 of its standard errors.
func TestArrivalTiltLikelihoodRatio(t *testing.T) {
	const src = `name: tilt
duration: 12s
clients:
  count: 100
  startup: {mode: uniform, window: 8s}
  arrival: {process: poisson, total_rate: 10/s, profile: [{at: 6s, multiplier: 2}]}
backend:
  workers: 1000
  service: {dist: constant, mean: 1ms}
`
	sc, err := scenario.Parse([]byte(src), "tilt.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two slots, [4 s, 7 s) at 1.1 and [7 s, 10 s) at 0.9.
	tilt := &ArrivalTilt{From: 4e9, Until: 10e9, Factors: []float64{1.1, 0.9}}
	const n = 300
	var lr, lr2 float64
	var nlr, nlr2, cnt, cnt2, expected [2]float64
	for s := range n {
		seed := uint64(s + 1)
		res, err := Run(context.Background(), sc, Options{Seed: &seed, Tilt: tilt})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Tilt
		w := math.Exp(r.LogLR)
		lr, lr2 = lr+w, lr2+w*w
		for j := range 2 {
			x := float64(r.Arrivals[j])
			nlr[j], nlr2[j] = nlr[j]+x*w, nlr2[j]+x*x*w*w
			cnt[j], cnt2[j] = cnt[j]+x, cnt2[j]+x*x
			expected[j] += r.Expected[j] / n // depends on the start times of the seed
		}
	}
	check := func(what, theory string, sum, sum2, want float64) {
		m := sum / n
		se := math.Sqrt((sum2/n - m*m) / n)
		pass := math.Abs(m-want) <= 4*se
		record("arrival tilt ×1.1 on [4 s, 7 s), ×0.9 on [7 s, 10 s), 100 clients starting over 8 s: "+what, fmt.Sprintf("%.4g (%s)", want, theory),
			fmt.Sprintf("%.4g ± %.2g (1 SE, %d runs)", m, se, n), "4 SE", pass)
		if !pass {
			t.Errorf("%s: %.4g ± %.2g, want %.4g", what, m, se, want)
		}
	}
	check("E[LR] under the tilt", "any tilt", lr, lr2, 1)
	for j, name := range []string{"first slot", "second slot"} {
		check("E[N·LR] in the "+name, "Λ, untilted mean", nlr[j], nlr2[j], expected[j])
		check("E[N] in the "+name, "f·Λ", cnt[j], cnt2[j], tilt.Factors[j]*expected[j])
	}
	// Λ by hand: 0.1/s per client; a client starting at s (uniform on
	// [0, 8 s)) is counted on [max(s, 4 s), 6 s) at multiplier 1 (1.25 s
	// on average) and on [max(s, 6 s), 10 s) at 2 (7.5 s on average):
	// 100 · 0.1 · 8.75 = 87.5. One seed's Λ varies with its start times
	// (sd 1.76), so the mean of 300 has an SE of 0.10; 0.5 is 5 of them.
	if tot := expected[0] + expected[1]; math.Abs(tot-87.5) > 0.5 {
		t.Errorf("Λ = %.2f, want about 87.5", tot)
	}
}

func TestArrivalTiltErrors(t *testing.T) {
	base := "name: t\nduration: 10s\nclients:\n  count: 10\n  arrival: {process: %s, total_rate: 10/s}\nbackend:\n  workers: 10\n  service: {dist: constant, mean: 1ms}\n"
	tests := []struct {
		process string
		tilt    ArrivalTilt
		want    string
	}{
		{"constant", ArrivalTilt{From: 1e9, Until: 2e9, Factors: []float64{2}}, "Poisson"},
		{"poisson", ArrivalTilt{From: 1e9, Until: 2e9, Factors: []float64{1, 0}}, "factors must be above 0"},
		{"poisson", ArrivalTilt{From: 1e9, Until: 2e9}, "at least one factor"},
		{"poisson", ArrivalTilt{From: 3e9, Until: 2e9, Factors: []float64{2}}, "from < until"},
		{"poisson", ArrivalTilt{From: 9e9, Until: 12e9, Factors: []float64{2}}, "after the run's end"},
	}
	for _, tt := range tests {
		sc, err := scenario.Parse([]byte(fmt.Sprintf(base, tt.process)), "t.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), sc, Options{Tilt: &tt.tilt})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %+v: got %v, want an error with %q", tt.process, tt.tilt, err, tt.want)
		}
		if tt.process == "constant" && !errors.Is(err, ErrTiltNotPoisson) {
			t.Errorf("constant arrivals: %v is not ErrTiltNotPoisson", err)
		}
	}
}
