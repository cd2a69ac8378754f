package threshold

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/internal/suggest"
	"github.com/throttlesim/throttlesim/sim/metrics"
)

// Threshold is one parsed criterion.
type Threshold struct {
	Metric string
	Op     string
	Value  float64
	Source string // the text it was parsed from, trimmed
}

func (t Threshold) String() string { return t.Source }

type metric struct {
	about string
	get   func(*metrics.Summary) (float64, bool)
}

func f(get func(*metrics.Summary) *float64) func(*metrics.Summary) (float64, bool) {
	return func(s *metrics.Summary) (float64, bool) {
		if p := get(s); p != nil {
			return *p, true
		}
		return 0, false
	}
}

func n(get func(*metrics.Summary) int64) func(*metrics.Summary) (float64, bool) {
	return func(s *metrics.Summary) (float64, bool) { return float64(get(s)), true }
}

func conn(get func(*metrics.ConnSummary) *float64) func(*metrics.Summary) (float64, bool) {
	return func(s *metrics.Summary) (float64, bool) {
		if s.Connections == nil {
			return 0, false
		}
		if p := get(s.Connections); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// table maps every metric name to its meaning and its value in a summary.
var table = map[string]metric{
	"recovery_s":                         {"seconds from the end of the fault to recovery (none if not recovered)", f(func(s *metrics.Summary) *float64 { return s.Recovery.RecoveryTimeS })},
	"recovered":                          {"1 if the run recovered after its fault, else 0 (none without a fault)", recovered},
	"success_ratio":                      {"succeeded ÷ offered application requests", f(func(s *metrics.Summary) *float64 { return s.SuccessRatio })},
	"local_drop_rate":                    {"application requests dropped by the client's own policies ÷ offered", f(func(s *metrics.Summary) *float64 { return s.LocalDropRate })},
	"amplification":                      {"attempts sent per application request", f(func(s *metrics.Summary) *float64 { return s.Amplification })},
	"peak_received_over_capacity":        {"peak per-interval rate received by the backend ÷ its capacity", f(func(s *metrics.Summary) *float64 { return s.PeakReceivedOverCapacity })},
	"wasted_work_fraction":               {"share of worker time spent on work nobody used", f(func(s *metrics.Summary) *float64 { return s.WastedWorkFraction })},
	"utilisation":                        {"worker time used ÷ worker time available", f(func(s *metrics.Summary) *float64 { return s.Utilisation })},
	"latency_p50_ms":                     {"median latency of successful requests, ms", f(func(s *metrics.Summary) *float64 { return s.LatencyP50MS })},
	"latency_p99_ms":                     {"99th percentile latency of successful requests, ms", f(func(s *metrics.Summary) *float64 { return s.LatencyP99MS })},
	"mean_queue_wait_ms":                 {"mean time an accepted attempt waited in the queue, ms", f(func(s *metrics.Summary) *float64 { return s.MeanQueueWaitMS })},
	"last_success_s":                     {"time of the last success, seconds from the start", f(func(s *metrics.Summary) *float64 { return s.LastSuccessS })},
	"fault_load_over_effective_capacity": {"attempts received during the faults ÷ what the capacity left could serve", f(func(s *metrics.Summary) *float64 { return s.FaultLoadOverCapacity })},
	"fault_success_ratio":                {"succeeded ÷ offered over the metrics intervals that overlap a fault", f(func(s *metrics.Summary) *float64 { return s.FaultSuccessRatio })},
	"time_above_capacity_s":              {"seconds the backend received more than its effective capacity", f(func(s *metrics.Summary) *float64 { return s.TimeAboveCapacityS })},
	"recovery_wasted_fraction":           {"share of worker time wasted from the fault's end to recovery (or the end)", f(func(s *metrics.Summary) *float64 { return s.RecoveryWastedFraction })},
	"offered":                            {"application requests offered", n(func(s *metrics.Summary) int64 { return s.Offered })},
	"failed":                             {"application requests that failed", n(func(s *metrics.Summary) int64 { return s.Failed })},
	"attempts":                           {"attempts sent", n(func(s *metrics.Summary) int64 { return s.Attempts })},
	"backend_received":                   {"attempts received by the backend", n(func(s *metrics.Summary) int64 { return s.Received })},
	"backend_rejected":                   {"attempts rejected by the backend", n(func(s *metrics.Summary) int64 { return s.Rejected })},
	"connect_attempts": {"connection attempts (none without clients.connection)", func(s *metrics.Summary) (float64, bool) {
		if s.Connections == nil {
			return 0, false
		}
		return float64(s.Connections.ConnectAttempts), true
	}},
	"replicas_peak": {"most replicas taking work at once (none without an autoscaler)", func(s *metrics.Summary) (float64, bool) {
		if s.Replicas == nil {
			return 0, false
		}
		return float64(s.Replicas.Peak), true
	}},
	"replicas_mean": {"time-mean of the replicas taking work (none without an autoscaler)", func(s *metrics.Summary) (float64, bool) {
		if s.Replicas == nil {
			return 0, false
		}
		return s.Replicas.Mean, true
	}},
	"peak_connect_rate_over_capacity": {"peak connect rate ÷ handshake capacity", conn(func(c *metrics.ConnSummary) *float64 { return c.PeakConnectRateOverCapacity })},
	"wasted_handshake_fraction":       {"share of handshake work that connected nobody", conn(func(c *metrics.ConnSummary) *float64 { return c.WastedHandshakeFraction })},
	"reconnected_99_s":                {"seconds from the fault's end until 99% of clients were connected", conn(func(c *metrics.ConnSummary) *float64 { return c.Reconnected99S })},
	"reconnected_all_s":               {"seconds from the fault's end until every client was connected", conn(func(c *metrics.ConnSummary) *float64 { return c.ReconnectedAllS })},
}

func recovered(s *metrics.Summary) (float64, bool) {
	if !s.Recovery.Applicable {
		return 0, false
	}
	if s.Recovery.Recovered {
		return 1, true
	}
	return 0, true
}

// Names are the metric names a threshold may use, sorted.
func Names() []string {
	names := make([]string, 0, len(table))
	for k := range table {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// About says what a metric name measures ("" for an unknown name).
func About(name string) string { return table[name].about }

// Value is the metric's value in a summary; ok is false when the summary
// has none (a run that did not recover has no recovery_s).
func Value(name string, s *metrics.Summary) (v float64, ok bool) {
	m, found := table[name]
	if !found {
		return 0, false
	}
	return m.get(s)
}

var ops = []string{"<=", ">=", "==", "<", ">"} // two-character operators first

// Parse reads one threshold. Its errors say what was expected, and for a
// misspelt metric name which name was meant.
func Parse(s string) (Threshold, error) {
	src := strings.TrimSpace(s)
	i, op := -1, ""
	for _, o := range ops {
		if j := strings.Index(src, o); j >= 0 && (i < 0 || j < i) {
			i, op = j, o
		}
	}
	if i < 0 {
		if strings.Contains(src, "!=") || strings.Contains(src, "=") {
			return Threshold{}, fmt.Errorf("%q: the operator must be one of <, <=, >, >=, == (e.g. recovery_s<=120)", src)
		}
		return Threshold{}, fmt.Errorf("%q: expected METRIC OP VALUE, e.g. recovery_s<=120 or success_ratio>=0.99", src)
	}
	name := strings.TrimSpace(src[:i])
	val := strings.TrimSpace(src[i+len(op):])
	if name == "" {
		return Threshold{}, fmt.Errorf("%q: no metric before %s; expected METRIC OP VALUE, e.g. recovery_s<=120", src, op)
	}
	if _, ok := table[name]; !ok {
		msg := fmt.Sprintf("%q: unknown metric %q", src, name)
		if sug := suggest.Closest(name, Names()); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		}
		return Threshold{}, fmt.Errorf("%s; the metrics are %s", msg, strings.Join(Names(), ", "))
	}
	if val == "" {
		return Threshold{}, fmt.Errorf("%q: no value after %s; expected a number, e.g. %s%s120", src, op, name, op)
	}
	scale := 1.0
	if num, ok := strings.CutSuffix(val, "%"); ok {
		val, scale = strings.TrimSpace(num), 0.01
	}
	x, err := strconv.ParseFloat(val, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return Threshold{}, fmt.Errorf("%q: the value %q is not a number (a plain number such as 120 or 0.99, or a percentage such as 99%%; no units)", src, val)
	}
	return Threshold{Metric: name, Op: op, Value: x * scale, Source: name + op + strconv.FormatFloat(x*scale, 'g', -1, 64)}, nil
}

// ParseAll parses every threshold, returning the first error.
func ParseAll(ss []string) ([]Threshold, error) {
	var ts []Threshold
	for _, s := range ss {
		t, err := Parse(s)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Holds reports whether x meets the threshold.
func (t Threshold) Holds(x float64) bool {
	switch t.Op {
	case "<":
		return x < t.Value
	case "<=":
		return x <= t.Value
	case ">":
		return x > t.Value
	case ">=":
		return x >= t.Value
	case "==":
		return x == t.Value
	}
	panic("threshold: unknown operator " + t.Op) // Parse makes only the above
}

// Verdict is a threshold checked against a set of runs (one for a run,
// every replication of a sweep point).
type Verdict struct {
	Threshold Threshold
	Runs      int      // runs checked
	Passed    int      // runs that met it
	Missing   int      // runs without a value (they fail)
	Worst     *float64 // the value farthest on the failing side, nil if no run has one
}

// OK reports whether every run met the threshold (and there was a run).
func (v Verdict) OK() bool { return v.Runs > 0 && v.Passed == v.Runs }

// Check checks the threshold on every summary.
func (t Threshold) Check(ss ...*metrics.Summary) Verdict {
	v := Verdict{Threshold: t, Runs: len(ss)}
	lower := t.Op == ">" || t.Op == ">=" // the failing side is low
	for _, s := range ss {
		x, ok := Value(t.Metric, s)
		if !ok {
			v.Missing++
			continue
		}
		if t.Holds(x) {
			v.Passed++
		}
		if v.Worst == nil || (lower && x < *v.Worst) || (!lower && x > *v.Worst) {
			w := x
			v.Worst = &w
		}
	}
	return v
}
