// Package admission is a server's admission and dispatch decision as one
// value: whether an arrival is served at once, queued, rejected (and where
// its rejection's work goes) or left unanswered, under the backend's queue
// discipline (FIFO, LIFO, adaptive LIFO, CoDel), its token-bucket rate
// limit, its concurrency limit and its priority shedding (DAGOR); and
// which work a worker that comes free takes next.
//
// It is pure: the caller hands in the time, the server's load (workers
// busy, the limit on them, requests queued) and, for priority shedding,
// the arrival's priority; it holds the jobs and the workers itself. The
// simulator's pool (sim/pool.go) and the live server (live/server) call
// the same value, the live server under its mutex, so the two decide
// alike by construction.
package admission

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Discipline is the order requests leave the queue, resolved from
// scenario.QueueDiscipline at build time.
type Discipline uint8

// The queue disciplines.
const (
	FIFO         Discipline = iota // oldest first
	LIFO                           // newest first
	AdaptiveLIFO                   // oldest first until more than the threshold wait, then newest first
	CoDel                          // oldest first, RFC 8289 CoDel dropping at the head
)

// Verdict is what becomes of an arrival (Arrive) or of a refusal
// (Refuse).
type Verdict uint8

// The verdicts.
const (
	Serve      Verdict = iota // a worker is free: it serves the arrival now
	Queue                     // the arrival waits in the queue
	Reject                    // refused: answer "overloaded"; its rejection costs nothing or waits in the accept backlog
	RejectWork                // refused: answer "overloaded", and a free worker spends the rejection's cost now
	Unanswered                // refused, and the accept backlog is full: no answer at all
)

// Take is what a worker that comes free does next (Next).
type Take uint8

// The takes.
const (
	Idle       Take = iota // nothing to do: the worker idles
	Cut                    // capacity was cut below the workers busy while it worked: the worker idles
	TakeReject             // the rejection work waiting in the backlog first
	TakeHead               // the oldest queued job
	TakeTail               // the newest queued job
)

// Expiry is the verdict on a job just taken from the queue (Expire).
type Expiry uint8

// The expiries.
const (
	Keep     Expiry = iota // serve it
	Shed                   // CoDel drops it: rejected
	TimedOut               // it waited longer than the queue timeout: rejected
)

// Load is the server's state that a decision reads: workers busy (serving
// or rejecting), the workers available now, and the requests queued; and
// the running totals of queueing time (ns) and of requests that started
// service, which priority shedding reads.
type Load struct {
	Busy, Limit, Queued int
	WaitSum             float64
	WaitN               int64
}

// Admission is one server's admission state and settings. The zero value
// is not usable: build one with New.
type Admission struct {
	disc      Discipline
	qlimit    int
	threshold int   // adaptive LIFO: newest first while more than this wait
	qtimeout  int64 // ns; 0: none
	rejCost   int64 // ns of worker time a rejection costs
	backlog   int64 // the most rejection work that may wait
	// Overhead is the rejection work waiting in the accept backlog for a
	// worker; an outage clears it.
	Overhead int64

	codel  *policy.CoDel
	bucket *policy.TokenBucket
	conc   *concLimit // nil: no concurrency limit
	dagor  *policy.DAGOR
	ul     int // DAGOR's, the PID shedder's or a prioritised limit's user priority levels
	pid    *policy.PIDShedder
	shed   bool // DAGOR or the PID shedder: Arrive asks admitPrio
	prio   bool // shed or a prioritised limit: Arrive reads prio

	// graceful degradation (Degrade): the level, one of the two
	degQueue int     // more than this many queued (−1: not this rule)
	degUtil  float64 // more than this share of the workers busy
	degFrac  float64 // the share of the service time a degraded response takes; 0: none
}

// concLimit is the server's concurrency limit: its algorithm, the stream
// of its draws, and the limit in force for the series' time integral.
type concLimit struct {
	alg  policy.LimitAlgorithm
	key  uint64
	n    uint64 // samples fed: names the next draw
	cur  int    // the limit in force since last
	last int64
	ser  *metrics.Series
	q    *limitQueue // nil: a full limit rejects (failsafe's queueing otherwise)
}

// New is the admission of backend be. limitKey names the random stream of
// the concurrency limit's draws (Vegas's probe jitter, Envoy's window
// jitter); ser, when not nil, receives the limit's time integral.
func New(be scenario.Backend, limitKey uint64, ser *metrics.Series) (Admission, error) {
	a := Admission{
		qlimit: be.Queue.Limit, qtimeout: int64(be.Queue.Timeout),
		rejCost: int64(be.RejectCost), backlog: int64(be.AcceptBacklog),
	}
	switch be.Queue.Discipline {
	case scenario.QueueFIFO, "":
	case scenario.QueueLIFO:
		a.disc = LIFO
	case scenario.QueueAdaptiveLIFO:
		a.disc, a.threshold = AdaptiveLIFO, be.Queue.LIFOThreshold
	case scenario.QueueCoDel:
		a.disc = CoDel
		var err error
		if a.codel, err = policy.NewCoDel(int64(be.Queue.CoDelTarget), int64(be.Queue.CoDelInterval)); err != nil {
			return Admission{}, fmt.Errorf("admission: backend.queue: %w", err)
		}
	default:
		return Admission{}, fmt.Errorf("admission: backend.queue.discipline: unknown %q", be.Queue.Discipline)
	}
	if rl := be.RateLimit; rl != nil {
		var err error
		if a.bucket, err = policy.NewTokenBucket(float64(rl.Rate), rl.Burst); err != nil {
			return Admission{}, fmt.Errorf("admission: backend.rate_limit: %w", err)
		}
	}
	if cl := be.ConcurrencyLimit; cl != nil {
		alg, err := cl.Algorithm()
		if err != nil {
			return Admission{}, fmt.Errorf("admission: backend.concurrency_limit: %w", err)
		}
		q, err := newLimitQueue(cl, alg)
		if err != nil {
			return Admission{}, fmt.Errorf("admission: backend.concurrency_limit: %w", err)
		}
		a.conc = &concLimit{alg: alg, key: limitKey, cur: alg.Limit(0), ser: ser, q: q}
	}
	if ps := be.PriorityShedding; ps != nil {
		d, err := policy.NewDAGOR(ps.Settings(), (scenario.MaxBusinessPriority+1)*ps.UserLevels)
		if err != nil {
			return Admission{}, fmt.Errorf("admission: backend.priority_shedding: %w", err)
		}
		a.dagor, a.ul = d, ps.UserLevels
	}
	if ps := be.PIDShedding; ps != nil {
		p, err := policy.NewPIDShedder(ps.Settings(), (scenario.MaxBusinessPriority+1)*ps.UserLevels)
		if err != nil {
			return Admission{}, fmt.Errorf("admission: backend.pid_shedding: %w", err)
		}
		a.pid, a.ul = p, ps.UserLevels
	}
	if a.conc != nil && a.conc.q != nil && a.conc.q.pz != nil {
		a.conc.q.ul = max(a.ul, 1)
		a.ul = a.conc.q.ul
	}
	a.shed = a.dagor != nil || a.pid != nil
	a.prio = a.shed || a.ul > 0
	if d := be.Degrade; d != nil {
		a.degFrac, a.degQueue = d.ServiceFraction, -1
		if d.WhenQueueAbove != nil {
			a.degQueue = *d.WhenQueueAbove
		} else if d.WhenUtilizationAbove != nil {
			a.degUtil = *d.WhenUtilizationAbove
		}
	}
	return a, nil
}

// Discipline is the queue's discipline.
func (a *Admission) Discipline() Discipline { return a.disc }

// Prioritized reports whether the server sheds by priority: only then
// does Arrive read its prio argument.
func (a *Admission) Prioritized() bool { return a.prio }

// UserLevels is the number of user priority levels of priority shedding
// (0 without it). An arrival's priority is business·UserLevels + user.
func (a *Admission) UserLevels() int { return a.ul }

// Limited reports whether the server has a concurrency limit: only then
// does Sample do anything.
func (a *Admission) Limited() bool { return a.conc != nil }

// QueueLimit is the number of requests that may wait.
func (a *Admission) QueueLimit() int { return a.qlimit }

// Arrive decides on an arrival at now to a server under load l; prio is
// its priority (read only when Prioritized). Shed reports a refusal by the
// rate limit, priority shedding (DAGOR or the PID shedder) or the
// concurrency limit (those come first, in this order), as opposed to a
// full queue.
func (a *Admission) Arrive(now int64, l Load, prio int) (v Verdict, shed bool) {
	if a.bucket != nil && !a.bucket.Allow(now) ||
		a.shed && !a.admitPrio(now, prio, l) ||
		a.conc != nil && !a.conc.admit(now, l.Busy+l.Queued, prio) {
		return a.Refuse(l), true
	}
	if l.Busy < l.Limit {
		return Serve, false
	}
	if l.Queued < a.qlimit {
		return Queue, false
	}
	return a.Refuse(l), false
}

// admitPrio is the priority shedder's decision (DAGOR's or the PID
// shedder's) on an arrival of priority prio at now.
func (a *Admission) admitPrio(now int64, prio int, l Load) bool {
	if a.dagor != nil {
		return a.dagor.Admit(now, prio, l.WaitSum, l.WaitN)
	}
	return a.pid.Admit(now, prio, l.WaitSum, l.WaitN)
}

// Refuse charges one rejection's work to a server under load l: nothing
// when rejections cost nothing, a free worker now if there is one, else
// the accept backlog; when the backlog is full the server cannot even say
// no (as a kernel drops connections beyond its listen backlog).
func (a *Admission) Refuse(l Load) Verdict {
	switch {
	case a.rejCost == 0:
		return Reject
	case l.Busy < l.Limit:
		return RejectWork
	case a.Overhead >= a.backlog:
		return Unanswered
	}
	a.Overhead++
	return Reject
}

// DegradeFraction is the share of its service time a degraded response
// takes; 0 when the server does not degrade (and Degrade need not be
// asked).
func (a *Admission) DegradeFraction() float64 { return a.degFrac }

// Degrade reports whether a request that starts service under load l
// (Busy counting its worker, Queued the requests still waiting) gets a
// degraded response: the third answer beside queueing and rejecting.
func (a *Admission) Degrade(l Load) bool {
	if a.degQueue >= 0 {
		return l.Queued > a.degQueue
	}
	return l.Limit > 0 && float64(l.Busy) > a.degUtil*float64(l.Limit)
}

// RejectCost is the worker time (ns) one rejection costs.
func (a *Admission) RejectCost() int64 { return a.rejCost }

// Next is what a worker that has just come free takes under load l (Busy
// counting it): pending rejection work first, then a queued job in the
// discipline's order; it idles when there is none (Idle), or when
// capacity was cut below the workers busy (Cut).
func (a *Admission) Next(l Load) Take {
	switch {
	case l.Busy > l.Limit:
		return Cut
	case a.Overhead > 0:
		a.Overhead--
		return TakeReject
	case l.Queued == 0:
		return Idle
	case a.disc == LIFO || a.disc == AdaptiveLIFO && l.Queued > a.threshold:
		return TakeTail
	}
	return TakeHead
}

// Expire decides at now on a job just taken from the queue after waiting
// sojourn, with left jobs still queued: CoDel (the queue has stood above
// its target delay for an interval) and the queue timeout reject it as it
// reaches a worker.
func (a *Admission) Expire(now, sojourn int64, left int) Expiry {
	if a.codel == nil && a.qtimeout == 0 {
		return Keep // inlined: most queues have neither
	}
	return a.expire(now, sojourn, left)
}

func (a *Admission) expire(now, sojourn int64, left int) Expiry {
	if a.codel != nil && a.codel.Drop(now, sojourn, left) {
		return Shed
	}
	if a.qtimeout > 0 && sojourn > a.qtimeout {
		return TimedOut
	}
	return Keep
}

// Sample feeds the concurrency limit (if any) one request that leaves the
// server at now after rtt in it, with held the requests the server holds
// counting it; drop: it was not served (a queue timeout or CoDel).
func (a *Admission) Sample(now, rtt int64, held int, drop bool) {
	c := a.conc
	if c == nil {
		return
	}
	c.n++
	c.alg.Sample(now, rtt, held, drop, rng.Float64(c.key, c.n))
	c.note(now, c.alg.Limit(now))
}

// Finish accounts the concurrency limit into the series up to stop.
func (a *Admission) Finish(stop int64) {
	if c := a.conc; c != nil && c.ser != nil {
		c.ser.AddLimit(c.last, stop, int64(c.cur))
	}
}

// admit reports whether the limit admits one more request of priority
// prio at now, with held requests held (queued or in service).
func (c *concLimit) admit(now int64, held, prio int) bool {
	l := c.alg.Limit(now)
	c.note(now, l)
	if c.q != nil && c.q.pz != nil {
		return c.q.prioritized(now, held, l, prio, c.key)
	}
	return held < l || c.q != nil && c.q.admit(held-l, l, c.key)
}

// note accounts the limit into the series up to now and takes l from now.
func (c *concLimit) note(now int64, l int) {
	if l == c.cur {
		return
	}
	if c.ser != nil {
		c.ser.AddLimit(c.last, now, int64(c.cur))
	}
	c.cur, c.last = l, now
}
