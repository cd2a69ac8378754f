package policy

import (
	"math"
	"slices"
)

// failsafe-go's adaptive limiter (package adaptivelimiter; the source is
// code and the failsafe-go.dev "Adaptive Limiter" page, not a paper): a
// Vegas-like threshold on the queue a window's RTT quantile implies,
// against a baseline average of earlier windows, with two correlation
// checks that stop the limit rising while throughput does not follow,
// and optional queueing that rejects gradually once the queue passes a
// multiple of the limit.

// failsafeWarmup is the number of values the smoothed and baseline
// averages (and the correlation windows) take as a plain mean before they
// decay (adaptivelimiter's warmupSamples).
const failsafeWarmup = 10

// failsafeMedian is the median filter's width (smoothedSamples), also the
// smoothed recent RTT's window.
const failsafeMedian = 5

// FailsafeSettings configures a Failsafe limit. Zero fields take
// adaptivelimiter.NewBuilder's defaults: limits 1, 200, initial 20; max
// limit factor 5; recent window 1 s to 30 s with at least 50 samples,
// its p90; baseline window age 10; correlation window 50.
type FailsafeSettings struct {
	Initial, Min, Max int
	// MaxLimitFactor caps the limit at this multiple of the window's
	// largest inflight (a larger new limit is a decrease instead).
	MaxLimitFactor float64
	// MinWindow and MaxWindow (ns) bound a recent window: it closes at the
	// first sample after max(2·its minimum RTT, MinWindow), capped at
	// MaxWindow, that finds MinSamples samples in it.
	MinWindow, MaxWindow int64
	MinSamples           int
	Quantile             float64 // of the window's RTTs, in (0, 1]
	BaselineAge          int     // the baseline EWMA's window (2/(age+1))
	CorrelationWindow    int     // values in each correlation window
}

// Failsafe is failsafe-go's adaptive limiter (adaptivelimiter.go,
// record and updateLimit). Each completed request adds its RTT to the
// recent window (a dropped one adds nothing but can close the window);
// when the window closes:
//
//	recent   = EMA5(median5(quantile(window)))   (plain mean of the first 10)
//	baseline = EMA_age(recent)                    (plain mean of the first 10)
//	queue    = ⌈L·(1 − baseline/recent)⌉;  f = 1 below L = 100, 2 below 1000, ⌊log10 L⌋ above
//	thrpt    = maxInflight / recent;  corrT, cvT = corr(inflight, thrpt), CV(thrpt);  corrR = corr(inflight, recent)
//	decrease (L − f) if queue > 6f, or if full and (corrT < 0, or corrT < 0.3 and corrR > 0.5,
//	  or cvT < 0.2 and corrR > 0.5); else increase (L + f) if queue < 3f; else hold
//	a new limit above maxLimitFactor·maxInflight is L − f instead; clamp to [min, max]
//
// "full" is the limiter's semaphore being full as the request leaves: here
// the requests held (counting the one leaving) are at least the limit.
// The window's inflight is the requests held as each leaves (failsafe-go
// records the in-flight count when the permit was acquired). The
// window's quantile is exact (failsafe-go uses a t-digest).
//
// From L = 20 with a baseline of ten 1 s values and one-sample windows
// (failsafe-go's TestAdaptiveLimiter_record): 1 s then 500 ms at 5 in
// flight give 21, 22; 2 s twice at 10 give 19, 18; 1.3 s twice give 20, 20.
type Failsafe struct {
	s FailsafeSettings
	l float64

	win         []int64 // the recent window's RTTs
	minRTT      int64
	maxInflight int
	next        int64 // the window may close after this

	med    [failsafeMedian]float64
	medI   int
	medN   int
	smooth ewma
	base   ewma
	tput   corrWindow
	rtt    corrWindow
}

// NewFailsafe is a failsafe-go adaptive limit; zero settings take the
// defaults.
func NewFailsafe(s FailsafeSettings) (*Failsafe, error) {
	if s.Initial == 0 {
		s.Initial = 20
	}
	if s.Min == 0 {
		s.Min = 1
	}
	if s.Max == 0 {
		s.Max = 200
	}
	if s.MaxLimitFactor == 0 {
		s.MaxLimitFactor = 5
	}
	if s.MinWindow == 0 {
		s.MinWindow = 1e9
	}
	if s.MaxWindow == 0 {
		s.MaxWindow = 30e9
	}
	if s.MinSamples == 0 {
		s.MinSamples = 50
	}
	if s.Quantile == 0 {
		s.Quantile = 0.9
	}
	if s.BaselineAge == 0 {
		s.BaselineAge = 10
	}
	if s.CorrelationWindow == 0 {
		s.CorrelationWindow = 50
	}
	switch {
	case s.Min < 1 || s.Max < s.Min || s.Initial < s.Min || s.Initial > s.Max:
		return nil, limitErr("failsafe needs 1 <= min <= initial <= max, got min %d, initial %d, max %d", s.Min, s.Initial, s.Max)
	case s.MaxLimitFactor < 1:
		return nil, limitErr("failsafe max limit factor must be >= 1, got %g", s.MaxLimitFactor)
	case s.MinWindow < 0 || s.MaxWindow < s.MinWindow || s.MinSamples < 1:
		return nil, limitErr("failsafe recent window needs 0 <= min <= max and min samples >= 1, got %d ns, %d ns, %d", s.MinWindow, s.MaxWindow, s.MinSamples)
	case s.Quantile <= 0 || s.Quantile > 1:
		return nil, limitErr("failsafe quantile must be in (0, 1], got %g", s.Quantile)
	case s.BaselineAge < 1 || s.CorrelationWindow < 2:
		return nil, limitErr("failsafe needs baseline age >= 1 and correlation window >= 2, got %d and %d", s.BaselineAge, s.CorrelationWindow)
	}
	return &Failsafe{s: s, l: float64(s.Initial),
		smooth: newEWMA(failsafeMedian), base: newEWMA(s.BaselineAge),
		tput: newCorrWindow(s.CorrelationWindow), rtt: newCorrWindow(s.CorrelationWindow)}, nil
}

// Limit is the current limit.
func (f *Failsafe) Limit(int64) int { return int(f.l) }

// Baseline is the baseline RTT average, ns (0 before the first window
// closes).
func (f *Failsafe) Baseline() float64 { return f.base.v }

// Sample records one request that leaves at now after rtt, with inflight
// requests held counting it; a dropped one is not added to the window.
func (f *Failsafe) Sample(now, rtt int64, inflight int, drop bool, _ float64) {
	if !drop {
		if len(f.win) == 0 {
			f.minRTT, f.maxInflight = rtt, inflight
		} else {
			f.minRTT, f.maxInflight = min(f.minRTT, rtt), max(f.maxInflight, inflight)
		}
		f.win = append(f.win, rtt)
	}
	if now <= f.next || len(f.win) < f.s.MinSamples {
		return
	}
	q := f.quantile()
	f.update(f.smooth.add(f.median(q)), f.maxInflight, inflight >= int(f.l))
	f.next = now + min(max(2*f.minRTT, f.s.MinWindow), f.s.MaxWindow)
	f.win, f.minRTT, f.maxInflight = f.win[:0], 0, 0
}

// quantile is the window's Quantile (linear interpolation between order
// statistics).
func (f *Failsafe) quantile() float64 {
	slices.Sort(f.win)
	pos := f.s.Quantile * float64(len(f.win)-1)
	i := int(pos)
	v := float64(f.win[i])
	if i+1 < len(f.win) {
		v += (pos - float64(i)) * float64(f.win[i+1]-f.win[i])
	}
	return v
}

// median is util.MedianFilter(5): the value itself for the first four,
// then the median of the last five.
func (f *Failsafe) median(v float64) float64 {
	f.med[f.medI] = v
	f.medI = (f.medI + 1) % failsafeMedian
	if f.medN < failsafeMedian-1 {
		f.medN++
		return v
	}
	s := f.med
	slices.Sort(s[:])
	return s[failsafeMedian/2]
}

// update is updateLimit with the smoothed recent RTT, the window's
// largest inflight and whether the limiter is full.
func (f *Failsafe) update(recent float64, inflight int, full bool) {
	if recent <= 0 {
		return // no time to compare: int(Ceil(l·(1 − baseline/0))) is undefined in Go, inflight/0 infinite
	}
	baseline := f.base.add(recent)
	queue := int(math.Ceil(f.l * (1 - baseline/recent)))
	thrpt := float64(inflight) / (recent / 1e9)
	corrT, _, cvT := f.tput.add(float64(inflight), thrpt)
	corrR, _, _ := f.rtt.add(float64(inflight), recent)
	step := float64(log10Step(int(f.l)))
	next := f.l
	switch {
	case queue > 6*int(step),
		full && corrT < 0,
		full && corrT < 0.3 && corrR > 0.5,
		full && cvT < 0.2 && corrR > 0.5:
		next = f.l - step
	case queue < 3*int(step):
		next = f.l + step
	}
	if next > float64(inflight)*f.s.MaxLimitFactor {
		next = f.l - step
	}
	f.l = math.Min(math.Max(next, float64(f.s.Min)), float64(f.s.Max))
}

// log10Step is failsafe-go's Log10Func(1): 1 below 100, 2 below 1000,
// ⌊log10 L⌋ above.
func log10Step(l int) int {
	switch {
	case l < 100:
		return 1
	case l < 1000:
		return 2
	}
	return int(math.Log10(float64(l)))
}

// ewma is util.NewEwma(window, 10): a plain mean of the first ten values,
// then v = v·(1−a) + x·a with a = 2/(window+1).
type ewma struct {
	a, v, sum float64
	n         int
}

func newEWMA(window int) ewma { return ewma{a: 2 / (float64(window) + 1)} }

func (e *ewma) add(x float64) float64 {
	if e.n < failsafeWarmup {
		e.n++
		e.sum += x
		e.v = e.sum / float64(e.n)
	} else {
		e.v = e.v*(1-e.a) + x*e.a
	}
	return e.v
}

// rollingSum is util.RollingSum without the regression: a ring of the
// last values (a 0 is not added), their sum and sum of squares.
type rollingSum struct {
	v          []float64
	n, i       int
	sum, sumSq float64
}

func (r *rollingSum) add(x float64) (old float64, full bool) {
	if x == 0 {
		return 0, false
	}
	if r.n == len(r.v) {
		full, old = true, r.v[r.i]
		r.sum -= old
		r.sumSq -= old * old
	} else {
		r.n++
	}
	r.v[r.i] = x
	r.sum += x
	r.sumSq += x * x
	r.i = (r.i + 1) % len(r.v)
	return old, full
}

// cv is the coefficient of variation, mean and variance (NaN with fewer
// than 2 values, a negative variance or a zero mean).
func (r *rollingSum) cv() (cv, mean, variance float64) {
	if r.n < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean = r.sum / float64(r.n)
	variance = r.sumSq/float64(r.n) - mean*mean
	if variance < 0 || mean == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return math.Sqrt(variance) / mean, mean, variance
}

// corrWindow is util.CorrelationWindow: Pearson's correlation of the last
// x and y values; 0 before 10 values or when either varies by less than
// 1% (CV).
type corrWindow struct {
	x, y  rollingSum
	sumXY float64
}

func newCorrWindow(n int) corrWindow {
	return corrWindow{x: rollingSum{v: make([]float64, n)}, y: rollingSum{v: make([]float64, n)}}
}

func (w *corrWindow) add(x, y float64) (corr, cvX, cvY float64) {
	oldX, full := w.x.add(x)
	oldY, _ := w.y.add(y)
	cvX, meanX, varX := w.x.cv()
	cvY, meanY, varY := w.y.cv()
	if full {
		w.sumXY -= oldX * oldY
	}
	w.sumXY += x * y
	if math.IsNaN(cvX) || math.IsNaN(cvY) || w.x.n < failsafeWarmup {
		return 0, 0, 0
	}
	if cvX < 0.01 || cvY < 0.01 {
		return 0, cvX, cvY
	}
	cov := w.sumXY/float64(w.x.n) - meanX*meanY
	return cov / (math.Sqrt(varX) * math.Sqrt(varY)), cvX, cvY
}

// FailsafeQueueRejection is the rejection rate of failsafe-go's queueing
// limiter (queueinglimiter.go, queueStats.ComputeRejectionRate) with
// queued requests waiting beyond a limit of limit:
//
//	thr = ⌊limit·initial⌋, top = ⌊limit·max⌋
//	queued < thr: 0;  queued ≥ top: 1;  else (queued − thr)/(top − thr)
//
// A request that finds the limit full is rejected when the rate is 1 or
// at least a uniform draw. failsafe-go.dev's example: limit 10, factors
// 2 and 3: 20 may queue before rejections begin, all are rejected from 30.
func FailsafeQueueRejection(queued, limit int, initial, max float64) float64 {
	thr, top := int(float64(limit)*initial), int(float64(limit)*max)
	switch {
	case queued < thr:
		return 0
	case queued >= top:
		return 1
	}
	return float64(queued-thr) / float64(top-thr)
}

// FailsafeLatencyRejection is the rejection rate of failsafe-go's latency
// limiter (latencylimiter.go, computeRejectionRate; an experimental
// branch of the package) for a request whose estimated RTT is rtt:
//
//	max ≤ threshold: 1;  else clamp((rtt − threshold)/(max − threshold), 0, 1)
//
// The estimate (adaptiveLimiter.estimateRTT) is the batches of the
// limit the waiting requests and this one make, times the average RTT:
// ⌈(queued+1)/limit⌉ · avg (0 while there is no average). failsafe-go's
// TestComputeRejectionRate: threshold 100 ms, max 500 ms: 50 ms → 0,
// 100 ms → 0, 200 ms → 0.25, 500 ms → 1, 600 ms → 1.
func FailsafeLatencyRejection(rtt, threshold, max int64) float64 {
	if max <= threshold {
		return 1
	}
	return math.Max(0, math.Min(1, float64(rtt-threshold)/float64(max-threshold)))
}

// FailsafeEstimateRTT is adaptiveLimiter.estimateRTT: ⌈(queued+1)/limit⌉
// batches of avg ns each.
func FailsafeEstimateRTT(queued, limit int, avg float64) int64 {
	limit = max(limit, 1)
	batches := (queued + 1 + limit - 1) / limit
	return int64(float64(batches) * avg)
}

// FailsafePrioritizer is failsafe-go's Prioritizer for one prioritised
// adaptive limiter (priority.BasePrioritizer with adaptivelimiter's
// queue strategy; prioritylimiter.go): every Interval it calibrates a
// rejection rate from the limiter's queue (FailsafeQueueRejection) and a
// threshold, the level at that quantile of the levels of the last Window
// admitted requests (windowedLevelTracker.GetLevel; 0 when the rate is
// 0). A request that finds the limit full is refused when the queue
// beyond the limit has reached ⌊L·max⌋, else admitted iff its level is
// at least the threshold. Levels are 0..Levels−1, higher more important.
type FailsafePrioritizer struct {
	interval int64
	next     int64
	win      []int // the levels of the last admitted requests, a ring
	head     int
	filled   bool
	counts   []int
	thresh   int
	rate     float64
}

// NewFailsafePrioritizer calibrates every interval ns over the levels
// of the last window admissions, levels in 0..levels−1.
func NewFailsafePrioritizer(interval int64, window, levels int) (*FailsafePrioritizer, error) {
	if interval <= 0 || window < 1 || levels < 1 {
		return nil, limitErr("failsafe prioritizer needs interval > 0, window >= 1 and levels >= 1, got %d ns, %d, %d", interval, window, levels)
	}
	return &FailsafePrioritizer{interval: interval, win: make([]int, window), counts: make([]int, levels)}, nil
}

// Record adds the level of an admitted request.
func (p *FailsafePrioritizer) Record(level int) {
	if p.filled {
		p.counts[p.win[p.head]]--
	}
	p.win[p.head] = level
	p.counts[level]++
	if p.head++; p.head == len(p.win) {
		p.head, p.filled = 0, true
	}
}

// Level is windowedLevelTracker.GetLevel: the least level whose
// cumulative count reaches max(1, ⌈n·q⌉) of the n recorded (0 with none).
func (p *FailsafePrioritizer) Level(q float64) int {
	n := p.head
	if p.filled {
		n = len(p.win)
	}
	if n == 0 {
		return 0
	}
	target := max(1, int(math.Ceil(float64(n)*q)))
	c := 0
	for lv, k := range p.counts {
		if c += k; c >= target {
			return lv
		}
	}
	return 0
}

// Calibrate runs the calibrations due by now with the limiter's queue
// beyond its limit (queued) and its limit l: the queue as it is at the
// first decision after each calibration time stands for the queue then.
func (p *FailsafePrioritizer) Calibrate(now int64, queued, l int, initial, max float64) {
	if now < p.next {
		return
	}
	p.next = now - (now-p.next)%p.interval + p.interval
	p.rate = FailsafeQueueRejection(queued, l, initial, max)
	p.thresh = 0
	if p.rate > 0 {
		p.thresh = p.Level(p.rate)
	}
}

// Threshold is the rejection threshold: levels below it are refused
// while the limit is full.
func (p *FailsafePrioritizer) Threshold() int { return p.thresh }
