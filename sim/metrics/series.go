package metrics

import "math"

// Row is one metrics interval. Counters count events inside the interval;
// *NS fields are nanoseconds of worker time (or queue-length × time) spent
// inside it.
type Row struct {
	Offered   int64 // application requests that arrived
	Attempts  int64 // attempts sent to the backend (first tries and retries)
	Retries   int64 // attempts after the first, sent or dropped
	Succeeded int64 // application requests completed successfully (goodput)
	Failed    int64 // application requests that ended in failure after their last attempt

	DeadlineExceeded int64 // of Failed: requests whose overall deadline passed
	BudgetRefused    int64 // of Failed: requests whose retry the retry budget refused
	Paced            int64 // attempts the rate limiter delayed
	PacedWaitNS      int64 // their total delay

	DropThrottle int64 // application requests dropped locally by the adaptive throttle
	DropNoConn   int64 // application requests dropped locally because the client had no connection
	DropBreaker  int64 // application requests refused locally by an open circuit breaker

	Received      int64 // attempts that reached the backend (including rejected)
	Accepted      int64 // attempts the backend admitted (queued or served)
	Rejected      int64 // attempts the backend rejected on arrival as overloaded (queue full)
	Unanswered    int64 // attempts dropped unanswered: queue and accept backlog full
	QueueTimeouts int64 // admitted attempts rejected when they reached a worker after waiting longer than backend.queue.timeout
	FailedOutage  int64 // attempts sent during an outage (refused, or black-holed)
	LostOutage    int64 // admitted attempts lost (queued or in service) when an outage began
	TimedOut      int64 // attempts whose client gave up waiting
	Served        int64 // attempts whose service completed
	Errors        int64 // of Served: attempts answered with an error (backend.error_rate)
	Cancelled     int64 // queued attempts skipped because their client had gone

	DeadlineDropped int64 // queued attempts dropped unserved because the deadline their caller sent had passed (service graphs)
	Hedges          int64 // hedged copies sent (of Attempts)
	Shed            int64 // refused by the server's rate limit or concurrency limit (of Rejected) or dropped by CoDel (of QueueTimeouts)

	Connected       int64 // clients connected at the end of the interval
	Disconnects     int64 // connections closed by faults
	ConnectAttempts int64 // connection attempts (handshakes) started by clients
	ConnectsRcvd    int64 // connection attempts that reached a running backend
	ConnectsOK      int64 // connections established
	ConnectsFailed  int64 // attempts refused, rejected or lost by the backend
	ConnectTimeouts int64 // attempts the client gave up (connect_timeout)

	ConnectsUnanswered int64 // handshakes dropped unanswered: accept backlog full

	HandshakeUsefulNS int64 // worker time on handshakes that connected a client
	HandshakeWastedNS int64 // worker time on handshakes nobody waited for any more, or lost

	UsefulNS    int64 // worker time whose answer reached a waiting client
	WastedNS    int64 // worker time on rejections, abandoned work and work lost to faults
	QueueAreaNS int64 // ∫ queue length dt

	CapacityNS int64 // ∫ workers available dt (worker-nanoseconds)

	LatencyP50, LatencyP99 float64 // ns, of requests completed in the interval; NaN when none
	// LatencyP90 and LatencyMax (ns), as LatencyP50 and from the same
	// histogram: within 1.6% (Histogram). In memory only, for the run
	// page's latency chart: timeseries.csv does not write them.
	LatencyP90, LatencyMax float64

	OutNS   int64 // ∫ replicas out of rotation dt (outlier ejection, health checks)
	LimitNS int64 // ∫ adaptive concurrency limit dt, summed over replicas (0: no limiter)
	// With an autoscaler (Series.Autoscaled): ∫ replicas taking work dt,
	// ∫ replicas the autoscaler wants (ready, provisioning) dt, and the
	// most replicas taking work at any time in the interval.
	ReplicasNS, DesiredNS int64
	ReplicasPeak          int64

	Degraded int64 // attempts whose service started degraded: a cheaper response (backend.degrade)
}

// Series is a run's rows, preallocated for the whole horizon.
type Series struct {
	Interval int64 // ns
	Rows     []Row
	// Autoscaled: the replica columns hold an autoscaler's counts (else
	// they are written empty).
	Autoscaled bool
	// Degrading: the service degrades under load (backend.degrade), and
	// timeseries.csv has a degraded column (else it has none).
	Degrading bool
}

// NewSeries allocates n rows of interval ns each.
func NewSeries(interval int64, n int) *Series {
	return &Series{Interval: interval, Rows: make([]Row, n)}
}

// Index is the row holding time t (clamped to the last row).
func (s *Series) Index(t int64) int {
	i := int(t / s.Interval)
	if i >= len(s.Rows) {
		i = len(s.Rows) - 1
	}
	return i
}

// within reports whether the span [from, to), not empty, lies in one row,
// and which: Index(from) == Index(to−1) with one division instead of two
// (it is asked at every change of a queue and at every completion).
func (s *Series) within(from, to int64) (int, bool) {
	i := s.Index(from)
	return i, to > from && (i == len(s.Rows)-1 || to <= int64(i+1)*s.Interval)
}

// Spread distributes an amount proportional to time over [from, to) into
// the rows it overlaps, through add (which receives the row and the
// nanoseconds of the span inside it).
func (s *Series) Spread(from, to int64, add func(r *Row, ns int64)) {
	for from < to {
		i := s.Index(from)
		end := int64(i+1) * s.Interval
		if i == len(s.Rows)-1 || end > to {
			end = to
		}
		add(&s.Rows[i], end-from)
		from = end
	}
}

// AddUseful adds useful worker time over [from, to).
func (s *Series) AddUseful(from, to int64) {
	if i, ok := s.within(from, to); ok {
		s.Rows[i].UsefulNS += to - from
		return
	}
	s.Spread(from, to, func(r *Row, ns int64) { r.UsefulNS += ns })
}

// AddWasted adds wasted worker time over [from, to).
func (s *Series) AddWasted(from, to int64) {
	if i, ok := s.within(from, to); ok {
		s.Rows[i].WastedNS += to - from
		return
	}
	s.Spread(from, to, func(r *Row, ns int64) { r.WastedNS += ns })
}

// AddHandshakeUseful adds useful handshake time over [from, to).
func (s *Series) AddHandshakeUseful(from, to int64) {
	s.Spread(from, to, func(r *Row, ns int64) { r.HandshakeUsefulNS += ns })
}

// AddHandshakeWasted adds wasted handshake time over [from, to).
func (s *Series) AddHandshakeWasted(from, to int64) {
	s.Spread(from, to, func(r *Row, ns int64) { r.HandshakeWastedNS += ns })
}

// AddQueueArea adds n·(to−from) to the queue-length integral.
func (s *Series) AddQueueArea(from, to int64, n int64) {
	if n == 0 || to <= from {
		return
	}
	if i, ok := s.within(from, to); ok { // what Spread would add
		s.Rows[i].QueueAreaNS += n * (to - from)
		return
	}
	s.Spread(from, to, func(r *Row, ns int64) { r.QueueAreaNS += n * ns })
}

// AddOut adds n·(to−from) to the integral of replicas out of rotation.
func (s *Series) AddOut(from, to int64, n int64) {
	if n == 0 || to <= from {
		return
	}
	s.Spread(from, to, func(r *Row, ns int64) { r.OutNS += n * ns })
}

// AddCapacity adds workers·(to−from) to the capacity integral.
func (s *Series) AddCapacity(from, to int64, workers int64) {
	s.Spread(from, to, func(r *Row, ns int64) { r.CapacityNS += workers * ns })
}

// AddLimit adds limit·(to−from) to the concurrency-limit integral.
func (s *Series) AddLimit(from, to int64, limit int64) {
	if limit == 0 || to <= from {
		return
	}
	s.Spread(from, to, func(r *Row, ns int64) { r.LimitNS += limit * ns })
}

// AddReplicas accounts ready replicas taking work and desired replicas
// over [from, to).
func (s *Series) AddReplicas(from, to int64, ready, desired int64) {
	s.Spread(from, to, func(r *Row, ns int64) {
		r.ReplicasNS += ready * ns
		r.DesiredNS += desired * ns
		r.ReplicasPeak = max(r.ReplicasPeak, ready)
	})
}

// latencyQs are the quantiles SetLatency writes, ascending.
var latencyQs = []float64{0.5, 0.9, 0.99, 1}

// SetLatency writes h's p50, p90, p99 and maximum into the row's latency
// fields, once per interval (one pass over the buckets); NaN when h is
// nil or empty.
func (r *Row) SetLatency(h *Histogram) {
	var q [4]float64
	if h == nil || !h.Quantiles(latencyQs, q[:]) {
		q = [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	r.LatencyP50, r.LatencyP90, r.LatencyP99, r.LatencyMax = q[0], q[1], q[2], q[3]
}
