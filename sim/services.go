package sim

import (
	"cmp"
	"slices"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// ServiceResult is one service's share of a service-graph run.
type ServiceResult struct {
	Name string
	// Series holds the service's rows: what its callers did (offered is
	// the calls made to it, attempts, retries, succeeded, failed, local
	// drops) and what it did (received, accepted, rejected, served, worker
	// time, queue). The entry service's series is the run's Series, whose
	// caller-side counts are the external clients'.
	Series  *metrics.Series
	Summary ServiceSummary
	// ReplicaAttempts is, per replica, the attempts its callers sent it
	// (first hop; forwarded attempts not counted); nil with one replica.
	ReplicaAttempts []int64
}

// ServiceSummary is a service's headline figures (the services section
// of the run folder's summary, sim/rundir).
type ServiceSummary struct {
	Name string `json:"name"`
	// Workers is the workers of every replica together.
	Workers  int `json:"workers"`
	Replicas int `json:"replicas"`
	// Calls is the requests its callers made to it (for the entry service,
	// the external clients' requests); Attempts the attempts they sent.
	Calls            int64 `json:"calls"`
	Attempts         int64 `json:"attempts"`
	Succeeded        int64 `json:"succeeded"`
	Failed           int64 `json:"failed"`
	DropThrottle     int64 `json:"dropped_throttle"`
	DropBreaker      int64 `json:"dropped_breaker"`
	DeadlineExceeded int64 `json:"deadline_exceeded"`
	BudgetRefused    int64 `json:"budget_refused"`
	Received         int64 `json:"received"`
	Accepted         int64 `json:"accepted"`
	// Rejected includes queue timeouts.
	Rejected        int64 `json:"rejected"`
	Unanswered      int64 `json:"unanswered"`
	Served          int64 `json:"served"`
	Errors          int64 `json:"errors"`
	DeadlineDropped int64 `json:"deadline_dropped"`
	FailedOutage    int64 `json:"failed_outage"`
	LostOutage      int64 `json:"lost_outage"`
	TimedOut        int64 `json:"timed_out"`
	// Shed is the attempts the service's rate limit, priority shedding or
	// concurrency limit refused (of Rejected) or CoDel dropped; Degraded
	// those served with a degraded response (backend.degrade). Absent
	// without them.
	Shed     int64 `json:"shed,omitempty"`
	Degraded int64 `json:"degraded,omitempty"`
	// AttemptsPerRequest is the attempts that reached the service (those
	// it refused in an outage included) per external request: the
	// amplification at this tier.
	AttemptsPerRequest *float64 `json:"attempts_per_request"`
	SuccessRatio       *float64 `json:"success_ratio"`
	WastedWorkFraction *float64 `json:"wasted_work_fraction"`
	Utilisation        *float64 `json:"utilisation"`
	// MeanInSystem is the time-mean number of requests queued or holding
	// a worker; MeanQueueLen the queued ones.
	MeanInSystem  *float64 `json:"mean_in_system"`
	MeanQueueLen  *float64 `json:"mean_queue_len"`
	LatencyP50MS  *float64 `json:"latency_p50_ms"`
	LatencyP99MS  *float64 `json:"latency_p99_ms"`
	LatencyMeanMS *float64 `json:"latency_mean_ms"`
	// PeakReceivedOverCapacity is the highest per-interval arrival rate of
	// attempts over workers / mean service time (local work only).
	PeakReceivedOverCapacity *float64         `json:"peak_received_over_capacity"`
	Recovery                 metrics.Recovery `json:"recovery"`
	// Ejections is how many times outlier detection ejected a replica.
	Ejections int64 `json:"ejections,omitempty"`
}

// services summarises every service of a graph run (nil otherwise).
// offered is the external requests; stop where the run stopped.
func (m *model) services(offered int64, stop int64) []ServiceResult {
	if !m.sc.IsGraph() {
		return nil
	}
	nodes := m.sc.Nodes()
	var out []ServiceResult
	for i := range m.nodes {
		nd := &m.nodes[i]
		b := &m.svcs[nd.first] // its replicas share its series
		if len(b.ser.Rows) > len(m.mt.ser.Rows) {
			b.ser.Rows = b.ser.Rows[:len(m.mt.ser.Rows)]
		}
		var waitSum float64
		var waitN int64
		for _, rp := range m.svcs[nd.first : nd.first+nd.n] {
			waitSum += rp.waitSum
			waitN += rp.waitN
		}
		be := nodes[i].Backend
		p := m.params()
		p.Workers = int64(be.TotalWorkers())
		p.CapacityRPS = float64(be.TotalWorkers()) / (be.Service.MeanNS() / 1e9)
		p.Connections = false
		hist, latSum, latN := &nd.hist, nd.latSum, nd.latN
		if b.fleet {
			hist, latSum, latN = &m.mt.all, m.mt.latSum, m.mt.latN
		}
		s := metrics.Summarise(b.ser, p, hist, waitSum, waitN)
		t := b.ser.Totals()
		sum := ServiceSummary{
			Name: nd.name, Workers: be.TotalWorkers(), Replicas: int(nd.n),
			Calls: t.Offered, Attempts: t.Attempts, Succeeded: t.Succeeded, Failed: t.Failed,
			DropThrottle: t.DropThrottle, DropBreaker: t.DropBreaker, DeadlineExceeded: t.DeadlineExceeded, BudgetRefused: t.BudgetRefused,
			Received: t.Received, Accepted: t.Accepted, Rejected: t.Rejected + t.QueueTimeouts, Unanswered: t.Unanswered,
			Served: t.Served, Errors: t.Errors, DeadlineDropped: t.DeadlineDropped,
			FailedOutage: t.FailedOutage, LostOutage: t.LostOutage, TimedOut: t.TimedOut,
			Shed: t.Shed, Degraded: t.Degraded,
			AttemptsPerRequest:       metrics.Ratio(t.Received+t.FailedOutage, offered),
			SuccessRatio:             metrics.Ratio(t.Succeeded, t.Offered),
			WastedWorkFraction:       s.WastedWorkFraction,
			Utilisation:              s.Utilisation,
			LatencyP50MS:             s.LatencyP50MS,
			LatencyP99MS:             s.LatencyP99MS,
			PeakReceivedOverCapacity: s.PeakReceivedOverCapacity,
			Recovery:                 s.Recovery,
		}
		if stop > 0 {
			T := float64(stop)
			q := float64(t.QueueAreaNS) / T
			sum.MeanQueueLen = &q
			n := (float64(t.QueueAreaNS) + float64(t.UsefulNS) + float64(t.WastedNS)) / T
			sum.MeanInSystem = &n
		}
		if latN > 0 {
			v := latSum / float64(latN) / 1e6
			sum.LatencyMeanMS = &v
		}
		var picks []int64
		if nd.n > 1 {
			picks = nd.picks
		}
		if g := nd.g; g != nil && g.od != nil {
			sum.Ejections = g.od.Ejections()
		}
		out = append(out, ServiceResult{Name: nd.name, Series: b.ser, Summary: sum, ReplicaAttempts: picks})
	}
	return out
}

// GraphSummary leads the summary of a service-graph run: which service
// the top-level figures describe, and a line per service, the most
// overloaded first.
type GraphSummary struct {
	// EntryService is the service the clients call: run.capacity_rps and
	// the summary's backend figures (backend_*, peak_received_over_capacity,
	// wasted_work_fraction, utilisation, time_above_capacity_s, ...) are
	// its own.
	EntryService string `json:"entry_service"`
	// MostOverloaded is the service with the highest peak load ÷ capacity.
	MostOverloaded string `json:"most_overloaded"`
	// Services are every service, by peak load ÷ capacity, highest first
	// (ties in file order).
	Services []GraphLine `json:"services"`
}

// GraphLine is one service's line of GraphSummary.
type GraphLine struct {
	Name string `json:"name"`
	// PeakLoadOverCapacity is the highest per-interval rate of attempts
	// that reached the service (refused ones in an outage included) ÷ its
	// capacity (workers / mean service time, local work only).
	PeakLoadOverCapacity *float64 `json:"peak_load_over_capacity"`
	// CallsOthers: its workers also wait on its calls, so its local-work
	// capacity overstates what it can take.
	CallsOthers bool `json:"calls_others"`
	// Rejected includes queue timeouts.
	Rejected           int64    `json:"rejected"`
	WastedWorkFraction *float64 `json:"wasted_work_fraction"`
	AttemptsPerRequest *float64 `json:"attempts_per_request"`
	Utilisation        *float64 `json:"utilisation"`
	// Recovered: the recovery rule on the successful calls to it held
	// (RecoveryApplicable false: no fault to recover from); RecoveryTimeS
	// its time (null when it did not recover or there is no fault).
	RecoveryApplicable bool     `json:"recovery_applicable"`
	Recovered          bool     `json:"recovered"`
	RecoveryTimeS      *float64 `json:"recovery_time_s"`
}

// Graph is the graph's summary (nil for a run with one backend).
func (r *Result) Graph() *GraphSummary {
	if len(r.Services) == 0 {
		return nil
	}
	nodes := r.Scenario.Nodes()
	g := &GraphSummary{EntryService: r.Services[0].Name}
	for i, sv := range r.Services {
		s := sv.Summary
		ln := GraphLine{Name: sv.Name, CallsOthers: len(nodes[i].Calls) > 0, Rejected: s.Rejected,
			WastedWorkFraction: s.WastedWorkFraction, AttemptsPerRequest: s.AttemptsPerRequest, Utilisation: s.Utilisation,
			RecoveryApplicable: s.Recovery.Applicable, Recovered: s.Recovery.Recovered, RecoveryTimeS: s.Recovery.RecoveryTimeS}
		be := nodes[i].Backend
		if mean := be.Service.MeanNS(); mean > 0 && be.TotalWorkers() > 0 && sv.Series.Interval > 0 {
			var peak int64
			for _, row := range sv.Series.Rows {
				peak = max(peak, row.Received+row.FailedOutage)
			}
			capacity := float64(be.TotalWorkers()) / (mean / 1e9)
			v := float64(peak) / (float64(sv.Series.Interval) / 1e9) / capacity
			ln.PeakLoadOverCapacity = &v
		}
		g.Services = append(g.Services, ln)
	}
	load := func(l GraphLine) float64 {
		if l.PeakLoadOverCapacity == nil {
			return -1
		}
		return *l.PeakLoadOverCapacity
	}
	slices.SortStableFunc(g.Services, func(a, b GraphLine) int { return cmp.Compare(load(b), load(a)) })
	g.MostOverloaded = g.Services[0].Name
	return g
}
