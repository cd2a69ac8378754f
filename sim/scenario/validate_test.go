package scenario

import (
	"errors"
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
	"math"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
)

// validBase is a small valid scenario; the validation cases add to it or
// override it with --set so each breaks exactly one rule.
const validBase = `name: base
duration: 5m
clients:
  count: 100
  arrival: {total_rate: 100/s}
  throttle: {k: 2}
  retry: {max_attempts: 3}
backend:
  workers: 10
faults:
  - {kind: outage, start: 1m, duration: 30s}
`

func TestValidBaseIsValid(t *testing.T) {
	loadOK(t, validBase)
}

func TestValidationRules(t *testing.T) {
	tests := []struct {
		name    string
		content string   // the file; validBase when empty
		sets    []string // applied to it
		path    string
		line    int // 0: not checked
		msg     []string
	}{
		// Bounded strings: a 1 MB name took 45 s to draw into charts.
		{
			name: "name too long", sets: []string{"name=" + strings.Repeat("a", MaxNameLen+1)},
			path: "name", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "description too long", sets: []string{"description=" + strings.Repeat("a", MaxDescriptionLen+1)},
			path: "description", msg: []string{"is 10001 characters long; at most 10000"},
		},
		// So is every other name and label (issue 21 item 7.3), and no
		// message quotes the long string (checked for every case below).
		{
			name: "service name too long", content: graphBase, sets: []string{"services.1.name=" + long},
			path: "services.1.name", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "call target too long", content: graphBase, sets: []string{"services.0.calls.0.to=" + long},
			path: "services.0.calls.0.to", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "forward target too long", content: graphBase, sets: []string{"services.1.forward=[{to: " + long + ", probability: 0.5}]"},
			path: "services.1.forward.0.to", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "clients.target too long", content: graphBase, sets: []string{"clients.target=" + long},
			path: "clients.target", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "fault service too long", content: graphBase, sets: []string{"faults=[{kind: outage, start: 1m, duration: 30s, service: " + long + "}]"},
			path: "faults.0.service", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "group name too long", sets: []string{"clients.groups=[{name: " + long + ", share: 1}]"},
			path: "clients.groups.0.name", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "sweep point label too long", sets: []string{"sweep={points: [{label: " + long + ", set: [clients.throttle.k=3]}]}"},
			path: "sweep.points.0.label", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "sweep point set too long", sets: []string{"sweep={points: [{label: a, set: [clients.throttle.k=" + strings.Repeat("3", MaxValueLen) + "]}]}"},
			path: "sweep.points.0.set.0", msg: []string{"is 1019 characters long; at most 1000"},
		},
		{
			name: "sweep baseline too long", sets: []string{"sweep={points: [{label: a, set: [clients.throttle.k=3]}], baseline: " + long + "}"},
			path: "sweep.baseline", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "sweep vary path too long", sets: []string{"sweep={vary: [{path: " + long + ", values: [1]}]}"},
			path: "sweep.vary.0.path", msg: []string{"is 101 characters long; at most 100"},
		},
		{
			name: "sweep vary value too long", sets: []string{"sweep={vary: [{path: clients.throttle.k, values: [2, " + strings.Repeat("a", MaxValueLen+1) + "]}]}"},
			path: "sweep.vary.0.values.1", msg: []string{"is 1001 characters long; at most 1000"},
		},
		{
			name: "threshold too long", sets: []string{"thresholds=[recovery_s<=" + strings.Repeat("1", MaxLabelLen) + "]"},
			path: "thresholds.0", msg: []string{"is 112 characters long; at most 100"},
		},
		{
			name: "data file path too long", sets: []string{"backend.service={dist: empirical, file: " + strings.Repeat("a", MaxFileLen+1) + "}"},
			path: "backend.service.file", msg: []string{"is 4097 characters long; at most 4096"},
		},
		// resilience4j works in whole milliseconds and refuses a wait under 1 ms.
		{
			name: "resilience4j open_duration under 1ms", sets: []string{"clients.breaker={style: resilience4j, open_duration: 500us}"},
			path: "clients.breaker", msg: []string{"open_duration must be at least 1ms when open periods are whole milliseconds (resilience4j), got 500000 ns"},
		},
		// Thresholds: the metric name with did-you-mean, the expression.
		{
			name: "misspelt threshold metric", content: validBase + "thresholds:\n  - recovery_s<=120\n  - recovery<=120\n",
			path: "thresholds.1", line: 14, msg: []string{`unknown metric "recovery" (did you mean "recovery_s"?)`},
		},
		{
			name: "threshold without an operator", sets: []string{"thresholds=[recovery_s 120]"},
			path: "thresholds.0", msg: []string{"expected METRIC OP VALUE, e.g. recovery_s<=120"},
		},
		{
			name: "threshold with units", sets: []string{"thresholds=[recovery_s<=2m]"},
			path: "thresholds.0", msg: []string{`the value "2m" is not a number`},
		},
		// Adaptive concurrency limits (backend.concurrency_limit), in a
		// backend and in a service.
		{
			name: "misspelt limiter kind", content: strings.Replace(validBase, "workers: 10\n", "workers: 10\n  concurrency_limit: {kind: gradiant2}\n", 1), path: "backend.concurrency_limit.kind", line: 10,
			msg: []string{`"gradiant2"`, `did you mean "gradient2"`},
		},
		{
			name: "limiter without a kind", sets: []string{"backend.concurrency_limit={min: 5}"},
			path: "backend.concurrency_limit.kind", msg: []string{"is required: one of aimd, vegas, gradient2, envoy"},
		},
		{
			name: "aimd backoff out of range", sets: []string{"backend.concurrency_limit={kind: aimd, backoff: 1.2}"},
			path: "backend.concurrency_limit.backoff", msg: []string{"must be in [0.5, 1), got 1.2"},
		},
		{
			name: "gradient2 initial under min", sets: []string{"backend.concurrency_limit={kind: gradient2, initial: 5}"},
			path: "backend.concurrency_limit.initial", msg: []string{"must be in min..max (20..200), got 5"},
		},
		{
			name: "envoy window", sets: []string{"backend.concurrency_limit={kind: envoy, window: true}"},
			path: "backend.concurrency_limit.window", msg: []string{"does not apply to kind envoy"},
		},
		{
			name: "envoy percentile", sets: []string{"backend.concurrency_limit={kind: envoy, percentile: 1.5}"},
			path: "backend.concurrency_limit.percentile", msg: []string{"must be in (0, 1], got 1.5"},
		},
		{
			name: "limiter in a service", content: "name: g\nduration: 1m\nclients: {count: 1, arrival: {total_rate: 1/s}}\nservices:\n  - name: api\n    concurrency_limit: {kind: vegas, smoothing: 3}\n",
			path: "services.0.concurrency_limit.smoothing", line: 6, msg: []string{"must be in (0, 1], got 3"},
		},
		{
			name: "failsafe rejection factors reversed", sets: []string{"backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 3, max_rejection_factor: 2}"},
			path: "backend.concurrency_limit.max_rejection_factor", msg: []string{"must be >= initial_rejection_factor (3), got 2"},
		},
		{
			name: "failsafe factors and latency rule", sets: []string{"backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 2, max_rejection_factor: 3, max_execution_time: 1s}"},
			path: "backend.concurrency_limit.max_execution_time", msg: []string{"excludes initial_rejection_factor"},
		},
		{
			name: "rejection factor on another kind", sets: []string{"backend.concurrency_limit={kind: aimd, initial_rejection_factor: 2, max_rejection_factor: 3}"},
			path: "backend.concurrency_limit.initial_rejection_factor", msg: []string{"applies to kind failsafe only, not aimd"},
		},
		{
			name: "prioritized on another kind", sets: []string{"backend.concurrency_limit={kind: vegas, prioritized: true}"},
			path: "backend.concurrency_limit.prioritized", msg: []string{"applies to kind failsafe only, not vegas"},
		},
		{
			name: "prioritized with the latency rule", sets: []string{"backend.concurrency_limit={kind: failsafe, prioritized: true, max_execution_time: 1s}"},
			path: "backend.concurrency_limit.prioritized", msg: []string{"needs the queueing factors"},
		},
		{
			name: "failsafe max limit factor", sets: []string{"backend.concurrency_limit={kind: failsafe, max_limit_factor: 0.5}"},
			path: "backend.concurrency_limit.max_limit_factor", msg: []string{"must be >= 1, got 0.5"},
		},
		{
			name: "failsafe field on another kind", sets: []string{"backend.concurrency_limit={kind: aimd, max_limit_factor: 3}"},
			path: "backend.concurrency_limit.max_limit_factor", msg: []string{"applies to kind failsafe only, not aimd"},
		},
		{
			name: "failsafe baseline on another kind", sets: []string{"backend.concurrency_limit={kind: vegas, baseline_window: 3}"},
			path: "backend.concurrency_limit.baseline_window", msg: []string{"applies to kind failsafe only, not vegas"},
		},
		{
			name: "failsafe correlation on another kind", sets: []string{"backend.concurrency_limit={kind: gradient2, correlation_window: 9}"},
			path: "backend.concurrency_limit.correlation_window", msg: []string{"applies to kind failsafe only, not gradient2"},
		},
		{
			name: "level window on another kind", sets: []string{"backend.concurrency_limit={kind: envoy, level_window: 9}"},
			path: "backend.concurrency_limit.level_window", msg: []string{"applies to kind failsafe only, not envoy"},
		},
		{
			name: "level window without prioritized", sets: []string{"backend.concurrency_limit={kind: failsafe, level_window: 9}"},
			path: "backend.concurrency_limit.level_window", msg: []string{"applies with prioritized: true only"},
		},
		{
			name: "calibration interval without prioritized", sets: []string{"backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 2, max_rejection_factor: 3, calibration_interval: 2s}"},
			path: "backend.concurrency_limit.calibration_interval", msg: []string{"applies with prioritized: true only"},
		},
		{
			name: "failsafe correlation window too long", sets: []string{"backend.concurrency_limit={kind: failsafe, correlation_window: 1000000000000}"},
			path: "backend.concurrency_limit.correlation_window", msg: []string{"must be in 2..100000, got 1000000000000"},
		},
		{
			name: "failsafe level window too long", sets: []string{"backend.concurrency_limit={kind: failsafe, prioritized: true, level_window: 1000000000000}"},
			path: "backend.concurrency_limit.level_window", msg: []string{"must be in 1..1000000, got 1000000000000"},
		},
		// Priority shedding (DAGOR) and request priorities.
		{
			name: "priority level out of range", sets: []string{"clients.priority={level: 9}"},
			path: "clients.priority.level", msg: []string{"must be in 0..7 (0 the most important), got 9"},
		},
		{
			name: "priority weights all zero", sets: []string{"clients.priority={levels: [0, 0]}"},
			path: "clients.priority.levels", msg: []string{"the weights must not all be 0"},
		},
		{
			name: "dagor alpha", sets: []string{"backend.priority_shedding={alpha: 1.5}"},
			path: "backend.priority_shedding.alpha", msg: []string{"must be in (0, 1), got 1.5"},
		},
		{
			name: "dagor misspelt field", sets: []string{"backend.priority_shedding={queue_tim: 20ms}"},
			path: "backend.priority_shedding.queue_tim", msg: []string{`did you mean "queue_time"`},
		},
		{
			name: "pid shedding negative gain", sets: []string{"backend.pid_shedding={kp: -0.1}"},
			path: "backend.pid_shedding.kp", msg: []string{"must be >= 0, got -0.1"},
		},
		{
			name: "pid shedding with dagor", sets: []string{"backend.pid_shedding={}", "backend.priority_shedding={}"},
			path: "backend.pid_shedding", msg: []string{"cannot be set with priority_shedding"},
		},
		{
			name: "degrade without a level", sets: []string{"backend.degrade={}"},
			path: "backend.degrade", msg: []string{"needs exactly one of when_queue_above and when_utilization_above"},
		},
		{
			name: "degrade fraction", sets: []string{"backend.degrade={when_queue_above: 3, service_fraction: 1.5}"},
			path: "backend.degrade.service_fraction", msg: []string{"must be in (0, 1], got 1.5"},
		},
		{
			name: "pid shedding interval", sets: []string{"backend.pid_shedding={interval: 0s}"},
			path: "backend.pid_shedding.interval", msg: []string{"must be >= 1ms, got 0s"},
		},
		// Autoscaling.
		{
			name: "autoscale without max_replicas", sets: []string{"backend.autoscale={target: 0.7}"},
			path: "backend.autoscale.max_replicas", msg: []string{"must be in 1..255", "got 0"},
		},
		{
			name: "autoscale utilization target above 1", sets: []string{"backend.autoscale={target: 70, max_replicas: 10}"},
			path: "backend.autoscale.target", msg: []string{"utilization needs a target in (0, 1]", "got 70"},
		},
		{
			name: "autoscale queue_time with target", sets: []string{"backend.autoscale={metric: queue_time, target: 0.05, max_replicas: 10}"},
			path: "backend.autoscale.target_queue_time", msg: []string{"queue_time needs a target_queue_time > 0"},
		},
		{
			name: "autoscale start outside min..max", sets: []string{"backend.replicas=5", "backend.autoscale={target: 0.7, max_replicas: 4}"},
			path: "backend.replicas", msg: []string{"must be in min_replicas..max_replicas (1..4), got 5"},
		},
		{
			name: "autoscale period not a multiple of the sample interval", sets: []string{"backend.autoscale={target: 0.7, max_replicas: 4, period: 1500ms}"},
			path: "backend.autoscale.period", msg: []string{"must be a positive multiple of sample_interval (1s), got 1500ms"},
		},
		{
			name: "autoscale warm capacity 0", sets: []string{"backend.autoscale={target: 0.7, max_replicas: 4, warmup: 10s, warm_capacity: 0}"},
			path: "backend.autoscale.warm_capacity", msg: []string{"must be in (0, 1]"},
		},
		{
			name: "outlier detection with connections", sets: []string{"backend.replicas=2", "clients.connection={}", "backend.outlier_detection={}"},
			path: "backend.outlier_detection", msg: []string{"does not steer clients.connection's connections"},
		},
		{
			name: "subset with connections", sets: []string{"backend.replicas=4", "clients.connection={}", "backend.subset=2"},
			path: "backend.subset", msg: []string{"does not steer clients.connection's connections"},
		},
		{
			name: "replicas with connections and a network", sets: []string{"backend.replicas=2", "clients.connection={}", "network.delay.mean=1ms"},
			path: "backend.replicas", msg: []string{"not modelled with a network: section yet"},
		},
		{
			name: "autoscale pools over the limit", content: "name: g\nduration: 1m\nclients: {count: 10, arrival: {total_rate: 10/s}}\nservices:\n  - {name: a, workers: 1, replicas: 1, autoscale: {target: 0.5, max_replicas: 200}}\n  - {name: b, workers: 1, replicas: 100}\n",
			path: "services", msg: []string{"300 replicas in all; at most 255"},
		},
		// Network, arrival once, the occ backend.
		{
			name: "negative network delay", sets: []string{"network.delay.mean=-1ms"},
			path: "network.delay.mean", msg: []string{"must be >= 0, got -1ms"},
		},
		{
			name: "sd on a constant delay", sets: []string{"network.delay={dist: constant, mean: 10ms, sd: 2ms}"},
			path: "network.delay.sd", msg: []string{"applies to dist: normal only"},
		},
		{
			name: "unknown delay distribution", sets: []string{"network.delay.dist=pareto"},
			path: "network.delay.dist", msg: []string{`"pareto" is not one of constant, exponential, normal`},
		},
		{
			name: "once with a rate", sets: []string{"clients.arrival.process=once"},
			path: "clients.arrival.process", msg: []string{"remove rate and total_rate"},
		},
		{
			name: "occ without a network", sets: []string{"backend={kind: occ}", "faults=[]"},
			path: "backend.kind", msg: []string{"occ needs a network: section"},
		},
		{
			name: "occ with workers", sets: []string{"backend={kind: occ, workers: 4}", "faults=[]", "network.delay.mean=10ms"},
			path: "backend.workers", msg: []string{"does not apply to backend.kind occ"},
		},
		{
			name: "occ with a capacity fault", sets: []string{"backend={kind: occ}", "network.delay.mean=10ms", "faults.0.kind=capacity", "faults.0.fraction=0.5"},
			path: "faults.0.kind", msg: []string{"only outage faults apply to backend.kind occ"},
		},
		{
			name: "occ with connections", sets: []string{"backend={kind: occ}", "faults=[]", "network.delay.mean=10ms", "clients.connection.connect_timeout=5s"},
			path: "clients.connection", msg: []string{"is not modelled with backend.kind occ"},
		},
		// Connections and startup.
		{
			name: "negative connection limit", sets: []string{"clients.connection.connect_timeout=5s", "backend.connections.limit=-1"},
			path: "backend.connections.limit", msg: []string{"must be >= 0 (0: no limit), got -1"},
		},
		{
			name: "negative connect cost", sets: []string{"clients.connection.connect_timeout=5s", "backend.connections.connect_cost=-1ms"},
			path: "backend.connections.connect_cost", msg: []string{"must be >= 0"},
		},
		{
			name: "zero connect timeout", sets: []string{"clients.connection.connect_timeout=0s"},
			path: "clients.connection.connect_timeout", msg: []string{"must be > 0"},
		},
		{
			name: "jitter window longer than the run", sets: []string{"clients.connection.reconnect.jitter_window=30m"},
			path: "clients.connection.reconnect.jitter_window", msg: []string{"is not shorter than the run"},
		},
		{
			name: "immediate reconnect without a delay", sets: []string{"clients.connection.reconnect.policy=immediate", "clients.connection.reconnect.delay=0s"},
			path: "clients.connection.reconnect.delay", msg: []string{"needs a delay > 0"},
		},
		{
			name: "reconnect backoff cap below base", sets: []string{"clients.connection.reconnect.backoff.cap=100ms"},
			path: "clients.connection.reconnect.backoff.cap", msg: []string{"must be >= base (1s)"},
		},
		{
			name: "unknown reconnect policy", sets: []string{"clients.connection.reconnect.policy=sometimes"},
			path: "clients.connection.reconnect.policy", msg: []string{`"sometimes" is not one of immediate, fixed, backoff`},
		},
		{
			name: "jitter fraction above 1", sets: []string{"clients.connection.reconnect.backoff.jitter_fraction=1.5"},
			path: "clients.connection.reconnect.backoff.jitter_fraction", msg: []string{"must be in [0, 1]"},
		},
		{
			name: "startup window longer than the run", sets: []string{"clients.startup.mode=uniform", "clients.startup.window=1h"},
			path: "clients.startup.window", msg: []string{"is not shorter than the run"},
		},
		{
			name: "ramp without a window", sets: []string{"clients.startup.mode=ramp"},
			path: "clients.startup.window", msg: []string{`mode "ramp" needs a window > 0`},
		},
		{
			name: "disconnect fault without connections", sets: []string{"faults.0={kind: disconnect, start: 1m, fraction: 0.5}"},
			path: "faults.0.kind", msg: []string{"a disconnect fault needs clients.connection"},
		},
		{
			name: "disconnect fraction 0", sets: []string{"clients.connection.connect_timeout=5s", "faults.0={kind: disconnect, start: 1m, fraction: 0}"},
			path: "faults.0.fraction", msg: []string{"must be in (0, 1]"},
		},
		{
			name: "count 0", sets: []string{"clients.count=0"},
			path: "clients.count", msg: []string{"must be >= 1, got 0"},
		},
		{
			name: "count too large", sets: []string{"clients.count=2147483648"},
			path: "clients.count", msg: []string{"must be < 2147483648"},
		},
		{
			name: "both rate and total_rate", sets: []string{"clients.arrival.rate=1/s"},
			path: "clients.arrival.total_rate", msg: []string{"either rate or total_rate, not both"},
		},
		{
			name: "neither rate nor total_rate",
			content: `name: x
clients:
  arrival: {process: constant}
`,
			path: "clients.arrival", line: 3, msg: []string{"set rate", "total_rate"},
		},
		{
			name: "window not divisible by buckets", sets: []string{"clients.throttle.buckets=7"},
			path: "clients.throttle.buckets", msg: []string{"window 2m does not split into 7 equal buckets"},
		},
		{
			name: "buckets 0", sets: []string{"clients.throttle.buckets=0"},
			path: "clients.throttle.buckets", msg: []string{"must be in 1..1000000, got 0"},
		},
		{
			name: "k 0", sets: []string{"clients.throttle.k=0"},
			path: "clients.throttle.k", msg: []string{"must be > 0"},
		},
		{
			name: "empty accept_outcomes", sets: []string{"clients.throttle.accept_outcomes=[]"},
			path: "clients.throttle.accept_outcomes", msg: []string{"at least one outcome"},
		},
		{
			name: "cap below base", sets: []string{"clients.retry.backoff.base=1s", "clients.retry.backoff.cap=500ms"},
			path: "clients.retry.backoff.cap", msg: []string{"must be >= base (1s), got 500ms"},
		},
		{
			name: "max_attempts 0", sets: []string{"clients.retry.max_attempts=0"},
			path: "clients.retry.max_attempts", msg: []string{"must be in 1..255, got 0"},
		},
		{
			name: "multiplier below 1", sets: []string{"clients.retry.backoff.multiplier=0.5"},
			path: "clients.retry.backoff.multiplier", msg: []string{"must be >= 1"},
		},
		{
			name: "decorrelated jitter with base 0", sets: []string{"clients.retry.backoff.jitter=decorrelated", "clients.retry.backoff.base=0"},
			path: "clients.retry.backoff.base", msg: []string{"decorrelated jitter needs base > 0"},
		},
		{
			name: "overlapping faults",
			sets: []string{"faults.1={kind: capacity, start: 80s, duration: 1m}"},
			path: "faults.1.start", msg: []string{"overlaps faults.0 (1m..90s)"},
		},
		{
			name: "overlapping faults listed out of order",
			sets: []string{"faults.1={kind: capacity, start: 50s, duration: 20s}"},
			path: "faults.1.start", msg: []string{"overlaps faults.0"},
		},
		{
			name: "fault ending after the run", sets: []string{"faults.0.duration=5m"},
			path: "faults.0.duration", msg: []string{"the fault ends at 6m, after the run (duration 5m)"},
		},
		{
			name:    "fault without a kind",
			content: validBase + "  - {start: 3m, duration: 10s}\n",
			path:    "faults.1.kind", line: 12, msg: []string{"is required"},
		},
		{
			name: "fault of zero duration", sets: []string{"faults.0.duration=0s"},
			path: "faults.0.duration", msg: []string{"must be > 0"},
		},
		{
			name: "capacity fraction 1", sets: []string{"faults.0.kind=capacity", "faults.0.fraction=1"},
			path: "faults.0.fraction", msg: []string{"must be in [0, 1), got 1"},
		},
		{
			name: "group_size with scope client", sets: []string{"clients.throttle.group_size=10"},
			path: "clients.throttle.group_size", msg: []string{`is 10 but scope is "client"`, "scope: group"},
		},
		{
			name: "stay_fraction above recover_fraction", sets: []string{"metrics.recover_fraction=0.8", "metrics.stay_fraction=0.9"},
			path: "metrics.stay_fraction", msg: []string{"must be in (0, recover_fraction=0.8], got 0.9"},
		},
		{
			name: "recover_fraction above 1", sets: []string{"metrics.recover_fraction=1.5"},
			path: "metrics.recover_fraction", msg: []string{"must be in (0, 1]"},
		},
		{
			name: "first fault at 500ms", sets: []string{"faults.0.start=500ms"},
			path: "faults.0.start", msg: []string{"the first fault starts at 500ms", "at least one metrics interval (1s)", "or start it at 0s"},
		},
		{
			name: "earliest fault listed second too early",
			sets: []string{"faults.1={kind: outage, start: 500ms, duration: 1s}"},
			path: "faults.1.start", msg: []string{"the first fault starts at 500ms"},
		},
		{
			name: "name with a slash", sets: []string{"name=a/b"},
			path: "name", msg: []string{`"a/b"`, "letters, digits"},
		},
		{
			name: "name starting with a dot", sets: []string{"name=.hidden"},
			path: "name", msg: []string{`".hidden"`, "start with a letter or digit"},
		},
		{
			name: "name missing",
			content: `clients:
  arrival: {total_rate: 1/s}
`,
			path: "name", msg: []string{"is required"},
		},
		{
			name: "duration 0", sets: []string{"duration=0", "faults=null"},
			path: "duration", msg: []string{"must be > 0"},
		},
		{
			name: "interval longer than the run", sets: []string{"metrics.interval=10m"},
			path: "metrics.interval", msg: []string{"longer than the run"},
		},
		{
			name: "too many rows", sets: []string{"duration=2h", "metrics.interval=500us", "faults=null"},
			path: "metrics.interval", msg: []string{"makes 14400000 rows (about 5.76 GB of memory); at most 10000000"},
		},
		{
			name: "recovery_window not a multiple of the interval", sets: []string{"metrics.recovery_window=1500ms"},
			path: "metrics.recovery_window", msg: []string{"positive multiple of metrics.interval (1s), got 1500ms"},
		},
		{
			name: "baseline 0", sets: []string{"metrics.baseline=0"},
			path: "metrics.baseline", msg: []string{"positive multiple"},
		},
		{
			name: "profile steps out of order",
			sets: []string{"clients.arrival.profile=[{at: 2m, multiplier: 2}, {at: 1m}]"},
			path: "clients.arrival.profile.1.at", msg: []string{"increasing time order"},
		},
		{
			name: "profile step after the run",
			sets: []string{"clients.arrival.profile=[{at: 5m}]"},
			path: "clients.arrival.profile.0.at", msg: []string{"must be in [0, duration=5m)"},
		},
		{
			name: "negative multiplier",
			sets: []string{"clients.arrival.profile=[{at: 1m, multiplier: -1}]"},
			path: "clients.arrival.profile.0.multiplier", msg: []string{"must be >= 0"},
		},
		{
			name: "negative timeout", sets: []string{"clients.timeout=-1s"},
			path: "clients.timeout", msg: []string{"got -1s"},
		},
		{
			name: "workers 0", sets: []string{"backend.workers=0"},
			path: "backend.workers", msg: []string{"must be in 1..10000000, got 0"},
		},
		{
			name: "service mean 0", sets: []string{"backend.service.mean=0"},
			path: "backend.service.mean", msg: []string{"must be > 0"},
		},
		{
			name: "lognormal sigma 0", sets: []string{"backend.service.dist=lognormal", "backend.service.sigma=0"},
			path: "backend.service.sigma", msg: []string{"must be in (0, 5] for a lognormal"},
		},
		{
			name: "negative queue limit", sets: []string{"backend.queue.limit=-1"},
			path: "backend.queue.limit", msg: []string{"must be in 0..100000000, got -1"},
		},
		{
			name: "negative reject_cost", sets: []string{"backend.reject_cost=-5ms"},
			path: "backend.reject_cost", msg: []string{"must be >= 0"},
		},
		{
			name: "negative retry_after on a fault", sets: []string{"faults.0.retry_after=-1s"},
			path: "faults.0.retry_after", msg: []string{"must be >= 0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content := tc.content
			if content == "" {
				content = validBase
			}
			file, errs := loadErrs(t, content, tc.sets...)
			e := findErr(errs, tc.path)
			if e == nil {
				t.Fatalf("got problems at %q, want one at %q:\n%v", errPaths(errs), tc.path, errs)
			}
			if e.File != file {
				t.Errorf("File: got %q, want %q", e.File, file)
			}
			if tc.line != 0 && e.Pos.Line != tc.line {
				t.Errorf("line: got %d, want %d (%v)", e.Pos.Line, tc.line, e)
			}
			if len(tc.sets) > 0 && e.Pos.Line == 0 && e.Pos.Set == 0 && tc.path != "name" {
				t.Errorf("position: got none, want the line or the --set that gave the field (%v)", e)
			}
			for _, s := range tc.msg {
				if !strings.Contains(e.Msg, s) {
					t.Errorf("message: got %q, want it to contain %q", e.Msg, s)
				}
			}
			for _, e := range errs {
				if strings.Contains(e.Msg, long) || len(e.Msg) > 2000 {
					t.Errorf("%s: a %d-byte message quotes a string too long to print", e.Path, len(e.Msg))
				}
			}
		})
	}
}

// long is one character over MaxLabelLen.
var long = strings.Repeat("x", MaxLabelLen+1)

// TestValidationPointsAtTheLine: a rule broken in the file is reported at
// the field's line and column; a rule about a field the file leaves out is
// reported at the nearest enclosing mapping the file gives.
func TestValidationPointsAtTheLine(t *testing.T) {
	_, errs := loadErrs(t, `name: t
duration: 5m
clients:
  arrival: {total_rate: 100/s}
  throttle:
    window: 2m
    buckets: 7
faults:
  - {start: 2m, duration: 10s}
`)
	tests := []struct {
		path      string
		line, col int
	}{
		{"clients.throttle.buckets", 7, 14},
		{"faults.0.kind", 9, 5},
	}
	for _, tc := range tests {
		e := findErr(errs, tc.path)
		if e == nil {
			t.Errorf("got problems at %q, want one at %q", errPaths(errs), tc.path)
			continue
		}
		if e.Pos.Line != tc.line || e.Pos.Col != tc.col {
			t.Errorf("%s: got %d:%d, want %d:%d", tc.path, e.Pos.Line, e.Pos.Col, tc.line, tc.col)
		}
	}
}

func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("found no scenarios/*.yaml files, want at least one")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := Load(f, nil)
			if err != nil {
				t.Fatalf("Load: got error\n%v\nwant none", err)
			}
			if err := sc.Validate(); err != nil {
				t.Errorf("Validate: got %v, want nil", err)
			}
			if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); sc.Name != want {
				t.Errorf("name: got %q, want the file's base name %q", sc.Name, want)
			}
		})
	}
}

// Regression tests for bugs found by review and fuzzing: scenarios that
// validated but could not run.

// A rate whose number is finite but whose value per second overflows to
// +Inf passes the loader and validation; `throttlesim run` then never ends.
func TestRejectsInfiniteRate(t *testing.T) {
	for _, rate := range []string{"1e300/1ns", "1.7e308/ms"} {
		sc, err := Parse([]byte("name: x\nclients: {arrival: {total_rate: "+rate+"}}\n"), "x.yaml", nil)
		if err == nil {
			t.Errorf("total_rate %s: got %v/s and no error, want an error (the rate is not finite)", rate, float64(sc.Clients.Arrival.TotalRate))
		}
	}
}

// start + duration of a fault overflows int64, so the "ends after the run"
// check passes for a fault that starts 2,000,000 hours into a 10-minute run.
// sim.Run then panics: "engine: event scheduled in the past".
func TestRejectsFaultEndOverflow(t *testing.T) {
	sc, err := Parse([]byte(`name: x
duration: 10m
clients: {arrival: {total_rate: 100/s}}
faults:
  - {kind: outage, start: 2000000h, duration: 2000000h}
`), "x.yaml", nil)
	if err == nil {
		end := new(big.Int).Add(big.NewInt(int64(sc.Faults[0].Start)), big.NewInt(int64(sc.Faults[0].Duration)))
		t.Errorf("got a valid scenario whose fault ends at %s ns (Fault.End() = %d), after the run (%d ns); want a faults.0 error",
			end, int64(sc.Faults[0].End()), int64(sc.Duration))
	}
}

// Intervals computes (duration + interval - 1) / interval, which overflows
// for a valid duration near the int64 limit. sim.Run then panics in
// metrics.NewSeries: "makeslice: len out of range".
func TestRejectsIntervalsOverflow(t *testing.T) {
	sc, err := Parse([]byte(`name: x
duration: 2562047h
metrics: {interval: 1h, recovery_window: 1h, baseline: 1h}
clients: {arrival: {total_rate: 100/s}}
`), "x.yaml", nil)
	if err != nil {
		return // rejecting such a run is a fix too
	}
	want := int(math.Ceil(float64(sc.Duration) / float64(sc.Metrics.Interval)))
	if got := sc.Intervals(); got != want {
		t.Errorf("Intervals(): got %d, want %d", got, want)
	}
}

// A budget field given as 0 means 0; a field not given takes the kind's
// default (and the resolved scenario states it).
func TestBudgetZeroIsZero(t *testing.T) {
	load := func(extra string) *Scenario {
		t.Helper()
		sc, err := Parse([]byte("name: b\nclients:\n  arrival: {total_rate: 10/s}\n  retry:\n    budget: {kind: aws"+extra+"}\n"), "b.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	if c := load(", no_retry_increment: 0").Clients.Retry.Budget.BudgetConfig(); c.NoRetryIncrement != 0 || c.Capacity != 500 {
		t.Errorf("no_retry_increment: 0 gave %d (capacity %d)", c.NoRetryIncrement, c.Capacity)
	}
	b := load("").Clients.Retry.Budget
	if c := b.BudgetConfig(); c.NoRetryIncrement != 1 {
		t.Errorf("default no_retry_increment %d, want 1", c.NoRetryIncrement)
	}
	if b.NoRetryIncrement == nil || *b.NoRetryIncrement != 1 || b.Ratio != nil {
		t.Errorf("resolved budget: no_retry_increment %v, ratio %v; want 1 and not set (an SRE field)", b.NoRetryIncrement, b.Ratio)
	}
}

// Brooker's 2022 budgets: the defaults of his simulator, a capacity given
// alone also sets the initial level (full at start), 0 means 0, and bad
// fields are reported at their own path and line.
func TestBudgetBrooker2022Fields(t *testing.T) {
	parse := func(budget string) (*Scenario, error) {
		return Parse([]byte("name: b\nclients:\n  arrival: {total_rate: 10/s}\n  retry:\n    budget: "+budget+"\n"), "b.yaml", nil)
	}
	tests := []struct {
		budget string
		want   policy.BudgetConfig
	}{
		{"{kind: token-bucket}", policy.TokenBucketDefaults()},
		{"{kind: token-bucket, bucket_capacity: 10}", policy.BudgetConfig{Kind: policy.BudgetTokenBucket, BucketCapacity: 10, BucketInitial: 10, Deposit: 0.1, Threshold: 1, Cost: 1}},
		{"{kind: token-bucket, bucket_initial: 0, bucket_threshold: 0}", policy.BudgetConfig{Kind: policy.BudgetTokenBucket, BucketCapacity: 5, Deposit: 0.1, Cost: 1}},
		{"{kind: retry-breaker}", policy.RetryBreakerDefaults()},
		{"{kind: retry-breaker, max_failure_rate: 0.2, window: 10s}", policy.BudgetConfig{Kind: policy.BudgetRetryBreaker, MaxFailureRate: 0.2, Window: 10e9, Buckets: 10}},
	}
	for _, tt := range tests {
		sc, err := parse(tt.budget)
		if err != nil {
			t.Errorf("%s: %v", tt.budget, err)
			continue
		}
		// Only the kind's own fields: the others (SRE's window buckets)
		// are ignored by these kinds.
		own := func(c policy.BudgetConfig) [8]float64 {
			return [8]float64{float64(c.Kind), c.BucketCapacity, c.BucketInitial, c.Deposit, c.Threshold, c.Cost, c.MaxFailureRate, float64(c.Window)}
		}
		if got := sc.Clients.Retry.Budget.BudgetConfig(); own(got) != own(tt.want) || (got.Window > 0 && got.Buckets != tt.want.Buckets) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.budget, got, tt.want)
		}
	}
	bad := []struct{ budget, path, msg string }{
		{"{kind: token-bucket, bucket_cost: 0}", "clients.retry.budget.bucket_cost", "must be at least 0.001 tokens"},
		{"{kind: token-bucket, bucket_initial: 6}", "clients.retry.budget.bucket_initial", "must not exceed bucket_capacity (5), got 6"},
		{"{kind: token-bucket, bucket_deposit: -1}", "clients.retry.budget.bucket_deposit", "must be in [0, 1000000] tokens, got -1"},
		{"{kind: retry-breaker, max_failure_rate: -0.1}", "clients.retry.budget.max_failure_rate", "must be in [0, 1000000]"},
		{"{kind: retry-breaker, window: 100us}", "clients.retry.budget.window", "must be 0 or at least 1ms"},
	}
	for _, tt := range bad {
		_, err := parse(tt.budget)
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Errorf("%s: want one error, got %v", tt.budget, err)
			continue
		}
		if e := es[0]; e.Path != tt.path || !strings.Contains(e.Msg, tt.msg) || e.Pos.Line != 5 || e.File != "b.yaml" {
			t.Errorf("%s: got %s (line %d), want %s: ...%s... at line 5", tt.budget, e, e.Pos.Line, tt.path, tt.msg)
		}
	}
}

// The breaker styles take their library's choices; the fields
// open_expiry, trip_check and open_jitter_order override them, and the
// resolved scenario states the effective values.
func TestBreakerLibraryChoices(t *testing.T) {
	for _, tt := range []struct {
		breaker                       string
		strict, failuresOnly, jitter1 bool
		expiry, check, order          string
	}{
		{"{}", true, true, false, "after", "failures", "cap-then-jitter"},
		{"{style: resilience4j}", true, false, true, "after", "results", "jitter-then-cap"},
		{"{open_expiry: at, trip_check: results, open_jitter_order: jitter-then-cap}", false, false, true, "at", "results", "jitter-then-cap"},
		{"{style: resilience4j, open_expiry: at, trip_check: failures, open_jitter_order: cap-then-jitter}", false, true, false, "at", "failures", "cap-then-jitter"},
	} {
		sc, err := Parse([]byte("name: b\nclients:\n  arrival: {total_rate: 10/s}\n  breaker: "+tt.breaker+"\n"), "b.yaml", nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.breaker, err)
		}
		b := sc.Clients.Breaker
		c := b.BreakerConfig()
		if c.StrictExpiry != tt.strict || c.TripOnFailuresOnly != tt.failuresOnly || c.JitterBeforeCap != tt.jitter1 {
			t.Errorf("%s: strict %v, failures only %v, jitter before cap %v", tt.breaker, c.StrictExpiry, c.TripOnFailuresOnly, c.JitterBeforeCap)
		}
		if string(b.OpenExpiry) != tt.expiry || string(b.TripCheck) != tt.check || string(b.OpenJitterOrder) != tt.order {
			t.Errorf("%s: resolved %q %q %q, want %q %q %q", tt.breaker, b.OpenExpiry, b.TripCheck, b.OpenJitterOrder, tt.expiry, tt.check, tt.order)
		}
	}
}

// dist: mixture and dist: empirical (issue 16 item 3): the file is read
// relative to the scenario file's folder, its hash is recorded, and a bad
// line is reported at the data file's own line.
func TestServiceMixtureAndEmpirical(t *testing.T) {
	parse := func(service string) (*Scenario, error) {
		return Parse([]byte("name: s\nclients:\n  arrival: {total_rate: 10/s}\nbackend:\n  service: "+service+"\n"),
			filepath.Join("testdata", "empirical", "s.yaml"), nil)
	}
	sc, err := parse("{dist: mixture, components: [{weight: 95, dist: constant, mean: 100ms}, {weight: 5, dist: constant, mean: 100s}]}")
	if err != nil {
		t.Fatal(err)
	}
	if c := sc.Backend.Service.Components; len(c) != 2 || c[1].Mean != Duration(100*time.Second) || c[0].Weight != 95 {
		t.Errorf("components %+v", c)
	}
	sc, err = parse("{dist: empirical, file: quantiles.txt}")
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Backend.Service.Empirical
	if e == nil || e.Len() != 4 || e.Quantile(0.99) != 1e9 || len(sc.Backend.Service.FileSHA256) != 64 {
		t.Fatalf("empirical %+v, sha %q", e, sc.Backend.Service.FileSHA256)
	}
	sc, err = parse("{dist: empirical, file: samples.txt}")
	if err != nil {
		t.Fatal(err)
	}
	if e := sc.Backend.Service.Empirical; e.Len() != 3 || e.Mean() != 100e6 {
		t.Errorf("samples: %d, mean %v; want 3 and 100 ms", e.Len(), e.Mean())
	}
	dir := filepath.Join("testdata", "empirical")
	for _, tt := range []struct{ service, want string }{
		{"{dist: empirical, file: bad-order.txt}", filepath.Join(dir, "bad-order.txt") + ":3:1: quantiles must increase: 0.4 after 0.5"},
		{"{dist: empirical, file: mixed.txt}", filepath.Join(dir, "mixed.txt") + `:2:1: expected one duration (a sample), like line 1, got "0.5, 100ms"`},
		{"{dist: empirical, file: bad-duration.txt}", filepath.Join(dir, "bad-duration.txt") + `:2:1: "fast"`},
		{"{dist: empirical, file: nothere.txt}", "backend.service.file: no such file " + filepath.Join(dir, "nothere.txt")},
		{"{dist: empirical, file: samples.txt, file_sha256: 00}", "backend.service.file_sha256: " + filepath.Join(dir, "samples.txt") + " has SHA-256"},
		{"{dist: empirical}", "backend.service.file: dist: empirical needs a file"},
		{"{dist: mixture}", "backend.service.components: a mixture needs 1 to 255 components"},
		{"{dist: mixture, components: [{weight: 0, dist: constant, mean: 1s}]}", "backend.service.components.0.weight: must be a finite number > 0"},
		{"{dist: mixture, components: [{weight: 1, dist: lognormal, mean: 1s}]}", "backend.service.components.0.sigma: must be in (0, 5] for a lognormal"},
		{"{dist: mixture, components: [{weight: 1, dist: empirical, mean: 1s}]}", `backend.service.components.0.dist: "empirical" is not one of constant, exponential, lognormal`},
		{"{dist: exponential, mean: 1s, file: samples.txt}", "backend.service.file: applies to dist: empirical and histogram only"},
	} {
		_, err := parse(tt.service)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", tt.service, err, tt.want)
		}
	}
}

// The slowdown fault's fields (issue 16 item 4): one of factor and
// service, applies_to defaults to start, the fields are refused on other
// kinds, and a replacement service is checked at its own path.
func TestSlowdownFaultFields(t *testing.T) {
	parse := func(fault string) (*Scenario, error) {
		return Parse([]byte("name: s\nclients:\n  arrival: {total_rate: 10/s}\nfaults:\n  - "+fault+"\n"), "s.yaml", nil)
	}
	sc, err := parse("{kind: slowdown, start: 1m, duration: 10s, factor: 3}")
	if err != nil {
		t.Fatal(err)
	}
	if f := sc.Faults[0]; f.AppliesTo != SlowStart || f.Factor != 3 {
		t.Errorf("resolved %+v, want applies_to start and factor 3", f)
	}
	if _, err := parse("{kind: slowdown, start: 1m, duration: 10s, service_time: {dist: mixture, components: [{weight: 1, dist: constant, mean: 2s}]}, applies_to: arrival}"); err != nil {
		t.Errorf("a replacement mixture: %v", err)
	}
	for _, tt := range []struct{ fault, want string }{
		{"{kind: slowdown, start: 1m, duration: 10s}", "faults.0.factor: a slowdown needs factor"},
		{"{kind: slowdown, start: 1m, duration: 10s, factor: 2, service_time: {dist: constant, mean: 1s}}", "faults.0.factor: a slowdown needs factor"},
		{"{kind: slowdown, start: 1m, duration: 10s, factor: -2}", "faults.0.factor: must be in (0, 1000000]"},
		{"{kind: slowdown, start: 1m, duration: 10s, service_time: {mean: 1s}}", `faults.0.service_time.dist: a slowdown's service_time is constant, exponential, lognormal or mixture, got ""`},
		{"{kind: slowdown, start: 1m, duration: 10s, service_time: {dist: lognormal, mean: 1s}}", "faults.0.service_time.sigma: must be in (0, 5] for a lognormal"},
		{"{kind: slowdown, start: 1m, duration: 10s, factor: 2, applies_to: finish}", `faults.0.applies_to: "finish" is not one of start, arrival`},
		{"{kind: outage, start: 1m, duration: 10s, factor: 2}", "faults.0.kind: factor, service_time and applies_to are for kind: slowdown only"},
	} {
		if _, err := parse(tt.fault); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", tt.fault, err, tt.want)
		}
	}
}
