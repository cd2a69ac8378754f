package sim

import (
	"math"

	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/stack"
)

// model is the whole simulated world of one run. It holds no per-client
// objects: every piece of per-client state is a slice indexed by client id
// (struct of arrays), and each part of the world is a sub-struct with the
// file that handles it:
//
//	fleet    the clients, their requests and policy stacks   client.go, arrivals.go, policies.go
//	conns    the clients' persistent connections              conn.go
//	pool     the worker-pool backend                          pool.go, faults.go
//	occRow   the optimistic-concurrency backend               occ.go
//	network  the path between them                            network.go
//	meter    per-interval rows, latency, the fingerprint      meter.go
type model struct {
	q   calendar
	sc  *scenario.Scenario
	src rng.Source
	end int64

	cl  fleet
	cn  conns
	be  *pool // the service the clients call (&svcs[entry])
	occ occRow
	net network
	mt  meter

	// the service graph (graph.go): one pool without services
	nodes      []node     // the services
	entry      uint16     // the node the clients call
	now        int64      // the time of the event being handled
	hooks      *hooks     // Options.Watch and Options.Branches (branch.go); nil in ordinary runs
	tilt       *tiltState // Options.Tilt (tilt.go); nil in ordinary runs
	svcs       []pool     // every replica of every service
	edges      []edge
	frames     []frame
	freeFrames []uint32

	// hedged copies that lost and are to be dropped from the queue they
	// wait in, by slot<<32 | token
	cancelled map[uint64]struct{}

	// load-balancing guards (outlier.go): whether any service has outlier
	// detection (results go to it), and pick's scratch space
	guarded                      bool
	lbBuf, lbIn, permBuf, actBuf []uint16
	prio                         *prioState // client priorities, when a service sheds by priority (priority.go)
}

// calendar is the engine's event queue as the model uses it: the model
// keeps its times as int64 nanoseconds, and this is where they become
// engine.Time and back (Schedule here, Step in loop.go). Schedule is
// inlined: the conversion costs nothing.
type calendar struct{ *engine.Queue }

// Schedule adds an event of the given kind at time at.
func (c calendar) Schedule(at int64, kind uint8, id, aux uint32) {
	c.Queue.Schedule(engine.Time(at), kind, id, aux)
}

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
	evHedge                           // ID slot, Aux token: send a hedged copy of the first attempt if it is still unanswered
	evOutlierSweep                    // ID node: outlier detection's interval timer
	evHealthCheck                     // ID node: active health checks of its replicas
	evScaleTick                       // ID node: an autoscaler samples its metric (and, every period, decides)
	evReplicaReady                    // ID pool, Aux generation<<1 | warm-up over: a new replica takes work (or its warm-up ends)
	evWatch                           // a watch point of Options.WatchEvery (branch.go); never in ordinary runs
	evTiltMark                        // Aux j: the arrival tilt's slot bound j (tilt.go); never in ordinary runs
)

// Attempt outcomes as the client sees them: the policy stack's (package
// stack), as the small integers the event loop carries.
const (
	outOK          = uint8(stack.OK)
	outRejected    = uint8(stack.Rejected)
	outUnavailable = uint8(stack.Unavailable)
	outTimeout     = uint8(stack.Timeout)
	outError       = uint8(stack.Error) // the backend served the attempt and answered with an error
)

// outcomeMask is the set of the outcomes named (names the scenario has
// validated).
func outcomeMask(names []string) uint8 {
	m, _ := stack.ParseOutcomes(names)
	return uint8(m)
}

// dontRetry, as the retry-after of an answer, is the server saying "do not
// retry" (gRPC pushback with a negative delay).
const dontRetry = stack.DontRetry

func newModel(sc *scenario.Scenario, seed uint64) (*model, error) {
	m := &model{sc: sc, src: rng.New(seed), end: int64(sc.Duration), cancelled: map[uint64]struct{}{}}
	n := sc.Clients.Count
	m.q = calendar{engine.NewQueue(n + 1024)}
	if err := m.cl.init(sc, &m.src); err != nil {
		return nil, err
	}
	if err := m.cn.init(sc); err != nil {
		return nil, err
	}
	m.net.init(sc.Network)
	m.occ.on = sc.Backend.Kind == scenario.BackendOCC
	m.mt.init(sc, len(m.cl.pols), m.cl.cgroup)
	if err := m.initGraph(sc); err != nil {
		return nil, err
	}
	m.initConnReplicas()
	m.mt.solo = m.mt.gser == nil && len(m.edges) == 0
	for i := range m.cl.pols {
		m.cl.pols[i].propagate = sc.Clients.PropagateDeadline
	}
	return m, nil
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

// drawIndex names the draws of attempt number attempt of a client's
// request number ord within one purpose's stream.
func drawIndex(ord uint32, attempt uint8) uint64 { return stack.Index(ord, attempt) }

// dist is a distribution of durations (service time, network delay),
// sampled from a counter-based stream: sample(key, n) is draw n of the
// stream key, always the same number for the same (key, n).
type dist struct {
	kind      uint8
	mean      float64 // ns
	sd        float64 // ns (normal)
	mu, sigma float64 // lognormal parameters of the log
}

const (
	distConstant uint8 = iota
	distExponential
	distLognormal
	distNormal // |N(mean, sd)| (network delay)
)

func (d *dist) sample(key, n uint64) int64 {
	switch d.kind {
	case distConstant:
		return int64(d.mean)
	case distExponential:
		return int64(math.Round(d.mean * rng.Exp(key, n)))
	case distLognormal:
		z := rng.Normal(key, n)
		return int64(math.Min(math.Round(math.Exp(d.mu+d.sigma*z)), 1<<62)) // no int64 overflow
	default:
		v := math.Abs(d.mean + d.sd*rng.Normal(key, n))
		return int64(math.Min(math.Round(v), 1<<62))
	}
}
