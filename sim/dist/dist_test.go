package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

const (
	ms  = int64(1e6)
	sec = int64(1e9)
)

// The SRE book's long-deadline example: 95% of requests take 100 ms, 5%
// hang until a 100 s deadline. Mean 0.95·0.1 + 0.05·100 = 5.095 s exactly;
// variance p(1−p)(100 − 0.1)² = 473.8 s².
func TestMixtureSREBookMean(t *testing.T) {
	m, err := NewMixture([]Component{{Weight: 0.95, Mean: 100 * ms}, {Weight: 0.05, Mean: 100 * sec}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Mean(), 5.095e9; math.Abs(got-want) > 1e-3 {
		t.Errorf("mean %v ns, want %v", got, want)
	}
	if got, want := m.Variance(), 0.95*0.05*99.9*99.9*1e18; math.Abs(got-want)/want > 1e-12 {
		t.Errorf("variance %v, want %v", got, want)
	}
	checkSampleMean(t, m, 200_000)
}

// A mixture of an exponential and a lognormal: the sample mean of n draws
// is within 5 standard errors, sqrt(Var/n), of Mean (fixed seed).
func TestMixtureMeanExpLognormal(t *testing.T) {
	m, err := NewMixture([]Component{
		{Weight: 3, Kind: Exponential, Mean: 50 * ms},
		{Weight: 1, Kind: Lognormal, Mean: 400 * ms, Sigma: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Mean(), 0.75*50e6+0.25*400e6; math.Abs(got-want) > 1e-3 {
		t.Errorf("mean %v, want %v", got, want)
	}
	checkSampleMean(t, m, 200_000)
}

func checkSampleMean(t *testing.T, m *Mixture, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var s float64
	for i := 0; i < n; i++ {
		s += float64(m.Sample(r.Float64(), r.ExpFloat64(), r.NormFloat64()))
	}
	mean := s / float64(n)
	// 5 standard errors of the mean of n independent draws.
	if tol := 5 * math.Sqrt(m.Variance()/float64(n)); math.Abs(mean-m.Mean()) > tol {
		t.Errorf("sample mean %.0f ns, want %.0f ± %.0f", mean, m.Mean(), tol)
	}
}

func TestMixturePick(t *testing.T) {
	m, _ := NewMixture([]Component{{Weight: 1, Mean: 1}, {Weight: 3, Mean: 2}})
	for _, tt := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.2499, 0}, {0.25, 1}, {0.9999, 1}} {
		if got := m.Pick(tt.u); got != tt.want {
			t.Errorf("Pick(%v) = %d, want %d", tt.u, got, tt.want)
		}
	}
}

func TestMixtureInvalid(t *testing.T) {
	for _, comps := range [][]Component{
		nil,
		{{Weight: 0, Mean: 1}},
		{{Weight: math.Inf(1), Mean: 1}},
		{{Weight: math.NaN(), Mean: 1}},
		{{Weight: 1, Mean: 0}},
		{{Weight: 1, Kind: Lognormal, Mean: 1, Sigma: 0}},
		{{Weight: 1, Kind: 9, Mean: 1}},
	} {
		if _, err := NewMixture(comps); err == nil {
			t.Errorf("%+v: accepted", comps)
		}
	}
}

// A latency histogram's percentiles: min 10 ms, p50 100 ms, p99 1 s, max
// 2 s. The inverse CDF is linear between them: p75 = 100 ms + (0.25/0.49)
// × 900 ms; the mean is Σ Δq·(v₀ + v₁)/2 = 0.5·55 + 0.49·550 + 0.01·1500
// = 312 ms.
func TestEmpiricalQuantileTable(t *testing.T) {
	e, err := FromQuantiles([]float64{0, 0.5, 0.99, 1}, []int64{10 * ms, 100 * ms, 1 * sec, 2 * sec})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ p, want float64 }{
		{0, 10e6}, {0.5, 100e6}, {0.99, 1e9}, {1, 2e9},
		{0.25, 55e6}, {0.75, 100e6 + 0.25/0.49*900e6}, {0.995, 1.5e9},
	} {
		if got := e.Quantile(tt.p); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("Quantile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got, want := e.Mean(), 0.5*55e6+0.49*550e6+0.01*1500e6; math.Abs(got-want) > 1e-3 {
		t.Errorf("mean %v, want %v", got, want)
	}
	checkQuantiles(t, e, []float64{0.1, 0.5, 0.9, 0.99})
}

// n draws through Sample have an empirical CDF within the
// Dvoretzky–Kiefer–Wolfowitz band of the true one: |F_n(x) − F(x)| ≤ ε =
// sqrt(ln(2/α)/(2n)) with α = 1e-6, checked at x = Quantile(p). F(x) is p
// for a table (continuous; up to the rounding of x to a nanosecond) and the
// share of samples ≤ x for samples. The seed is fixed, so the test is
// deterministic; the band says how far chance alone could move it.
func checkQuantiles(t *testing.T, e *Empirical, ps []float64) {
	t.Helper()
	const n = 100_000
	r := rand.New(rand.NewPCG(3, 4))
	draws := make([]int64, n)
	for i := range draws {
		draws[i] = e.Sample(r.Float64())
	}
	eps := math.Sqrt(math.Log(2/1e-6) / (2 * n))
	for _, p := range ps {
		x := int64(math.Round(e.Quantile(p)))
		trueF := p
		if e.samples != nil {
			k := 0
			for _, v := range e.samples {
				if v <= x {
					k++
				}
			}
			trueF = float64(k) / float64(len(e.samples))
		}
		below := 0
		for _, d := range draws {
			if d <= x {
				below++
			}
		}
		if f := float64(below) / n; math.Abs(f-trueF) > eps {
			t.Errorf("F_n(Quantile(%v)) = %.4f, want F = %.4f ± %.4f", p, f, trueF, eps)
		}
	}
}

// Samples: each equally likely. [5, 1, 3] ms: Quantile(p) is the ⌈3p⌉-th
// smallest; Sample(u) the ⌊3u⌋-th (0-based).
func TestEmpiricalSamples(t *testing.T) {
	e, err := FromSamples([]int64{5 * ms, 1 * ms, 3 * ms})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		u    float64
		want int64
	}{{0, 1 * ms}, {0.333, 1 * ms}, {0.334, 3 * ms}, {0.667, 5 * ms}, {0.9999, 5 * ms}} {
		if got := e.Sample(tt.u); got != tt.want {
			t.Errorf("Sample(%v) = %v, want %v", tt.u, got, tt.want)
		}
	}
	for _, tt := range []struct{ p, want float64 }{{0, 1e6}, {1.0 / 3, 1e6}, {0.34, 3e6}, {1, 5e6}} {
		if got := e.Quantile(tt.p); got != tt.want {
			t.Errorf("Quantile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := e.Mean(); got != 3e6 {
		t.Errorf("mean %v, want 3 ms", got)
	}
}

// 1,000 samples of a known shape, drawn through Sample: the drawn values'
// quantiles match the samples' own (DKW band as above).
func TestEmpiricalSamplesQuantiles(t *testing.T) {
	s := make([]int64, 1000)
	for i := range s {
		s[i] = int64(i*i) * ms / 10
	}
	e, _ := FromSamples(s)
	checkQuantiles(t, e, []float64{0.1, 0.5, 0.9, 0.99})
}

func TestEmpiricalInvalid(t *testing.T) {
	for _, tt := range []struct {
		q []float64
		v []int64
	}{
		{[]float64{0}, []int64{1}},
		{[]float64{0.1, 1}, []int64{1, 2}},
		{[]float64{0, 0.9}, []int64{1, 2}},
		{[]float64{0, 0.5, 0.5, 1}, []int64{1, 2, 3, 4}},
		{[]float64{0, 0.5, 1}, []int64{1, 3, 2}},
		{[]float64{0, 1}, []int64{-1, 2}},
	} {
		if _, err := FromQuantiles(tt.q, tt.v); err == nil {
			t.Errorf("%v %v: accepted", tt.q, tt.v)
		}
	}
	if _, err := FromSamples(nil); err == nil {
		t.Error("no samples: accepted")
	}
	if _, err := FromSamples([]int64{3, -1}); err == nil {
		t.Error("a negative sample: accepted")
	}
}

func ExampleMixture() {
	// The SRE book's long-deadline example.
	m, _ := NewMixture([]Component{
		{Weight: 0.95, Kind: Constant, Mean: 100 * ms},
		{Weight: 0.05, Kind: Constant, Mean: 100 * sec},
	})
	fmt.Printf("mean %.3f s; u = 0.5: %d ms; u = 0.97: %d s\n", m.Mean()/1e9, m.Sample(0.5, 1, 0)/ms, m.Sample(0.97, 1, 0)/sec)
	// Output: mean 5.095 s; u = 0.5: 100 ms; u = 0.97: 100 s
}
