package scenario

import (
	"github.com/throttlesim/throttlesim/sim/dist"
	"github.com/throttlesim/throttlesim/sim/trace"
)

// SchemaVersion is the version of the scenario format and of the result
// files written from it.
const SchemaVersion = 1

// Scenario is one simulation: a fleet of clients with their policies, a
// backend, and the faults that hit it. Every field is documented in
// docs/scenario-reference.md; defaults live in Default and setDefaults.
type Scenario struct {
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description" json:"description,omitempty"`
	Seed        uint64   `yaml:"seed" json:"seed"`
	Duration    Duration `yaml:"duration" json:"duration"`
	Metrics     Metrics  `yaml:"metrics" json:"metrics"`
	Clients     Clients  `yaml:"clients" json:"clients"`
	Backend     Backend  `yaml:"backend" json:"backend"`
	// Network, when set, delays every request and answer between the
	// clients and the backend; without it messages arrive at once.
	Network *Network `yaml:"network" json:"network,omitempty"`
	Faults  []Fault  `yaml:"faults" json:"faults"`
	// Services, when given, make the scenario a service graph: the
	// external clients call the entry service (clients.target, default the
	// first), which may call others. Without services, backend is a
	// one-node graph.
	Services []Node `yaml:"services" json:"services,omitempty"`
	// Thresholds are pass/fail criteria on the run's summary, such as
	// "recovery_s<=120" (package threshold); a run that fails one exits
	// with its own exit code. They do not change the simulation.
	Thresholds []string `yaml:"thresholds" json:"thresholds,omitempty"`
	// Sweep is read by `throttlesim sweep` and ignored by `run`; it is not
	// part of a resolved scenario.
	Sweep *Sweep `yaml:"sweep" json:"-"`
}

// Sweep is a set of scenario variants ("points"), each run with several
// seeds: the grid of every combination of the Vary values, then the
// explicit Points.
type Sweep struct {
	Vary   []Vary  `yaml:"vary" json:"vary"`
	Points []Point `yaml:"points" json:"points"`
	// Seeds is the number of replications of every point.
	Seeds int `yaml:"seeds" json:"seeds"`
	// IndependentSeeds gives every point its own seeds; by default
	// replication r of every point uses the same seed (common random
	// numbers), so points differ only by their policy.
	IndependentSeeds bool `yaml:"independent_seeds" json:"independent_seeds"`
	// Baseline is the label of the point the others are compared with
	// (paired differences); default the first point.
	Baseline string `yaml:"baseline" json:"baseline"`
}

// Vary varies one field, by its YAML path, over Values (any YAML values).
type Vary struct {
	Path   string     `yaml:"path" json:"path"`
	Values []RawValue `yaml:"values" json:"values"`
	// Labels, when given, name the values in tables, legends and the
	// terminal (one per value, in order) instead of path=value: a short
	// name for a structured value such as {kind: sre, ...}.
	Labels []string `yaml:"labels" json:"labels,omitempty"`
}

// Point is one explicitly listed variant: overrides as path=value.
type Point struct {
	Label string   `yaml:"label" json:"label"`
	Set   []string `yaml:"set" json:"set"`
}

// RawValue is a YAML value kept as YAML text (flow style), to be applied
// later with --set semantics.
type RawValue string

// Metrics sets how results are aggregated.
type Metrics struct {
	// Interval is the width of one row of timeseries.csv.
	Interval Duration `yaml:"interval" json:"interval"`
	// RecoveryWindow is the sliding window over which goodput is compared
	// with its baseline to decide recovery.
	RecoveryWindow Duration `yaml:"recovery_window" json:"recovery_window"`
	// Baseline is how much time before the first fault gives the goodput
	// baseline.
	Baseline Duration `yaml:"baseline" json:"baseline"`
	// RecoverFraction: recovered once windowed goodput is back at this
	// fraction of the baseline ...
	RecoverFraction float64 `yaml:"recover_fraction" json:"recover_fraction"`
	// StayFraction: ... and stays at or above this fraction for the rest of
	// the run.
	StayFraction float64 `yaml:"stay_fraction" json:"stay_fraction"`
}

// Clients is the fleet of virtual clients and their policy stack.
type Clients struct {
	Count   int     `yaml:"count" json:"count"`
	Arrival Arrival `yaml:"arrival" json:"arrival"`
	// Policies are the fleet's request policies: every client's, or
	// those a group does not replace.
	Policies `yaml:",inline"`
	// Startup spreads the clients' start times.
	Startup Startup `yaml:"startup" json:"startup"`
	// Connection, when set, makes every client hold a persistent
	// connection: requests flow only while it is up, and losing it starts
	// the reconnect policy.
	Connection *Connection `yaml:"connection" json:"connection"`
	// Groups split the fleet into groups with their own request policies
	// (e.g. 80% well-behaved apps, 20% old clients that retry at once).
	// Without groups every client runs the policies above.
	Groups []Group `yaml:"groups" json:"groups"`
	// Target is the service the clients call in a service graph (default
	// the first service).
	Target string `yaml:"target" json:"target,omitempty"`
	// PropagateDeadline sends each attempt's deadline (its timeout, or the
	// request's deadline if sooner) with it, in a service graph: the entry
	// service drops queued work whose deadline passed and passes the rest
	// on to the calls it makes (services[].propagate_deadline).
	PropagateDeadline bool `yaml:"propagate_deadline" json:"propagate_deadline,omitempty"`
	// Priority is the DAGOR business priority of the requests (services
	// with priority_shedding shed the least important first).
	Priority *Priority `yaml:"priority" json:"priority,omitempty"`
}

// Group is a share of the fleet with its own request policies. A group's
// policy sections replace the fleet's (a group without a retry section
// makes one attempt); timeout and deadline, when not given, are the
// fleet's. Clients are assigned to groups in order: the first share of the
// client ids to the first group, and so on.
type Group struct {
	Name  string  `yaml:"name" json:"name"`
	Share float64 `yaml:"share" json:"share"`
	// Policies are the group's request policies. Its Timeout and Deadline
	// count only if the group gives them (a file that sets them, even to
	// 0); a group built in code gives neither. Clients.ResolvedGroups has
	// each group's effective stack.
	Policies `yaml:",inline"`
	// Priority is the group's DAGOR business priority (default the fleet's).
	Priority *Priority `yaml:"priority" json:"priority,omitempty"`
	// given records which of Timeout and Deadline the group gives (the
	// decoder and UnmarshalJSON set it, see inherits.go); the others are
	// the fleet's.
	given givenFields
}

// Policies is a policy stack: the request policies of the fleet
// (clients), of a group (clients.groups) or of a service's call
// (services.N.calls). It is declared once and embedded in each, so a
// section decodes, validates (Policies.validate) and resolves the same
// wherever it is.
type Policies struct {
	// Timeout is the per-attempt timeout (0: none); Deadline the overall
	// deadline of a request or call, retries included (0: none).
	Timeout  Duration `yaml:"timeout" json:"timeout"`
	Deadline Duration `yaml:"deadline" json:"deadline"`
	// Throttle, when set, is the adaptive throttle (the SRE formula and
	// its variants).
	Throttle *Throttle `yaml:"throttle" json:"throttle"`
	// Retry, when set, retries failed attempts, with an optional budget.
	Retry *Retry `yaml:"retry" json:"retry"`
	// Breaker, when set, is a circuit breaker per client (or per group).
	Breaker *Breaker `yaml:"breaker" json:"breaker"`
	// RateLimiter, when set, is the AWS SDK adaptive retry mode's client
	// send-rate limiter (CUBIC), one per client: it delays sends.
	RateLimiter *RateLimiter `yaml:"rate_limiter" json:"rate_limiter"`
	// Hedge, when set, sends a hedged copy of each request's first attempt
	// after a delay.
	Hedge *Hedge `yaml:"hedge" json:"hedge,omitempty"`
	// AdaptiveBreaker, when set, is Shopify Semian's adaptive circuit
	// breaker per client (or per group): it rejects a fraction of attempts,
	// set every interval by a controller on the error rate above a learned
	// ideal. It may be set beside breaker (Semian's dual breaker runs both).
	AdaptiveBreaker *AdaptiveBreaker `yaml:"adaptive_breaker" json:"adaptive_breaker,omitempty"`
}

// AdaptiveBreaker is Semian's adaptive circuit breaker
// (policy.AdaptiveBreakerSet): every Interval its rejection rate r becomes
// clamp(r + (e − ideal) − r/Defensiveness, 0, 1), with e the error rate of
// the last Window and ideal a smoothed error rate learned from the error
// rates at or below Cap, starting at InitialErrorRate. Defaults are
// Semian's: defensiveness 5, window 10s, interval 1s, initial error rate
// 0.01, cap 0.1.
type AdaptiveBreaker struct {
	Defensiveness    float64  `yaml:"defensiveness" json:"defensiveness"`
	Window           Duration `yaml:"window" json:"window"`
	Interval         Duration `yaml:"interval" json:"interval"`
	InitialErrorRate float64  `yaml:"initial_error_rate" json:"initial_error_rate"`
	// Cap: an error rate above it does not teach the ideal error rate.
	Cap float64 `yaml:"cap" json:"cap"`
	// FailureOutcomes are the answers that count as errors; any other
	// answer counts as a success.
	FailureOutcomes []string `yaml:"failure_outcomes" json:"failure_outcomes" enum:"rejected,timeout,unavailable,error"`
	GroupSize       int      `yaml:"group_size" json:"group_size"`
}

// Hedge sends a second copy of a request's first attempt when no answer
// has come after a delay ("The Tail at Scale", Dean and Barroso 2013:
// hedged requests). The first answer that succeeds wins; a failed copy
// leaves the other to finish. A hedge skips the throttle, breaker and
// limiter (it is part of the request they admitted) and counts as an
// attempt.
type Hedge struct {
	// Delay before the hedge; with Quantile > 0, the delay until
	// MinSamples first attempts have succeeded.
	Delay Duration `yaml:"delay" json:"delay"`
	// Quantile, when > 0, hedges after that quantile (e.g. 0.95) of the
	// latency of first attempts that succeeded, observed by this policy
	// stack so far.
	Quantile   float64 `yaml:"quantile" json:"quantile"`
	MinSamples int     `yaml:"min_samples" json:"min_samples"`
	// CancelLoser: when one copy succeeds, the other is dropped from the
	// server's queue if it is still waiting there (work already in service
	// finishes either way); false leaves it to run.
	CancelLoser bool `yaml:"cancel_loser" json:"cancel_loser"`
}

// GroupSpec is a resolved group: its name, its clients [Start, Start+Count)
// and its policies.
type GroupSpec struct {
	Name         string
	Start, Count int
	Policies     Policies
}

// ResolvedGroups splits the fleet into its groups (one, named "all", when
// the scenario has none). Each group gets its share of the clients rounded
// down; the clients left over go one each to the groups in list order.
func (c *Clients) ResolvedGroups() []GroupSpec {
	if len(c.Groups) == 0 {
		return []GroupSpec{{Name: "all", Count: c.Count, Policies: c.Policies}}
	}
	var total float64
	for _, g := range c.Groups {
		total += g.Share
	}
	counts := make([]int, len(c.Groups))
	rest := c.Count
	for i, g := range c.Groups {
		counts[i] = int(float64(c.Count) * g.Share / total)
		rest -= counts[i]
	}
	for i := 0; rest > 0; i = (i + 1) % len(counts) { // hand out the remainder in order
		counts[i]++
		rest--
	}
	out := make([]GroupSpec, len(c.Groups))
	start := 0
	for i, g := range c.Groups {
		out[i] = GroupSpec{Name: g.Name, Start: start, Count: counts[i], Policies: g.resolved(c.Policies)}
		start += counts[i]
	}
	return out
}

// Breaker is a circuit breaker (policy.BreakerSet): closed, open,
// half-open. Style picks the defaults of fields left at zero: "gobreaker"
// (trip after 6 consecutive failures, open 60 s, 1 probe that must
// succeed) or "resilience4j" (trip at a 50% failure rate over the last 100
// calls once 100 were seen, open 60 s, 10 probes judged by the same rate).
type Breaker struct {
	Style               BreakerStyle `yaml:"style" json:"style"`
	Trip                BreakerTrip  `yaml:"trip" json:"trip"`
	ConsecutiveFailures int          `yaml:"consecutive_failures" json:"consecutive_failures"`
	FailureRate         float64      `yaml:"failure_rate" json:"failure_rate"`
	MinCalls            int          `yaml:"min_calls" json:"min_calls"`
	WindowCalls         int          `yaml:"window_calls" json:"window_calls"`
	Window              Duration     `yaml:"window" json:"window"`
	WindowBuckets       int          `yaml:"window_buckets" json:"window_buckets"`
	OpenDuration        Duration     `yaml:"open_duration" json:"open_duration"`
	OpenBackoff         float64      `yaml:"open_backoff" json:"open_backoff"`
	MaxOpenDuration     Duration     `yaml:"max_open_duration" json:"max_open_duration"`
	OpenJitter          float64      `yaml:"open_jitter" json:"open_jitter"`
	HalfOpenProbes      int          `yaml:"half_open_probes" json:"half_open_probes"`
	HalfOpenRule        HalfOpenRule `yaml:"half_open_rule" json:"half_open_rule"`
	// FailureOutcomes are the answers that count as failures; any other
	// answer counts as a success.
	FailureOutcomes []string `yaml:"failure_outcomes" json:"failure_outcomes" enum:"rejected,timeout,unavailable,error"`
	GroupSize       int      `yaml:"group_size" json:"group_size"`
	// OpenExpiry: "after" (both libraries: half-open only after the open
	// period, still open at exactly its end) or "at" (half-open at its
	// end). Default: after.
	OpenExpiry OpenExpiry `yaml:"open_expiry" json:"open_expiry"`
	// TripCheck: the rate trip rule is consulted after "failures" only
	// (gobreaker's ReadyToTrip) or after all "results" (resilience4j).
	// Default: the style's.
	TripCheck TripCheck `yaml:"trip_check" json:"trip_check"`
	// OpenJitterOrder: "jitter-then-cap" (resilience4j) or
	// "cap-then-jitter" (a capped period still spreads). Default: the
	// style's (gobreaker has no jitter: cap-then-jitter).
	OpenJitterOrder JitterOrder `yaml:"open_jitter_order" json:"open_jitter_order"`
	// LateResults: a result of a call admitted before the breaker's latest
	// state change is "ignore"d (gobreaker) or "count"ed in the current
	// state (resilience4j). Default: the style's.
	LateResults LateResults `yaml:"late_results" json:"late_results"`
}

// RateLimiter configures the AWS adaptive limiter (botocore
// retries/adaptive.py, aws-sdk-go-v2 aws/retry/adaptive*.go).
type RateLimiter struct {
	Beta           float64  `yaml:"beta" json:"beta"`
	C              float64  `yaml:"c" json:"c"`
	Smoothing      float64  `yaml:"smoothing" json:"smoothing"`
	MinRate        Rate     `yaml:"min_rate" json:"min_rate"`
	BucketInterval Duration `yaml:"bucket_interval" json:"bucket_interval"`
	// ThrottleOutcomes are the answers that count as throttling responses.
	ThrottleOutcomes []string `yaml:"throttle_outcomes" json:"throttle_outcomes" enum:"rejected,unavailable,timeout,error"`
}

// Startup is when each client starts: "immediate" (all at 0), "uniform"
// (uniformly over Window) or "ramp" (Batches equal batches at equal steps
// over Window, like a rolling deploy). A client issues no requests before
// its start.
type Startup struct {
	Mode    StartupMode `yaml:"mode" json:"mode"`
	Window  Duration    `yaml:"window" json:"window"`
	Batches int         `yaml:"batches" json:"batches"`
}

// Connection is the clients' persistent connection and how they get it
// back.
type Connection struct {
	// ConnectTimeout: the client gives up a handshake that takes longer (a
	// handshake the backend finishes later is wasted work).
	ConnectTimeout Duration  `yaml:"connect_timeout" json:"connect_timeout"`
	Reconnect      Reconnect `yaml:"reconnect" json:"reconnect"`
}

// Reconnect is the delay before each connection attempt after the
// connection was lost. The first attempt after a loss waits 0 ("immediate",
// "backoff") or Delay ("fixed"); each attempt after a failed one waits Delay
// ("immediate", "fixed") or the backoff for the number of consecutive
// failures ("backoff"). Every attempt also waits U(0, JitterWindow). The
// backoff resets after a successful connection.
type Reconnect struct {
	Policy       ReconnectPolicy `yaml:"policy" json:"policy"`
	Delay        Duration        `yaml:"delay" json:"delay"`
	Backoff      Backoff         `yaml:"backoff" json:"backoff"`
	JitterWindow Duration        `yaml:"jitter_window" json:"jitter_window"`
}

// Arrival is the open-loop arrival process of application requests:
// "poisson" or "constant" at Rate (or TotalRate), or "once": every client
// issues exactly one request, when it starts (clients.startup), like a
// fleet that syncs once at boot or Brooker's clients that each write once.
type Arrival struct {
	Process ArrivalProcess `yaml:"process" json:"process"`
	// Rate is the rate of one client; TotalRate is the rate of the whole
	// fleet, split evenly. Exactly one of the two is set.
	Rate      Rate `yaml:"rate" json:"rate"`
	TotalRate Rate `yaml:"total_rate" json:"total_rate"`
	// Profile multiplies the rate from each step's time on (a load spike is
	// two steps).
	Profile []Step `yaml:"profile" json:"profile"`
	// FirstAtStart (poisson): each client makes one call when it starts,
	// then continues as its Poisson stream from there (Brooker's
	// simulators' clients do this).
	FirstAtStart bool `yaml:"first_at_start" json:"first_at_start"`
	// Trace is recorded load: with poisson or constant, the fleet's total
	// rate over time from a rate series (rate and total_rate unset); with
	// replay, the recorded requests themselves.
	Trace *Trace `yaml:"trace" json:"trace,omitempty"`
	// Cycle is a repeating shape (a day, a week) that multiplies the rate:
	// straight lines between its points.
	Cycle *Cycle `yaml:"cycle" json:"cycle,omitempty"`
}

// Step sets the arrival-rate multiplier from At on.
type Step struct {
	At         Duration `yaml:"at" json:"at"`
	Multiplier float64  `yaml:"multiplier" json:"multiplier"`
	// Ramp moves the multiplier in a straight line from the previous
	// step's (1 before the first step) to this one's, reaching it at At,
	// instead of jumping there.
	Ramp bool `yaml:"ramp" json:"ramp,omitempty"`
}

// Trace is clients.arrival.trace: a recorded rate series (formats csv,
// prometheus) or recorded request times (timestamps, access_log). Times
// are relative to the recording's first sample, after Shift.
type Trace struct {
	// File is relative to the scenario file's folder.
	File string `yaml:"file" json:"file"`
	// FileSHA256 is the hex SHA-256 of File's content, set when the
	// scenario is loaded (a given value must match).
	FileSHA256 string      `yaml:"file_sha256" json:"file_sha256,omitempty"`
	Format     TraceFormat `yaml:"format" json:"format"`
	// TimeColumn and RateColumn name the CSV's columns (format csv).
	TimeColumn string `yaml:"time_column" json:"time_column,omitempty"`
	RateColumn string `yaml:"rate_column" json:"rate_column,omitempty"`
	// Selector picks one series of a query_range answer by its labels
	// (format prometheus), e.g. {instance="a:9"}.
	Selector string `yaml:"selector" json:"selector,omitempty"`
	// Scale multiplies every rate (1.2: replay at 1.2×).
	Scale float64 `yaml:"scale" json:"scale"`
	// Shift skips that much of the recording from its first sample; Window
	// replays that much of it (0: to its end).
	Shift  Duration `yaml:"shift" json:"shift"`
	Window Duration `yaml:"window" json:"window"`
	// Interpolate is the rate between samples: held (step) or a straight
	// line (linear).
	Interpolate Interpolation `yaml:"interpolate" json:"interpolate"`
	// MaxGap is the longest step allowed between two samples of a rate
	// series (0: 10× the median step).
	MaxGap Duration `yaml:"max_gap" json:"max_gap,omitempty"`
	// Rates is the rate series after Shift and Window (Scale not applied),
	// Times the request times after them, read by Load.
	Rates *trace.Rates `yaml:"-" json:"-"`
	Times []int64      `yaml:"-" json:"-"`
}

// Cycle is clients.arrival.cycle: a shape repeated every Period that
// multiplies the rate, a straight line between consecutive points (and
// from the last back to the first). Start is where in the cycle the run
// begins (9h: at 9 am of a daily cycle).
type Cycle struct {
	Period Duration     `yaml:"period" json:"period"`
	Start  Duration     `yaml:"start" json:"start"`
	Points []CyclePoint `yaml:"points" json:"points"`
}

// CyclePoint is the multiplier At into the cycle.
type CyclePoint struct {
	At         Duration `yaml:"at" json:"at"`
	Multiplier float64  `yaml:"multiplier" json:"multiplier"`
}

// Throttle is the SRE adaptive throttle ("Handling Overload").
type Throttle struct {
	Enabled bool    `yaml:"enabled" json:"enabled"`
	K       float64 `yaml:"k" json:"k"`
	// Window is the lookback of the requests/accepts counters, kept in
	// Buckets buckets of Window/Buckets each.
	Window  Duration `yaml:"window" json:"window"`
	Buckets int      `yaml:"buckets" json:"buckets"`
	// CountLocalRejects records locally dropped requests in `requests`, as
	// the SRE book does; false records only the requests that were sent.
	CountLocalRejects bool `yaml:"count_local_rejects" json:"count_local_rejects"`
	// Scope is "client" (one throttle per client) or "group" (GroupSize
	// consecutive clients share one throttle, like the clients of a pod).
	Scope     ThrottleScope `yaml:"scope" json:"scope"`
	GroupSize int           `yaml:"group_size" json:"group_size"`
	// AcceptOutcomes lists the backend outcomes that count as accepts.
	AcceptOutcomes []string `yaml:"accept_outcomes" json:"accept_outcomes" enum:"ok,rejected,unavailable,error"`
	// Variants of the formula (policy.ThrottleForm): p = min(max_probability,
	// max(0, (requests − K·accepts)/(requests + padding))^(1/aggression)),
	// and 0 while requests < min_requests.
	Padding        float64 `yaml:"padding" json:"padding"`
	Aggression     float64 `yaml:"aggression" json:"aggression"`
	MaxProbability float64 `yaml:"max_probability" json:"max_probability"`
	MinRequests    int     `yaml:"min_requests" json:"min_requests"`
}

// Retry is the per-request retry policy.
type Retry struct {
	MaxAttempts int     `yaml:"max_attempts" json:"max_attempts"`
	Backoff     Backoff `yaml:"backoff" json:"backoff"`
	// RetryOn lists the attempt outcomes that are retried.
	RetryOn         []string `yaml:"retry_on" json:"retry_on" enum:"rejected,timeout,unavailable,error"`
	HonorRetryAfter bool     `yaml:"honor_retry_after" json:"honor_retry_after"`
	// Budget, when set, limits retries per client (or per group of
	// clients); a retry it refuses fails the request.
	Budget *Budget `yaml:"budget" json:"budget"`
	// RetryAfterMode: "at_least" waits max(backoff, Retry-After) (HTTP
	// clients); "exactly" waits exactly the server's delay and restarts the
	// backoff (gRPC pushback, gRFC A6). Used when honor_retry_after is set.
	RetryAfterMode RetryAfterMode `yaml:"retry_after_mode" json:"retry_after_mode"`
}

// Budget is a retry budget (policy.BudgetSet). Fields not given take the
// kind's defaults: sre (ratio 0.1 over 2 m), grpc (max_tokens 10,
// token_ratio 0.1), finagle (ttl 10 s, 10 retries/s, 20%), aws (500 tokens,
// retry 5, timeout 10, throttle 5, +1 on success), aws-2026 (14/14/5),
// token-bucket (Brooker 2022: capacity 5, full at start, +0.1 per first
// try, a retry while > 1 costs 1) and retry-breaker (Brooker 2022: no
// retries while failures/first tries > 0.1, counted since the start).
// A field given as 0 means 0 (e.g. no_retry_increment: 0, a quota that
// never refills, as aws/aws-sdk-go-v2#3550 reports of adaptive mode).
type Budget struct {
	Kind BudgetKind `yaml:"kind" json:"kind"`
	// GroupSize consecutive clients share one budget (1: one per client).
	GroupSize int `yaml:"group_size" json:"group_size"`

	Ratio             *float64  `yaml:"ratio" json:"ratio"`
	Window            *Duration `yaml:"window" json:"window"`
	FirstAttemptsOnly bool      `yaml:"first_attempts_only" json:"first_attempts_only"`
	MaxTokens         *float64  `yaml:"max_tokens" json:"max_tokens"`
	TokenRatio        *float64  `yaml:"token_ratio" json:"token_ratio"`
	TTL               *Duration `yaml:"ttl" json:"ttl"`
	MinRetriesPerSec  *int      `yaml:"min_retries_per_sec" json:"min_retries_per_sec"`
	PercentCanRetry   *float64  `yaml:"percent_can_retry" json:"percent_can_retry"`
	// AlignedSlices (finagle): slices aligned to multiples of ttl/10 from
	// time 0 instead of Finagle's lazy turn-over.
	AlignedSlices    bool `yaml:"aligned_slices" json:"aligned_slices"`
	Capacity         *int `yaml:"capacity" json:"capacity"`
	RetryCost        *int `yaml:"retry_cost" json:"retry_cost"`
	TimeoutCost      *int `yaml:"timeout_cost" json:"timeout_cost"`
	ThrottleCost     *int `yaml:"throttle_cost" json:"throttle_cost"`
	NoRetryIncrement *int `yaml:"no_retry_increment" json:"no_retry_increment"`
	// IncrementAfterRetry (aws, aws-2026): a successful retry returns
	// no_retry_increment on top of its cost, as aws-sdk-go-v2 does;
	// false: its cost only, as botocore does.
	IncrementAfterRetry bool `yaml:"increment_after_retry" json:"increment_after_retry"`
	// token-bucket: tokens, kept to 3 decimals.
	BucketCapacity  *float64 `yaml:"bucket_capacity" json:"bucket_capacity"`
	BucketInitial   *float64 `yaml:"bucket_initial" json:"bucket_initial"`
	BucketDeposit   *float64 `yaml:"bucket_deposit" json:"bucket_deposit"`
	BucketThreshold *float64 `yaml:"bucket_threshold" json:"bucket_threshold"`
	BucketCost      *float64 `yaml:"bucket_cost" json:"bucket_cost"`
	// retry-breaker: the failure ratio above which retries stop (window,
	// when set, is its sliding window; 0 or absent: since the start).
	MaxFailureRate *float64 `yaml:"max_failure_rate" json:"max_failure_rate"`
	// Charge: when a granted retry is charged, at the "decision" (the
	// default; empty means it) or when it is "send"t after its backoff,
	// so that retries in backoff are not counted (Envoy). Only for the
	// kinds whose grant charges something: sre, finagle, aws, aws-2026,
	// token-bucket.
	Charge BudgetCharge `yaml:"charge" json:"charge,omitempty"`
}

// Backoff is exponential backoff with jitter: the n-th retry (n = 1, 2, ...)
// waits around min(cap, base * multiplier^(n-1)).
type Backoff struct {
	Base       Duration `yaml:"base" json:"base"`
	Cap        Duration `yaml:"cap" json:"cap"`
	Multiplier float64  `yaml:"multiplier" json:"multiplier"`
	Jitter     Jitter   `yaml:"jitter" json:"jitter"`
	// JitterFraction is the ±fraction of "proportional" jitter (gRPC: 0.2).
	JitterFraction float64 `yaml:"jitter_fraction" json:"jitter_fraction"`
	// ThrottleBase, when > 0, replaces Base for a retry after a throttle
	// (an overload rejection): the AWS 2026 retry mode's 1 s (50 ms
	// otherwise). Retries only.
	ThrottleBase Duration `yaml:"throttle_base" json:"throttle_base"`
}

// Backend is the server. Kind "pool" is a capacity-limited server:
// workers, a queue, service times. Kind "occ" is one row under optimistic
// concurrency control (Brooker, "Exponential Backoff And Jitter", 2015):
// an attempt reads the row's version and then writes with it; a write with
// a stale version fails (answered as "error") and the client retries. It
// has no capacity limit, so the pool's fields do not apply to it.
type Backend struct {
	Kind    BackendKind `yaml:"kind" json:"kind"`
	Workers int         `yaml:"workers" json:"workers"`
	// Replicas of the service, each with its own workers, queue and
	// faults; callers balance across them with LB.
	Replicas int      `yaml:"replicas" json:"replicas"`
	LB       LBPolicy `yaml:"lb" json:"lb"`
	// EWMADecay is peak EWMA's decay time τ (Finagle's decayTime).
	EWMADecay Duration `yaml:"ewma_decay" json:"ewma_decay"`
	Service   Service  `yaml:"service" json:"service"`
	Queue     Queue    `yaml:"queue" json:"queue"`
	// RateLimit, when set, refuses requests beyond a token bucket's rate
	// on arrival, at the price of a rejection.
	RateLimit *RateLimit `yaml:"rate_limit" json:"rate_limit,omitempty"`
	// ConcurrencyLimit, when set, is an adaptive concurrency limit
	// (aimd, vegas, gradient2, envoy) refusing arrivals beyond it.
	ConcurrencyLimit *ConcurrencyLimit `yaml:"concurrency_limit" json:"concurrency_limit,omitempty"`
	// PriorityShedding, when set, is DAGOR's priority-based admission.
	PriorityShedding *PriorityShedding `yaml:"priority_shedding" json:"priority_shedding,omitempty"`
	// RejectCost is worker time spent on every rejected request.
	RejectCost Duration `yaml:"reject_cost" json:"reject_cost"`
	// AcceptBacklog is how many rejections may wait for a worker to do
	// their reject work; beyond it arrivals are dropped unanswered.
	AcceptBacklog int `yaml:"accept_backlog" json:"accept_backlog"`
	// RetryAfter, when > 0, is sent with every overload rejection.
	RetryAfter Duration `yaml:"retry_after" json:"retry_after"`
	// DontRetry makes overload rejections say "do not retry" (gRPC pushback
	// with a negative delay): the client fails the request instead.
	DontRetry bool `yaml:"dont_retry" json:"dont_retry"`
	// ErrorRate is the probability that a served attempt fails anyway
	// (an independent backend error, answered as "error").
	ErrorRate float64 `yaml:"error_rate" json:"error_rate"`
	// CancelTimedOut skips queued work whose client has already timed out.
	CancelTimedOut bool `yaml:"cancel_timed_out" json:"cancel_timed_out"`
	// Connections is the backend's side of persistent connections (used when
	// clients.connection is set).
	Connections Connections `yaml:"connections" json:"connections"`
	// OutlierDetection, when set, takes replicas out of rotation when
	// their callers see them fail (Envoy's outlier detection).
	OutlierDetection *OutlierDetection `yaml:"outlier_detection" json:"outlier_detection,omitempty"`
	// HealthCheck, when set, checks every replica at an interval and
	// takes those that fail out of rotation (active health checking).
	HealthCheck *HealthCheck `yaml:"health_check" json:"health_check,omitempty"`
	// Subset, when > 0, is how many replicas each caller sees
	// (deterministic subsetting, SRE book ch. 20); 0: all of them.
	Subset int `yaml:"subset" json:"subset,omitempty"`
	// Autoscale, when set, changes the number of replicas over time
	// (autoscale.go); replicas is then the count at the start.
	Autoscale *Autoscale `yaml:"autoscale" json:"autoscale,omitempty"`
	// Prequal, when set, is the probing of lb: prequal (its defaults when
	// lb is prequal and it is not set).
	Prequal *Prequal `yaml:"prequal" json:"prequal,omitempty"`
	// PIDShedding, when set, is a PID load shedder over request
	// priorities in the style of Uber's Cinnamon (cinnamon.go).
	PIDShedding *PIDShedding `yaml:"pid_shedding" json:"pid_shedding,omitempty"`
	// Degrade, when set, serves a cheaper response past a load level
	// (graceful degradation, degrade.go).
	Degrade *Degrade `yaml:"degrade" json:"degrade,omitempty"`
}

// Connections limits and prices connection set-up.
type Connections struct {
	// Limit is the most connections the backend holds; 0 means no limit.
	Limit int `yaml:"limit" json:"limit"`
	// ConnectCost is the worker time of one handshake (TLS, auth, session).
	ConnectCost Duration `yaml:"connect_cost" json:"connect_cost"`
}

// Service is the service-time distribution of one request.
type Service struct {
	Dist ServiceDist `yaml:"dist" json:"dist"`
	Mean Duration    `yaml:"mean" json:"mean"`
	// Sigma is the shape (standard deviation of the log) of the lognormal.
	Sigma float64 `yaml:"sigma" json:"sigma"`
	// PerConcurrent: with dist "concurrency" a request's service time is
	// mean + per_concurrent × k, k the number of other busy workers when it
	// starts service (not counting itself; a + b·n with n counting itself
	// is mean a + b, per_concurrent b): a
	// server that slows down as it gets busier (Brooker; Bronson et al.,
	// "Metastable Failures in Distributed Systems").
	PerConcurrent Duration `yaml:"per_concurrent" json:"per_concurrent"`
	// Components of dist "mixture": each request's service time comes
	// from component i with probability weight_i / Σ weight.
	Components []Component `yaml:"components" json:"components,omitempty"`
	// File of dist "empirical", relative to the scenario file's folder:
	// one duration per line (samples, each equally likely) or a quantile
	// and a duration per line (a quantile table from 0 to 1, linear in
	// between). Blank lines and lines starting with # are ignored.
	File string `yaml:"file" json:"file,omitempty"`
	// FileSHA256 is the hex SHA-256 of File's content, set when the
	// scenario is loaded (so that a run's key changes with the data); if
	// given, the file must still match it.
	FileSHA256 string `yaml:"file_sha256" json:"file_sha256,omitempty"`
	// Empirical is File's distribution, read by Load; nil otherwise.
	Empirical *dist.Empirical `yaml:"-" json:"-"`
	// Buckets of dist "histogram": a Prometheus histogram's cumulative
	// buckets, le in seconds (or a duration) and the count of observations
	// <= le, the last le +Inf. Or File (with Format, Metric, Selector)
	// names a Prometheus export holding the _bucket series.
	Buckets []Bucket `yaml:"buckets" json:"buckets,omitempty"`
	// Within is how dist "histogram" spreads a bucket's observations
	// between its bounds: uniform (the default, "") or log_uniform.
	Within HistogramWithin `yaml:"within" json:"within,omitempty"`
	// InfCap is the upper bound given to observations in the +Inf bucket
	// of dist "histogram"; required when that bucket holds any.
	InfCap Duration `yaml:"inf_cap" json:"inf_cap,omitempty"`
	// Format of dist "histogram"'s File: text (the Prometheus text
	// exposition format, a /metrics page) or query_range (the JSON of
	// Prometheus's HTTP API); "" tells them apart by the first character.
	Format HistogramFormat `yaml:"format" json:"format,omitempty"`
	// Metric is the histogram's name in File, without _bucket; "" takes
	// the only histogram there.
	Metric string `yaml:"metric" json:"metric,omitempty"`
	// Selector picks one series of File's histogram by its labels:
	// code="200",job="api" (braces optional).
	Selector string `yaml:"selector" json:"selector,omitempty"`
	// Histogram is dist "histogram"'s distribution from File, read by
	// Load; nil otherwise (inline Buckets build theirs on demand).
	Histogram *dist.Histogram `yaml:"-" json:"-"`
}

// Bucket is one cumulative bucket of a Prometheus histogram.
type Bucket struct {
	Le    Bound   `yaml:"le" json:"le"`
	Count float64 `yaml:"count" json:"count"`
}

// Component is one part of a service-time mixture.
type Component struct {
	Weight float64       `yaml:"weight" json:"weight"`
	Dist   ComponentDist `yaml:"dist" json:"dist"`
	Mean   Duration      `yaml:"mean" json:"mean"`
	Sigma  float64       `yaml:"sigma" json:"sigma"`
}

// Queue is the backend's FIFO waiting room.
type Queue struct {
	// Limit is the number of requests that may wait (not counting those in
	// service); 0 means no waiting room.
	Limit int `yaml:"limit" json:"limit"`
	// Timeout, when > 0, rejects requests that waited longer than this.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// Discipline is the order requests leave the queue: fifo, lifo
	// (newest first), adaptive_lifo (fifo until more than LIFOThreshold
	// wait, then lifo: Facebook's adaptive LIFO) or codel (fifo, with
	// RFC 8289 CoDel dropping at the head).
	Discipline    QueueDiscipline `yaml:"discipline" json:"discipline"`
	LIFOThreshold int             `yaml:"lifo_threshold" json:"lifo_threshold"`
	CoDelTarget   Duration        `yaml:"codel_target" json:"codel_target"`
	CoDelInterval Duration        `yaml:"codel_interval" json:"codel_interval"`
}

// OutlierDetection is Envoy's outlier detection on a service's callers
// (envoy/config/cluster/v3/outlier_detection.proto; overload-control.md
// §2.6): consecutive failures eject a replica for base_ejection_time ×
// the times it was ejected (capped at max_ejection_time); at most
// max_ejection_percent of the replicas are out at once, but always one
// may be. Every interval ejected replicas whose time is up return, and
// the failure-percentage detector runs when its threshold is set.
type OutlierDetection struct {
	// ConsecutiveErrors in a row eject a replica (Envoy's consecutive_5xx).
	ConsecutiveErrors int `yaml:"consecutive_errors" json:"consecutive_errors"`
	// FailureOutcomes are the attempt outcomes that count as failures
	// (Envoy folds timeouts and resets into 5xx by default).
	FailureOutcomes    []string `yaml:"failure_outcomes" json:"failure_outcomes" enum:"rejected,timeout,unavailable,error"`
	Interval           Duration `yaml:"interval" json:"interval"`
	BaseEjectionTime   Duration `yaml:"base_ejection_time" json:"base_ejection_time"`
	MaxEjectionTime    Duration `yaml:"max_ejection_time" json:"max_ejection_time"`
	MaxEjectionPercent float64  `yaml:"max_ejection_percent" json:"max_ejection_percent"`
	// FailurePercentageThreshold, when > 0, ejects at each interval a
	// replica with at least this % of failures among at least
	// failure_percentage_request_volume results, when at least
	// failure_percentage_minimum_hosts replicas had that volume.
	FailurePercentageThreshold     float64 `yaml:"failure_percentage_threshold" json:"failure_percentage_threshold"`
	FailurePercentageMinimumHosts  int     `yaml:"failure_percentage_minimum_hosts" json:"failure_percentage_minimum_hosts"`
	FailurePercentageRequestVolume int     `yaml:"failure_percentage_request_volume" json:"failure_percentage_request_volume"`
}

// HealthCheck is active health checking: every interval each replica is
// checked; a check fails while the replica is in an outage (refusing or
// black-holed) and passes otherwise (a slow replica passes).
// unhealthy_threshold failures in a row take a replica out of rotation,
// healthy_threshold passes in a row bring it back.
type HealthCheck struct {
	Interval           Duration `yaml:"interval" json:"interval"`
	UnhealthyThreshold int      `yaml:"unhealthy_threshold" json:"unhealthy_threshold"`
	HealthyThreshold   int      `yaml:"healthy_threshold" json:"healthy_threshold"`
	// UnejectOnPass: a passed check returns a replica outlier detection
	// ejected (Envoy's successful_active_health_check_uneject_host).
	UnejectOnPass bool `yaml:"uneject_on_pass" json:"uneject_on_pass"`
}

// RateLimit is a server-side token bucket in front of the workers.
type RateLimit struct {
	Rate  Rate `yaml:"rate" json:"rate"`
	Burst int  `yaml:"burst" json:"burst"`
}

// Network is the path between the clients and the backend.
type Network struct {
	// Delay is the one-way delay of every message: a request on its way
	// to the backend, an answer on its way back. Each message draws its
	// own delay.
	Delay Delay `yaml:"delay" json:"delay"`
}

// Delay is a delay distribution: "constant" (Mean), "exponential" (mean
// Mean) or "normal": |N(Mean, SD)|, folded at 0 as in Brooker's
// simulator.
type Delay struct {
	Dist DelayDist `yaml:"dist" json:"dist"`
	Mean Duration  `yaml:"mean" json:"mean"`
	SD   Duration  `yaml:"sd" json:"sd"`
}

// Fault is a window of time in which the backend misbehaves.
type Fault struct {
	Kind     FaultKind `yaml:"kind" json:"kind"`
	Start    Duration  `yaml:"start" json:"start"`
	Duration Duration  `yaml:"duration" json:"duration"`
	// Mode of an outage: "refuse" answers every request at once as
	// unavailable; "blackhole" never answers, so clients time out.
	Mode OutageMode `yaml:"mode" json:"mode"`
	// Fraction of the workers left during a capacity fault; fraction of the
	// connections closed by a disconnect fault.
	Fraction float64 `yaml:"fraction" json:"fraction"`
	// RetryAfter, when > 0, is sent with refusals during an outage.
	RetryAfter Duration `yaml:"retry_after" json:"retry_after"`
	// Service is the service the fault hits in a service graph (default
	// the entry service).
	Service string `yaml:"service" json:"service,omitempty"`
	// Replica, when set, is the one replica the fault hits (0-based);
	// without it the fault hits every replica.
	Replica *int `yaml:"replica" json:"replica,omitempty"`
	// Factor of a slowdown: the service time of the attempts it slows is
	// multiplied by it (the concurrency term of dist: concurrency is added
	// after).
	Factor float64 `yaml:"factor" json:"factor,omitempty"`
	// ServiceTime of a slowdown, instead of a factor: the attempts it
	// slows draw their service time from this distribution (with the same
	// draws as the usual one).
	ServiceTime *Service `yaml:"service_time" json:"service_time,omitempty"`
	// AppliesTo of a slowdown: "start" slows the attempts that start
	// service during the window, "arrival" those that reach the backend
	// during it (whenever they start).
	AppliesTo SlowdownScope `yaml:"applies_to" json:"applies_to,omitempty"`
}

// End is when the fault is over.
func (f Fault) End() Duration { return f.Start + f.Duration }

// Prequal is lb: prequal's probing (Wydrowski et al., "Load is not what
// you should balance: Introducing Prequal", NSDI '24): each pick sends
// probe_rate probes to random replicas; each answer (the replica's
// requests in flight and its recent median latency) joins a pool of at
// most pool_size probes, used at most max_reuse times and for at most
// max_age; a pick takes the cold probe (RIF not above the pool's q_rif
// quantile) with the lowest latency, or if every probe is hot the one
// with the lowest RIF.
type Prequal struct {
	// ProbeRate is probes sent per pick (r_probe); a fraction sends one
	// more with that probability.
	ProbeRate float64 `yaml:"probe_rate" json:"probe_rate"`
	// PoolSize is the most probes the pool holds; a new probe evicts
	// the oldest.
	PoolSize int `yaml:"pool_size" json:"pool_size"`
	// QRIF is the quantile of the pool's RIFs above which a probe is hot.
	QRIF float64 `yaml:"q_rif" json:"q_rif"`
	// MaxAge is how long a probe stays usable.
	MaxAge Duration `yaml:"max_age" json:"max_age"`
	// MaxReuse is how many picks one probe may serve (b_reuse).
	MaxReuse int `yaml:"max_reuse" json:"max_reuse"`
}
