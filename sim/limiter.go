package sim

import (
	"github.com/throttlesim/throttlesim/sim/policy"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// concLimit is a pool's adaptive concurrency limit
// (backend.concurrency_limit): the algorithm, the draws it is handed and
// the limit's time integral for the metrics.
type concLimit struct {
	alg  policy.LimitAlgorithm
	key  uint64 // the stream of its draws (Vegas's probe jitter, Envoy's window jitter)
	n    uint64 // samples fed: names the next draw
	cur  int    // the limit in force since last
	last int64
}

// limiterEntity names a replica's limiter draws in the Route stream,
// apart from every client's and call's entity.
const limiterEntity = 1 << 40

func newConcLimit(c *scenario.ConcurrencyLimit, src rng.Source, idx int) (*concLimit, error) {
	a, err := c.Algorithm()
	if err != nil {
		return nil, err
	}
	return &concLimit{alg: a, key: src.Key(rng.Route, limiterEntity|uint64(idx)), cur: a.Limit(0)}, nil
}

// note accounts the limit into b's series up to now and takes l from now.
func (c *concLimit) note(b *pool, now int64, l int) {
	if l == c.cur {
		return
	}
	b.ser.AddLimit(c.last, now, int64(c.cur))
	c.cur, c.last = l, now
}

// concAdmit reports whether b's limit admits one more request at now:
// fewer requests held (queued or in service) than the limit.
func (m *model) concAdmit(b *pool, now int64) bool {
	c := b.conc
	l := c.alg.Limit(now)
	c.note(b, now, l)
	return b.outstanding() < l
}

// concSample feeds b's limit one request that leaves it at now after rtt
// in the server, with held the requests b holds counting it; drop: it was
// not served (queue timeout or CoDel).
func (m *model) concSample(b *pool, now, rtt int64, held int, drop bool) {
	c := b.conc
	c.n++
	c.alg.Sample(now, rtt, held, drop, rng.Float64(c.key, c.n))
	c.note(b, now, c.alg.Limit(now))
}
