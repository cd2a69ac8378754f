package admission

import (
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// queueDraws sets the counters of the queue rule's draws apart from the
// limit's sample draws (which count up from 1 on the same key).
const queueDraws = 1 << 62

// limitQueue is failsafe-go's queueing in front of a full adaptive limit
// (scenario fields initial_rejection_factor and max_rejection_factor, or
// rejection_threshold and max_execution_time): a request that finds the
// limit full is admitted or rejected at random by the rate of
// policy.FailsafeQueueRejection or policy.FailsafeLatencyRejection. The
// requests held beyond the limit are the limiter's queue. In failsafe-go
// they wait for a permit; here they join the server's queue and workers
// like any admitted request (the limit bounds what the server holds).
type limitQueue struct {
	initial, max float64 // the factors; 0: the latency rule
	thr, maxExec int64   // ns, the latency rule
	fs           *policy.Failsafe
	n            uint64 // draws taken: names the next

	pz *policy.FailsafePrioritizer // nil: not prioritised
	ul int                         // user levels of the arrivals' priorities
}

// levelsPerClass is failsafe-go's levels per priority class.
const levelsPerClass = 100

// newLimitQueue is cl's queueing rule, nil without one.
func newLimitQueue(cl *scenario.ConcurrencyLimit, alg policy.LimitAlgorithm) (*limitQueue, error) {
	fs, ok := alg.(*policy.Failsafe)
	var q *limitQueue
	switch {
	case !ok:
		return nil, nil
	case cl.InitialRejectionFactor > 0:
		q = &limitQueue{initial: cl.InitialRejectionFactor, max: cl.MaxRejectionFactor}
	case cl.MaxExecutionTime > 0:
		q = &limitQueue{thr: int64(cl.RejectionThreshold), maxExec: int64(cl.MaxExecutionTime), fs: fs}
	}
	if q != nil && cl.Prioritized {
		var err error
		q.pz, err = policy.NewFailsafePrioritizer(int64(cl.CalibrationInterval), cl.LevelWindow,
			(scenario.MaxBusinessPriority+1)*levelsPerClass)
		if err != nil {
			return nil, err
		}
	}
	return q, nil
}

// prioritized is failsafe-go's prioritised limiter on an arrival of
// priority prio (business·ul + user, 0 the most important) at now, with
// held requests held and a limit of l: its level is its business class
// (the least important class 0..99, the most important the top 100) and a
// level drawn at random within the class, as priority.RandomLevel does.
// The prioritizer calibrates at its interval; a full limit refuses when
// the queue beyond it reaches ⌊l·max⌋, else below the threshold. Every
// admitted level is recorded.
func (q *limitQueue) prioritized(now int64, held, l, prio int, key uint64) bool {
	q.n++
	class := scenario.MaxBusinessPriority - prio/q.ul
	level := class*levelsPerClass + int(rng.Float64(key, queueDraws|q.n)*levelsPerClass)
	queued := max(held-l, 0)
	q.pz.Calibrate(now, queued, l, q.initial, q.max)
	ok := held < l || queued < int(float64(l)*q.max) && level >= q.pz.Threshold()
	if ok {
		q.pz.Record(level)
	}
	return ok
}

// rate is the rejection rate of a request that finds queued requests
// held beyond a full limit l.
func (q *limitQueue) rate(queued, l int) float64 {
	if q.initial > 0 {
		return policy.FailsafeQueueRejection(queued, l, q.initial, q.max)
	}
	avg := q.fs.Baseline()
	if avg == 0 {
		return 0 // no average yet: estimateRTT is 0
	}
	est := policy.FailsafeEstimateRTT(queued, l, avg)
	if est > q.maxExec {
		return 1
	}
	return policy.FailsafeLatencyRejection(est, q.thr, q.maxExec)
}

// admit decides on a request that finds queued requests beyond a full
// limit l; it draws from key only when the rate is strictly between 0
// and 1.
func (q *limitQueue) admit(queued, l int, key uint64) bool {
	r := q.rate(queued, l)
	switch {
	case r <= 0:
		return true
	case r >= 1:
		return false
	}
	q.n++
	return r < rng.Float64(key, queueDraws|q.n)
}
