package fit

import (
	"fmt"
	"strings"
	"time"
)

// Names are the metric names fit reads, by what they mean.
type Names struct {
	// Requests is a counter of the requests answered, labelled by status
	// code (CodeLabel): http_requests_total.
	Requests  string
	CodeLabel string
	// Arrivals is the counter expression (a metric with matchers) whose
	// rate is every request that arrived, answered or not; "" uses
	// Requests.
	Arrivals string
	// Duration is the histogram (base name, without _bucket) of service
	// times, or of request durations (arrival to answer) when the server
	// has no service-time histogram; DurationFilter are matchers on it
	// (code=~"2.." keeps successes).
	Duration       string
	DurationFilter string
	// ServiceTimes: Duration measures service times alone, without the
	// wait in the queue (serve's does); else fit takes it from the steps
	// without rejections only.
	ServiceTimes bool
	// InFlight is a gauge of requests in the server (queued and in
	// service); Workers a gauge of the workers available; Down a gauge
	// that is 1 during an outage. Any may be "" (not exposed).
	InFlight, Workers, Down string
	// Latency is the histogram (without _bucket) of request durations,
	// arrival to answer, with LatencyFilter its matchers: the recorded
	// latency the fit report compares with the simulated one. "" uses
	// Duration (a request-duration histogram already).
	Latency, LatencyFilter string
}

// Conventions are the metric names of common instrumentations, by the
// name --convention takes.
var Conventions = map[string]Names{
	// client_golang's promhttp middleware, and most exporters.
	"prometheus": {Requests: "http_requests_total", CodeLabel: "code",
		Duration: "http_request_duration_seconds", DurationFilter: `code=~"2.."`, InFlight: "http_requests_in_flight"},
	// OpenTelemetry's HTTP semantic conventions as Prometheus names them:
	// the duration histogram's _count counts the requests.
	"otel": {Requests: "http_server_request_duration_seconds_count", CodeLabel: "http_response_status_code",
		Duration: "http_server_request_duration_seconds", DurationFilter: `http_response_status_code=~"2.."`, InFlight: "http_server_active_requests"},
	// throttlesim serve: its own service-time histogram and gauges, and
	// every arrival (an outage's refusals are never answered).
	"throttlesim": {Requests: "http_requests_total", CodeLabel: "code",
		Arrivals: `throttlesim_server_requests_total{result=~"received|refused_outage"}`,
		Duration: "throttlesim_server_service_seconds", ServiceTimes: true, InFlight: "http_server_active_requests",
		Workers: "throttlesim_server_workers_available", Down: "throttlesim_server_down",
		Latency: "http_server_request_duration_seconds", LatencyFilter: `code=~"2.."`},
}

// ConventionNames lists the conventions, for --help and errors.
func ConventionNames() []string { return []string{"prometheus", "otel", "throttlesim"} }

// Queries are the queries fit runs for names, every series narrowed by
// selector (matchers: job="api"); rates are over the window's step.
func Queries(n Names, selector string, w Window) []Query {
	rw := fmt.Sprintf("%ds", int64(w.Step/time.Second))
	arr := n.Arrivals
	if arr == "" {
		arr = n.Requests
	}
	q := []Query{
		{Name: "arrivals", Expr: fmt.Sprintf("sum(rate(%s[%s]))", with(arr, selector), rw)},
		{Name: "codes", Expr: fmt.Sprintf("sum by (%s) (rate(%s[%s]))", n.CodeLabel, with(n.Requests, selector), rw)},
		{Name: "duration_bucket", Expr: fmt.Sprintf("sum by (le) (%s)", with(n.Duration+"_bucket", join(n.DurationFilter, selector)))},
		{Name: "duration_sum", Expr: fmt.Sprintf("sum(%s)", with(n.Duration+"_sum", join(n.DurationFilter, selector))), Optional: true},
		{Name: "duration_count", Expr: fmt.Sprintf("sum(%s)", with(n.Duration+"_count", join(n.DurationFilter, selector))), Optional: true},
	}
	if n.Latency != "" {
		q = append(q, Query{Name: "latency_bucket", Expr: fmt.Sprintf("sum by (le) (%s)", with(n.Latency+"_bucket", join(n.LatencyFilter, selector))), Optional: true})
	}
	for _, g := range []struct{ name, metric, agg string }{{"in_flight", n.InFlight, "sum"}, {"workers", n.Workers, "sum"}, {"down", n.Down, "max"}} {
		if g.metric != "" {
			q = append(q, Query{Name: g.name, Expr: fmt.Sprintf("%s(%s)", g.agg, with(g.metric, selector)), Optional: true})
		}
	}
	return q
}

// with adds matchers to a metric (which may hold its own in braces).
func with(metric, matchers string) string {
	if matchers == "" {
		return metric
	}
	if i := strings.IndexByte(metric, '{'); i >= 0 && strings.HasSuffix(metric, "}") {
		return metric[:len(metric)-1] + "," + matchers + "}"
	}
	return metric + "{" + matchers + "}"
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}
