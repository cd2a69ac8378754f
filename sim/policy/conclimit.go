package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// A server's concurrency limit and its algorithms (overload-control.md
// §4): the limit (ConcurrencyLimit in a scenario) is how many requests the
// server may hold; its algorithm (LimitAlgorithm) moves it. A server admits a
// request iff the requests it holds are fewer than Limit(now); each
// request that leaves it feeds one sample to the algorithm: when it ended
// (now), how long it stayed (rtt), how many requests the server held
// (inflight) and whether it was dropped (a queue timeout, not served).
// Every algorithm is a pure state machine: time comes in as now, and the
// ones that draw (Vegas's probe jitter, Envoy's window jitter) take a
// uniform draw u in [0, 1) with every sample.

// LimitAlgorithm is the algorithm of a server's concurrency limit: what
// the server's admission (sim/admission) needs from it.
type LimitAlgorithm interface {
	// Limit is the limit in force at now.
	Limit(now int64) int
	// Sample feeds one completed (or dropped) request.
	Sample(now, rtt int64, inflight int, drop bool, u float64)
}

// ErrLimitAlgorithmSettings is wrapped by every constructor error of
// this file.
var ErrLimitAlgorithmSettings = errors.New("policy: bad concurrency limit algorithm settings")

func limitErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrLimitAlgorithmSettings}, a...)...)
}

// log10Root is Netflix concurrency-limits' Log10RootIntFunction:
// max(1, ⌊log10 L⌋) below 1000, ⌊log10 L⌋ above (1 for L ≤ 99, 2 for
// 100–999, 3 for 1000–9999).
func log10Root(l int) int {
	if l < 1 {
		return 1
	}
	return max(1, int(math.Log10(float64(l))))
}

// AIMDSettings configures an AIMD limit. Zero fields take the defaults
// of Netflix concurrency-limits' AIMDLimit (NCL limit/AIMDLimit.java):
// initial 20, min 20, max 200, backoff 0.9, timeout 5 s.
type AIMDSettings struct {
	Initial, Min, Max int
	Backoff           float64 // in [0.5, 1)
	Timeout           int64   // ns: an rtt above it counts as a drop
}

// AIMD is additive increase, multiplicative decrease (NCL AIMDLimit):
//
//	drop or rtt > timeout:   L = ⌊L · backoff⌋
//	else if 2·inflight ≥ L:  L = L + 1        (grow only when half used)
//	L = clamp(L, min, max)
//
// From L = 20: a sample with 10 in flight gives 21; a drop gives 18
// (with min ≤ 18).
type AIMD struct {
	s AIMDSettings
	l int
}

// NewAIMD is an AIMD limit; zero settings take the defaults.
func NewAIMD(s AIMDSettings) (*AIMD, error) {
	if s.Initial == 0 {
		s.Initial = 20
	}
	if s.Min == 0 {
		s.Min = 20
	}
	if s.Max == 0 {
		s.Max = 200
	}
	if s.Backoff == 0 {
		s.Backoff = 0.9
	}
	if s.Timeout == 0 {
		s.Timeout = 5e9
	}
	if s.Min < 1 || s.Max < s.Min || s.Initial < s.Min || s.Initial > s.Max {
		return nil, limitErr("aimd needs 1 <= min <= initial <= max, got min %d, initial %d, max %d", s.Min, s.Initial, s.Max)
	}
	if s.Backoff < 0.5 || s.Backoff >= 1 {
		return nil, limitErr("aimd backoff must be in [0.5, 1), got %g", s.Backoff)
	}
	if s.Timeout < 0 {
		return nil, limitErr("aimd timeout must be > 0, got %d ns", s.Timeout)
	}
	return &AIMD{s: s, l: s.Initial}, nil
}

// Limit is the current limit.
func (a *AIMD) Limit(int64) int { return a.l }

// Sample applies one sample.
func (a *AIMD) Sample(_, rtt int64, inflight int, drop bool, _ float64) {
	switch {
	case drop || rtt > a.s.Timeout:
		a.l = int(float64(a.l) * a.s.Backoff)
	case 2*inflight >= a.l:
		a.l++
	}
	a.l = min(max(a.l, a.s.Min), a.s.Max)
}

// VegasSettings configures a Vegas limit. Zero fields take NCL
// VegasLimit's defaults: initial 20, max 1000, smoothing 1, probe
// multiplier 30.
type VegasSettings struct {
	Initial, Max    int
	Smoothing       float64 // in (0, 1]
	ProbeMultiplier int
}

// Vegas is TCP Vegas's delay-based rule as NCL VegasLimit codes it, with
// f = log10Root(L):
//
//	every ≈ jitter·probeMultiplier·L samples (jitter ~ U[0.5, 1)): rttNoLoad = rtt
//	rtt < rttNoLoad (or none yet): rttNoLoad = rtt, no change
//	queue = ⌈L·(1 − rttNoLoad/rtt)⌉
//	drop: L − f;  2·inflight < L: no change;  queue ≤ f: L + 6f;
//	queue < 3f: L + f;  queue > 6f: L − f;  else no change
//	L = (1−smoothing)·L + smoothing·clamp(new, 1, max)
//
// From L = 20 with rttNoLoad 10 ms and 20 in flight: rtt 10 ms gives 26,
// rtt 20 ms (queue 10 > 6) gives 19.
type Vegas struct {
	s          VegasSettings
	l          float64
	rttNoLoad  int64
	probeCount int
	jitter     float64
}

// NewVegas is a Vegas limit; zero settings take the defaults.
func NewVegas(s VegasSettings) (*Vegas, error) {
	if s.Initial == 0 {
		s.Initial = 20
	}
	if s.Max == 0 {
		s.Max = 1000
	}
	if s.Smoothing == 0 {
		s.Smoothing = 1
	}
	if s.ProbeMultiplier == 0 {
		s.ProbeMultiplier = 30
	}
	if s.Initial < 1 || s.Max < s.Initial {
		return nil, limitErr("vegas needs 1 <= initial <= max, got initial %d, max %d", s.Initial, s.Max)
	}
	if s.Smoothing < 0 || s.Smoothing > 1 {
		return nil, limitErr("vegas smoothing must be in (0, 1], got %g", s.Smoothing)
	}
	if s.ProbeMultiplier < 1 {
		return nil, limitErr("vegas probe multiplier must be >= 1, got %d", s.ProbeMultiplier)
	}
	return &Vegas{s: s, l: float64(s.Initial)}, nil
}

// Limit is the current limit.
func (v *Vegas) Limit(int64) int { return int(v.l) }

// Sample applies one sample; u draws the probe jitter when one is due.
func (v *Vegas) Sample(_, rtt int64, inflight int, drop bool, u float64) {
	if v.jitter == 0 {
		v.jitter = 0.5 + 0.5*u
	}
	v.probeCount++
	if v.jitter*float64(v.s.ProbeMultiplier)*v.l <= float64(v.probeCount) {
		v.jitter, v.probeCount, v.rttNoLoad = 0.5+0.5*u, 0, rtt
		return
	}
	if v.rttNoLoad == 0 || rtt < v.rttNoLoad {
		v.rttNoLoad = rtt
		return
	}
	l := int(v.l)
	f := float64(log10Root(l))
	queue := math.Ceil(v.l * (1 - float64(v.rttNoLoad)/float64(rtt)))
	var next float64
	switch {
	case drop:
		next = v.l - f
	case float64(2*inflight) < v.l:
		return
	case queue <= f:
		next = v.l + 6*f
	case queue < 3*f:
		next = v.l + f
	case queue > 6*f:
		next = v.l - f
	default:
		return
	}
	next = math.Min(math.Max(next, 1), float64(v.s.Max))
	v.l = (1-v.s.Smoothing)*v.l + v.s.Smoothing*next
}

// Gradient2Settings configures a Gradient2 limit. Zero fields take NCL
// Gradient2Limit's defaults: initial 20, min 20, max 200, smoothing 0.2,
// queue size 4, long window 600, rtt tolerance 1.5.
type Gradient2Settings struct {
	Initial, Min, Max int
	Smoothing         float64
	QueueSize         int  // the constant headroom (4)
	SqrtQueue         bool // headroom √L instead (Netflix's write-up)
	LongWindow        int  // samples of the long-RTT average
	Tolerance         float64
	// QueueOnlyAtOne adds the headroom only while the gradient is 1: the
	// fix proposed in NCL PR #134 for the limit rising without end
	// behind a queue (overload-control.md §6.1).
	QueueOnlyAtOne bool
}

// Gradient2 is NCL Gradient2Limit: the ratio of a long RTT average to
// the latest RTT drives the limit.
//
//	long = EMA(rtt) over longWindow samples (plain mean of the first 10)
//	long/rtt > 2: long ×= 0.95
//	inflight < L/2: no change
//	g = clamp(tolerance · long/rtt, 0.5, 1)
//	L = clamp((1−smoothing)·L + smoothing·(L·g + queue), min, max)
//
// With g = 1 each sample adds smoothing·queue = 0.8; with g held at 0.8
// it converges to queue/(1 − g) = 20. Drops are not used (NCL issue
// #137).
type Gradient2 struct {
	s      Gradient2Settings
	l      float64
	long   float64
	nLong  int
	factor float64
}

// NewGradient2 is a Gradient2 limit; zero settings take the defaults.
func NewGradient2(s Gradient2Settings) (*Gradient2, error) {
	if s.Initial == 0 {
		s.Initial = 20
	}
	if s.Min == 0 {
		s.Min = 20
	}
	if s.Max == 0 {
		s.Max = 200
	}
	if s.Smoothing == 0 {
		s.Smoothing = 0.2
	}
	if s.QueueSize == 0 {
		s.QueueSize = 4
	}
	if s.LongWindow == 0 {
		s.LongWindow = 600
	}
	if s.Tolerance == 0 {
		s.Tolerance = 1.5
	}
	if s.Min < 1 || s.Max < s.Min || s.Initial < s.Min || s.Initial > s.Max {
		return nil, limitErr("gradient2 needs 1 <= min <= initial <= max, got min %d, initial %d, max %d", s.Min, s.Initial, s.Max)
	}
	if s.Smoothing < 0 || s.Smoothing > 1 {
		return nil, limitErr("gradient2 smoothing must be in (0, 1], got %g", s.Smoothing)
	}
	if s.Tolerance < 1 {
		return nil, limitErr("gradient2 rtt tolerance must be >= 1, got %g", s.Tolerance)
	}
	if s.QueueSize < 0 || s.LongWindow < 1 {
		return nil, limitErr("gradient2 needs queue size >= 0 and long window >= 1, got %d and %d", s.QueueSize, s.LongWindow)
	}
	return &Gradient2{s: s, l: float64(s.Initial), factor: 2 / float64(s.LongWindow+1)}, nil
}

// Limit is the current limit.
func (g *Gradient2) Limit(int64) int { return int(g.l) }

// LongRTT is the long RTT average, ns.
func (g *Gradient2) LongRTT() float64 { return g.long }

// Sample applies one sample (drop is ignored, as in NCL).
func (g *Gradient2) Sample(_, rtt int64, inflight int, _ bool, _ float64) {
	short := float64(rtt)
	if g.nLong < 10 { // ExpAvgMeasurement's warm-up: a plain mean
		g.nLong++
		g.long += (short - g.long) / float64(g.nLong)
	} else {
		g.long = g.long*(1-g.factor) + short*g.factor
	}
	if short > 0 && g.long/short > 2 {
		g.long *= 0.95
	}
	if float64(inflight) < g.l/2 {
		return
	}
	grad := 1.0
	if short > 0 {
		grad = math.Max(0.5, math.Min(1, g.s.Tolerance*g.long/short))
	}
	g.l = g.step(grad)
}

// step is the limit after a sample with gradient grad.
func (g *Gradient2) step(grad float64) float64 {
	q := float64(g.s.QueueSize)
	if g.s.SqrtQueue {
		q = math.Sqrt(g.l)
	}
	if g.s.QueueOnlyAtOne && grad < 1 {
		q = 0
	}
	next := g.l*grad + q
	next = g.l*(1-g.s.Smoothing) + next*g.s.Smoothing
	return math.Min(math.Max(next, float64(g.s.Min)), float64(g.s.Max))
}

// WindowSettings configures a Windowed wrapper. Zero fields take NCL
// WindowedLimit's defaults: windows of 1 s (2 × the window's minimum RTT,
// clamped to [MinWindow, MaxWindow]), at least 10 samples, samples under
// 100 µs ignored.
type WindowSettings struct {
	MinWindow, MaxWindow int64 // ns
	Size                 int   // samples a window needs to count
	MinRTT               int64 // ns: shorter samples are ignored
}

// Windowed is NCL WindowedLimit: it collects samples into windows and
// feeds the algorithm it wraps one sample per window: the average RTT,
// the largest inflight and whether any was dropped. A window closes at
// the first sample after its end; it counts only with Size samples.
type Windowed struct {
	s     WindowSettings
	inner LimitAlgorithm
	next  int64 // the current window ends after this
	sum   float64
	n     int
	minR  int64
	maxIF int
	drop  bool
}

// NewWindowed wraps inner; zero settings take the defaults.
func NewWindowed(inner LimitAlgorithm, s WindowSettings) (*Windowed, error) {
	if s.MinWindow == 0 {
		s.MinWindow = 1e9
	}
	if s.MaxWindow == 0 {
		s.MaxWindow = 1e9
	}
	if s.Size == 0 {
		s.Size = 10
	}
	if s.MinRTT == 0 {
		s.MinRTT = 100e3
	}
	if s.MinWindow < 0 || s.MaxWindow < s.MinWindow || s.Size < 1 || s.MinRTT < 0 {
		return nil, limitErr("window needs 0 <= min <= max and size >= 1, got min %d ns, max %d ns, size %d", s.MinWindow, s.MaxWindow, s.Size)
	}
	return &Windowed{s: s, inner: inner, minR: math.MaxInt64}, nil
}

// Limit is the wrapped algorithm's limit.
func (w *Windowed) Limit(now int64) int { return w.inner.Limit(now) }

// Sample adds one sample to the window, closing it if it is over.
func (w *Windowed) Sample(now, rtt int64, inflight int, drop bool, u float64) {
	if rtt < w.s.MinRTT {
		return
	}
	w.sum += float64(rtt)
	w.n++
	w.minR = min(w.minR, rtt)
	w.maxIF = max(w.maxIF, inflight)
	w.drop = w.drop || drop
	if now <= w.next {
		return
	}
	w.next = now + min(max(2*w.minR, w.s.MinWindow), w.s.MaxWindow)
	if w.n >= w.s.Size {
		w.inner.Sample(now, int64(w.sum/float64(w.n)), w.maxIF, w.drop, u)
	}
	w.sum, w.n, w.minR, w.maxIF, w.drop = 0, 0, math.MaxInt64, 0, false
}

// EnvoySettings configures Envoy's adaptive-concurrency gradient
// controller (ENVOY-AC-API). UpdateInterval and Interval have no default
// in Envoy; zero RequestCount, MinConcurrency, Percentile and MaxLimit
// take Envoy's 50, 3, p50 and 1000. Jitter and Buffer are used as given,
// as 0 is meaningful (Envoy's defaults are 15% and 25%, and the pinned
// controller's buffer is 0): DefaultEnvoySettings has them.
type EnvoySettings struct {
	UpdateInterval int64   // ns: concurrency_update_interval
	Interval       int64   // ns: min_rtt_calc_params.interval
	RequestCount   int     // samples that end a minRTT window
	Jitter         float64 // of Interval, added to the next window's start
	MinConcurrency int     // the probe limit and the floor
	Buffer         float64 // minRTT × (1 + buffer) is the target
	Percentile     float64 // sample_aggregate_percentile, in (0, 1]
	MaxLimit       int
	// CountEarly counts samples of requests sent before a minRTT window
	// began, the behaviour before Envoy PR #11579 (minRTT creep).
	CountEarly bool
}

// Envoy is Envoy's adaptive-concurrency gradient controller
// (overload-control.md §4.6):
//
//	a minRTT window: limit = min_concurrency until request_count samples,
//	  minRTT = their percentile; the limit returns to its value before;
//	  the next window starts interval + U[0, ⌈interval·jitter⌉) ms later
//	every update interval outside a window, with samples:
//	  g = clamp(minRTT·(1+buffer)/percentile(samples), 0.5, 2)
//	  L = clamp(⌊L·g + √(L·g)⌋, min_concurrency, max)
//	5 updates in a row at min_concurrency start a window at once
//
// From L = 3 with samples at minRTT: 5, 8, 13; then samples at 2.5 ×
// minRTT (g = 0.5): 9.
type Envoy struct {
	s        EnvoySettings
	limit    int
	deferred int // > 0: in a minRTT window
	epoch    int64
	samples  []int64
	minRTT   int64
	nextWin  int64 // when the next window starts (-1: none scheduled)
	nextTick int64
	consec   int
	started  bool
}

// DefaultEnvoySettings are Envoy's defaults with the two required
// intervals given.
func DefaultEnvoySettings(updateInterval, interval int64) EnvoySettings {
	return EnvoySettings{UpdateInterval: updateInterval, Interval: interval, RequestCount: 50, Jitter: 0.15,
		MinConcurrency: 3, Buffer: 0.25, Percentile: 0.5, MaxLimit: 1000}
}

// NewEnvoy is a gradient controller; zero settings take the defaults
// (UpdateInterval and Interval must be given).
func NewEnvoy(s EnvoySettings) (*Envoy, error) {
	if s.RequestCount == 0 {
		s.RequestCount = 50
	}
	if s.MinConcurrency == 0 {
		s.MinConcurrency = 3
	}
	if s.Percentile == 0 {
		s.Percentile = 0.5
	}
	if s.MaxLimit == 0 {
		s.MaxLimit = 1000
	}
	switch {
	case s.UpdateInterval <= 0 || s.Interval < 1e6:
		return nil, limitErr("envoy needs update_interval > 0 and interval >= 1ms, got %d ns and %d ns", s.UpdateInterval, s.Interval)
	case s.RequestCount < 1 || s.MinConcurrency < 1 || s.MaxLimit < s.MinConcurrency:
		return nil, limitErr("envoy needs request_count >= 1 and 1 <= min_concurrency <= max, got %d, %d, %d", s.RequestCount, s.MinConcurrency, s.MaxLimit)
	case s.Jitter < 0 || s.Buffer < 0 || s.Percentile <= 0 || s.Percentile > 1:
		return nil, limitErr("envoy needs jitter >= 0, buffer >= 0 and percentile in (0, 1], got %g, %g, %g", s.Jitter, s.Buffer, s.Percentile)
	}
	return &Envoy{s: s, limit: s.MinConcurrency, nextWin: -1}, nil
}

// MinRTT is the latest measured minRTT, ns (0 before the first window
// ends).
func (e *Envoy) MinRTT() int64 { return e.minRTT }

// InWindow reports whether a minRTT window is in progress.
func (e *Envoy) InWindow() bool { return e.deferred > 0 }

// Limit is the limit at now (after the updates due by then).
func (e *Envoy) Limit(now int64) int {
	e.advance(now)
	return e.limit
}

// Sample records the latency of a request that completes at now.
func (e *Envoy) Sample(now, rtt int64, _ int, _ bool, u float64) {
	e.advance(now)
	if !e.s.CountEarly && now-rtt < e.epoch {
		return // sent before the window began (Envoy PR #11579)
	}
	e.samples = append(e.samples, rtt)
	if e.deferred > 0 && len(e.samples) >= e.s.RequestCount {
		e.minRTT = e.aggregate()
		e.set(now, e.deferred) // still in the window, as Envoy's updateMinRTT
		e.deferred = 0
		ms := int64(1e6)
		wait := e.s.Interval
		if r := int64(math.Ceil(float64(e.s.Interval/ms) * e.s.Jitter)); r > 0 {
			wait += int64(u*float64(r)) * ms
		}
		e.nextWin = now + wait
		e.nextTick = now + e.s.UpdateInterval
	}
}

// advance runs the controller's timers due by now, in time order.
func (e *Envoy) advance(now int64) {
	if !e.started {
		e.started = true
		e.enter(now)
		e.nextTick = now + e.s.UpdateInterval
	}
	for e.deferred == 0 {
		if e.nextWin >= 0 && e.nextWin <= now && e.nextWin <= e.nextTick {
			at := e.nextWin
			e.nextWin = -1
			e.enter(at)
			return
		}
		if e.nextTick > now {
			return
		}
		at := e.nextTick
		e.nextTick += e.s.UpdateInterval
		if len(e.samples) == 0 {
			continue
		}
		sample := e.aggregate()
		g := math.Max(0.5, math.Min(2, float64(e.minRTT)*(1+e.s.Buffer)/float64(sample)))
		x := float64(e.limit) * g
		e.set(at, min(max(int(x+math.Sqrt(x)), e.s.MinConcurrency), e.s.MaxLimit))
	}
}

// enter starts a minRTT window at now (no-op in one).
func (e *Envoy) enter(now int64) {
	if e.deferred > 0 {
		return
	}
	e.deferred = e.limit
	e.set(now, e.s.MinConcurrency)
	e.samples = e.samples[:0]
	e.epoch = now
}

// set is Envoy's updateConcurrencyLimit: five settings in a row at the
// floor, outside a window, start a window at once.
func (e *Envoy) set(now int64, v int) {
	if e.deferred == 0 && e.limit == e.s.MinConcurrency && v == e.s.MinConcurrency {
		e.consec++
	} else {
		e.consec = 0
	}
	e.limit = v
	if e.consec >= 5 {
		e.consec = 0
		e.enter(now)
	}
}

// aggregate is the configured percentile of the samples (linear
// interpolation between order statistics), which it clears.
func (e *Envoy) aggregate() int64 {
	slices.Sort(e.samples)
	pos := e.s.Percentile * float64(len(e.samples)-1)
	i := int(pos)
	v := float64(e.samples[i])
	if i+1 < len(e.samples) {
		v += (pos - float64(i)) * float64(e.samples[i+1]-e.samples[i])
	}
	e.samples = e.samples[:0]
	return int64(v)
}
