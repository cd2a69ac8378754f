package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/plots"
)

// metricLabels name the metrics of Metrics (and the thresholds' other
// figures) for people, with their units. A name not here is made
// readable by humanKey.
var metricLabels = map[string]string{
	"recovery_time_s":                    "recovery time (s after the fault)",
	"recovery_s":                         "recovery time (s after the fault)",
	"peak_received_over_capacity":        "peak load ÷ capacity",
	"amplification":                      "amplification (attempts per request)",
	"success_ratio":                      "success",
	"local_drop_rate":                    "dropped locally",
	"wasted_work_fraction":               "wasted work (of worker time)",
	"latency_p50_ms":                     "p50 latency (ms)",
	"latency_p90_ms":                     "p90 latency (ms)",
	"latency_p99_ms":                     "p99 latency (ms)",
	"latency_max_ms":                     "max latency (ms)",
	"last_success_s":                     "last success (s from start)",
	"backend_received":                   "attempts received by the backend",
	"fault_load_over_effective_capacity": "load during the fault ÷ capacity left",
	"fault_success_ratio":                "success during the fault",
	"time_above_capacity_s":              "time above capacity (s)",
	"recovery_wasted_fraction":           "wasted work while recovering (of worker time)",
	"connect_attempts":                   "connect attempts",
	"reconnected_all_s":                  "all reconnected (s after the fault)",
	"reconnected_99_s":                   "99% reconnected (s after the fault)",
	"replicas_peak":                      "peak replicas",
	"replicas_mean":                      "mean replicas",
	"utilisation":                        "utilisation (of worker time)",
	"mean_queue_wait_ms":                 "mean queue wait (ms)",
	"backend_rejected":                   "attempts rejected by the backend",
	"peak_connect_rate_over_capacity":    "peak connect rate ÷ handshake capacity",
	"wasted_handshake_fraction":          "wasted handshake work",
}

// MetricLabel is a metric's (or a threshold figure's) name for people:
// "success" for success_ratio; a name without a label loses its
// underscores and shows its unit ("mean_queue_wait_ms" would be "mean
// queue wait (ms)").
func MetricLabel(name string) string {
	if l, ok := metricLabels[name]; ok {
		return l
	}
	return humanKey(name)
}

// humanKey makes a snake_case key readable: words split, a unit suffix
// (_s, _ms) in brackets.
func humanKey(name string) string {
	words := strings.Split(name, "_")
	unit := ""
	if n := len(words); n > 1 {
		switch words[n-1] {
		case "s", "ms":
			unit, words = " ("+words[n-1]+")", words[:n-1]
		}
	}
	return strings.Join(words, " ") + unit
}

// countMetrics are counts: shown whole, with thousands separators.
var countMetrics = map[string]bool{"backend_received": true, "connect_attempts": true, "offered": true,
	"failed": true, "attempts": true, "backend_rejected": true}

// percentMetric reports whether a metric is a share (shown as 79.1%, as
// the CLI prints it).
func percentMetric(name string) bool {
	for _, suf := range []string{"_ratio", "_rate", "_fraction"} {
		if strings.HasSuffix(name, suf) && !strings.HasSuffix(name, "_over_capacity") {
			return true
		}
	}
	return name == "utilisation"
}

// Show formats a metric's value for a page as the CLI prints it: shares
// as percentages ("79.1%"), counts whole with thousands separators
// ("533,394"), other figures to four significant digits with thousands
// separators.
func Show(metric string, x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'f', -1, 64)
	case percentMetric(metric):
		return pctNum(100*x) + "%"
	case countMetrics[metric]:
		return group(strconv.FormatFloat(math.Round(x), 'f', 0, 64))
	}
	return group(Num(x))
}

// group puts thousands separators in a formatted number, as the charts do.
func group(s string) string { return plots.SeparateThousands(s) }

// ShowDiff formats a difference of a metric: percentage points for a
// share ("+12.4 points"), else the metric's own unit, signed.
func ShowDiff(metric string, d float64) string {
	if percentMetric(metric) {
		return signed(metric, d) + " points"
	}
	return signed(metric, d)
}

// signed is a difference of a metric with its sign: for a share, in
// percentage points without the unit ("+12.4").
func signed(metric string, d float64) string {
	sign := ""
	if d > 0 {
		sign = "+"
	}
	if percentMetric(metric) {
		return sign + pctNum(100*d)
	}
	return sign + Show(metric, d)
}

// pctNum is a percentage's number: one decimal, more for a small one.
func pctNum(v float64) string {
	return strconv.FormatFloat(v, 'f', min(max(Decimals(v)-2, 1), 4), 64)
}

// paramLabels name the fields sweeps vary most.
var paramLabels = map[string]string{
	"clients.throttle.k":              "throttle K",
	"clients.throttle.window":         "throttle window",
	"clients.retry.max_attempts":      "max attempts",
	"clients.retry.budget":            "retry budget",
	"clients.arrival.total_rate":      "arrival rate",
	"clients.count":                   "clients",
	"clients.timeout":                 "client timeout",
	"backend.workers":                 "workers",
	"backend.queue.limit":             "queue limit",
	"backend.replicas":                "replicas",
	"backend.service.mean":            "mean service time",
	"clients.retry.backoff.base":      "backoff base",
	"clients.retry.backoff.cap":       "backoff cap",
	"clients.retry.backoff.jitter":    "backoff jitter",
	"clients.throttle":                "throttle",
	"clients.retry":                   "retry",
	"clients.breaker":                 "breaker",
	"clients.rate_limiter":            "rate limiter",
	"backend.queue.discipline":        "queue discipline",
	"backend.reject_cost":             "reject cost",
	"clients.connection":              "connection",
	"clients.arrival.process":         "arrival process",
	"clients.throttle.group_size":     "throttle group size",
	"clients.throttle.scope":          "throttle scope",
	"backend.error_rate":              "error rate",
	"clients.retry.budget.ratio":      "retry budget ratio",
	"clients.retry.honor_retry_after": "honour Retry-After",
}

// ParamLabel is a scenario field's path for people: "throttle K" for
// clients.throttle.k; another path is its last two elements, readable
// ("clients.arrival.profile.1.at" is "profile #1 at", a unit given
// after it in brackets is kept).
func ParamLabel(path string) string {
	path, unit, _ := strings.Cut(path, " (")
	if unit != "" {
		unit = " (" + unit
	}
	if l, ok := paramLabels[path]; ok {
		return l + unit
	}
	els := strings.Split(path, ".")
	var words []string
	for i := len(els) - 1; i >= 0 && len(words) < 2; i-- {
		e := els[i]
		if _, err := strconv.Atoi(e); err == nil && i > 0 {
			els[i-1] += " #" + e
			continue
		}
		words = append([]string{strings.ReplaceAll(e, "_", " ")}, words...)
	}
	return strings.Join(words, " ") + unit
}
