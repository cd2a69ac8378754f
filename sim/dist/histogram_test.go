package dist

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// promDefault are Prometheus's default buckets (client_golang DefBuckets),
// in ns.
var promDefault = []float64{5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6, 1e9, 2.5e9, 5e9, 10e9, math.Inf(1)}

func TestHistogramMeanMatchesTheDensity(t *testing.T) {
	counts := []float64{10, 30, 100, 400, 800, 950, 990, 998, 1000, 1000, 1000, 1000}
	capped := []float64{10, 30, 100, 400, 800, 950, 990, 998, 1000, 1000, 1000, 1010}
	for _, tc := range []struct {
		name   string
		counts []float64
		within Within
		cap    float64
		mean   float64 // ns, by hand from the buckets
	}{
		// Σ p_k (lo+hi)/2 over the buckets with observations.
		{"uniform", counts, Uniform, 0, (10*2.5e6 + 20*7.5e6 + 70*17.5e6 + 300*37.5e6 + 400*75e6 + 150*175e6 + 40*375e6 + 8*750e6 + 2*1750e6) / 1000},
		{"inf capped", capped, Uniform, 20e9, (10*2.5e6 + 20*7.5e6 + 70*17.5e6 + 300*37.5e6 + 400*75e6 + 150*175e6 + 40*375e6 + 8*750e6 + 2*1750e6 + 10*15e9) / 1010},
		{"log uniform", counts, LogUniform, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHistogram(promDefault, tc.counts, tc.within, tc.cap)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mean != 0 && math.Abs(h.Mean()-tc.mean) > 1e-6*tc.mean {
				t.Fatalf("analytic mean: got %v ns, want %v ns", h.Mean(), tc.mean)
			}
			// The sample mean of n independent draws is within 5 standard
			// errors (σ/√n, σ the density's) of the density's mean unless
			// an event of probability < 6e-7 happened (CLT); the draws are
			// seeded, so the test is deterministic.
			const n = 200_000
			r := rand.New(rand.NewPCG(1, 2))
			var s float64
			for range n {
				s += float64(h.Sample(r.Float64()))
			}
			got, se := s/n, math.Sqrt(h.Variance()/n)
			if math.Abs(got-h.Mean()) > 5*se {
				t.Fatalf("sample mean: got %v ns, want %v ± %v ns (5 standard errors)", got, h.Mean(), 5*se)
			}
		})
	}
}

func TestHistogramSampleRule(t *testing.T) {
	// 1 observation <= 1 s, 3 more <= 4 s, none above.
	le := []float64{1e9, 4e9, math.Inf(1)}
	cnt := []float64{1, 4, 4}
	for _, tc := range []struct {
		within Within
		u      float64
		want   int64
	}{
		{Uniform, 0, 0},              // the first bucket starts at 0
		{Uniform, 0.125, 0.5e9},      // half-way through the first bucket
		{Uniform, 0.25, 1e9},         // the second bucket's lower bound
		{Uniform, 0.625, 2.5e9},      // half-way through the second
		{LogUniform, 0.125, 0.5e9},   // the first bucket stays uniform
		{LogUniform, 0.625, 2e9},     // √(1·4) s: half-way in log
		{LogUniform, 0.9999999, 4e9}, // the top of the last bucket with data
	} {
		h, err := NewHistogram(le, cnt, tc.within, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Sample(tc.u); math.Abs(float64(got-tc.want)) > 2e3 {
			t.Errorf("within %d, u %v: got %d ns, want %d ns", tc.within, tc.u, got, tc.want)
		}
	}
}

func TestHistogramErrors(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		le, c  []float64
		cap    float64
		substr string
	}{
		{"empty", nil, nil, 0, "at least one bucket"},
		{"no +Inf", []float64{1e9, 2e9}, []float64{1, 2}, 0, "+Inf"},
		{"le decreasing", []float64{2e9, 1e9, inf}, []float64{1, 2, 2}, 0, "increase"},
		{"count decreasing", []float64{1e9, 2e9, inf}, []float64{3, 2, 3}, 0, "must not decrease"},
		{"zero total", []float64{1e9, inf}, []float64{0, 0}, 0, "needs observations"},
		{"inf without cap", []float64{1e9, inf}, []float64{1, 2}, 0, "inf_cap"},
		{"cap below last bound", []float64{1e9, inf}, []float64{1, 2}, 0.5e9, "inf_cap"},
		{"negative le", []float64{-1, inf}, []float64{1, 1}, 0, ">= 0"},
		{"NaN count", []float64{1e9, inf}, []float64{math.NaN(), 1}, 0, "finite"},
	} {
		_, err := NewHistogram(tc.le, tc.c, Uniform, tc.cap)
		if err == nil || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.substr)
		}
	}
}
