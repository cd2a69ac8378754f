package scenario

import (
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// LimiterKind is backend.concurrency_limit.kind.
type LimiterKind string

// Adaptive concurrency limiters (overload-control.md §4).
const (
	LimiterAIMD      LimiterKind = "aimd"      // Netflix concurrency-limits AIMDLimit
	LimiterVegas     LimiterKind = "vegas"     // Netflix concurrency-limits VegasLimit
	LimiterGradient2 LimiterKind = "gradient2" // Netflix concurrency-limits Gradient2Limit
	LimiterEnvoy     LimiterKind = "envoy"     // Envoy adaptive concurrency, gradient controller
	LimiterFailsafe  LimiterKind = "failsafe"  // failsafe-go adaptivelimiter (with optional queueing)
)

// Names lists the valid limiter kinds.
func (LimiterKind) Names() []string {
	return []string{"aimd", "vegas", "gradient2", "envoy", "failsafe"}
}

// ConcurrencyLimit is an adaptive concurrency limit in front of a
// backend's (or a service replica's) queue and workers: a request that
// finds as many requests held (queued or in service) as the limit is
// rejected at once, at the price of a rejection (reject_cost,
// retry_after). Every request that leaves the server feeds the limit its
// time in the server; one whose queue timeout or CoDel dropped it counts
// as a drop. Zero fields take the kind's defaults, written back into the
// resolved scenario.
type ConcurrencyLimit struct {
	Kind LimiterKind `yaml:"kind" json:"kind"`
	// Initial, Min and Max bound the limit (envoy: Min is min_concurrency,
	// the probe limit and floor; Max is max_concurrency_limit; it starts
	// at Min).
	Initial int `yaml:"initial" json:"initial,omitempty"`
	Min     int `yaml:"min" json:"min"`
	Max     int `yaml:"max" json:"max"`
	// aimd: the multiplicative decrease and the RTT that counts as a drop.
	Backoff float64  `yaml:"backoff" json:"backoff,omitempty"`
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// vegas, gradient2: the weight of a new value.
	Smoothing float64 `yaml:"smoothing" json:"smoothing,omitempty"`
	// vegas: rttNoLoad is re-measured every ≈ probe_multiplier·L samples.
	ProbeMultiplier int `yaml:"probe_multiplier" json:"probe_multiplier,omitempty"`
	// gradient2: the headroom (queue_size, or √L with sqrt_queue), the
	// long RTT average's window in samples, the RTT tolerance, and
	// queue_only_at_one (headroom only while the gradient is 1: the fix
	// proposed in Netflix concurrency-limits PR #134).
	QueueSize      int     `yaml:"queue_size" json:"queue_size,omitempty"`
	SqrtQueue      bool    `yaml:"sqrt_queue" json:"sqrt_queue,omitempty"`
	LongWindow     int     `yaml:"long_window" json:"long_window,omitempty"`
	Tolerance      float64 `yaml:"tolerance" json:"tolerance,omitempty"`
	QueueOnlyAtOne bool    `yaml:"queue_only_at_one" json:"queue_only_at_one,omitempty"`
	// Window (aimd, vegas, gradient2) feeds the limit one sample per
	// window (WindowedLimit: average RTT, max inflight, any drop), windows
	// of 2 × their minimum RTT clamped to [min_window, max_window], that
	// count with window_size samples.
	Window     bool     `yaml:"window" json:"window,omitempty"`
	WindowSize int      `yaml:"window_size" json:"window_size,omitempty"`
	MinWindow  Duration `yaml:"min_window" json:"min_window,omitempty"`
	MaxWindow  Duration `yaml:"max_window" json:"max_window,omitempty"`
	// envoy: concurrency_update_interval; the minRTT window's interval,
	// request_count, jitter (a fraction of interval), buffer and the
	// sample percentile; count_early counts samples of requests sent
	// before a minRTT window began (Envoy before PR #11579).
	UpdateInterval Duration `yaml:"update_interval" json:"update_interval,omitempty"`
	Interval       Duration `yaml:"interval" json:"interval,omitempty"`
	RequestCount   int      `yaml:"request_count" json:"request_count,omitempty"`
	Jitter         *float64 `yaml:"jitter" json:"jitter,omitempty"`
	Buffer         *float64 `yaml:"buffer" json:"buffer,omitempty"`
	Percentile     float64  `yaml:"percentile" json:"percentile,omitempty"`
	CountEarly     bool     `yaml:"count_early" json:"count_early,omitempty"`
	// failsafe (failsafe-go's adaptive limiter; its recent window is
	// min_window..max_window with window_size samples, its quantile
	// percentile): the cap on the limit as a multiple of the window's
	// largest inflight, the baseline average's age and the correlation
	// windows' length in windows.
	MaxLimitFactor    float64 `yaml:"max_limit_factor" json:"max_limit_factor,omitempty"`
	BaselineWindow    int     `yaml:"baseline_window" json:"baseline_window,omitempty"`
	CorrelationWindow int     `yaml:"correlation_window" json:"correlation_window,omitempty"`
	// failsafe queueing (WithQueueing; off when both are 0): a request
	// that finds the limit full is still admitted while the requests held
	// beyond the limit are fewer than initial_rejection_factor × the limit,
	// rejected with a probability rising linearly to 1 at
	// max_rejection_factor × the limit.
	InitialRejectionFactor float64 `yaml:"initial_rejection_factor" json:"initial_rejection_factor,omitempty"`
	MaxRejectionFactor     float64 `yaml:"max_rejection_factor" json:"max_rejection_factor,omitempty"`
	// failsafe latency queueing (the latency limiter; off when
	// max_execution_time is 0, exclusive with the factors): a request that
	// finds the limit full has an estimated RTT of ⌈(held beyond the
	// limit + 1)/limit⌉ × the baseline RTT, and is rejected with a
	// probability rising linearly from 0 at rejection_threshold to 1 at
	// max_execution_time.
	RejectionThreshold Duration `yaml:"rejection_threshold" json:"rejection_threshold,omitempty"`
	MaxExecutionTime   Duration `yaml:"max_execution_time" json:"max_execution_time,omitempty"`
	// failsafe prioritised limiter (BuildPrioritized; queueing defaults
	// to factors 2 and 3): when the limit is full, a request whose level
	// (its business priority's class of 100 levels, drawn at random within
	// it; clients.priority) is below the prioritizer's threshold is
	// refused. The threshold is calibrated every calibration_interval: the
	// level at the quantile of the queue's rejection rate among the
	// levels of the last level_window admitted requests.
	Prioritized         bool     `yaml:"prioritized" json:"prioritized,omitempty"`
	CalibrationInterval Duration `yaml:"calibration_interval" json:"calibration_interval,omitempty"`
	LevelWindow         int      `yaml:"level_window" json:"level_window,omitempty"`
}

func (c *ConcurrencyLimit) setDefaults() { *c = ConcurrencyLimit{} }

// resolve fills c's zero fields with its kind's defaults (Netflix
// concurrency-limits and Envoy, overload-control.md §4; Envoy's two
// required intervals take the filter documentation's example, 100 ms and
// 60 s).
func (c *ConcurrencyLimit) resolve() {
	if c == nil {
		return
	}
	def := func(dst *int, v int) {
		if *dst == 0 {
			*dst = v
		}
	}
	deff := func(dst *float64, v float64) {
		if *dst == 0 {
			*dst = v
		}
	}
	switch c.Kind {
	case LimiterAIMD:
		def(&c.Initial, 20)
		def(&c.Min, 20)
		def(&c.Max, 200)
		deff(&c.Backoff, 0.9)
		if c.Timeout == 0 {
			c.Timeout = Duration(5 * time.Second)
		}
	case LimiterVegas:
		def(&c.Initial, 20)
		def(&c.Min, 1)
		def(&c.Max, 1000)
		deff(&c.Smoothing, 1)
		def(&c.ProbeMultiplier, 30)
	case LimiterGradient2:
		def(&c.Initial, 20)
		def(&c.Min, 20)
		def(&c.Max, 200)
		deff(&c.Smoothing, 0.2)
		def(&c.QueueSize, 4)
		def(&c.LongWindow, 600)
		deff(&c.Tolerance, 1.5)
	case LimiterEnvoy:
		d := policy.DefaultEnvoySettings(int64(100*time.Millisecond), int64(time.Minute))
		def(&c.Min, d.MinConcurrency)
		def(&c.Max, d.MaxLimit)
		def(&c.RequestCount, d.RequestCount)
		deff(&c.Percentile, d.Percentile)
		if c.UpdateInterval == 0 {
			c.UpdateInterval = Duration(d.UpdateInterval)
		}
		if c.Interval == 0 {
			c.Interval = Duration(d.Interval)
		}
		if c.Jitter == nil {
			c.Jitter = &d.Jitter
		}
		if c.Buffer == nil {
			c.Buffer = &d.Buffer
		}
	case LimiterFailsafe:
		def(&c.Initial, 20)
		def(&c.Min, 1)
		def(&c.Max, 200)
		deff(&c.MaxLimitFactor, 5)
		def(&c.WindowSize, 50)
		deff(&c.Percentile, 0.9)
		def(&c.BaselineWindow, 10)
		def(&c.CorrelationWindow, 50)
		if c.MinWindow == 0 {
			c.MinWindow = Duration(time.Second)
		}
		if c.MaxWindow == 0 {
			c.MaxWindow = Duration(30 * time.Second)
		}
		if c.Prioritized {
			if c.InitialRejectionFactor == 0 && c.MaxRejectionFactor == 0 && c.MaxExecutionTime == 0 {
				c.InitialRejectionFactor, c.MaxRejectionFactor = 2, 3
			}
			if c.CalibrationInterval == 0 {
				c.CalibrationInterval = Duration(time.Second)
			}
			def(&c.LevelWindow, 1000)
		}
	}
	if c.Window {
		def(&c.WindowSize, 10)
		if c.MinWindow == 0 {
			c.MinWindow = Duration(time.Second)
		}
		if c.MaxWindow == 0 {
			c.MaxWindow = Duration(time.Second)
		}
	}
}

// Algorithm builds the limit c describes (c resolved).
func (c *ConcurrencyLimit) Algorithm() (policy.LimitAlgorithm, error) {
	var a policy.LimitAlgorithm
	var err error
	switch c.Kind {
	case LimiterAIMD:
		a, err = policy.NewAIMD(policy.AIMDSettings{Initial: c.Initial, Min: c.Min, Max: c.Max, Backoff: c.Backoff, Timeout: int64(c.Timeout)})
	case LimiterVegas:
		a, err = policy.NewVegas(policy.VegasSettings{Initial: c.Initial, Max: c.Max, Smoothing: c.Smoothing, ProbeMultiplier: c.ProbeMultiplier})
	case LimiterGradient2:
		a, err = policy.NewGradient2(policy.Gradient2Settings{Initial: c.Initial, Min: c.Min, Max: c.Max, Smoothing: c.Smoothing,
			QueueSize: c.QueueSize, SqrtQueue: c.SqrtQueue, LongWindow: c.LongWindow, Tolerance: c.Tolerance, QueueOnlyAtOne: c.QueueOnlyAtOne})
	case LimiterEnvoy:
		var j, b float64
		if c.Jitter != nil {
			j = *c.Jitter
		}
		if c.Buffer != nil {
			b = *c.Buffer
		}
		return policy.NewEnvoy(policy.EnvoySettings{UpdateInterval: int64(c.UpdateInterval), Interval: int64(c.Interval),
			RequestCount: c.RequestCount, Jitter: j, MinConcurrency: c.Min, Buffer: b, Percentile: c.Percentile,
			MaxLimit: c.Max, CountEarly: c.CountEarly})
	case LimiterFailsafe:
		return policy.NewFailsafe(policy.FailsafeSettings{Initial: c.Initial, Min: c.Min, Max: c.Max,
			MaxLimitFactor: c.MaxLimitFactor, MinWindow: int64(c.MinWindow), MaxWindow: int64(c.MaxWindow),
			MinSamples: c.WindowSize, Quantile: c.Percentile, BaselineAge: c.BaselineWindow, CorrelationWindow: c.CorrelationWindow})
	default:
		return nil, policy.ErrLimitAlgorithmSettings
	}
	if err != nil || !c.Window {
		return a, err
	}
	return policy.NewWindowed(a, policy.WindowSettings{MinWindow: int64(c.MinWindow), MaxWindow: int64(c.MaxWindow), Size: c.WindowSize})
}

// concurrencyLimit checks backend p's concurrency_limit.
func (v *validator) concurrencyLimit(p string, c *ConcurrencyLimit) {
	if c == nil {
		return
	}
	p += ".concurrency_limit"
	if c.Kind == "" {
		v.check(false, p+".kind", "is required: one of aimd, vegas, gradient2, envoy, failsafe")
		return
	}
	// Resolved already when the file decoded; not when decoding failed
	// elsewhere, and then the kind's defaults still apply.
	r := *c
	r.resolve()
	c = &r
	before := len(v.errs)
	v.check(c.Min >= 1, p+".min", "must be >= 1, got %d", c.Min)
	v.check(c.Max >= c.Min, p+".max", "must be >= min (%d), got %d", c.Min, c.Max)
	if c.Kind != LimiterEnvoy {
		v.check(c.Initial >= c.Min && c.Initial <= c.Max, p+".initial", "must be in min..max (%d..%d), got %d", c.Min, c.Max, c.Initial)
	}
	switch c.Kind {
	case LimiterAIMD:
		v.check(c.Backoff >= 0.5 && c.Backoff < 1, p+".backoff", "must be in [0.5, 1), got %g", c.Backoff)
		v.check(c.Timeout > 0, p+".timeout", "must be > 0, got %s", c.Timeout)
	case LimiterVegas, LimiterGradient2:
		v.check(c.Smoothing > 0 && c.Smoothing <= 1, p+".smoothing", "must be in (0, 1], got %g", c.Smoothing)
		v.check(c.ProbeMultiplier >= 0, p+".probe_multiplier", "must be >= 1, got %d", c.ProbeMultiplier)
		v.check(c.Tolerance == 0 || c.Tolerance >= 1, p+".tolerance", "must be >= 1, got %g", c.Tolerance)
		v.check(c.QueueSize >= 0, p+".queue_size", "must be >= 0, got %d", c.QueueSize)
		v.check(c.LongWindow >= 0, p+".long_window", "must be >= 1, got %d", c.LongWindow)
	case LimiterEnvoy:
		v.check(c.UpdateInterval > 0, p+".update_interval", "must be > 0, got %s", c.UpdateInterval)
		v.check(c.Interval >= Duration(time.Millisecond), p+".interval", "must be >= 1ms, got %s", c.Interval)
		v.check(c.RequestCount >= 1, p+".request_count", "must be >= 1, got %d", c.RequestCount)
		v.check(c.Jitter == nil || *c.Jitter >= 0, p+".jitter", "must be >= 0 (a fraction of interval)")
		v.check(c.Buffer == nil || *c.Buffer >= 0, p+".buffer", "must be >= 0 (a fraction of minRTT)")
		v.check(c.Percentile > 0 && c.Percentile <= 1, p+".percentile", "must be in (0, 1], got %g", c.Percentile)
		v.check(!c.Window, p+".window", "does not apply to kind envoy (it has its own update interval)")
	case LimiterFailsafe:
		v.check(!c.Window, p+".window", "does not apply to kind failsafe (its recent window is min_window..max_window with window_size samples)")
		v.check(c.MaxLimitFactor >= 1, p+".max_limit_factor", "must be >= 1, got %g", c.MaxLimitFactor)
		v.check(c.WindowSize >= 1, p+".window_size", "must be >= 1, got %d", c.WindowSize)
		v.check(c.MinWindow >= 0 && c.MaxWindow >= c.MinWindow, p+".max_window", "must be >= min_window >= 0, got %s and %s", c.MinWindow, c.MaxWindow)
		v.check(c.Percentile > 0 && c.Percentile <= 1, p+".percentile", "must be in (0, 1], got %g", c.Percentile)
		v.check(c.BaselineWindow >= 1, p+".baseline_window", "must be >= 1, got %d", c.BaselineWindow)
		v.check(c.CorrelationWindow >= 2 && c.CorrelationWindow <= MaxCorrelationWindow, p+".correlation_window", "must be in 2..%d, got %d", MaxCorrelationWindow, c.CorrelationWindow)
	}
	c.failsafeQueue(v, p)
	if c.Window {
		v.check(c.WindowSize >= 1, p+".window_size", "must be >= 1, got %d", c.WindowSize)
		v.check(c.MinWindow > 0 && c.MaxWindow >= c.MinWindow, p+".max_window", "must be >= min_window > 0, got %s and %s", c.MinWindow, c.MaxWindow)
	}
	if len(v.errs) == before {
		if _, err := c.Algorithm(); err != nil {
			v.check(false, p, "%v", err)
		}
	}
}

// MaxCorrelationWindow and MaxLevelWindow bound a failsafe limit's
// correlation windows and its prioritizer's level window: each replica's
// limit allocates them whole when it is built (four float64 slices of
// correlation_window, an int slice of level_window), so an unbounded value
// was an out-of-memory crash instead of an error. Their defaults are 50
// and 1000.
const (
	MaxCorrelationWindow = 100_000
	MaxLevelWindow       = 1_000_000
)

// failsafeQueue checks the queueing fields of concurrency_limit p (c
// resolved): only kind failsafe has them; the factors come as a pair
// with 1 <= initial <= max (WithQueueing); the latency rule needs
// max_execution_time > 0 and excludes the factors.
func (c *ConcurrencyLimit) failsafeQueue(v *validator, p string) {
	factors := c.InitialRejectionFactor != 0 || c.MaxRejectionFactor != 0
	latency := c.RejectionThreshold != 0 || c.MaxExecutionTime != 0
	if c.Kind != LimiterFailsafe {
		v.check(!c.Prioritized, p+".prioritized", "applies to kind failsafe only, not %s", c.Kind)
		v.check(!factors, p+".initial_rejection_factor", "applies to kind failsafe only, not %s", c.Kind)
		v.check(!latency, p+".max_execution_time", "applies to kind failsafe only, not %s", c.Kind)
		// The failsafe limit's own fields are read by kind failsafe alone.
		v.check(c.MaxLimitFactor == 0, p+".max_limit_factor", "applies to kind failsafe only, not %s", c.Kind)
		v.check(c.BaselineWindow == 0, p+".baseline_window", "applies to kind failsafe only, not %s", c.Kind)
		v.check(c.CorrelationWindow == 0, p+".correlation_window", "applies to kind failsafe only, not %s", c.Kind)
		v.check(c.CalibrationInterval == 0, p+".calibration_interval", "applies to kind failsafe only, not %s", c.Kind)
		v.check(c.LevelWindow == 0, p+".level_window", "applies to kind failsafe only, not %s", c.Kind)
		return
	}
	if !c.Prioritized {
		// The prioritizer's fields are read by the prioritised limit alone.
		v.check(c.CalibrationInterval == 0, p+".calibration_interval", "applies with prioritized: true only")
		v.check(c.LevelWindow == 0, p+".level_window", "applies with prioritized: true only")
	}
	if factors {
		v.check(c.InitialRejectionFactor >= 1, p+".initial_rejection_factor", "must be >= 1, got %g", c.InitialRejectionFactor)
		v.check(c.MaxRejectionFactor >= c.InitialRejectionFactor, p+".max_rejection_factor", "must be >= initial_rejection_factor (%g), got %g", c.InitialRejectionFactor, c.MaxRejectionFactor)
	}
	if c.Prioritized {
		v.check(c.Kind == LimiterFailsafe, p+".prioritized", "applies to kind failsafe only, not %s", c.Kind)
		v.check(!latency, p+".prioritized", "needs the queueing factors, not the latency rule (max_execution_time)")
		v.check(c.CalibrationInterval > 0, p+".calibration_interval", "must be > 0, got %s", c.CalibrationInterval)
		v.check(c.LevelWindow >= 1 && c.LevelWindow <= MaxLevelWindow, p+".level_window", "must be in 1..%d, got %d", MaxLevelWindow, c.LevelWindow)
	}
	if latency {
		v.check(!factors, p+".max_execution_time", "excludes initial_rejection_factor and max_rejection_factor (one queueing rule)")
		v.check(c.MaxExecutionTime > 0, p+".max_execution_time", "must be > 0 with rejection_threshold, got %s", c.MaxExecutionTime)
		v.check(c.RejectionThreshold >= 0, p+".rejection_threshold", "must be >= 0, got %s", c.RejectionThreshold)
	}
}
