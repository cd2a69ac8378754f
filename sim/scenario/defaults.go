package scenario

import (
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// Default returns a scenario with every default filled in. Loading decodes
// the file on top of it, so a field the file leaves out keeps its default.
func Default() *Scenario {
	return &Scenario{
		Name:     "",
		Seed:     1,
		Duration: Duration(10 * time.Minute),
		Metrics: Metrics{
			Interval:        Duration(time.Second),
			RecoveryWindow:  Duration(10 * time.Second),
			Baseline:        Duration(60 * time.Second),
			RecoverFraction: 0.95,
			StayFraction:    0.90,
		},
		Clients: Clients{
			Count:    10000,
			Arrival:  Arrival{Process: ArrivalPoisson, Profile: []Step{}},
			Policies: Policies{Timeout: Duration(2 * time.Second)},
			Startup:  Startup{Mode: StartupImmediate, Batches: 10},
			Groups:   []Group{},
		},
		Backend: Backend{
			Kind:      BackendPool,
			Replicas:  1,
			LB:        LBRoundRobin,
			EWMADecay: Duration(10 * time.Second),
			Workers:   100,
			Service:   Service{Dist: ServiceExponential, Mean: Duration(100 * time.Millisecond), Sigma: 0.5},
			Queue: Queue{Limit: 1000, Discipline: QueueFIFO, LIFOThreshold: 10,
				CoDelTarget: Duration(5 * time.Millisecond), CoDelInterval: Duration(100 * time.Millisecond)},
			AcceptBacklog: 1000,
			Connections:   Connections{ConnectCost: Duration(20 * time.Millisecond)},
		},
		Faults: []Fault{},
	}
}

// defaulter is implemented by types that a scenario holds by pointer or in
// a list: a section or element the file mentions starts from these values.
type defaulter interface{ setDefaults() }

func (t *Throttle) setDefaults() {
	*t = Throttle{
		Enabled:           true,
		K:                 2,
		Window:            Duration(2 * time.Minute),
		Buckets:           120,
		CountLocalRejects: true,
		Scope:             ScopeClient,
		GroupSize:         1,
		AcceptOutcomes:    []string{"ok"},
		Padding:           1,
		Aggression:        1,
		MaxProbability:    1,
	}
}

func (r *Retry) setDefaults() {
	*r = Retry{
		MaxAttempts: 3,
		Backoff: Backoff{
			Base:           Duration(100 * time.Millisecond),
			Cap:            Duration(10 * time.Second),
			Multiplier:     2,
			Jitter:         JitterFull,
			JitterFraction: 0.2,
		},
		RetryOn:         []string{"rejected", "timeout", "unavailable", "error"},
		HonorRetryAfter: true,
		RetryAfterMode:  RetryAfterAtLeast,
	}
}

// Connection defaults follow gRPC's connection backoff
// (grpc/grpc doc/connection-backoff.md): 1 s, ×1.6, ±20%, cap 120 s,
// minimum connect timeout 20 s.
func (c *Connection) setDefaults() {
	*c = Connection{
		ConnectTimeout: Duration(20 * time.Second),
		Reconnect: Reconnect{
			Policy: ReconnectBackoff,
			Delay:  Duration(time.Second),
			Backoff: Backoff{
				Base:           Duration(time.Second),
				Cap:            Duration(120 * time.Second),
				Multiplier:     1.6,
				Jitter:         JitterProportional,
				JitterFraction: 0.2,
			},
		},
	}
}

func (s *Sweep) setDefaults() { *s = Sweep{Seeds: 5} }

func (r *RateLimit) setDefaults() { *r = RateLimit{Burst: 100} }

// Envoy's defaults (outlier_detection.proto), as policy.OutlierDefaults.
func (o *OutlierDetection) setDefaults() {
	d := policy.OutlierDefaults()
	*o = OutlierDetection{ConsecutiveErrors: d.Consecutive, FailureOutcomes: []string{"rejected", "timeout", "unavailable", "error"},
		Interval: Duration(d.Interval), BaseEjectionTime: Duration(d.BaseEjection), MaxEjectionTime: Duration(d.MaxEjection),
		MaxEjectionPercent: d.MaxEjectionPercent, FailurePercentageMinimumHosts: d.FailurePercentMinHosts,
		FailurePercentageRequestVolume: d.FailurePercentVolume}
}

// Kubernetes probes' defaults (Envoy requires these fields), as
// policy.NewHealth; Envoy's uneject default.
func (h *HealthCheck) setDefaults() {
	*h = HealthCheck{Interval: Duration(10 * time.Second), UnhealthyThreshold: 3, HealthyThreshold: 1, UnejectOnPass: true}
}

// OutlierConfig is the policy configuration of o.
func (o *OutlierDetection) OutlierConfig() policy.OutlierConfig {
	return policy.OutlierConfig{Consecutive: o.ConsecutiveErrors, Interval: int64(o.Interval), BaseEjection: int64(o.BaseEjectionTime),
		MaxEjection: int64(o.MaxEjectionTime), MaxEjectionPercent: o.MaxEjectionPercent, FailurePercentThreshold: o.FailurePercentageThreshold,
		FailurePercentMinHosts: o.FailurePercentageMinimumHosts, FailurePercentVolume: o.FailurePercentageRequestVolume}
}

// HealthConfig is the policy configuration of h.
func (h *HealthCheck) HealthConfig() policy.HealthConfig {
	return policy.HealthConfig{Interval: int64(h.Interval), UnhealthyThreshold: h.UnhealthyThreshold, HealthyThreshold: h.HealthyThreshold}
}

func (h *Hedge) setDefaults() {
	*h = Hedge{Delay: Duration(50 * time.Millisecond), MinSamples: 100, CancelLoser: true}
}

// The AWS SDKs' adaptive-mode constants, as the policy package has them.
func (r *RateLimiter) setDefaults() {
	d := policy.ClientRateLimiterDefaults()
	*r = RateLimiter{Beta: d.Beta, C: d.C, Smoothing: d.Smoothing, MinRate: Rate(d.MinRate), BucketInterval: Duration(d.BucketInterval),
		ThrottleOutcomes: []string{"rejected"}}
}

// ClientRateLimiterConfig is the policy configuration of r.
func (r *RateLimiter) ClientRateLimiterConfig() policy.ClientRateLimiterConfig {
	return policy.ClientRateLimiterConfig{Beta: r.Beta, C: r.C, Smoothing: r.Smoothing, MinRate: float64(r.MinRate), BucketInterval: int64(r.BucketInterval)}
}

func (a *AdaptiveBreaker) setDefaults() {
	d := policy.SemianAdaptiveDefaults()
	*a = AdaptiveBreaker{Defensiveness: d.Defensiveness, Window: Duration(d.Window), Interval: Duration(d.Interval),
		InitialErrorRate: d.InitialErrorRate, Cap: d.Cap, FailureOutcomes: []string{"rejected", "timeout", "unavailable", "error"}, GroupSize: 1}
}

// AdaptiveBreakerConfig is the policy configuration of a.
func (a *AdaptiveBreaker) AdaptiveBreakerConfig() policy.AdaptiveBreakerConfig {
	return policy.AdaptiveBreakerConfig{Defensiveness: a.Defensiveness, Window: int64(a.Window), Interval: int64(a.Interval),
		InitialErrorRate: a.InitialErrorRate, Cap: a.Cap}
}

func (b *Breaker) setDefaults() {
	*b = Breaker{Style: StyleGobreaker, FailureOutcomes: []string{"rejected", "timeout", "unavailable", "error"}, GroupSize: 1}
}

// BreakerConfig is the policy configuration of b: its style's defaults
// with every non-zero field of b on top.
func (b *Breaker) BreakerConfig() policy.BreakerConfig {
	c := policy.GobreakerDefaults()
	if b.Style == StyleResilience4j {
		c = policy.Resilience4jDefaults()
	}
	switch b.Trip {
	case TripConsecutive:
		c.Trip = policy.TripConsecutive
	case TripRate:
		c.Trip = policy.TripRate
	}
	if c.Trip == policy.TripRate && c.FailureRate == 0 { // gobreaker style switched to a rate trip
		r := policy.Resilience4jDefaults()
		c.FailureRate, c.MinCalls, c.WindowCalls = r.FailureRate, r.MinCalls, r.WindowCalls
	}
	if b.ConsecutiveFailures != 0 {
		c.ConsecutiveFailures = b.ConsecutiveFailures
	}
	if b.FailureRate != 0 {
		c.FailureRate = b.FailureRate
	}
	if b.MinCalls != 0 {
		c.MinCalls = b.MinCalls
	}
	if b.Window != 0 {
		c.WindowDuration, c.WindowCalls = int64(b.Window), 0
		c.WindowBuckets = 10
		if b.WindowBuckets > 0 {
			c.WindowBuckets = b.WindowBuckets
		}
	} else if b.WindowCalls != 0 {
		c.WindowCalls = b.WindowCalls
	}
	if b.OpenDuration != 0 {
		c.OpenDuration = int64(b.OpenDuration)
	}
	switch b.OpenExpiry {
	case ExpiryAfter:
		c.StrictExpiry = true
	case ExpiryAt:
		c.StrictExpiry = false
	}
	switch b.TripCheck {
	case TripCheckFailures:
		c.TripOnFailuresOnly = true
	case TripCheckResults:
		c.TripOnFailuresOnly = false
	}
	switch b.LateResults {
	case LateIgnore:
		c.DropStaleResults = true
	case LateCount:
		c.DropStaleResults = false
	}
	switch b.OpenJitterOrder {
	case JitterThenCap:
		c.JitterBeforeCap = true
	case CapThenJitter:
		c.JitterBeforeCap = false
	}
	if b.OpenBackoff != 0 {
		c.OpenBackoff = b.OpenBackoff
	}
	c.MaxOpenDuration = int64(b.MaxOpenDuration)
	c.OpenJitter = b.OpenJitter
	if b.HalfOpenProbes != 0 {
		c.HalfOpenProbes = b.HalfOpenProbes
	}
	switch b.HalfOpenRule {
	case HalfOpenAllSucceed:
		c.HalfOpen = policy.HalfOpenAllSucceed
	case HalfOpenRate:
		c.HalfOpen = policy.HalfOpenRate
	}
	return c
}

func (b *Budget) setDefaults() { *b = Budget{Kind: "sre", GroupSize: 1} }

// BudgetConfig is the policy configuration of b: its kind's defaults with
// every non-zero field of b on top.
func (b *Budget) BudgetConfig() policy.BudgetConfig {
	var c policy.BudgetConfig
	switch b.Kind {
	case BudgetGRPC:
		c = policy.GRPCDefaults()
	case BudgetFinagle:
		c = policy.FinagleDefaults()
	case BudgetAWS:
		c = policy.AWSStandardDefaults()
	case BudgetAWS2026:
		c = policy.AWS2026Defaults()
	case BudgetTokenBucket:
		c = policy.TokenBucketDefaults()
	case BudgetRetryBreaker:
		c = policy.RetryBreakerDefaults()
	default:
		c = policy.SREDefaults()
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setI := func(dst *int32, v *int) {
		if v != nil {
			*dst = int32(*v)
		}
	}
	setF(&c.Ratio, b.Ratio)
	c.ChargeAtSend = b.Charge == ChargeSend
	if b.Window != nil {
		c.Window = int64(*b.Window)
		c.Buckets = max(1, min(120, int64(*b.Window)/int64(time.Second)))
	}
	c.FirstAttemptsOnly = b.FirstAttemptsOnly
	setF(&c.MaxTokens, b.MaxTokens)
	setF(&c.TokenRatio, b.TokenRatio)
	if b.TTL != nil {
		c.TTL = int64(*b.TTL)
	}
	if b.MinRetriesPerSec != nil {
		c.MinRetriesPerSec = *b.MinRetriesPerSec
	}
	setF(&c.PercentCanRetry, b.PercentCanRetry)
	c.FinagleAlignedSlices = b.AlignedSlices
	setI(&c.Capacity, b.Capacity)
	setI(&c.RetryCost, b.RetryCost)
	setI(&c.TimeoutCost, b.TimeoutCost)
	setI(&c.ThrottleCost, b.ThrottleCost)
	setI(&c.NoRetryIncrement, b.NoRetryIncrement)
	c.IncrementAfterRetry = b.IncrementAfterRetry
	setF(&c.BucketCapacity, b.BucketCapacity)
	if b.BucketCapacity != nil && b.BucketInitial == nil {
		c.BucketInitial = *b.BucketCapacity // full at start, whatever the capacity
	}
	setF(&c.BucketInitial, b.BucketInitial)
	setF(&c.Deposit, b.BucketDeposit)
	setF(&c.Threshold, b.BucketThreshold)
	setF(&c.Cost, b.BucketCost)
	setF(&c.MaxFailureRate, b.MaxFailureRate)
	return c
}

func (f *Fault) setDefaults() { *f = Fault{Mode: "refuse", Fraction: 0.5} }

func (s *Step) setDefaults() { *s = Step{Multiplier: 1} }

func (t *Trace) setDefaults() {
	*t = Trace{TimeColumn: "time", RateColumn: "rate", Scale: 1, Interpolate: InterpolateStep}
}

func (c *Cycle) setDefaults() { *c = Cycle{Period: Duration(24 * time.Hour)} }

func (p *CyclePoint) setDefaults() { *p = CyclePoint{Multiplier: 1} }

func (n *Network) setDefaults() { *n = Network{Delay: Delay{Dist: "constant"}} }

// SetDefaults fills a section that a scenario holds by pointer or in a list
// (*Throttle, *Retry, *Connection, *Sweep, *Fault, *Step) with its
// documented defaults, for
// scenarios built in code. Other values are left alone.
func SetDefaults(v any) {
	if d, ok := v.(defaulter); ok {
		d.setDefaults()
	}
}

// resolve writes the effective values of every policy section back into
// the scenario (a breaker's or budget's zero fields take their style's or
// kind's defaults), so that the resolved scenario in summary.json states
// them and loads again as it is.
func (s *Scenario) resolve() {
	resolveBreaker := func(b *Breaker) {
		if b == nil {
			return
		}
		c := b.BreakerConfig()
		b.Trip = "consecutive"
		if c.Trip == policy.TripRate {
			b.Trip = "rate"
		}
		b.HalfOpenRule = "all-succeed"
		if c.HalfOpen == policy.HalfOpenRate {
			b.HalfOpenRule = "rate"
		}
		b.ConsecutiveFailures, b.FailureRate, b.MinCalls = c.ConsecutiveFailures, c.FailureRate, c.MinCalls
		b.WindowCalls, b.Window, b.WindowBuckets = c.WindowCalls, Duration(c.WindowDuration), c.WindowBuckets
		b.OpenDuration, b.OpenBackoff, b.MaxOpenDuration, b.OpenJitter = Duration(c.OpenDuration), c.OpenBackoff, Duration(c.MaxOpenDuration), c.OpenJitter
		b.HalfOpenProbes = c.HalfOpenProbes
		b.OpenExpiry, b.TripCheck, b.OpenJitterOrder = ExpiryAt, TripCheckResults, CapThenJitter
		if c.StrictExpiry {
			b.OpenExpiry = ExpiryAfter
		}
		if c.TripOnFailuresOnly {
			b.TripCheck = TripCheckFailures
		}
		if c.JitterBeforeCap {
			b.OpenJitterOrder = JitterThenCap
		}
		b.LateResults = LateCount
		if c.DropStaleResults {
			b.LateResults = LateIgnore
		}
	}
	resolveBudget := func(r *Retry) {
		if r == nil || r.Budget == nil {
			return
		}
		b := r.Budget
		c := b.BudgetConfig()
		f := func(x float64) *float64 { return &x }
		d := func(x int64) *Duration { v := Duration(x); return &v }
		n := func(x int32) *int { v := int(x); return &v }
		// Only the kind's own fields: the others do not apply to it.
		switch c.Kind {
		case policy.BudgetSRE:
			b.Ratio, b.Window = f(c.Ratio), d(c.Window)
		case policy.BudgetGRPC:
			b.MaxTokens, b.TokenRatio = f(c.MaxTokens), f(c.TokenRatio)
		case policy.BudgetFinagle:
			b.TTL, b.PercentCanRetry = d(c.TTL), f(c.PercentCanRetry)
			mr := c.MinRetriesPerSec
			b.MinRetriesPerSec = &mr
		case policy.BudgetAWS:
			b.Capacity, b.RetryCost, b.TimeoutCost = n(c.Capacity), n(c.RetryCost), n(c.TimeoutCost)
			b.ThrottleCost, b.NoRetryIncrement = n(c.ThrottleCost), n(c.NoRetryIncrement)
		case policy.BudgetTokenBucket:
			b.BucketCapacity, b.BucketInitial, b.BucketDeposit = f(c.BucketCapacity), f(c.BucketInitial), f(c.Deposit)
			b.BucketThreshold, b.BucketCost = f(c.Threshold), f(c.Cost)
		case policy.BudgetRetryBreaker:
			b.MaxFailureRate, b.Window = f(c.MaxFailureRate), d(c.Window)
		}
	}
	for i := range s.Faults {
		if f := &s.Faults[i]; f.Kind == FaultSlowdown && f.AppliesTo == "" {
			f.AppliesTo = SlowStart
		}
	}
	resolveBreaker(s.Clients.Breaker)
	resolveBudget(s.Clients.Retry)
	s.Backend.ConcurrencyLimit.resolve()
	for i := range s.Services {
		s.Services[i].ConcurrencyLimit.resolve()
	}
	for i := range s.Clients.Groups {
		resolveBreaker(s.Clients.Groups[i].Breaker)
		resolveBudget(s.Clients.Groups[i].Retry)
	}
}

func (q *Prequal) setDefaults() {
	*q = DefaultPrequal()
}

// DefaultPrequal is lb: prequal's probing when backend.prequal is not
// set (docs/policies.md says which values are the paper's and which ours).
func DefaultPrequal() Prequal {
	return Prequal{ProbeRate: 3, PoolSize: 16, QRIF: 0.8, MaxAge: Duration(time.Second), MaxReuse: 3}
}
