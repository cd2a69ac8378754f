package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Event kinds.
const (
	evArrival        uint8 = iota + 1 // ID client: a new application request
	evRetry                           // ID slot, Aux token: a backoff ended, send the next attempt
	evTimeout                         // ID slot, Aux token: an attempt's timeout
	evWorkerDone                      // ID worker, Aux worker generation: service or rejection work done
	evFaultStart                      // ID fault index
	evFaultEnd                        // ID fault index
	evConnect                         // ID client, Aux connection sequence: start a connection attempt
	evConnectTimeout                  // ID client, Aux connection sequence: the client gives up a handshake
	evDeadline                        // ID slot, Aux generation: the request's overall deadline
	evSend                            // ID slot, Aux token: the rate limiter lets a delayed attempt go
	evArrive                          // ID message: a request (or an occ write) reaches the backend over the network
	evAnswer                          // ID slot, Aux token: the backend's answer reaches the client over the network
	evConnArrive                      // ID client, Aux connection sequence: a handshake reaches the backend over the network
	evConnOK                          // ID client, Aux connection sequence: the backend's "connected" reaches the client
	evConnRefused                     // ID client, Aux connection sequence: the backend's refusal reaches the client
)

// Attempt outcomes as the client sees them.
const (
	outOK uint8 = iota
	outRejected
	outUnavailable
	outTimeout
	outError // the backend served the attempt and answered with an error
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ok", "rejected", "unavailable", "timeout", "error"}

func outcomeMask(names []string) uint8 {
	var m uint8
	for _, n := range names {
		for i, o := range outcomeNames {
			if o == n {
				m |= 1 << i
			}
		}
	}
	return m
}

// Request states.
const (
	stFree uint8 = iota
	stInFlight
	stBackoff
	stPacing // waiting for the rate limiter
)

// request is one application request, from arrival to success or failure.
// Slots are reused; gen changes on every reuse so that events still
// pending for an earlier use are recognised as stale.
type request struct {
	arrival   int64 // when the application issued it
	prevSleep int64 // last backoff (decorrelated jitter)
	client    uint32
	ord       uint32 // the client's request ordinal: names its random draws
	charge    int32  // what the budget charged for the latest retry (AWS refunds it)
	gen       uint32 // 24 bits used
	attempt   uint8
	bo        uint8 // backoffs since the start or the last pushback reset
	state     uint8
	// With a network: the answer on its way back (outcome, and its
	// retry-after or, for an occ read, the version read), and which half
	// of an occ attempt is in flight (0 the read, 1 the write).
	ansOut uint8
	phase  uint8
	ansVal int64
}

// msg is a request (or the write of an occ attempt) crossing the network
// to the backend. It carries what the backend needs even if the client
// has given the attempt up and its slot is reused by then: the backend
// still does the work.
type msg struct {
	slot, tok uint32
	val       int64 // pool: the attempt's service time; occ write: the version read
	group     uint8
	write     bool // occ: the write half of the attempt
}

func (r *request) token() uint32 { return r.gen<<8 | uint32(r.attempt) }

// job is an attempt (or, with handshakeFlag set in slot, a connection
// handshake of client slot&^handshakeFlag) waiting in the backend queue.
type job struct {
	slot, token uint32
	at, svc     int64 // enqueued at; its service time
	group       uint8 // the client group of the attempt, for per-group metrics
}

const handshakeFlag = 1 << 31

// What a worker is doing.
const (
	wkServe     uint8 = iota // serving an attempt (slot, token)
	wkReject                 // rejection work (parsing and saying no)
	wkHandshake              // a connection handshake of client slot, sequence token
)

// worker is one backend server.
type worker struct {
	start       int64
	slot, token uint32
	gen         uint32
	kind        uint8
	busy        bool
	group       uint8 // the client group of the attempt being served
}

// Connection states of a client.
const (
	csIdle       uint8 = iota // not started yet, or no connection model
	csWaiting                 // disconnected, a connection attempt is scheduled
	csConnecting              // handshake in flight
	csConnected
)

// cpol is the request-policy stack of one client group: its clients are
// [start, start+n) and policy instances are indexed from start.
type cpol struct {
	name         string
	start, n     uint32
	timeout      int64
	deadline     int64 // overall per-request deadline, 0: none
	maxAtt       uint8
	throttle     *policy.Window
	tform        policy.ThrottleForm
	countLocal   bool
	groupSize    uint32 // clients per throttle
	acceptMask   uint8
	retryMask    uint8
	backoff      policy.Backoff
	honorRA      bool
	exactRA      bool // gRPC pushback: retry after exactly the server's delay
	budget       *policy.BudgetSet
	budgetGroup  uint32
	breaker      *policy.BreakerSet
	breakerGroup uint32
	breakerMask  uint8 // outcomes that count as failures
	limiter      *policy.Adaptive
	limiterMask  uint8 // outcomes that count as throttles
}

func newCpol(g scenario.GroupSpec) cpol {
	n := g.Count
	pp := g.Policies
	p := cpol{name: g.Name, start: uint32(g.Start), n: uint32(n), timeout: int64(pp.Timeout), deadline: int64(pp.Deadline), maxAtt: 1}
	if t := pp.Throttle; t != nil && t.Enabled {
		gs := 1
		if t.Scope == "group" {
			gs = t.GroupSize
		}
		p.groupSize = uint32(gs)
		p.throttle = policy.NewWindow((n+gs-1)/gs, int64(t.Window)/int64(t.Buckets), int64(t.Buckets))
		p.tform = policy.ThrottleForm{K: t.K, Padding: t.Padding, Aggression: t.Aggression, MaxP: t.MaxProbability, MinRequests: uint32(t.MinRequests)}
		p.countLocal = t.CountLocalRejects
		p.acceptMask = outcomeMask(t.AcceptOutcomes)
	}
	if r := pp.Retry; r != nil {
		p.maxAtt = uint8(r.MaxAttempts)
		p.retryMask = outcomeMask(r.RetryOn)
		j, _ := policy.ParseJitter(r.Backoff.Jitter)
		p.backoff = policy.Backoff{Base: int64(r.Backoff.Base), Cap: int64(r.Backoff.Cap), Multiplier: r.Backoff.Multiplier, Jitter: j, Fraction: r.Backoff.JitterFraction}
		p.honorRA = r.HonorRetryAfter
		p.exactRA = r.RetryAfterMode == "exactly"
		if bg := r.Budget; bg != nil {
			p.budgetGroup = uint32(bg.GroupSize)
			p.budget = policy.NewBudgetSet(bg.BudgetConfig(), (n+bg.GroupSize-1)/bg.GroupSize)
		}
	}
	if br := pp.Breaker; br != nil {
		p.breakerGroup = uint32(br.GroupSize)
		p.breaker, _ = policy.NewBreakerSet((n+br.GroupSize-1)/br.GroupSize, br.BreakerConfig()) // validated
		p.breakerMask = outcomeMask(br.FailureOutcomes)
	}
	if rl := pp.RateLimiter; rl != nil {
		p.limiter = policy.NewAdaptive(n, policy.AdaptiveConfig{Beta: rl.Beta, C: rl.C, Smoothing: rl.Smoothing, MinRate: float64(rl.MinRate), BucketInterval: int64(rl.BucketInterval)})
		p.limiterMask = outcomeMask(rl.ThrottleOutcomes)
	}
	return p
}

// grow is the per-group metrics row of client c at time t (a scratch row
// when the fleet is one group).
func (m *model) grow(t int64, c uint32) *metrics.Row {
	if m.gser == nil {
		return &m.sink
	}
	s := m.gser[m.cgroup[c]]
	return &s.Rows[s.Index(t)]
}

// growG is group g's metrics row at time t, or nil when the fleet is one
// group.
func (m *model) growG(t int64, g uint8) *metrics.Row {
	if m.gser == nil {
		return nil
	}
	s := m.gser[g]
	return &s.Rows[s.Index(t)]
}

// gseries is group g's series, or nil when the fleet is one group.
func (m *model) gseries(g uint8) *metrics.Series {
	if m.gser == nil {
		return nil
	}
	return m.gser[g]
}

// groupOf is the group of client c (0 when the fleet is one group).
func (m *model) groupOf(c uint32) uint8 {
	if m.cgroup == nil {
		return 0
	}
	return m.cgroup[c]
}

// pol is the policy stack of client c.
func (m *model) pol(c uint32) *cpol {
	if m.cgroup == nil {
		return &m.pols[0]
	}
	return &m.pols[m.cgroup[c]]
}

// model is the whole simulated world of one run.
type model struct {
	q   *engine.Queue
	sc  *scenario.Scenario
	src rng.Source
	end int64

	// clients
	ord       []uint32 // per client: application requests issued so far
	lambda    float64  // per-client base rate, per second
	constant  bool
	prof      profile
	reqs      []request
	freeSlots []uint32
	pols      []cpol            // request policies, one per client group
	cgroup    []uint8           // client → group, when there is more than one
	gser      []*metrics.Series // per-group client-side counters (more than one group)
	sink      metrics.Row       // where grow writes when the fleet is one group

	// connections (nil slices without clients.connection)
	conn        bool
	cstate      []uint8
	cfail       []uint16 // consecutive failed connection attempts
	cseq        []uint32 // changes on every connection state change: stale events
	cprev       []int64  // previous reconnect wait (decorrelated jitter only)
	connected   int      // clients connected (as the clients see it)
	held        int      // connections the backend holds: connected, plus those whose "connected" is on its way (network)
	connTimeout int64
	rc          policy.Reconnect
	connCost    int64
	connLimit   int
	// reconnect tracking: when 99% of the fleet is connected again after the
	// last connection-closing fault
	connFaultEnd   int64
	reconnected    int64 // ns after connFaultEnd until 99% were connected, or -1
	reconnectedAll int64 // ... until all were, or -1

	// backend
	workers    []worker
	freeW      []uint32
	busy       int
	limit      int // workers available now
	queue      jobRing
	qlimit     int
	qtimeout   int64
	overhead   int64 // rejection work items waiting for a worker
	backlog    int64 // the most that may wait (backend.accept_backlog)
	rejCost    int64
	rejectRA   int64 // retry-after sent with overload rejections (dontRetry: "do not retry")
	cancel     bool
	errRate    float64 // share of served attempts answered with an error
	svcDist    uint8
	svcMean    float64
	svcMu      float64 // lognormal parameters
	svcSigma   float64
	perConc    int64 // ns of service time added per request in service
	down       bool  // in an outage
	lastOutage int64 // when the latest outage started (-1: none yet)
	blackhole  bool
	faultRA    int64
	lastQ      int64 // time of the last queue-length change
	lastCap    int64 // time of the last capacity change
	occ        bool  // backend.kind occ: one versioned row
	version    int64 // the row's version (occ)

	// network (scenario.Network); without one, messages arrive at once
	net     bool
	netDist uint8
	netMean float64
	netSD   float64
	msgs    []msg
	freeMsg []uint32
	once    bool  // arrival process once: one request per client
	lastOK  int64 // when the latest success completed
	anyOK   bool

	// measurement
	ser      *metrics.Series
	hist     metrics.Histogram // current interval
	all      metrics.Histogram
	histRow  int   // the row whose latency histogram is open
	rowStart int64 // [rowStart, rowEnd) is histRow's time span, once known
	rowEnd   int64
	waitSum  float64
	waitN    int64
	nextRow  int64 // start of the row after the one being filled
	rowIdx   int
	fp       uint64 // trajectory fingerprint
	arrHash  uint64 // order-independent hash of every (client, arrival time)
	events   uint64
	arrivals uint64
}

const (
	distConstant uint8 = iota
	distExponential
	distLognormal
	distConcurrency // mean + perConc × busy workers at the start of service
	distNormal      // |N(mean, sd)| (network delay)
)

func newModel(sc *scenario.Scenario, seed uint64) *model {
	m := &model{sc: sc, src: rng.New(seed), end: int64(sc.Duration)}
	n := sc.Clients.Count
	m.q = engine.NewQueue(n + 1024)
	m.ord = make([]uint32, n)
	m.lambda = sc.PerClientRate()
	m.constant = sc.Clients.Arrival.Process == "constant"
	m.once = sc.Clients.Arrival.Process == "once"
	if nw := sc.Network; nw != nil {
		m.net = true
		m.netMean, m.netSD = float64(nw.Delay.Mean), float64(nw.Delay.SD)
		switch nw.Delay.Dist {
		case "exponential":
			m.netDist = distExponential
		case "normal":
			m.netDist = distNormal
		default:
			m.netDist = distConstant
		}
	}
	m.occ = sc.Backend.Kind == "occ"
	m.lastOutage = -1
	m.prof = newProfile(sc.Clients.Arrival.Profile)
	for _, g := range sc.Clients.ResolvedGroups() {
		m.pols = append(m.pols, newCpol(g))
	}
	if len(m.pols) > 1 {
		for range m.pols {
			m.gser = append(m.gser, metrics.NewSeries(int64(sc.Metrics.Interval), sc.Intervals()))
		}
		m.cgroup = make([]uint8, n)
		for gi, p := range m.pols {
			for c := p.start; c < p.start+p.n; c++ {
				m.cgroup[c] = uint8(gi)
			}
		}
	}
	if cn := sc.Clients.Connection; cn != nil {
		m.conn = true
		m.cstate = make([]uint8, n)
		m.cfail = make([]uint16, n)
		m.cseq = make([]uint32, n)
		m.connTimeout = int64(cn.ConnectTimeout)
		rc := cn.Reconnect
		pol, _ := policy.ParseReconnectPolicy(rc.Policy)
		j, _ := policy.ParseJitter(rc.Backoff.Jitter)
		m.rc = policy.Reconnect{Policy: pol, Delay: int64(rc.Delay), Window: int64(rc.JitterWindow),
			Backoff: policy.Backoff{Base: int64(rc.Backoff.Base), Cap: int64(rc.Backoff.Cap), Multiplier: rc.Backoff.Multiplier, Jitter: j, Fraction: rc.Backoff.JitterFraction}}
		if j == policy.Decorrelated {
			m.cprev = make([]int64, n)
		}
		m.connCost = int64(sc.Backend.Connections.ConnectCost)
		m.connLimit = sc.Backend.Connections.Limit
		m.reconnected, m.reconnectedAll = -1, -1
		for _, f := range sc.Faults {
			if f.Kind == "outage" || f.Kind == "disconnect" {
				m.connFaultEnd = max(m.connFaultEnd, int64(f.End()))
			}
		}
	}

	b := sc.Backend
	m.workers = make([]worker, b.Workers)
	m.freeW = make([]uint32, b.Workers)
	for i := range m.freeW {
		m.freeW[i] = uint32(b.Workers - 1 - i)
	}
	m.limit = b.Workers
	m.qlimit = b.Queue.Limit
	m.queue.init(min(b.Queue.Limit, 1<<16))
	m.qtimeout = int64(b.Queue.Timeout)
	m.rejCost = int64(b.RejectCost)
	m.backlog = int64(b.AcceptBacklog)
	m.rejectRA = int64(b.RetryAfter)
	if b.DontRetry {
		m.rejectRA = dontRetry
	}
	m.cancel = b.CancelTimedOut
	m.errRate = b.ErrorRate
	m.svcMean = float64(b.Service.Mean)
	switch b.Service.Dist {
	case "constant":
		m.svcDist = distConstant
	case "exponential":
		m.svcDist = distExponential
	case "concurrency":
		m.svcDist = distConcurrency
		m.perConc = int64(b.Service.PerConcurrent)
	case "lognormal":
		m.svcDist = distLognormal
		m.svcSigma = b.Service.Sigma
		m.svcMu = math.Log(m.svcMean) - m.svcSigma*m.svcSigma/2 // so that the mean is svcMean
	}

	m.ser = metrics.NewSeries(int64(sc.Metrics.Interval), sc.Intervals())
	m.nextRow = int64(sc.Metrics.Interval)
	m.fp = 0xcbf29ce484222325
	return m
}

// after is now + d, or the horizon if that is later: nothing at or after
// the horizon is processed, and the sum of two huge durations must not
// overflow.
func (m *model) after(now, d int64) int64 {
	if d >= m.end-now {
		return m.end
	}
	return now + d
}

// ---- random draws, each named by (purpose, client, ordinal, attempt) ----

func drawIndex(ord uint32, attempt uint8) uint64 { return uint64(ord)<<8 | uint64(attempt) }

func (m *model) serviceTime(r *request) int64 {
	switch m.svcDist {
	case distConstant, distConcurrency: // concurrency: completed in serve
		return int64(m.svcMean)
	case distExponential:
		key := m.src.Key(rng.Service, uint64(r.client))
		return int64(math.Round(m.svcMean * rng.Exp(key, drawIndex(r.ord, r.attempt))))
	default:
		key := m.src.Key(rng.Service, uint64(r.client))
		z := rng.Normal(key, drawIndex(r.ord, r.attempt))
		return int64(math.Min(math.Round(math.Exp(m.svcMu+m.svcSigma*z)), 1<<62)) // no int64 overflow
	}
}

// netDelay is the one-way delay of message no (0 the request or occ read,
// 1 its answer, 2 the occ write, 3 its answer) of r's current attempt.
func (m *model) netDelay(r *request, no uint64) int64 {
	return m.delay(r.client, drawIndex(r.ord, r.attempt)<<2|no)
}

// delay is draw n of client c's network stream as a one-way delay.
func (m *model) delay(c uint32, n uint64) int64 {
	switch m.netDist {
	case distConstant:
		return int64(m.netMean)
	case distExponential:
		key := m.src.Key(rng.Network, uint64(c))
		return int64(math.Round(m.netMean * rng.Exp(key, n)))
	default:
		key := m.src.Key(rng.Network, uint64(c))
		d := math.Abs(m.netMean + m.netSD*rng.Normal(key, n))
		return int64(math.Min(math.Round(d), 1<<62))
	}
}

// nextArrival is when client c issues request number n (n >= 1), given
// that request n−1 was at t.
func (m *model) nextArrival(c uint32, n uint32, t int64) int64 {
	if m.once {
		return math.MaxInt64 // one request per client
	}
	if m.constant {
		// Request n at operational time (phase + n)/λ: computed from n, so
		// rounding never accumulates.
		phase := rng.Float64(m.src.Key(rng.Phase, uint64(c)), 0)
		return m.prof.invert((phase + float64(n)) / m.lambda)
	}
	e := rng.Exp(m.src.Key(rng.Arrival, uint64(c)), uint64(n))
	if m.prof.flat {
		return t + int64(math.Round(e/m.lambda*1e9))
	}
	return m.prof.invert(m.prof.cum(t) + e/m.lambda)
}

// ---- fingerprint ----

func (m *model) mixFP(e engine.Event) {
	const prime = 0x100000001b3
	h := m.fp
	h = (h ^ uint64(e.At)) * prime
	h = (h ^ (uint64(e.Kind())<<32 | uint64(e.ID))) * prime
	h = (h ^ uint64(e.Aux)) * prime
	m.fp = h
}
