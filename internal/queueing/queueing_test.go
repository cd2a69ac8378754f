package queueing

import (
	"math"
	"testing"
)

func TestErlangAgainstClosedForms(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		// B(1, a) = a/(1+a).
		{"B(1, 1)", ErlangB(1, 1), 0.5},
		// B(2, 1) = (1/2)/(1 + 1 + 1/2) = 0.2.
		{"B(2, 1)", ErlangB(2, 1), 0.2},
		// M/M/1: C = ρ.
		{"C(1, 0.8)", ErlangC(1, 0.8), 0.8},
		// Textbook value: c = 4, a = 3.2 (ρ = 0.8): C = 0.59643.
		{"C(4, 3.2)", ErlangC(4, 3.2), 0.596430},
		// Erlang's classic table: B(10, 5) = 0.018385.
		{"B(10, 5)", ErlangB(10, 5), 0.018385},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 5e-6 {
			t.Errorf("%s: got %.6f, want %.6f", tt.name, tt.got, tt.want)
		}
	}
}

func TestSteadyMM1(t *testing.T) {
	// M/M/1 with ρ = 0.8: Lq = ρ²/(1−ρ) = 3.2, Wq = ρ/(μ−λ) = 0.4 s.
	s, ok := SteadyMMc(1, 8, 10)
	if !ok || math.Abs(s.Lq-3.2) > 1e-9 || math.Abs(s.Wq-0.4) > 1e-9 || math.Abs(s.L-4) > 1e-9 {
		t.Errorf("got %+v", s)
	}
	if _, ok := SteadyMMc(2, 20, 10); ok {
		t.Error("ρ = 1 reported as stable")
	}
}
