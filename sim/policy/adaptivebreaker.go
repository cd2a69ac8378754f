package policy

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// The adaptive circuit breaker of Shopify's Semian (Ruby), as its source
// gives it: lib/semian/adaptive_circuit_breaker.rb,
// lib/semian/process_controller.rb and lib/semian/simple_exponential_smoother.rb,
// with the defaults of Semian.create_adaptive_circuit_breaker in
// lib/semian.rb. It is a source, not a paper: the rule is what the code
// does (PRs of 2025 introduced it as a PID controller, since reduced to a
// proportional one with a "defensiveness" factor).
//
// No open, closed or half-open state: the breaker rejects each call with
// probability r, its rejection rate. Every Interval (Semian's
// sliding_interval, 1 s) a background thread updates r:
//
//	e     = errors / (errors + successes) over the last Window (10 s), 0 when empty
//	ideal = the smoother's forecast (below), then the smoother learns e
//	p     = (e − ideal) − r / Defensiveness
//	r     = clamp(r + p, 0, 1)
//
// so r settles where p = 0: r* = Defensiveness·(e − ideal) (5 × 15 points
// above the ideal error rate is 75% rejected). Rejected calls are not
// results: e is the error rate of the calls that were sent.
//
// The ideal error rate is a simple exponential smoother of the observed e,
// started at InitialErrorRate (1%): s ← α·e + (1 − α)·s, where an
// observation above Cap (10%) is dropped (not counted) and α depends on the
// direction and on confidence — the first 30 minutes of observations
// (1,800 at one per second) are "low confidence":
//
//	             e > s (up)   e ≤ s (down)
//	low conf.    0.0017       0.078
//	high conf.   0.0009       0.039
//
// Semian's comment gives the criterion the constants were fitted to: in low
// confidence converge to 2× the estimate in 30 minutes and to 0.5× in 5; in
// high confidence in 1 hour and 10 minutes.
//
// The update order is the source's: e from the window, then the smoother
// learns e, then p uses the smoother's new forecast. Time is explicit; the
// background thread becomes a tick at Phase + k·Interval per breaker,
// applied lazily (all ticks up to now, in order) before each decision, so
// an idle breaker costs nothing and the result is the same as a thread's.
// The window is Window/Interval buckets of Interval aligned with the ticks,
// so that at each tick it holds exactly the results of the last Window (a
// result at the very instant of a tick belongs to the next window).
//
// Not modelled: Semian's sliding windows keep at most 200·window_size
// timestamps of each kind (2,000 with the default 10 s), so above 200 calls
// a second per process its error rate is over the latest 2,000 of each
// kind, not the whole 10 s; here the counts are exact.

// AdaptiveBreakerConfig is the configuration shared by the breakers of an
// AdaptiveBreakerSet. Durations are in nanoseconds.
type AdaptiveBreakerConfig struct {
	// Defensiveness > 0 (Semian's defensiveness, default 5): the rejection
	// rate settles at Defensiveness times the error rate above the ideal.
	Defensiveness float64
	// Window is the span of the error rate (window_size, 10 s) and
	// Interval the time between updates (sliding_interval, 1 s); Window is
	// a multiple of Interval.
	Window, Interval int64
	// InitialErrorRate in [0, 1] is the smoother's starting ideal error
	// rate (initial_error_rate, 1%).
	InitialErrorRate float64
	// Cap in (0, 1]: observations above it do not teach the smoother
	// (DEFAULT_CAP_VALUE, 10%).
	Cap float64
}

// Semian's smoother constants (simple_exponential_smoother.rb).
const (
	semianLowUp, semianLowDown   = 0.0017, 0.078
	semianHighUp, semianHighDown = 0.0009, 0.039
	// semianConfidence is LOW_CONFIDENCE_THRESHOLD_MINUTES: observations
	// are low-confidence while their count is below 30 minutes' worth
	// (observations_per_minute × 30).
	semianConfidence = 30 * 60 * sec64
)

// SemianAdaptiveDefaults is Semian.create_adaptive_circuit_breaker's
// configuration: defensiveness 5, a 10 s window, an update every second, an
// initial error rate of 1% and the smoother's cap of 10%.
func SemianAdaptiveDefaults() AdaptiveBreakerConfig {
	return AdaptiveBreakerConfig{Defensiveness: 5, Window: 10 * sec64, Interval: sec64, InitialErrorRate: 0.01, Cap: 0.1}
}

// Validate reports every invalid field, one line each.
func (c AdaptiveBreakerConfig) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("adaptive breaker: "+format, a...))
	}
	if !(c.Defensiveness > 0) || math.IsInf(c.Defensiveness, 1) {
		bad("defensiveness must be a finite number > 0, got %v", c.Defensiveness)
	}
	if c.Interval <= 0 {
		bad("interval must be > 0, got %d ns", c.Interval)
	}
	if c.Window <= 0 {
		bad("window must be > 0, got %d ns", c.Window)
	} else if c.Interval > 0 && (c.Window%c.Interval != 0 || c.Window/c.Interval > 1<<16) {
		bad("window (%d ns) must be a multiple of interval (%d ns), at most 65536 intervals", c.Window, c.Interval)
	}
	if !(c.InitialErrorRate >= 0 && c.InitialErrorRate <= 1) {
		bad("initial_error_rate must be in [0, 1], got %v", c.InitialErrorRate)
	}
	if !(c.Cap > 0 && c.Cap <= 1) {
		bad("cap must be in (0, 1], got %v", c.Cap)
	}
	return errors.Join(errs...)
}

// AdaptiveBreakerSet holds n adaptive breakers sharing one configuration,
// as flat per-field slices (struct of arrays). Breaker i's ticks are at
// Phase(i) + k·Interval, k >= 0. Nothing allocates after
// NewAdaptiveBreakerSet. Time must not go backwards for any one breaker.
type AdaptiveBreakerSet struct {
	cfg      AdaptiveBreakerConfig
	nb       int64  // buckets in the window
	lowConf  uint32 // observations below this count are low-confidence
	interval int64

	rate  []float64 // rejection rate r
	ideal []float64 // the smoother's forecast s
	nobs  []uint32  // observations the smoother has counted
	off   []int64   // Interval − phase: slot(t) = (t + off)/Interval
	tick  []int64   // the next tick's slot number k (the tick at k·Interval − off)
	head  []int64   // the latest slot the ring has advanced to
	calls []uint32  // results in the ring
	fails []uint32  // failures in the ring
	bkt   []uint32  // (results, failures) per slot, 2·nb per breaker
}

// NewAdaptiveBreakerSet makes n adaptive breakers with configuration c;
// phase(i) in (0, Interval] is the time of breaker i's first update (a
// process starts its update thread at its own time). A nil phase starts
// every breaker's ticks at Interval.
func NewAdaptiveBreakerSet(n int, c AdaptiveBreakerConfig, phase func(i int) int64) (*AdaptiveBreakerSet, error) {
	if n < 0 {
		return nil, fmt.Errorf("adaptive breaker: number of breakers must be >= 0, got %d", n)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &AdaptiveBreakerSet{
		cfg: c, nb: c.Window / c.Interval, interval: c.Interval,
		lowConf: uint32(min(semianConfidence/c.Interval, math.MaxUint32)),
		rate:    make([]float64, n), ideal: make([]float64, n), nobs: make([]uint32, n),
		off: make([]int64, n), tick: make([]int64, n), head: make([]int64, n),
		calls: make([]uint32, n), fails: make([]uint32, n),
	}
	s.bkt = make([]uint32, 2*int64(n)*s.nb)
	for i := range n {
		ph := c.Interval
		if phase != nil {
			ph = phase(i)
			if ph <= 0 || ph > c.Interval {
				return nil, fmt.Errorf("adaptive breaker: phase of breaker %d must be in (0, %d], got %d", i, c.Interval, ph)
			}
		}
		s.off[i] = c.Interval - ph
		s.ideal[i] = c.InitialErrorRate
		s.tick[i] = 1 // the first tick is at Interval − off = phase
	}
	return s, nil
}

// Phase is the time of breaker i's first update, in (0, Interval].
func (s *AdaptiveBreakerSet) Phase(i int) int64 { return s.interval - s.off[i] }

// Len is the number of breakers.
func (s *AdaptiveBreakerSet) Len() int { return len(s.rate) }

// Config is the configuration the set was made with.
func (s *AdaptiveBreakerSet) Config() AdaptiveBreakerConfig { return s.cfg }

// Allow reports whether breaker i admits a call at now, given the uniform
// draw u (Semian's should_reject?: rand < r). Draw u only when
// NeedsDraw(now, i) says so; with a zero rejection rate it is not read.
func (s *AdaptiveBreakerSet) Allow(now int64, i int, u float64) bool {
	s.catchUp(now, i)
	return !(u < s.rate[i])
}

// NeedsDraw brings breaker i up to date at now and reports whether its
// rejection rate is above 0 (a call needs a coin).
func (s *AdaptiveBreakerSet) NeedsDraw(now int64, i int) bool {
	s.catchUp(now, i)
	return s.rate[i] > 0
}

// Record records the result of a call breaker i admitted, at now.
func (s *AdaptiveBreakerSet) Record(now int64, i int, failure bool) {
	s.catchUp(now, i)
	k := s.slot(i, now)
	s.advance(i, k)
	j := s.base(i) + 2*(k%s.nb)
	s.bkt[j]++
	s.calls[i]++
	if failure {
		s.bkt[j+1]++
		s.fails[i]++
	}
}

// RejectionRate is breaker i's rejection rate at now.
func (s *AdaptiveBreakerSet) RejectionRate(now int64, i int) float64 {
	s.catchUp(now, i)
	return s.rate[i]
}

// IdealErrorRate is breaker i's learned ideal error rate at now.
func (s *AdaptiveBreakerSet) IdealErrorRate(now int64, i int) float64 {
	s.catchUp(now, i)
	return s.ideal[i]
}

// WindowCounts is the number of results and of failures in the window of
// breaker i's latest update at or before now (the last Window before it).
func (s *AdaptiveBreakerSet) WindowCounts(now int64, i int) (results, failures int) {
	s.catchUp(now, i)
	k, h := s.slot(i, now), s.head[i]
	for m := max(k-s.nb, h-s.nb+1, 0); m <= min(k-1, h); m++ {
		j := s.base(i) + 2*(m%s.nb)
		results += int(s.bkt[j])
		failures += int(s.bkt[j+1])
	}
	return results, failures
}

// Bytes is the memory held by the set.
func (s *AdaptiveBreakerSet) Bytes() int {
	return int(unsafe.Sizeof(*s)) + 8*(len(s.rate)+len(s.ideal)+len(s.off)+len(s.tick)+len(s.head)) +
		4*(len(s.nobs)+len(s.calls)+len(s.fails)+len(s.bkt))
}

func (s *AdaptiveBreakerSet) slot(i int, t int64) int64 { return (t + s.off[i]) / s.interval }
func (s *AdaptiveBreakerSet) base(i int) int64          { return 2 * int64(i) * s.nb }

// advance moves breaker i's ring to slot k: the slots that have left the
// window (older than k − nb + 1) are subtracted and cleared.
func (s *AdaptiveBreakerSet) advance(i int, k int64) {
	h := s.head[i]
	if k <= h {
		return
	}
	b := s.base(i)
	if k-h >= s.nb {
		clear(s.bkt[b : b+2*s.nb])
		s.calls[i], s.fails[i] = 0, 0
	} else {
		for m := h + 1; m <= k; m++ {
			j := b + 2*(m%s.nb)
			s.calls[i] -= s.bkt[j]
			s.fails[i] -= s.bkt[j+1]
			s.bkt[j], s.bkt[j+1] = 0, 0
		}
	}
	s.head[i] = k
}

// catchUp runs breaker i's updates due at or before now, in order.
func (s *AdaptiveBreakerSet) catchUp(now int64, i int) {
	last := s.slot(i, now) // ticks k <= last are due (tick k is at k·Interval − off)
	for s.tick[i] <= last {
		k := s.tick[i]
		s.advance(i, k-1) // the window at tick k: slots k−nb … k−1
		if s.calls[i] == 0 && s.rate[i] == 0 {
			// Every further tick up to last sees an empty window and keeps
			// r at 0: only the smoother moves, down by 0 observations.
			s.learnZeros(i, last-k+1)
			s.tick[i] = last + 1
			return
		}
		s.update(i)
		s.tick[i] = k + 1
	}
}

// update is one tick of breaker i (ProcessController#update).
func (s *AdaptiveBreakerSet) update(i int) {
	e := 0.0
	if n := s.calls[i]; n > 0 {
		e = float64(s.fails[i]) / float64(n)
	}
	s.learn(i, e)
	p := (e - s.ideal[i]) - s.rate[i]/s.cfg.Defensiveness
	s.rate[i] = min(max(s.rate[i]+p, 0), 1)
}

// learn is SimpleExponentialSmoother#add_observation.
func (s *AdaptiveBreakerSet) learn(i int, e float64) {
	if e > s.cfg.Cap {
		return
	}
	if s.nobs[i] < math.MaxUint32 {
		s.nobs[i]++
	}
	low, up := s.nobs[i] < s.lowConf, e > s.ideal[i]
	var a float64
	switch {
	case low && up:
		a = semianLowUp
	case low:
		a = semianLowDown
	case up:
		a = semianHighUp
	default:
		a = semianHighDown
	}
	// The explicit conversions keep the products from being fused (FMA),
	// so that amd64 and arm64 round alike.
	s.ideal[i] = float64(a*e) + float64((1-a)*s.ideal[i])
}

// learnZeros is m observations of 0 (each down, by its confidence).
func (s *AdaptiveBreakerSet) learnZeros(i int, m int64) {
	for ; m > 0 && s.nobs[i] < s.lowConf; m-- { // at most lowConf of these, ever
		s.learn(i, 0)
	}
	if m <= 0 {
		return
	}
	if s.ideal[i] != 0 {
		s.ideal[i] *= math.Pow(1-semianHighDown, float64(m))
	}
	s.nobs[i] = uint32(min(int64(s.nobs[i])+m, math.MaxUint32))
}
