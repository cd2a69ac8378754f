package metrics

import "math"

// Window is a fault window in nanoseconds.
type Window struct{ Start, End int64 }

// Params is what the summary needs to know about the scenario.
type Params struct {
	Workers         int64   // nominal workers
	CapacityRPS     float64 // nominal capacity: workers / mean service time
	Faults          []Window
	RecoveryWindow  int64 // ns, a multiple of the interval
	Baseline        int64 // ns, a multiple of the interval
	RecoverFraction float64
	StayFraction    float64

	// Outages are the outage windows (a subset of Faults).
	Outages []Window

	// Connections (nil ConnectCapacityRPS: the scenario has none).
	Connections        bool
	ConnectCapacityRPS float64  // workers / connect_cost
	Reconnected99S     *float64 // seconds after the last connection-closing fault until 99% are connected
	ReconnectedAllS    *float64 // ... until all are
	ConnectedAtEnd     int64
	RetryingAtEnd      int64
}

// Summary is the headline figures of one run. Ratios whose denominator is
// zero, and figures that do not apply (recovery without a fault), are nil
// and written as JSON null. The fields tagged measured:"server" are
// counted at the server: a live run against a remote --target cannot see
// them (ServerFields, ForgetServer).
type Summary struct {
	Offered          int64 `json:"offered"`
	Succeeded        int64 `json:"succeeded"`
	Failed           int64 `json:"failed"`
	DeadlineExceeded int64 `json:"deadline_exceeded"`
	BudgetRefused    int64 `json:"budget_refused"`
	Paced            int64 `json:"paced"`
	// MeanPacingWaitMS is the mean delay the rate limiter added to the
	// attempts it delayed.
	MeanPacingWaitMS *float64 `json:"mean_pacing_wait_ms"`
	DropThrottle     int64    `json:"dropped_throttle"`
	DropNoConn       int64    `json:"dropped_no_connection"`
	DropBreaker      int64    `json:"dropped_breaker"`
	InFlight         int64    `json:"in_flight_at_end"`
	Attempts         int64    `json:"attempts"`
	Retries          int64    `json:"retries"`
	// Hedges is the hedged copies sent (clients.hedge), part of Attempts;
	// absent without hedging.
	Hedges int64 `json:"hedges,omitempty"`
	// Shed is the requests the server's rate limit refused (part of
	// backend_rejected) or CoDel dropped (part of queue_timeouts); absent
	// without them.
	Shed int64 `json:"shed,omitempty" measured:"server"`
	// Degraded is the attempts served with a degraded (cheaper) response
	// (backend.degrade), part of backend_accepted; absent without it.
	Degraded int64 `json:"degraded,omitempty" measured:"server"`
	// EntryService, in a service graph, names the service the backend
	// figures (backend_*, the capacity, wasted-work and overload figures)
	// describe: the one the clients call. Absent with one backend.
	EntryService  string `json:"entry_service,omitempty"`
	Received      int64  `json:"backend_received" measured:"server"`
	Accepted      int64  `json:"backend_accepted" measured:"server"`
	Rejected      int64  `json:"backend_rejected" measured:"server"`
	Unanswered    int64  `json:"backend_unanswered" measured:"server"`
	QueueTimeouts int64  `json:"queue_timeouts" measured:"server"`
	FailedOutage  int64  `json:"failed_outage" measured:"server"`
	LostOutage    int64  `json:"lost_outage" measured:"server"`
	TimedOut      int64  `json:"timed_out"`
	Served        int64  `json:"served" measured:"server"`
	Errors        int64  `json:"errors" measured:"server"`
	Cancelled     int64  `json:"cancelled" measured:"server"`

	SuccessRatio             *float64 `json:"success_ratio"`
	LocalDropRate            *float64 `json:"local_drop_rate"`
	Amplification            *float64 `json:"amplification"`
	PeakReceivedOverCapacity *float64 `json:"peak_received_over_capacity" measured:"server"`
	WastedWorkFraction       *float64 `json:"wasted_work_fraction" measured:"server"`
	Utilisation              *float64 `json:"utilisation" measured:"server"`
	// The latency of the requests that succeeded, from one histogram:
	// each figure within 1.6% of the exact value (the maximum is the
	// largest value's bucket midpoint).
	LatencyP50MS    *float64 `json:"latency_p50_ms"`
	LatencyP90MS    *float64 `json:"latency_p90_ms"`
	LatencyP99MS    *float64 `json:"latency_p99_ms"`
	LatencyMaxMS    *float64 `json:"latency_max_ms"`
	MeanQueueWaitMS *float64 `json:"mean_queue_wait_ms" measured:"server"`
	// LastSuccessS is when the last request that succeeded completed
	// (seconds from the start): with arrival process once, the time until
	// every client was served (Brooker's "completion time").
	LastSuccessS *float64 `json:"last_success_s"`

	// FaultLoadOverCapacity is the attempts the backend received during
	// the fault windows ÷ what its effective capacity (the workers left
	// by capacity faults) could serve in them: above 1, the clients kept
	// pushing more than was left. Null without a fault, without a
	// capacity (occ), or when no capacity was left (an outage).
	FaultLoadOverCapacity *float64 `json:"fault_load_over_effective_capacity" measured:"server"`
	// FaultSuccessRatio is the success ratio while the faults last: the
	// application requests that succeeded ÷ those that arrived, both
	// counted over the metrics intervals that overlap a fault window
	// (a success is counted when it completes, an arrival when it
	// arrives, so the two sets differ by the requests in flight at the
	// windows' edges: with a 1 s timeout and 10 s intervals, at most a
	// few per cent of one interval). Null without a fault.
	FaultSuccessRatio *float64 `json:"fault_success_ratio"`
	// TimeAboveCapacityS is the simulated time, in whole metrics
	// intervals, in which the backend received more attempts per second
	// than its effective capacity. Null without a capacity (occ).
	TimeAboveCapacityS *float64 `json:"time_above_capacity_s" measured:"server"`
	// RecoveryWastedWorkerS is the worker time wasted (rejections, work
	// for clients that had given up, failed handshakes) from the end of
	// the last fault until the service recovered, or until the end of
	// the run when it did not; RecoveryWastedFraction is its share of
	// the worker time spent in that span. Null without a fault.
	RecoveryWastedWorkerS  *float64 `json:"recovery_wasted_worker_s" measured:"server"`
	RecoveryWastedFraction *float64 `json:"recovery_wasted_fraction" measured:"server"`

	Recovery    Recovery     `json:"recovery"`
	Connections *ConnSummary `json:"connections"`
	// Replicas, with an autoscaler on the entry service, is its replica
	// counts; absent without one.
	Replicas *ReplicaSummary `json:"replicas,omitempty"`
}

// ReplicaSummary is the replica counts of an autoscaled service.
type ReplicaSummary struct {
	// Peak is the most replicas taking work at once; Mean their time
	// average over the run; ReplicaS the replica-seconds (the bill).
	Peak     int64   `json:"peak"`
	Mean     float64 `json:"mean"`
	ReplicaS float64 `json:"replica_s"`
	// PeakDesired is the highest interval mean of the replicas the
	// autoscaler wanted (taking work or provisioning).
	PeakDesired float64 `json:"peak_desired"`
}

// ConnSummary is the connection figures of a run with clients.connection.
type ConnSummary struct {
	Disconnects     int64 `json:"disconnects"`
	ConnectAttempts int64 `json:"connect_attempts"`
	ConnectsOK      int64 `json:"connects_ok"`
	ConnectsFailed  int64 `json:"connects_failed"`
	ConnectTimeouts int64 `json:"connect_timeouts"`
	// ConnectsUnanswered were dropped by a backend too busy to say no.
	ConnectsUnanswered int64 `json:"connects_unanswered"`
	// PeakConnectRateOverCapacity is the highest per-interval rate of
	// connection attempts while the backend is up (intervals that overlap
	// an outage are left out: refusing costs nothing) ÷ the backend's
	// handshake capacity (workers / connect_cost).
	PeakConnectRateOverCapacity *float64 `json:"peak_connect_rate_over_capacity"`
	PeakConnectRate             *float64 `json:"peak_connect_rate"`
	// WastedHandshakeFraction is the share of handshake worker time spent
	// on handshakes that connected nobody.
	WastedHandshakeFraction *float64 `json:"wasted_handshake_fraction"`
	WastedHandshakeWorkerS  float64  `json:"wasted_handshake_worker_s"`
	// Reconnected99S is the time from the end of the last outage or
	// disconnect fault until 99% of the clients were connected again.
	Reconnected99S *float64 `json:"reconnected_99_s"`
	// ReconnectedAllS is the same until every client was connected.
	ReconnectedAllS *float64 `json:"reconnected_all_s"`
	// At the end of the run: clients connected, and clients still trying
	// (waiting to reconnect or in a handshake). Together they are every
	// client that has started.
	ConnectedAtEnd int64 `json:"connected_at_end"`
	RetryingAtEnd  int64 `json:"retrying_at_end"`
}

// Recovery is the recovery-time verdict (defined in docs/model.md).
type Recovery struct {
	Applicable       bool     `json:"applicable"`
	FirstRecoveredS  *float64 `json:"first_recovered_at_s"`
	SecondOutage     bool     `json:"second_outage"`
	SecondOutageAtS  *float64 `json:"second_outage_at_s"`
	Reason           string   `json:"reason,omitempty"`
	BaselineGoodput  *float64 `json:"baseline_goodput_rps"`
	FaultEndS        *float64 `json:"fault_end_s"`
	Recovered        bool     `json:"recovered"`
	RecoveredAtS     *float64 `json:"recovered_at_s"`
	RecoveryTimeS    *float64 `json:"recovery_time_s"`
	MinGoodputAfterS *float64 `json:"min_windowed_goodput_after_recovery_rps"`
}

func ptr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Ratio is a/b, or nil (JSON null) when b is 0.
func Ratio(a, b int64) *float64 { return ratio(a, b) }

func ratio(a, b int64) *float64 {
	if b == 0 {
		return nil
	}
	return ptr(float64(a) / float64(b))
}

// Totals adds up every row.
func (s *Series) Totals() Row {
	var t Row
	for i := range s.Rows {
		r := &s.Rows[i]
		t.Offered += r.Offered
		t.Attempts += r.Attempts
		t.Retries += r.Retries
		t.Succeeded += r.Succeeded
		t.Failed += r.Failed
		t.DropThrottle += r.DropThrottle
		t.DeadlineExceeded += r.DeadlineExceeded
		t.BudgetRefused += r.BudgetRefused
		t.Paced += r.Paced
		t.PacedWaitNS += r.PacedWaitNS
		t.DropNoConn += r.DropNoConn
		t.DropBreaker += r.DropBreaker
		t.Disconnects += r.Disconnects
		t.ConnectAttempts += r.ConnectAttempts
		t.ConnectsOK += r.ConnectsOK
		t.ConnectsFailed += r.ConnectsFailed
		t.ConnectTimeouts += r.ConnectTimeouts
		t.HandshakeUsefulNS += r.HandshakeUsefulNS
		t.HandshakeWastedNS += r.HandshakeWastedNS
		t.Received += r.Received
		t.Accepted += r.Accepted
		t.Rejected += r.Rejected
		t.Unanswered += r.Unanswered
		t.ConnectsUnanswered += r.ConnectsUnanswered
		t.FailedOutage += r.FailedOutage
		t.QueueTimeouts += r.QueueTimeouts
		t.LostOutage += r.LostOutage
		t.TimedOut += r.TimedOut
		t.Served += r.Served
		t.Errors += r.Errors
		t.Cancelled += r.Cancelled
		t.DeadlineDropped += r.DeadlineDropped
		t.Hedges += r.Hedges
		t.Shed += r.Shed
		t.Degraded += r.Degraded
		t.UsefulNS += r.UsefulNS
		t.WastedNS += r.WastedNS
		t.QueueAreaNS += r.QueueAreaNS
		t.CapacityNS += r.CapacityNS
		t.OutNS += r.OutNS
		t.ReplicasNS += r.ReplicasNS
		t.DesiredNS += r.DesiredNS
		t.ReplicasPeak = max(t.ReplicasPeak, r.ReplicasPeak)
	}
	return t
}

// Goodput is the per-second rate of successful application requests in
// each row.
func (s *Series) Goodput() []float64 {
	g := make([]float64, len(s.Rows))
	sec := float64(s.Interval) / 1e9
	for i, r := range s.Rows {
		g[i] = float64(r.Succeeded) / sec
	}
	return g
}

// SlidingMean is the recovery rule's sliding goodput: element j is the
// sum of g[j−w+1..j] divided by w, the mean over the window of w rows
// that ends at the end of row j (for j < w−1, where the window would
// start before the first row, the sum of the rows there is divided by w
// all the same). The recovery rule and the recovery chart both read it.
func SlidingMean(g []float64, w int) []float64 {
	win := make([]float64, len(g))
	var acc float64
	for j := range g {
		acc += g[j]
		if j >= w {
			acc -= g[j-w]
		}
		win[j] = acc / float64(w)
	}
	return win
}

// Summarise computes the summary. all is the latency histogram of the
// whole run; waitSum and waitN give the mean queueing delay.
func Summarise(s *Series, p Params, all *Histogram, waitSum float64, waitN int64) Summary {
	t := s.Totals()
	sum := Summary{
		Offered: t.Offered, Succeeded: t.Succeeded, Failed: t.Failed, DeadlineExceeded: t.DeadlineExceeded, BudgetRefused: t.BudgetRefused, DropThrottle: t.DropThrottle, DropNoConn: t.DropNoConn, DropBreaker: t.DropBreaker,
		Attempts: t.Attempts, Retries: t.Retries, Received: t.Received, Accepted: t.Accepted,
		Rejected: t.Rejected, Unanswered: t.Unanswered, QueueTimeouts: t.QueueTimeouts, FailedOutage: t.FailedOutage, LostOutage: t.LostOutage, TimedOut: t.TimedOut, Served: t.Served, Errors: t.Errors,
		Cancelled: t.Cancelled, Hedges: t.Hedges, Shed: t.Shed, Degraded: t.Degraded,
	}
	sum.InFlight = t.Offered - t.Succeeded - t.Failed - t.DropThrottle - t.DropNoConn - t.DropBreaker
	sum.Paced = t.Paced
	if t.Paced > 0 {
		sum.MeanPacingWaitMS = ptr(float64(t.PacedWaitNS) / float64(t.Paced) / 1e6)
	}
	sum.SuccessRatio = ratio(t.Succeeded, t.Offered)
	sum.LocalDropRate = ratio(t.DropThrottle+t.DropNoConn+t.DropBreaker, t.Offered)
	sum.Amplification = ratio(t.Attempts, t.Offered)
	useful, wasted := t.UsefulNS+t.HandshakeUsefulNS, t.WastedNS+t.HandshakeWastedNS
	sum.WastedWorkFraction = ratio(wasted, useful+wasted)
	sum.Utilisation = ratio(useful+wasted, t.CapacityNS)
	if p.Connections {
		cs := &ConnSummary{
			Disconnects: t.Disconnects, ConnectAttempts: t.ConnectAttempts, ConnectsOK: t.ConnectsOK,
			ConnectsFailed: t.ConnectsFailed, ConnectTimeouts: t.ConnectTimeouts, ConnectsUnanswered: t.ConnectsUnanswered,
			WastedHandshakeFraction: ratio(t.HandshakeWastedNS, t.HandshakeUsefulNS+t.HandshakeWastedNS),
			WastedHandshakeWorkerS:  float64(t.HandshakeWastedNS) / 1e9,
			Reconnected99S:          p.Reconnected99S,
			ReconnectedAllS:         p.ReconnectedAllS,
			ConnectedAtEnd:          p.ConnectedAtEnd,
			RetryingAtEnd:           p.RetryingAtEnd,
		}
		var peak int64
		for i, r := range s.Rows {
			from, to := int64(i)*s.Interval, int64(i+1)*s.Interval
			up := true
			for _, o := range p.Outages {
				up = up && (to <= o.Start || from >= o.End)
			}
			if up {
				peak = max(peak, r.ConnectAttempts)
			}
		}
		rate := float64(peak) / (float64(s.Interval) / 1e9)
		cs.PeakConnectRate = ptr(rate)
		if p.ConnectCapacityRPS > 0 {
			cs.PeakConnectRateOverCapacity = ptr(rate / p.ConnectCapacityRPS)
		}
		sum.Connections = cs
	}
	if p.CapacityRPS > 0 {
		var peak int64
		for _, r := range s.Rows {
			peak = max(peak, r.Received)
		}
		sum.PeakReceivedOverCapacity = ptr(float64(peak) / (float64(s.Interval) / 1e9) / p.CapacityRPS)
	}
	if v, ok := all.Quantile(0.5); ok {
		sum.LatencyP50MS = ptr(v / 1e6)
	}
	if v, ok := all.Quantile(0.99); ok {
		sum.LatencyP99MS = ptr(v / 1e6)
	}
	if v, ok := all.Quantile(0.9); ok {
		sum.LatencyP90MS = ptr(v / 1e6)
	}
	if v, ok := all.Quantile(1); ok {
		sum.LatencyMaxMS = ptr(v / 1e6)
	}
	if waitN > 0 {
		sum.MeanQueueWaitMS = ptr(waitSum / float64(waitN) / 1e6)
	}
	sum.Recovery = recovery(s, p)
	overload(&sum, s, p)
	if s.Autoscaled && len(s.Rows) > 0 {
		rs := &ReplicaSummary{Peak: t.ReplicasPeak, ReplicaS: float64(t.ReplicasNS) / 1e9}
		rs.Mean = float64(t.ReplicasNS) / float64(int64(len(s.Rows))*s.Interval)
		for _, r := range s.Rows {
			rs.PeakDesired = max(rs.PeakDesired, float64(r.DesiredNS)/float64(s.Interval))
		}
		sum.Replicas = rs
	}
	return sum
}

// EffectiveCapacity is the backend's capacity in row r, in attempts per
// second: the nominal capacity scaled by the share of the nominal workers
// available during the row (capacity faults remove workers; an outage
// leaves none).
func EffectiveCapacity(r *Row, interval int64, p Params) float64 {
	if p.Workers <= 0 || interval <= 0 {
		return 0
	}
	return float64(r.CapacityNS) / float64(interval) / float64(p.Workers) * p.CapacityRPS
}

// overload computes the figures that compare the load with the effective
// capacity, and the work wasted during the recovery.
func overload(sum *Summary, s *Series, p Params) {
	sec := float64(s.Interval) / 1e9
	var offered, succeeded int64
	for i := range s.Rows {
		from, to := int64(i)*s.Interval, int64(i+1)*s.Interval
		for _, f := range p.Faults {
			if from < f.End && to > f.Start {
				offered += s.Rows[i].Offered
				succeeded += s.Rows[i].Succeeded
				break
			}
		}
	}
	if len(p.Faults) > 0 {
		sum.FaultSuccessRatio = ratio(succeeded, offered)
	}
	if p.CapacityRPS > 0 {
		above := 0
		var rcvd, capacity float64
		for i := range s.Rows {
			r := &s.Rows[i]
			c := EffectiveCapacity(r, s.Interval, p)
			if float64(r.Received)/sec > c {
				above++
			}
			from, to := int64(i)*s.Interval, int64(i+1)*s.Interval
			for _, f := range p.Faults {
				if from < f.End && to > f.Start {
					rcvd += float64(r.Received)
					capacity += c * sec
					break
				}
			}
		}
		sum.TimeAboveCapacityS = ptr(float64(above) * sec)
		if capacity >= 1 { // at least one attempt's worth of capacity
			sum.FaultLoadOverCapacity = ptr(rcvd / capacity)
		}
	}
	rec := sum.Recovery
	if !rec.Applicable || rec.FaultEndS == nil {
		return
	}
	from := int64(math.Ceil(*rec.FaultEndS*1e9/float64(s.Interval))) * s.Interval
	to := int64(len(s.Rows)) * s.Interval
	if rec.RecoveredAtS != nil {
		to = int64(math.Round(*rec.RecoveredAtS * 1e9))
	}
	var useful, wasted int64
	for i := s.Index(from); i < len(s.Rows) && int64(i)*s.Interval < to && from < to; i++ {
		r := &s.Rows[i]
		useful += r.UsefulNS + r.HandshakeUsefulNS
		wasted += r.WastedNS + r.HandshakeWastedNS
	}
	sum.RecoveryWastedWorkerS = ptr(float64(wasted) / 1e9)
	sum.RecoveryWastedFraction = ratio(wasted, useful+wasted)
}

func recovery(s *Series, p Params) Recovery {
	if len(p.Faults) == 0 {
		return Recovery{Reason: "no fault in the scenario"}
	}
	first, last := p.Faults[0].Start, p.Faults[0].End
	for _, f := range p.Faults {
		first, last = min(first, f.Start), max(last, f.End)
	}
	rec := Recovery{Applicable: true, FaultEndS: ptr(float64(last) / 1e9)}
	g := s.Goodput()
	iv := s.Interval
	// Baseline: the whole rows inside [first − Baseline, first).
	hi := int(first / iv)
	lo := max(0, int((first-p.Baseline)/iv))
	if first-p.Baseline < 0 {
		lo = 0
	}
	if hi <= lo {
		rec.Reason = "no whole metrics interval before the first fault to take a baseline from"
		return rec
	}
	if hi > len(g) { // an interrupted run that stopped before the first fault
		rec.Reason = "the run stopped before the first fault"
		return rec
	}
	var base float64
	for _, x := range g[lo:hi] {
		base += x
	}
	base /= float64(hi - lo)
	rec.BaselineGoodput = ptr(base)
	if base <= 0 {
		rec.Reason = "baseline goodput is zero"
		return rec
	}
	w := int(p.RecoveryWindow / iv)
	n := len(g)
	// win[j] is the mean goodput of rows j−w+1..j (the window ending at
	// the end of row j); candidates are the windows that start at or after
	// the end of the last fault (its interval rounded up).
	startJ := int((last+iv-1)/iv) + w - 1
	if startJ >= n {
		rec.Reason = "the run ends before a whole recovery window after the fault"
		return rec
	}
	win := SlidingMean(g, w)
	// suffixMin[j] = min(win[j:]) over candidate windows.
	suffixMin := make([]float64, n+1)
	suffixMin[n] = math.Inf(1)
	for j := n - 1; j >= startJ; j-- {
		suffixMin[j] = math.Min(win[j], suffixMin[j+1])
	}
	// A second outage: goodput first came back to the recovery threshold,
	// then a later window fell below the stay threshold again.
	for j := startJ; j < n; j++ {
		if win[j] >= p.RecoverFraction*base {
			rec.FirstRecoveredS = ptr(float64(int64(j+1)*iv) / 1e9)
			for k := j + 1; k < n; k++ {
				if win[k] < p.StayFraction*base {
					rec.SecondOutage = true
					rec.SecondOutageAtS = ptr(float64(int64(k+1)*iv) / 1e9)
					break
				}
			}
			break
		}
	}
	for j := startJ; j < n; j++ {
		if win[j] >= p.RecoverFraction*base && suffixMin[j] >= p.StayFraction*base {
			at := float64(int64(j+1)*iv) / 1e9
			rec.Recovered = true
			rec.RecoveredAtS = ptr(at)
			rec.RecoveryTimeS = ptr(at - float64(last)/1e9)
			rec.MinGoodputAfterS = ptr(suffixMin[j])
			return rec
		}
	}
	rec.Reason = "goodput did not return to and stay at its baseline before the run ended"
	return rec
}
