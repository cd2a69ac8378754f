package stats

import (
	"math"
	"testing"
)

func TestDescribe(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name  string
		xs    []float64
		known bool
		want  Stat
	}{
		{"empty", nil, false, Stat{N: 0, Mean: nan, SD: nan, Lo: nan, Hi: nan}},
		{"one value", []float64{3}, false, Stat{N: 1, Mean: 3, SD: nan, Lo: nan, Hi: nan}},
		// mean 2, sd 1, t(0.975, 2) = 4.302653: half-width 4.302653/sqrt(3)
		{"three values", []float64{1, 2, 3}, false, Stat{N: 3, Mean: 2, SD: 1, Lo: 2 - 2.484138, Hi: 2 + 2.484138}},
		{"a NaN counts", []float64{1, nan, 3}, false, Stat{N: 3, Mean: nan, SD: nan, Lo: nan, Hi: nan}},
		{"a NaN left out", []float64{1, nan, 2, 3}, true, Stat{N: 3, Mean: 2, SD: 1, Lo: 2 - 2.484138, Hi: 2 + 2.484138}},
		{"only NaN left out", []float64{nan}, true, Stat{N: 0, Mean: nan, SD: nan, Lo: nan, Hi: nan}},
	}
	same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-6 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Describe(tt.xs)
			if tt.known {
				got = DescribeKnown(tt.xs)
			}
			if got.N != tt.want.N || !same(got.Mean, tt.want.Mean) || !same(got.SD, tt.want.SD) ||
				!same(got.Lo, tt.want.Lo) || !same(got.Hi, tt.want.Hi) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTQuantile(t *testing.T) {
	tests := []struct {
		p    float64
		df   int
		want float64
	}{{0.975, 1, 12.706205}, {0.975, 10, 2.228139}, {0.95, 4, 2.131847}, {0.5, 7, 0}}
	for _, tt := range tests {
		if got := TQuantile(tt.p, tt.df); math.Abs(got-tt.want) > 1e-5 {
			t.Errorf("got TQuantile(%v, %d) = %v, want %v", tt.p, tt.df, got, tt.want)
		}
	}
}
