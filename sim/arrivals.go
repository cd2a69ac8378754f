package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// start schedules every client's first event (its first arrival at or
// after its start, and its first connection attempt) and the faults.
func (m *model) start() {
	// A fault at time 0 (a backend that starts degraded) goes on the
	// calendar first, so that it holds for every event at 0, arrivals and
	// connection attempts included (ties run in scheduling order).
	m.scheduleFaults(true)
	cl := &m.cl
	for c := range cl.ord {
		at := m.startTime(uint32(c))
		// The first arrival at or after the client's start: the same
		// ordinals and times as without a startup spread.
		var n uint32
		t := m.firstArrival(uint32(c))
		if cl.once || cl.atStart {
			// A request at the start; with first_at_start the Poisson
			// stream goes on from it (nextArrival from at, ordinal 1).
			t = at
		}
		for t < at {
			n++
			t = m.nextArrival(uint32(c), n, t)
		}
		cl.ord[c] = n
		// A once client with a connection sends its request when its first
		// connection is up (handshakeDone), not at its start, when it has
		// no connection yet.
		if t < m.end && !(cl.once && m.cn.on) {
			m.q.Schedule(t, evArrival, uint32(c), 0)
		}
		if at > 0 {
			p := cl.pol(uint32(c))
			p.Start(at, int(uint32(c)-p.start)) // its rate limiter is created when it starts
		}
		if m.cn.on && at < m.end {
			m.cn.state[c] = csWaiting
			m.q.Schedule(at, evConnect, uint32(c), 0)
		}
	}
	m.scheduleFaults(false)
	m.startScalers()
}

func (m *model) firstArrival(c uint32) int64 {
	if m.cl.replay != nil {
		return m.cl.replayAt(c, 0)
	}
	if m.cl.constant {
		return m.nextArrival(c, 0, 0)
	}
	e := rng.Exp(m.src.Key(rng.Arrival, uint64(c)), 0)
	return m.cl.prof.invert(e / m.cl.lambda)
}

// startTime is when client c starts (clients.startup).
func (m *model) startTime(c uint32) int64 {
	st := m.sc.Clients.Startup
	w := int64(st.Window)
	switch st.Mode {
	case scenario.StartupUniform:
		return int64(rng.Float64(m.src.Key(rng.Startup, uint64(c)), 0) * float64(w))
	case scenario.StartupRamp:
		b := int64(c) * int64(st.Batches) / int64(len(m.cl.ord))
		return b * w / int64(st.Batches)
	}
	return 0
}

// nextArrival is when client c issues request number n (n >= 1), given
// that request n−1 was at t.
func (m *model) nextArrival(c uint32, n uint32, t int64) int64 {
	cl := &m.cl
	if cl.fixed {
		if cl.replay != nil {
			return cl.replayAt(c, n)
		}
		return math.MaxInt64 // once: one request per client
	}
	if cl.constant {
		// Request n at operational time (phase + n)/λ: computed from n, so
		// rounding never accumulates.
		phase := rng.Float64(m.src.Key(rng.Phase, uint64(c)), 0)
		return cl.prof.invert((phase + float64(n)) / cl.lambda)
	}
	e := rng.Exp(m.src.Key(rng.Arrival, uint64(c)), uint64(n))
	if cl.prof.flat {
		return t + int64(math.Round(e/cl.lambda*1e9))
	}
	var x float64
	if cl.shared { // live mode's goroutines: no cursor
		x = cl.prof.cum(t)
	} else {
		x = cl.prof.cumNear(t, &cl.cur)
	}
	next := cl.prof.invert(x + e/cl.lambda)
	if cl.prof.slope != nil {
		next = max(next, t) // the quadratic's root may round a nanosecond early
	}
	return next
}

// replayAt is client c's request n in a replay: recorded request
// c + n·clients (request i goes to client i mod clients), or MaxInt64
// past the recording's end.
func (cl *fleet) replayAt(c uint32, n uint32) int64 {
	i := uint64(c) + uint64(n)*uint64(len(cl.ord))
	if i >= uint64(len(cl.replay)) {
		return math.MaxInt64
	}
	return cl.replay[i]
}
