package sim

import (
	"math"

	svcdist "github.com/throttlesim/throttlesim/sim/dist"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Service times: the sampler of a scenario distribution, the draw that
// names an attempt's service time, a slowdown's replacement, and the same
// sampler exported for the live server.

// svcDraw names the service-time draw of one attempt at one service: the
// stream key of its client (or edge) and the draw index of its request
// ordinal, attempt number and hop. It is taken while the attempt is its
// request's current one and travels with the attempt (job, msg), so that a
// draw made later, a slowdown's replacement at arrival or at the start of
// service, is still the attempt's own when the client has given up on it
// and its request slot holds a later attempt or another request.
type svcDraw struct{ key, n uint64 }

// drawOf names the service-time draw of r's current attempt after hop
// forwarding hops.
func (m *model) drawOf(r *request, hop uint8) svcDraw {
	return svcDraw{m.src.Key(rng.Service, m.entity(r)), drawIndex(r.ord, r.rs.Attempt) | uint64(hop)<<56}
}

// serviceTime is the service time at b of the attempt id names: named by
// the attempt, so it is the same draw whenever it is taken.
func (m *model) serviceTime(b *pool, id svcDraw) int64 {
	return b.svc.sample(id.key, id.n)
}

// sampler draws service times from one scenario distribution.
type sampler struct {
	d   dist
	mix *svcdist.Mixture   // dist mixture
	emp *svcdist.Empirical // dist empirical
	hst *svcdist.Histogram // dist histogram
}

func newSampler(sv scenario.Service) sampler {
	var s sampler
	s.d.mean = float64(sv.Mean)
	switch sv.Dist {
	case scenario.ServiceConstant, scenario.ServiceConcurrency:
		s.d.kind = distConstant
	case scenario.ServiceExponential:
		s.d.kind = distExponential
	case scenario.ServiceLognormal:
		s.d.kind = distLognormal
		s.d.sigma = sv.Sigma
		s.d.mu = math.Log(s.d.mean) - s.d.sigma*s.d.sigma/2 // so that the mean is d.mean
	case scenario.ServiceMixture:
		s.mix, _ = sv.Mixture() // validated
	case scenario.ServiceEmpirical:
		s.emp = sv.Empirical // read by scenario.Load; validated
	case scenario.ServiceHistogram:
		s.hst, _ = sv.HistogramDist() // validated
	}
	return s
}

// mixPick marks the draw index of a mixture's component choice: bit 48,
// above drawIndex's 40 bits and below the hop (bits 56 on).
const mixPick = 1 << 48

// sample is draw n of stream key as a service time.
func (s *sampler) sample(key, n uint64) int64 {
	switch {
	case s.mix != nil:
		// The component is picked by a draw of its own, then drawn from
		// the attempt's usual service draw.
		c := s.mix.Component(s.mix.Pick(rng.Float64(key, n|mixPick)))
		switch c.Kind {
		case svcdist.Exponential:
			return c.Sample(rng.Exp(key, n), 0)
		case svcdist.Lognormal:
			return c.Sample(0, rng.Normal(key, n))
		}
		return c.Mean
	case s.emp != nil:
		return s.emp.Sample(rng.Float64(key, n))
	case s.hst != nil:
		// The inverse CDF at the attempt's own service draw, as empirical:
		// one draw, the same whenever it is taken (the live server shares
		// this sampler).
		return s.hst.Sample(rng.Float64(key, n))
	}
	return s.d.sample(key, n)
}

// slowed is the service time at b of the attempt id names, whose usual
// service time is svc, under the slowdown in progress: svc × factor, or
// the replacement distribution's draw for the attempt (the same draw as
// its usual one). The attempt is named by id, not by its request slot: at
// arrival over a network or at the start of service the slot may hold a
// later attempt or another request.
func (m *model) slowed(b *pool, id svcDraw, svc int64) int64 {
	if b.slowFactor > 0 {
		return int64(math.Min(math.Round(float64(svc)*b.slowFactor), 1<<62))
	}
	return b.slow.sample(id.key, id.n)
}

// ServiceTime draws service times from a backend's distribution with the
// simulator's own sampler, for a live server (live/server).
type ServiceTime struct{ s sampler }

// NewServiceTime is the sampler of sv, which must be valid (scenario.Load
// validates).
func NewServiceTime(sv scenario.Service) *ServiceTime {
	return &ServiceTime{s: newSampler(sv)}
}

// Sample is draw n of the random stream key as a service time, in
// nanoseconds.
func (t *ServiceTime) Sample(key, n uint64) int64 { return t.s.sample(key, n) }
