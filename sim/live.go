package sim

import (
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// This file exports, for live mode (live/server, live), the backend's
// service-time sampler and the clients' arrival times: code outside the
// simulator runs the same draws and arrivals against the wall clock. It
// adds no second implementation: each export calls the simulator's own
// code. (The client's policy stack is package stack, which the simulator
// and live/client both use.)

// Arrivals gives the arrival times of a scenario's application requests
// exactly as a simulation with the same seed draws them (startup, arrival
// process, load profile), for a live run that wants the simulation's
// arrivals (common random numbers between the two).
type Arrivals struct{ m *model }

// NewArrivals builds the arrival process of sc (valid) with seed.
func NewArrivals(sc *scenario.Scenario, seed uint64) (*Arrivals, error) {
	m, err := newModel(sc, seed)
	if err != nil {
		return nil, err
	}
	m.cl.shared = true // Next is called from one goroutine per client
	return &Arrivals{m: m}, nil
}

// First is client c's first arrival at or after its start: its time in ns
// and its ordinal (the number of arrivals its startup skipped), as the
// simulation's start schedules it. at >= the scenario's duration: none.
func (a *Arrivals) First(c int) (at int64, n uint32) {
	m := a.m
	start := m.startTime(uint32(c))
	t := m.firstArrival(uint32(c))
	if m.cl.once || m.cl.atStart {
		t = start
	}
	for t < start {
		n++
		t = m.nextArrival(uint32(c), n, t)
	}
	return t, n
}

// Next is the time of client c's arrival n+1, after its arrival n at t
// (math.MaxInt64: none).
func (a *Arrivals) Next(c int, n uint32, t int64) int64 {
	return a.m.nextArrival(uint32(c), n+1, t)
}
