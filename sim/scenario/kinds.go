package scenario

// Named kinds. Each choice field of a scenario has its own string type whose
// valid values are listed once, in the type's Names method: the decoder
// checks a value against it (with did-you-mean), the JSON schema lists it,
// and code compares with the typed constants below instead of string
// literals. The zero value "" means "not given" (the defaults fill it in).

// Enumerated is implemented by every named kind.
type Enumerated interface{ Names() []string }

// BackendKind is backend.kind.
type BackendKind string

// Backend kinds.
const (
	BackendPool BackendKind = "pool" // workers, a queue, service times
	BackendOCC  BackendKind = "occ"  // one versioned row under optimistic concurrency
)

// Names lists the valid backend kinds.
func (BackendKind) Names() []string { return []string{"pool", "occ"} }

// FaultKind is faults[].kind.
type FaultKind string

// Fault kinds.
const (
	FaultOutage     FaultKind = "outage"
	FaultCapacity   FaultKind = "capacity"
	FaultDisconnect FaultKind = "disconnect"
	// FaultSlowdown makes the backend slower: service times multiplied by
	// a factor, or drawn from another distribution.
	FaultSlowdown FaultKind = "slowdown"
)

// Names lists the valid fault kinds.
func (FaultKind) Names() []string { return []string{"outage", "capacity", "disconnect", "slowdown"} }

// SlowdownScope is faults[].applies_to: which attempts a slowdown slows.
type SlowdownScope string

// Slowdown scopes.
const (
	SlowStart   SlowdownScope = "start"   // attempts that start service in the window
	SlowArrival SlowdownScope = "arrival" // attempts that arrive in the window
)

// Names lists the valid slowdown scopes.
func (SlowdownScope) Names() []string { return []string{"start", "arrival"} }

// OutageMode is faults[].mode.
type OutageMode string

// Outage modes.
const (
	OutageRefuse    OutageMode = "refuse"
	OutageBlackhole OutageMode = "blackhole"
)

// Names lists the valid outage modes.
func (OutageMode) Names() []string { return []string{"refuse", "blackhole"} }

// ServiceDist is backend.service.dist.
type ServiceDist string

// Service-time distributions.
const (
	ServiceConstant    ServiceDist = "constant"
	ServiceExponential ServiceDist = "exponential"
	ServiceLognormal   ServiceDist = "lognormal"
	ServiceConcurrency ServiceDist = "concurrency"
	ServiceMixture     ServiceDist = "mixture"   // weighted components
	ServiceEmpirical   ServiceDist = "empirical" // samples or a quantile table from a file
	ServiceHistogram   ServiceDist = "histogram" // Prometheus histogram buckets, inline or from a file
)

// Names lists the valid service-time distributions.
func (ServiceDist) Names() []string {
	return []string{"constant", "exponential", "lognormal", "concurrency", "mixture", "empirical", "histogram"}
}

// ComponentDist is backend.service.components[].dist: the simple
// distributions a mixture is made of.
type ComponentDist string

// Mixture component distributions.
const (
	ComponentConstant    ComponentDist = "constant"
	ComponentExponential ComponentDist = "exponential"
	ComponentLognormal   ComponentDist = "lognormal"
)

// Names lists the valid component distributions.
func (ComponentDist) Names() []string { return []string{"constant", "exponential", "lognormal"} }

// DelayDist is network.delay.dist.
type DelayDist string

// Network delay distributions.
const (
	DelayConstant    DelayDist = "constant"
	DelayExponential DelayDist = "exponential"
	DelayNormal      DelayDist = "normal"
)

// Names lists the valid network delay distributions.
func (DelayDist) Names() []string { return []string{"constant", "exponential", "normal"} }

// ArrivalProcess is clients.arrival.process.
type ArrivalProcess string

// Arrival processes.
const (
	ArrivalPoisson  ArrivalProcess = "poisson"
	ArrivalConstant ArrivalProcess = "constant"
	ArrivalOnce     ArrivalProcess = "once"
	ArrivalReplay   ArrivalProcess = "replay" // clients.arrival.trace's recorded requests
)

// Names lists the valid arrival processes.
func (ArrivalProcess) Names() []string { return []string{"poisson", "constant", "once", "replay"} }

// StartupMode is clients.startup.mode.
type StartupMode string

// Startup modes.
const (
	StartupImmediate StartupMode = "immediate"
	StartupUniform   StartupMode = "uniform"
	StartupRamp      StartupMode = "ramp"
)

// Names lists the valid startup modes.
func (StartupMode) Names() []string { return []string{"immediate", "uniform", "ramp"} }

// ThrottleScope is clients.throttle.scope.
type ThrottleScope string

// Throttle scopes.
const (
	ScopeClient ThrottleScope = "client"
	ScopeGroup  ThrottleScope = "group"
)

// Names lists the valid throttle scopes.
func (ThrottleScope) Names() []string { return []string{"client", "group"} }

// RetryAfterMode is clients.retry.retry_after_mode.
type RetryAfterMode string

// Retry-After modes.
const (
	RetryAfterAtLeast RetryAfterMode = "at_least"
	RetryAfterExactly RetryAfterMode = "exactly"
	// RetryAfterClamped: the hint, within [backoff, backoff + 5 s] (the
	// AWS 2026 retry mode's x-amz-retry-after).
	RetryAfterClamped RetryAfterMode = "clamped"
)

// Names lists the valid Retry-After modes.
func (RetryAfterMode) Names() []string { return []string{"at_least", "exactly", "clamped"} }

// BudgetKind is clients.retry.budget.kind.
type BudgetKind string

// Retry budget kinds.
const (
	BudgetSRE     BudgetKind = "sre"
	BudgetGRPC    BudgetKind = "grpc"
	BudgetFinagle BudgetKind = "finagle"
	BudgetAWS     BudgetKind = "aws"
	BudgetAWS2026 BudgetKind = "aws-2026"
	// Brooker 2022: a capped bucket filled per first try, and a breaker on
	// retries only.
	BudgetTokenBucket  BudgetKind = "token-bucket"
	BudgetRetryBreaker BudgetKind = "retry-breaker"
)

// Names lists the valid retry budget kinds.
func (BudgetKind) Names() []string {
	return []string{"sre", "grpc", "finagle", "aws", "aws-2026", "token-bucket", "retry-breaker"}
}

// BreakerStyle is clients.breaker.style.
type BreakerStyle string

// Breaker styles.
const (
	StyleGobreaker    BreakerStyle = "gobreaker"
	StyleResilience4j BreakerStyle = "resilience4j"
)

// Names lists the valid breaker styles.
func (BreakerStyle) Names() []string { return []string{"gobreaker", "resilience4j"} }

// BreakerTrip is clients.breaker.trip.
type BreakerTrip string

// Breaker trip rules.
const (
	TripConsecutive BreakerTrip = "consecutive"
	TripRate        BreakerTrip = "rate"
)

// Names lists the valid trip rules.
func (BreakerTrip) Names() []string { return []string{"consecutive", "rate"} }

// HalfOpenRule is clients.breaker.half_open_rule.
type HalfOpenRule string

// Half-open rules.
const (
	HalfOpenAllSucceed HalfOpenRule = "all-succeed"
	HalfOpenRate       HalfOpenRule = "rate"
)

// Names lists the valid half-open rules.
func (HalfOpenRule) Names() []string { return []string{"all-succeed", "rate"} }

// ReconnectPolicy is clients.connection.reconnect.policy.
type ReconnectPolicy string

// Reconnect policies.
const (
	ReconnectImmediate ReconnectPolicy = "immediate"
	ReconnectFixed     ReconnectPolicy = "fixed"
	ReconnectBackoff   ReconnectPolicy = "backoff"
)

// Names lists the valid reconnect policies.
func (ReconnectPolicy) Names() []string { return []string{"immediate", "fixed", "backoff"} }

// Jitter is a backoff's jitter (…backoff.jitter).
type Jitter string

// Jitter kinds.
const (
	JitterNone         Jitter = "none"
	JitterFull         Jitter = "full"
	JitterEqual        Jitter = "equal"
	JitterDecorrelated Jitter = "decorrelated"
	JitterProportional Jitter = "proportional"
	// JitterFullBelowCap is full jitter below the cap, exactly the cap
	// beyond (aws-sdk-go-v2's standard backoff).
	JitterFullBelowCap Jitter = "full-below-cap"
)

// Names lists the valid jitter kinds.
func (Jitter) Names() []string {
	return []string{"none", "full", "equal", "decorrelated", "proportional", "full-below-cap"}
}

// LBPolicy is how callers pick a replica (backend.lb, services[].lb).
type LBPolicy string

// Load-balancing policies.
const (
	LBRandom           LBPolicy = "random"
	LBRoundRobin       LBPolicy = "round_robin"
	LBLeastOutstanding LBPolicy = "least_outstanding"
	LBP2C              LBPolicy = "p2c"
	LBPeakEWMA         LBPolicy = "peak_ewma"
	// LBPrequal is Prequal (Wydrowski et al., NSDI '24): asynchronous
	// probes of requests in flight and latency, the hot-cold rule.
	LBPrequal LBPolicy = "prequal"
)

// Names lists the valid load-balancing policies.
func (LBPolicy) Names() []string {
	return []string{"random", "round_robin", "least_outstanding", "p2c", "peak_ewma", "prequal"}
}

// OpenExpiry is clients.breaker.open_expiry: when an open breaker may turn
// half-open.
type OpenExpiry string

// Open-expiry rules.
const (
	ExpiryAfter OpenExpiry = "after" // strictly after the open period (both libraries)
	ExpiryAt    OpenExpiry = "at"    // at its end
)

// Names lists the valid open-expiry rules.
func (OpenExpiry) Names() []string { return []string{"after", "at"} }

// TripCheck is clients.breaker.trip_check: which results a rate trip rule
// is judged after.
type TripCheck string

// Trip checks.
const (
	TripCheckFailures TripCheck = "failures" // gobreaker's ReadyToTrip
	TripCheckResults  TripCheck = "results"  // resilience4j
)

// Names lists the valid trip checks.
func (TripCheck) Names() []string { return []string{"failures", "results"} }

// JitterOrder is clients.breaker.open_jitter_order.
type JitterOrder string

// Open-period jitter orders.
const (
	JitterThenCap JitterOrder = "jitter-then-cap" // resilience4j
	CapThenJitter JitterOrder = "cap-then-jitter"
)

// LateResults is clients.breaker.late_results: what a result from a call
// admitted before the breaker's latest state change does.
type LateResults string

// Late-result rules.
const (
	LateIgnore LateResults = "ignore" // gobreaker: dropped by generation
	LateCount  LateResults = "count"  // resilience4j: given to the current state
)

// Names lists the valid late-result rules.
func (LateResults) Names() []string { return []string{"ignore", "count"} }

// Names lists the valid jitter orders.
func (JitterOrder) Names() []string { return []string{"jitter-then-cap", "cap-then-jitter"} }

// QueueDiscipline is backend.queue.discipline.
type QueueDiscipline string

// Queue disciplines.
const (
	QueueFIFO         QueueDiscipline = "fifo"
	QueueLIFO         QueueDiscipline = "lifo"
	QueueAdaptiveLIFO QueueDiscipline = "adaptive_lifo"
	QueueCoDel        QueueDiscipline = "codel"
)

// Names lists the valid queue disciplines.
func (QueueDiscipline) Names() []string { return []string{"fifo", "lifo", "adaptive_lifo", "codel"} }

// BudgetCharge is clients.retry.budget.charge: when a granted retry is
// charged to its budget.
type BudgetCharge string

// Budget charge times.
const (
	// ChargeDecision: when the retry is granted, at the failure (the
	// default, and every library's rule but Envoy's).
	ChargeDecision BudgetCharge = "decision"
	// ChargeSend: when the retry is sent, after its backoff; retries
	// waiting out their backoff are not counted (Envoy's retry budget).
	ChargeSend BudgetCharge = "send"
)

// Names lists the valid budget charge times.
func (BudgetCharge) Names() []string { return []string{"decision", "send"} }

// HistogramWithin is backend.service.within: how dist: histogram spreads
// a bucket's observations between its bounds ("" is uniform).
type HistogramWithin string

// Rules within a histogram bucket.
const (
	WithinUniform    HistogramWithin = "uniform"
	WithinLogUniform HistogramWithin = "log_uniform"
)

// Names lists the valid rules within a histogram bucket.
func (HistogramWithin) Names() []string { return []string{"uniform", "log_uniform"} }

// HistogramFormat is backend.service.format: the format of dist:
// histogram's file ("" tells them apart by the first character).
type HistogramFormat string

// Histogram file formats.
const (
	FormatText       HistogramFormat = "text"        // Prometheus text exposition format
	FormatQueryRange HistogramFormat = "query_range" // Prometheus HTTP API JSON (matrix or vector)
)

// Names lists the valid histogram file formats.
func (HistogramFormat) Names() []string { return []string{"text", "query_range"} }

// TraceFormat is clients.arrival.trace.format.
type TraceFormat string

// Trace formats: rate series (csv, prometheus) and request times
// (timestamps, access_log).
const (
	TraceCSV        TraceFormat = "csv"
	TracePrometheus TraceFormat = "prometheus"
	TraceTimestamps TraceFormat = "timestamps"
	TraceAccessLog  TraceFormat = "access_log"
)

// Names lists the valid trace formats.
func (TraceFormat) Names() []string { return []string{"csv", "prometheus", "timestamps", "access_log"} }

// Rates tells a rate series' format from a request-time format.
func (f TraceFormat) Rates() bool { return f == TraceCSV || f == TracePrometheus }

// Interpolation is clients.arrival.trace.interpolate.
type Interpolation string

// Interpolations between a rate series' samples.
const (
	InterpolateStep   Interpolation = "step"
	InterpolateLinear Interpolation = "linear"
)

// Names lists the valid interpolations.
func (Interpolation) Names() []string { return []string{"step", "linear"} }
