// Package server is a real HTTP server that is a scenario's backend: a
// pool of workers of the scenario's size that spend the scenario's service
// times as real time, a bounded FIFO queue with its timeout, rejections
// that cost worker time (reject_cost) and carry Retry-After, the accept
// backlog, and the scenario's faults on their schedule, with Prometheus
// metrics. `throttlesim serve` runs it; `throttlesim live` runs it in
// process against the live client (live/client).
//
// Its decisions are the simulator's: both call the same admission value
// (sim/admission), the server under its mutex. An arrival passes the rate
// limit and the concurrency limit, then is served when a worker is free or
// queued when the queue has room; otherwise its rejection is charged to a
// free worker, or to the accept backlog, or, when the backlog is full, the
// arrival is held unanswered (as a kernel drops connections beyond its
// listen backlog). A worker that comes free takes pending rejection work
// before the queue, the queue's head or tail by its discipline (fifo,
// lifo, adaptive_lifo, codel), and rejects a queued request that CoDel
// drops or that waited longer than the queue timeout.
//
// What HTTP cannot say as the simulator does: an overload rejection is a
// 503 whose Retry-After is whole seconds (rounded up); "do not retry"
// (dont_retry) sends no Retry-After; an outage in "refuse" mode aborts the
// connection (the client sees a reset or EOF: unavailable) and in
// "blackhole" mode holds the request until the client gives up. Service
// graphs, replicas, connections, priority shedding (an HTTP request
// carries no priority) and disconnect faults are not supported and are
// refused with an error naming the field.
package server

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/throttlesim/throttlesim/live/internal/decide"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/admission"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Options tune a Server.
type Options struct {
	// Seed names the random draws (service times, errors); default the
	// scenario's.
	Seed *uint64
	// Series, when set, receives the backend's counters and worker-time
	// integrals per interval, with times measured from Start.
	Series *metrics.Series
	// NoSchedule leaves out the scenario's faults (they can still be
	// started through StartFault or the admin endpoint).
	NoSchedule bool
	// AdminToken turns on the admin endpoint (/admin/faults), which
	// then requires "Authorization: Bearer AdminToken" and a JSON body.
	// Empty (the default): the endpoint is off and answers 404, so nobody
	// who can reach the port, nor a web page the operator opens, can
	// start a fault.
	AdminToken string
	// MaxFaultDuration bounds an admin fault's duration and start delay
	// (default DefaultMaxFaultDuration); MaxFaults bounds the faults
	// pending or in progress at once (default DefaultMaxFaults).
	MaxFaultDuration time.Duration
	MaxFaults        int
	// End, when > 0, is the horizon of Series: time after it (the
	// shutdown) is not accounted, so the last row holds no more than its
	// interval of worker time and capacity.
	End int64
}

// The admin endpoint's bounds: a fault lasts at most an hour (and starts
// at most an hour from now), and at most 16 are pending or in progress.
const (
	DefaultMaxFaultDuration = time.Hour
	DefaultMaxFaults        = 16
)

// A FaultState is where a fault of the server's is: pending (it starts
// later), active (in progress), or, in the answer of a cancel, cancelled.
type FaultState string

const (
	FaultPending   FaultState = "pending"
	FaultActive    FaultState = "active"
	FaultCancelled FaultState = "cancelled"
)

// FaultInfo describes one of the server's faults: the scenario's scheduled
// ones and those started through the admin endpoint alike. Start and End
// are wall-clock times.
type FaultInfo struct {
	ID    int64          `json:"id"`
	State FaultState     `json:"state"`
	Start time.Time      `json:"start"`
	End   time.Time      `json:"end"`
	Fault scenario.Fault `json:"fault"`
}

// fault is a fault the server holds from the moment it is scheduled to
// its end; its timers go with it (an ended fault holds nothing).
type fault struct {
	id         int64
	f          scenario.Fault
	start, end int64 // ns since Start
	active     bool
	timer      *time.Timer // the start while pending, the end while active
}

// job is an admitted request waiting for its answer.
type job struct {
	at    int64 // when it was admitted
	svc   int64 // its service time
	deg   bool  // served with a degraded response (backend.degrade)
	ctx   context.Context
	done  chan int // buffered: the HTTP status of its answer
	outCh chan struct{}
}

// task is work handed to a worker goroutine: serving job j, or (j nil) a
// rejection's work. The admission reserved a worker for it (busy counts
// it) in epoch, which an outage ends.
type task struct {
	j     *job
	epoch uint64
}

// Server is a live capacity-limited backend.
type Server struct {
	be      scenario.Backend
	faults  []scenario.Fault
	svc     *sim.ServiceTime
	src     rng.Source
	ser     *metrics.Series
	end     int64
	sched   bool
	workers int

	mu        sync.Mutex
	cond      *sync.Cond
	start     time.Time
	started   bool
	stopped   bool
	limit     int // workers available now
	busy      int // workers reserved by the admission: serving, rejecting, or about to
	serving   int // worker goroutines serving a request
	queue     []*job
	ready     []task // work handed to the worker goroutines, not yet taken
	epoch     uint64 // outages so far: work reserved before one is lost
	adm       admission.Admission
	draws     uint64
	down      bool
	blackhole bool
	outCh     chan struct{} // closed when an outage starts
	slow      float64       // slowdown factor in progress (0: none)
	slowTime  *sim.ServiceTime
	lastQ     int64
	lastCap   int64
	waitSum   float64 // ns waited in the queue by the requests served
	waitN     int64
	faultsAt  map[int64]*fault // pending and active faults, by id
	faultID   int64
	maxFault  time.Duration
	maxFaults int
	closed    chan struct{}
	wg        sync.WaitGroup
	slack     atomic.Int64 // ns: how much earlier than asked a timer is set (see spend)

	reg     *prometheus.Registry
	count   *prometheus.CounterVec
	worker  *prometheus.CounterVec
	service prometheus.Histogram // service times of the requests served
	mux     *http.ServeMux

	adminToken string // "": the admin endpoint is off
}

// New builds the server of sc's backend. It does not start: call Start.
func New(sc *scenario.Scenario, opt Options) (*Server, error) {
	if err := supported(sc); err != nil {
		return nil, err
	}
	seed := sc.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	be := sc.Backend
	s := &Server{
		be: be, faults: sc.Faults, svc: sim.NewServiceTime(be.Service), src: rng.New(seed),
		ser: opt.Series, end: opt.End, sched: !opt.NoSchedule, workers: be.Workers,
		limit: be.Workers, outCh: make(chan struct{}), closed: make(chan struct{}),
		adminToken: opt.AdminToken, faultsAt: map[int64]*fault{},
		maxFault: cmp.Or(opt.MaxFaultDuration, DefaultMaxFaultDuration), maxFaults: cmp.Or(opt.MaxFaults, DefaultMaxFaults),
	}
	var err error
	if s.adm, err = admission.New(be, s.src.Key(rng.Route, 1<<40), nil); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.cond = sync.NewCond(&s.mu)
	s.metrics()
	return s, nil
}

// What the live server does with each field of a backend section, by its
// YAML name. Every field of scenario.Backend and scenario.Queue must be in
// these tables (TestEveryBackendFieldIsDecided).
var backendFields = decide.Table{
	"kind": decide.Live, "workers": decide.Live, "service": decide.Live, "queue": decide.Live,
	"reject_cost": decide.Live, "accept_backlog": decide.Live, "retry_after": decide.Live, "dont_retry": decide.Live,
	"error_rate": decide.Live, "cancel_timed_out": decide.Live,
	"replicas": decide.Live, // 0 or 1; more is refused below
	// No effect with one replica and no persistent connections (refused).
	"lb": decide.Inert, "ewma_decay": decide.Inert, "subset": decide.Inert, "connections": decide.Inert,
	"rate_limit": decide.Live, "concurrency_limit": decide.Live,
	"priority_shedding": decide.Refused, // an HTTP request carries no business or user priority
	"outlier_detection": decide.Refused, "health_check": decide.Refused, "autoscale": decide.Refused,
	"prequal":      decide.Inert,   // lb: prequal's probing: no effect with one replica
	"pid_shedding": decide.Refused, // as priority_shedding: an HTTP request carries no business or user priority
	"degrade":      decide.Live,
}

var queueFields = decide.Table{
	"limit": decide.Live, "timeout": decide.Live, "discipline": decide.Live,
	"lifo_threshold": decide.Live, "codel_target": decide.Live, "codel_interval": decide.Live,
}

// What the live server does with each field of a service of a service
// graph (services:), its calls and its forwarding routes. It runs one
// backend, so a graph is refused as a whole; every field is refused, and
// supported names the ones a scenario sets. Every field of scenario.Node,
// scenario.Call and scenario.Route must be in these tables
// (TestEveryServiceFieldIsDecided); a service's backend fields (inline in
// the node) are backendFields'.
var (
	serviceFields = decide.Table{
		"name": decide.Refused, "blocking": decide.Refused, "calls": decide.Refused, "call_mode": decide.Refused,
		"join": decide.Refused, "join_k": decide.Refused, "propagate_deadline": decide.Refused,
		"deadline_margin": decide.Refused, "forward": decide.Refused,
	}
	callFields = decide.Table{
		"to": decide.Refused, "probability": decide.Refused, "timeout": decide.Refused, "deadline": decide.Refused,
		"throttle": decide.Refused, "retry": decide.Refused, "breaker": decide.Refused, "rate_limiter": decide.Refused,
		"hedge": decide.Refused, "adaptive_breaker": decide.Refused,
	}
	routeFields = decide.Table{"to": decide.Refused, "probability": decide.Refused}
)

// graphFields names, by path, the fields a service graph sets: every one
// of its services', calls' and routes' fields that is not its default, and
// its services' backend fields that the live server refuses on a backend.
func graphFields(sc *scenario.Scenario) []string {
	var out []string
	dn, dc := scenario.DefaultNode(), scenario.DefaultCall()
	for i, nd := range sc.Services {
		at := fmt.Sprintf("services[%d]", i)
		out = append(out, serviceFields.Changed(at, nd, dn)...)
		out = append(out, backendFields.Refused(at, nd.Backend)...)
		out = append(out, queueFields.Refused(at+".queue", nd.Queue)...)
		for k, c := range nd.Calls {
			cp := fmt.Sprintf("%s.calls[%d]", at, k)
			out = append(out, callFields.Changed(cp, c, dc)...)
			// The call's policy fields are its inline Policies section.
			out = append(out, callFields.Changed(cp, c.Policies, dc.Policies)...)
		}
		for k, r := range nd.Forward {
			out = append(out, routeFields.Refused(fmt.Sprintf("%s.forward[%d]", at, k), r)...)
		}
	}
	return out
}

// supported refuses what the live server does not implement.
func supported(sc *scenario.Scenario) error {
	be := sc.Backend
	var why []string
	switch {
	case sc.IsGraph():
		why = append(why, fmt.Sprintf("services: service graphs (it sets %s)", strings.Join(graphFields(sc), ", ")))
	case be.Kind != "" && be.Kind != scenario.BackendPool:
		why = append(why, fmt.Sprintf("backend.kind: %s", be.Kind))
	}
	if be.Replicas > 1 {
		why = append(why, "backend.replicas > 1")
	}
	why = append(why, backendFields.Refused("backend", be)...)
	why = append(why, queueFields.Refused("backend.queue", be.Queue)...)
	if sc.Clients.Connection != nil {
		why = append(why, "clients.connection")
	}
	if cl := be.ConcurrencyLimit; cl != nil && cl.Prioritized {
		// As priority_shedding: an HTTP request carries no priority.
		why = append(why, "backend.concurrency_limit.prioritized")
	}
	if len(why) == 0 {
		for i, f := range sc.Faults {
			if err := supportedFault(f); err != nil {
				return fmt.Errorf("server: faults[%d]: %w", i, err)
			}
		}
		return nil
	}
	return fmt.Errorf("server: %s: not supported by the live server", strings.Join(why, ", "))
}

func supportedFault(f scenario.Fault) error {
	switch f.Kind {
	case scenario.FaultOutage, scenario.FaultCapacity, scenario.FaultSlowdown:
	default:
		return fmt.Errorf("kind %q is not supported by the live server (outage, capacity, slowdown)", f.Kind)
	}
	if f.Service != "" || f.Replica != nil {
		return errors.New("service and replica are not supported by the live server")
	}
	return nil
}

func (s *Server) metrics() {
	s.reg = prometheus.NewRegistry()
	s.count = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "throttlesim_server_requests_total",
		Help: "Requests by what the backend did: received, accepted, shed (rate limit, concurrency limit, CoDel), rejected, queue_timeout, unanswered (backlog full), refused_outage, lost_outage, served, error, cancelled.",
	}, []string{"result"})
	s.worker = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "throttlesim_server_worker_seconds_total",
		Help: "Worker time: useful (an answer a client waited for) or wasted (rejections, abandoned or lost work).",
	}, []string{"kind"})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return f()
		})
	}
	s.reg.MustRegister(s.count, s.worker,
		gauge("throttlesim_server_queue_length", "Requests waiting in the queue.", func() float64 { return float64(len(s.queue)) }),
		gauge("throttlesim_server_busy_workers", "Workers busy (serving or rejecting).", func() float64 { return float64(s.busy) }),
		gauge("throttlesim_server_workers_available", "Workers available now (capacity faults lower it).", func() float64 { return float64(s.limit) }),
		gauge("throttlesim_server_down", "1 during an outage.", func() float64 { return b2f(s.down) }),
		gauge("throttlesim_server_faults_held", "Faults pending or in progress (GET /admin/faults lists them).", func() float64 { return float64(len(s.faultsAt)) }),
	)
	// Every series exists from the start, at 0: a counter that appears
	// mid-way loses its first increase to rate() and increase().
	for _, r := range []string{"received", "accepted", "shed", "rejected", "queue_timeout", "unanswered", "refused_outage", "lost_outage", "served", "error", "cancelled"} {
		s.count.WithLabelValues(r)
	}
	for _, k := range []string{"useful", "wasted"} {
		s.worker.WithLabelValues(k)
	}
	s.service = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "throttlesim_server_service_seconds",
		Help:    "Service time of each request served (the worker's time, without the wait in the queue), Prometheus's default buckets.",
		Buckets: prometheus.DefBuckets,
	})
	s.reg.MustRegister(s.service)
	s.mux = http.NewServeMux()
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("/admin/", s.admin)
	s.mux.Handle("/", s.conventions(http.HandlerFunc(s.work)))
}

// conventions instruments the work handler under the names dashboards and
// throttlesim fit expect of any HTTP server, through client_golang's
// promhttp middleware: the OpenTelemetry semantic convention's request
// duration histogram (http.server.request.duration, as Prometheus names
// it, in seconds, Prometheus's default buckets), the classic
// http_requests_total counter, both by status code and method, and the
// requests in flight (http.server.active_requests). A request the server
// never answers (an outage refusing or holding it, a backlog without
// room) aborts its connection: the middleware sees no status and counts
// it in neither the counter nor the histogram, only in flight while held.
func (s *Server) conventions(h http.Handler) http.Handler {
	inflight := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "http_server_active_requests",
		Help: "HTTP requests in flight (OpenTelemetry http.server.active_requests).",
	})
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_server_request_duration_seconds",
		Help:    "Duration of HTTP server requests, arrival to answer (OpenTelemetry http.server.request.duration).",
		Buckets: prometheus.DefBuckets,
	}, []string{"code", "method"})
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "http_requests_total",
		Help: "HTTP requests answered, by status code and method.",
	}, []string{"code", "method"})
	s.reg.MustRegister(inflight, dur, total)
	for _, code := range []string{"200", "500", "503"} { // the answers the server gives, from the start (see metrics)
		dur.WithLabelValues(code, "get")
		total.WithLabelValues(code, "get")
	}
	return promhttp.InstrumentHandlerInFlight(inflight,
		promhttp.InstrumentHandlerDuration(dur, promhttp.InstrumentHandlerCounter(total, h)))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Handler serves the work (every path but these), GET /metrics and, with
// an admin token, /admin/faults: POST a JSON fault (e.g.
// {"kind":"outage","duration":"30s"}, started now or "start" from now),
// GET the faults held, DELETE one (/admin/faults/ID) or all.
func (s *Server) Handler() http.Handler { return s.mux }

// Registry is the server's Prometheus registry.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Start starts the workers and the fault schedule; time 0 of the series
// and of the faults is now.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	s.start = time.Now()
	for range s.workers {
		s.wg.Add(1)
		go s.runWorker()
	}
	if s.sched {
		for _, f := range s.faults {
			s.schedule(f, int64(f.Start))
		}
	}
}

// Close stops the workers and the fault schedule and releases every held
// request; it waits for the workers to exit. The series is complete after
// Close.
func (s *Server) Close() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	for _, x := range s.faultsAt {
		x.timer.Stop()
	}
	clear(s.faultsAt)
	now := s.now()
	s.queueChanged(now)
	s.capacityChanged(now, s.limit)
	close(s.closed)
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
}

// QueueWait is the total time, in ns, that the requests taken into
// service waited in the queue, and their number.
func (s *Server) QueueWait() (sum float64, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waitSum, s.waitN
}

// now is the time since Start, in ns. Called with mu held.
func (s *Server) now() int64 { return int64(time.Since(s.start)) }

// row is the series row at now, or nil without a series or after its
// horizon: a request that arrives after End is not counted in the last
// row, as a simulation stops counting at its horizon (and as live.Run's
// client side does; the server's clock starts first, so it never counts
// what the clients did not).
func (s *Server) row(now int64) *metrics.Row {
	if s.ser == nil || (s.end > 0 && now >= s.end) {
		return nil
	}
	return &s.ser.Rows[s.ser.Index(now)]
}

// note counts one request result in the metrics and, through field, in
// the series row at now.
func (s *Server) note(now int64, result string, field func(*metrics.Row) *int64) {
	s.count.WithLabelValues(result).Inc()
	if r := s.row(now); r != nil && field != nil {
		*field(r)++
	}
}

// clamp is t, or the series' horizon if t is after it.
func (s *Server) clamp(t int64) int64 {
	if s.end > 0 {
		return min(t, s.end)
	}
	return t
}

func (s *Server) useful(from, to int64) {
	s.worker.WithLabelValues("useful").Add(float64(to-from) / 1e9)
	if s.ser != nil && s.clamp(from) < s.clamp(to) {
		s.ser.AddUseful(from, s.clamp(to))
	}
}

func (s *Server) wasted(from, to int64) {
	s.worker.WithLabelValues("wasted").Add(float64(to-from) / 1e9)
	if s.ser != nil && s.clamp(from) < s.clamp(to) {
		s.ser.AddWasted(from, s.clamp(to))
	}
}

func (s *Server) queueChanged(now int64) {
	if s.ser != nil {
		s.ser.AddQueueArea(s.clamp(s.lastQ), s.clamp(now), int64(len(s.queue)))
	}
	s.lastQ = now
}

func (s *Server) capacityChanged(now int64, limit int) {
	if s.ser != nil {
		s.ser.AddCapacity(s.clamp(s.lastCap), s.clamp(now), int64(s.limit))
	}
	s.lastCap = now
	s.limit = limit
}

// work is an arrival: admitted, rejected, held or refused.
func (s *Server) work(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		http.Error(w, "server not running", http.StatusServiceUnavailable)
		return
	}
	now := s.now()
	if s.down {
		s.note(now, "refused_outage", func(r *metrics.Row) *int64 { return &r.FailedOutage })
		bh := s.blackhole
		s.mu.Unlock()
		s.fail(r, bh)
		return
	}
	s.note(now, "received", func(r *metrics.Row) *int64 { return &r.Received })
	v, shed := s.adm.Arrive(now, s.load(), 0)
	if shed {
		s.note(now, "shed", func(r *metrics.Row) *int64 { return &r.Shed })
	}
	switch v {
	case admission.Serve, admission.Queue:
		s.note(now, "accepted", func(r *metrics.Row) *int64 { return &r.Accepted })
		s.draws++
		j := &job{at: now, svc: s.svc.Sample(s.src.Key(rng.Service, 0), s.draws), ctx: r.Context(), done: make(chan int, 1), outCh: s.outCh}
		if v == admission.Serve {
			s.waitN++
			s.busy++ // as hand, with the degradation decided first (it reads busy)
			s.degrade(now, j)
			s.give(j)
		} else {
			s.queueChanged(now)
			s.queue = append(s.queue, j)
		}
		s.mu.Unlock()
		select {
		case code := <-j.done:
			s.answer(w, code)
		case <-j.outCh: // an outage destroyed it
			s.mu.Lock()
			bh := s.blackhole
			s.mu.Unlock()
			s.fail(r, bh)
		case <-r.Context().Done():
		case <-s.closed:
			panic(http.ErrAbortHandler)
		}
		return
	case admission.Unanswered:
		s.note(now, "unanswered", func(r *metrics.Row) *int64 { return &r.Unanswered })
		s.mu.Unlock()
		s.fail(r, true)
		return
	case admission.RejectWork:
		s.hand(nil)
	}
	s.note(now, "rejected", func(r *metrics.Row) *int64 { return &r.Rejected })
	s.mu.Unlock()
	s.answer(w, http.StatusServiceUnavailable)
}

// load is what the admission reads of the server's state. Called with mu
// held.
func (s *Server) load() admission.Load {
	return admission.Load{Busy: s.busy, Limit: s.limit, Queued: len(s.queue), WaitSum: s.waitSum, WaitN: s.waitN}
}

// hand reserves a worker and hands it job j to serve, or (j nil) a
// rejection's work. Called with mu held.
func (s *Server) hand(j *job) {
	s.busy++
	s.give(j)
}

// give hands job j (nil: a rejection's work) to a worker already
// reserved. Called with mu held.
func (s *Server) give(j *job) {
	s.ready = append(s.ready, task{j: j, epoch: s.epoch})
	s.cond.Signal()
}

// answer writes an answer: 200, a 500 error, or a 503 rejection with the
// backend's Retry-After.
func (s *Server) answer(w http.ResponseWriter, code int) {
	if code == http.StatusServiceUnavailable && s.be.RetryAfter > 0 && !s.be.DontRetry {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(s.be.RetryAfter.Seconds())), 10))
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(code)
	fmt.Fprintln(w, http.StatusText(code))
}

// fail answers nothing: with blackhole it holds the request until the
// client leaves or the server closes; otherwise it aborts the connection.
func (s *Server) fail(r *http.Request, blackhole bool) {
	if blackhole {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
		}
	}
	panic(http.ErrAbortHandler)
}

// runWorker is a worker goroutine: it runs the work handed to it (give)
// and, when done, takes the next as the admission decides (dispatch).
func (s *Server) runWorker() {
	defer s.wg.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for !s.stopped && len(s.ready) == 0 {
			s.cond.Wait()
		}
		if s.stopped {
			return
		}
		t := s.ready[0]
		s.ready[0] = task{}
		s.ready = s.ready[1:]
		if t.j == nil {
			s.reject()
		} else {
			s.serve(t.j)
		}
		if t.epoch == s.epoch { // else an outage freed every worker
			s.dispatch(s.now())
		}
	}
}

// dispatch gives a worker that has come free (busy still counts it) its
// next work as the admission decides: pending rejection work, then a
// queued job by the discipline; or lets it idle. Called with mu held.
func (s *Server) dispatch(now int64) {
	for {
		var j *job
		switch s.adm.Next(s.load()) {
		case admission.TakeReject:
			s.give(nil)
			return
		case admission.Idle, admission.Cut:
			s.busy--
			return
		case admission.TakeTail:
			s.queueChanged(now)
			n := len(s.queue) - 1
			j, s.queue[n] = s.queue[n], nil
			s.queue = s.queue[:n]
		default:
			s.queueChanged(now)
			j, s.queue[0] = s.queue[0], nil
			s.queue = s.queue[1:]
		}
		if ex := s.adm.Expire(now, now-j.at, len(s.queue)); ex != admission.Keep {
			if ex == admission.Shed {
				s.note(now, "shed", func(r *metrics.Row) *int64 { return &r.Shed })
			}
			s.adm.Sample(now, now-j.at, s.busy+len(s.queue)+1, true)
			s.note(now, "queue_timeout", func(r *metrics.Row) *int64 { return &r.QueueTimeouts })
			j.done <- http.StatusServiceUnavailable
			if s.adm.RejectCost() > 0 {
				s.give(nil)
				return
			}
			continue
		}
		if s.be.CancelTimedOut && j.ctx.Err() != nil {
			s.note(now, "cancelled", func(r *metrics.Row) *int64 { return &r.Cancelled })
			continue
		}
		s.waitSum += float64(now - j.at)
		s.waitN++
		s.degrade(now, j)
		s.give(j)
		return
	}
}

// degrade marks job j for a degraded response (serve shortens its
// service time) when it starts service under a load the admission
// answers so (backend.degrade). Called with mu held, busy counting j's
// worker.
func (s *Server) degrade(now int64, j *job) {
	if s.adm.DegradeFraction() != 0 && s.adm.Degrade(s.load()) {
		j.deg = true
		s.note(now, "degraded", func(r *metrics.Row) *int64 { return &r.Degraded })
	}
}

// serve serves job j. Called with mu held; returns with it.
func (s *Server) serve(j *job) {
	svc := j.svc
	if s.be.Service.PerConcurrent > 0 && s.be.Service.Dist == scenario.ServiceConcurrency {
		svc += int64(s.be.Service.PerConcurrent) * int64(s.busy-1) // the others the admission holds in service
	}
	if s.slow > 0 {
		svc = int64(math.Min(math.Round(float64(svc)*s.slow), 1<<62))
	} else if s.slowTime != nil {
		s.draws++
		svc = s.slowTime.Sample(s.src.Key(rng.Service, 0), s.draws)
	}
	if j.deg {
		svc = int64(float64(svc) * s.adm.DegradeFraction()) // as the simulator: after slowdowns
	}
	s.serving++
	start, out := s.now(), j.outCh
	s.mu.Unlock()
	ok := s.spend(svc, out)
	s.mu.Lock()
	s.serving--
	now := s.now()
	if !ok { // an outage destroyed it (counted then), or the server closed
		s.wasted(start, now)
		return
	}
	s.learn(svc, now-start)
	s.service.Observe(float64(now-start) / 1e9)
	s.adm.Sample(now, now-j.at, s.busy+len(s.queue), false)
	s.note(now, "served", func(r *metrics.Row) *int64 { return &r.Served })
	if j.ctx.Err() != nil { // nobody waits for the answer any more
		s.wasted(start, now)
		return
	}
	s.draws++
	if er := s.be.ErrorRate; er > 0 && rng.Float64(s.src.Key(rng.Service, 1), s.draws) < er {
		s.note(now, "error", func(r *metrics.Row) *int64 { return &r.Errors })
		s.wasted(start, now)
		j.done <- http.StatusInternalServerError
		return
	}
	s.useful(start, now)
	j.done <- http.StatusOK
}

// reject spends one rejection's work. Called with mu held; returns with it.
func (s *Server) reject() {
	start, out := s.now(), s.outCh
	s.mu.Unlock()
	ok := s.spend(s.adm.RejectCost(), out)
	s.mu.Lock()
	now := s.now()
	if ok {
		s.learn(s.adm.RejectCost(), now-start)
	}
	s.wasted(start, now)
}

// spend spends d of real time; false if an outage (out) or Close came
// first.
//
// A Go timer fires late: by tens of µs on an idle machine, by a
// millisecond or more on a loaded one. Uncorrected, every service time
// would be that much longer than the draw, and the live backend's
// capacity below the scenario's (docs/experiments/sim-vs-live.md measured
// 50.5 ms on average for 50 ms services, and a 2 ms rejection cost is
// lengthened by as much in absolute terms). So the timer is
// set slack ns early, and slack follows the lateness observed (see
// learn): on average a service takes its draw.
func (s *Server) spend(d int64, out chan struct{}) bool {
	t := time.NewTimer(time.Duration(max(d-s.slack.Load(), 0)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-out:
	case <-s.closed:
	}
	return false
}

// learn moves slack by 1/8 of how much longer than d a completed spend
// took (an exponentially weighted average). took is measured as the
// worker time is counted, from the start under the lock to the lock taken
// again, so the lateness learnt is the timer's plus the wait for the
// lock, which on a loaded machine with many handlers contending is the
// larger part (make test under a parallel load measured 10.3–10.4 ms
// for 10 ms services when only the timer's lateness was learnt). Called
// with mu held.
func (s *Server) learn(d, took int64) {
	s.slack.Store(min(max(s.slack.Load()+(took-d)/8, 0), d/2+1))
}

// StartFault starts fault f f.Start from now, for f.Duration, and returns
// its id. It is checked as a scenario's fault is (scenario.CheckFault), and
// as the admin endpoint's faults are: it starts within MaxFaultDuration,
// lasts at most that long, a slowdown's service time is at most that long
// on average, it does not overlap a fault pending or in progress (two
// faults that overlap would end each other's effects, so a scenario
// forbids it too), and at most MaxFaults are held at once.
func (s *Server) StartFault(f scenario.Fault) (int64, error) {
	if err := supportedFault(f); err != nil {
		return 0, fmt.Errorf("server: %w", err)
	}
	if err := scenario.CheckFault(f, "fault"); err != nil {
		return 0, fmt.Errorf("server: %w", err)
	}
	if f.Start < 0 {
		return 0, fmt.Errorf("server: fault.start must be >= 0 (a delay from now), got %s", f.Start)
	}
	if max := scenario.Duration(s.maxFault); f.Start > max || f.Duration > max {
		return 0, fmt.Errorf("server: fault.start and fault.duration must be at most %s (serve --max-fault-duration), got start %s, duration %s", max, f.Start, f.Duration)
	}
	if f.Kind == scenario.FaultSlowdown {
		mean := s.be.Service.MeanNS() * f.Factor
		if f.ServiceTime != nil {
			mean = f.ServiceTime.MeanNS()
		}
		if !(mean <= float64(s.maxFault)) {
			return 0, fmt.Errorf("server: the slowed service time is %s on average, more than %s (serve --max-fault-duration): a worker would sleep that long after the fault ends", time.Duration(min(mean, 1<<62)), s.maxFault)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.stopped {
		return 0, errors.New("server: not running")
	}
	if len(s.faultsAt) >= s.maxFaults {
		return 0, fmt.Errorf("server: %d faults are pending or in progress, the most allowed (serve --max-faults); cancel one with DELETE /admin/faults/ID: %w", len(s.faultsAt), errFull)
	}
	start := s.now() + int64(f.Start)
	end := start + int64(f.Duration)
	for _, x := range s.faultsAt {
		if start < x.end && x.start < end {
			return 0, fmt.Errorf("server: the fault would overlap fault %d (%s, %s..%s from now): %w", x.id, x.f.Kind,
				time.Duration(x.start-s.now()).Round(time.Millisecond), time.Duration(x.end-s.now()).Round(time.Millisecond), errOverlap)
		}
	}
	return s.schedule(f, start), nil
}

var (
	errFull    = errors.New("too many faults")
	errOverlap = errors.New("faults must not overlap")
)

// schedule holds fault f, to start at time at (ns since Start), and arms
// its start. Called with mu held.
func (s *Server) schedule(f scenario.Fault, at int64) int64 {
	s.faultID++
	x := &fault{id: s.faultID, f: f, start: at, end: at + int64(f.Duration)}
	s.faultsAt[x.id] = x
	if at <= s.now() {
		s.begin(x) // now: in effect before the caller's answer
	} else {
		x.timer = time.AfterFunc(time.Duration(at-s.now()), func() { s.faultStart(x) })
	}
	return x.id
}

// Faults lists the faults pending or in progress, by id.
func (s *Server) Faults() []FaultInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FaultInfo, 0, len(s.faultsAt))
	for _, x := range s.faultsAt {
		out = append(out, s.info(x))
	}
	slices.SortFunc(out, func(a, b FaultInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// info describes x. Called with mu held.
func (s *Server) info(x *fault) FaultInfo {
	st := FaultPending
	if x.active {
		st = FaultActive
	}
	return FaultInfo{ID: x.id, State: st, Start: s.start.Add(time.Duration(x.start)), End: s.start.Add(time.Duration(x.end)), Fault: x.f}
}

// CancelFault ends fault id now: a pending fault never starts, an active
// one's effects end as if its time were up. It reports the fault as it was,
// or false when no fault has that id (it ended, or never was).
func (s *Server) CancelFault(id int64) (FaultInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.faultsAt[id]
	if !ok || s.stopped {
		return FaultInfo{}, false
	}
	info := s.info(x)
	x.timer.Stop()
	if x.active {
		s.endEffects(x.f)
	}
	delete(s.faultsAt, id)
	return info, true
}

// faultStart starts pending fault x now and arms its end x.f.Duration
// later (begin). The end is armed there, under the lock, so that it cannot run before the
// start (two timers armed apart could fire in either order for a short
// fault, leaving it on for good).
func (s *Server) faultStart(x *fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.faultsAt[x.id] != x || x.active {
		return // cancelled, or the server stopped, before its start ran
	}
	s.begin(x)
}

// begin starts fault x's effects now. Called with mu held.
func (s *Server) begin(x *fault) {
	f := x.f
	x.active = true
	x.timer = time.AfterFunc(time.Duration(f.Duration), func() { s.faultEnd(x) })
	now := s.now()
	switch f.Kind {
	case scenario.FaultOutage:
		s.down, s.blackhole = true, f.Mode == scenario.OutageBlackhole
		s.capacityChanged(now, 0)
		// The server dies: work in service and in the queue is lost.
		lost := s.serving + len(s.queue)
		for _, t := range s.ready {
			if t.j != nil {
				lost++
			}
		}
		for range lost {
			s.note(now, "lost_outage", func(r *metrics.Row) *int64 { return &r.LostOutage })
		}
		s.queueChanged(now)
		clear(s.queue)
		s.queue = s.queue[:0]
		clear(s.ready)
		s.ready = s.ready[:0]
		s.adm.Overhead = 0
		s.busy, s.epoch = 0, s.epoch+1
		close(s.outCh)
		s.outCh = make(chan struct{})
	case scenario.FaultCapacity:
		s.capacityChanged(now, int(math.Round(float64(s.workers)*f.Fraction)))
	case scenario.FaultSlowdown:
		s.slow, s.slowTime = f.Factor, nil
		if f.ServiceTime != nil {
			s.slow, s.slowTime = 0, sim.NewServiceTime(*f.ServiceTime)
		}
	}
}

// faultEnd ends fault x when its time is up and lets it go.
func (s *Server) faultEnd(x *fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.faultsAt[x.id] != x {
		return // cancelled before its end ran
	}
	delete(s.faultsAt, x.id)
	s.endEffects(x.f)
}

// endEffects undoes what fault f did. Called with mu held.
func (s *Server) endEffects(f scenario.Fault) {
	switch f.Kind {
	case scenario.FaultOutage:
		s.down, s.blackhole = false, false
	case scenario.FaultSlowdown:
		s.slow, s.slowTime = 0, nil
	}
	now := s.now()
	s.capacityChanged(now, s.workers)
	// Workers that came back take the work waiting, as the simulator's do.
	for s.busy < s.limit && (len(s.queue) > 0 || s.adm.Overhead > 0) {
		s.busy++
		s.dispatch(now)
	}
}

// admin guards the admin endpoint: off (404) without a token; with one,
// a request without the token is refused (401, compared in constant
// time), and so is a body that is not declared JSON (415), which is what
// a browser's cross-origin "simple" POST (text/plain, no preflight) sends.
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	if s.adminToken == "" {
		http.Error(w, "admin: the admin endpoint is off (serve --admin turns it on)", http.StatusNotFound)
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.adminToken)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="throttlesim admin"`)
		http.Error(w, "admin: missing or wrong token (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
		return
	}
	switch id, one := strings.CutPrefix(r.URL.Path, "/admin/faults/"); {
	case r.URL.Path == "/admin/faults" && r.Method == http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "admin: the body must be Content-Type: application/json", http.StatusUnsupportedMediaType)
			return
		}
		s.adminFault(w, r)
	case r.URL.Path == "/admin/faults" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"faults": s.Faults()})
	case r.URL.Path == "/admin/faults" && r.Method == http.MethodDelete:
		gone := []FaultInfo{}
		for _, x := range s.Faults() {
			if info, ok := s.CancelFault(x.ID); ok {
				info.State = FaultCancelled
				gone = append(gone, info)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"cancelled": gone})
	case one && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("admin: %q is not a fault id (a positive integer, as POST /admin/faults and GET /admin/faults give)", id), http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodGet {
			for _, x := range s.Faults() {
				if x.ID == n {
					writeJSON(w, http.StatusOK, x)
					return
				}
			}
			http.Error(w, fmt.Sprintf("admin: no fault %d pending or in progress (GET /admin/faults lists them)", n), http.StatusNotFound)
			return
		}
		info, ok := s.CancelFault(n)
		if !ok {
			http.Error(w, fmt.Sprintf("admin: no fault %d pending or in progress (GET /admin/faults lists them)", n), http.StatusNotFound)
			return
		}
		info.State = FaultCancelled
		writeJSON(w, http.StatusOK, info)
	default:
		http.Error(w, "admin: POST, GET or DELETE /admin/faults; GET or DELETE /admin/faults/ID", http.StatusNotFound)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// adminFault starts the fault in the request body now.
func (s *Server) adminFault(w http.ResponseWriter, r *http.Request) {
	var f scenario.Fault
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		http.Error(w, "admin: a fault as JSON, e.g. {\"kind\":\"outage\",\"duration\":\"30s\",\"mode\":\"refuse\"}: "+err.Error(), http.StatusBadRequest)
		return
	}
	if f.Kind == scenario.FaultOutage && f.Mode == "" {
		f.Mode = scenario.OutageRefuse
	}
	id, err := s.StartFault(f)
	switch {
	case errors.Is(err, errFull), errors.Is(err, errOverlap):
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, x := range s.Faults() {
		if x.ID == id {
			w.Header().Set("Location", fmt.Sprintf("/admin/faults/%d", id))
			writeJSON(w, http.StatusAccepted, x)
			return
		}
	}
	// It ended already (a fault shorter than this answer took).
	writeJSON(w, http.StatusAccepted, FaultInfo{ID: id, State: FaultCancelled, Fault: f})
}
