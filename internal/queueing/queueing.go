// Package queueing holds the analytic results the simulator is checked
// against: Erlang B and C and the M/M/c steady state.
package queueing

import "math"

// ErlangB is the blocking probability of an M/M/c/c system with offered
// load a = λ/μ erlangs, by the stable recurrence
// B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)).
func ErlangB(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// ErlangC is the probability that an arrival to an M/M/c queue must wait,
// with a = λ/μ < c: C = B / (1 − (a/c)(1 − B)).
func ErlangC(c int, a float64) float64 {
	if a >= float64(c) {
		return 1
	}
	b := ErlangB(c, a)
	return b / (1 - a/float64(c)*(1-b))
}

// MMc is the steady state of an M/M/c queue with arrival rate lambda and
// per-server service rate mu.
type MMc struct {
	Utilisation float64 // ρ = λ/(cμ)
	PWait       float64 // Erlang C
	Lq          float64 // mean number waiting
	Wq          float64 // mean wait in queue, in the time unit of 1/λ
	L           float64 // mean number in the system
	W           float64 // mean time in the system
}

// SteadyMMc computes the M/M/c steady state; ok is false when ρ >= 1.
func SteadyMMc(c int, lambda, mu float64) (s MMc, ok bool) {
	a := lambda / mu
	rho := a / float64(c)
	if rho >= 1 || c < 1 {
		return MMc{Utilisation: rho, Lq: math.Inf(1), Wq: math.Inf(1)}, false
	}
	s.Utilisation = rho
	s.PWait = ErlangC(c, a)
	s.Lq = s.PWait * rho / (1 - rho)
	s.Wq = s.Lq / lambda
	s.W = s.Wq + 1/mu
	s.L = lambda * s.W
	return s, true
}
