package fit

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// fake answers each query by its name from series built in the test.
type fake map[string][]scenario.PromSeries

func (f fake) QueryRange(_ context.Context, q Query, _ Window) ([]scenario.PromSeries, []byte, error) {
	return f[q.Name], []byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`), nil
}

// series is one series of n steps of 10 s from t0 = 1000 s, the value of
// step k at t0 + (k+1)·10 s.
func series(labels map[string]string, f func(k int) float64) scenario.PromSeries {
	s := scenario.PromSeries{Metric: labels}
	for k := range 12 {
		s.Points = append(s.Points, scenario.PromPoint{T: 1000 + float64(k+1)*10, V: f(k)})
	}
	return s
}

func counter(le string, total float64) scenario.PromSeries {
	return series(map[string]string{"le": le}, func(k int) float64 { return total * float64(k) / 11 })
}

// A synthetic window of 12 steps of 10 s: 100 req/s, then 300 req/s in
// steps 8–11 against a server of throughput 200/s (100/s rejected);
// answered 0 in steps 3–4 (an outage with no down gauge); 2% errors;
// service times: 600 in (0, 10 ms], 400 in (10 ms, 50 ms].
func synthetic(workers bool) fake {
	rate := func(k int) float64 {
		if k >= 8 {
			return 300
		}
		return 100
	}
	out := func(k int) bool { return k == 3 || k == 4 }
	f := fake{
		"arrivals": {series(nil, rate)},
		"codes": {
			series(map[string]string{"code": "200"}, func(k int) float64 {
				if out(k) {
					return 0
				}
				return 0.98 * min(rate(k), 200)
			}),
			series(map[string]string{"code": "500"}, func(k int) float64 {
				if out(k) {
					return 0
				}
				return 0.02 * min(rate(k), 200)
			}),
			series(map[string]string{"code": "503"}, func(k int) float64 { return max(rate(k)-200, 0) }),
			series(map[string]string{"code": "404"}, func(int) float64 { return 7 }),
		},
		"duration_bucket": {counter("0.01", 600), counter("0.05", 1000), counter("+Inf", 1000)},
		"in_flight": {series(nil, func(k int) float64 {
			if k >= 8 {
				return 9 // 5 workers busy, 4 queued
			}
			return 2
		})},
	}
	if workers {
		f["workers"] = []scenario.PromSeries{series(nil, func(k int) float64 {
			if k == 6 {
				return 3
			}
			return 6
		})}
	}
	return f
}

var synthWindow = Window{Start: time.Unix(1000, 0), End: time.Unix(1120, 0), Step: 10 * time.Second}

func TestFitSynthetic(t *testing.T) {
	names := Conventions["prometheus"]
	r, err := Fit(context.Background(), synthetic(false), names, "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	// Mean service: 0.6·5 ms + 0.4·30 ms = 15 ms.
	// Saturation: median throughput 200/s over steps 8–11 × 15 ms = 3.
	// Queue: 9 in flight at saturation − 3 workers = 6.
	// Errors 2% of the served; rejections outside the outage: 4 steps of
	// 100 over (6 steps of 100 + 4 of 300).
	for _, tt := range []struct {
		name      string
		got, want float64
	}{
		{"mean service, s", r.MeanService, 0.015},
		{"workers", float64(r.WorkersFit), 3},
		{"queue", float64(r.QueueFit), 6},
		{"error rate", r.ErrorRate, 0.02},
		{"rejection rate", r.RejectRate, 400.0 / 1800},
		{"steps", float64(len(r.Arrivals)), 12},
		{"arrivals at step 9", r.Arrivals[9], 300},
	} {
		if math.Abs(tt.got-tt.want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if len(r.Faults) != 1 || r.Faults[0].Kind != scenario.FaultOutage || r.Faults[0].Start != scenario.Duration(30*time.Second) || r.Faults[0].Duration != scenario.Duration(20*time.Second) {
		t.Errorf("faults: got %+v, want one outage from 30 s for 20 s (steps 3 and 4)", r.Faults)
	}
	// Arrivals counted from the answers: the outage's steps read 0, are
	// found by the answered rate alone and take the rate before it.
	hidden := synthetic(false)
	hidden["arrivals"] = []scenario.PromSeries{series(nil, func(k int) float64 {
		if k == 3 || k == 4 {
			return 0
		}
		return 100
	})}
	r, err = Fit(context.Background(), hidden, names, "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	if r.Filled != 2 || r.Arrivals[3] != 100 || r.Arrivals[4] != 100 || len(r.Faults) != 1 {
		t.Errorf("hidden arrivals: got %d filled, steps 3–4 at %v, %v, %d faults; want 2, 100, 100, 1", r.Filled, r.Arrivals[3], r.Arrivals[4], len(r.Faults))
	}
	// With a workers gauge: its largest value, and its dip a capacity
	// fault at step 6.
	names.Workers = "workers_available"
	r, err = Fit(context.Background(), synthetic(true), names, "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	if r.WorkersFit != 6 {
		t.Errorf("workers from the gauge: got %d, want 6", r.WorkersFit)
	}
	var capf []Fault
	for _, f := range r.Faults {
		if f.Kind == scenario.FaultCapacity {
			capf = append(capf, f)
		}
	}
	if len(capf) != 1 || capf[0].Start != scenario.Duration(60*time.Second) || capf[0].Duration != scenario.Duration(10*time.Second) || capf[0].Fraction != 0.5 {
		t.Errorf("capacity faults: got %+v, want one from 60 s for 10 s, fraction 0.5", capf)
	}
}

// The scenario fit writes follows the arrival trace contract of issue 23
// part 1 (clients.arrival.trace: file, format, time_column, rate_column,
// interpolate, scale; no rate) and, with that section replaced by a
// constant rate (it runs only once the trace section is merged), is a
// valid scenario whose histogram, workers, queue, error rate and faults
// are the fit's.
func TestFittedScenario(t *testing.T) {
	names := Conventions["prometheus"]
	names.Workers = "workers_available"
	r, err := Fit(context.Background(), synthetic(true), names, "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := r.Write(dir, Options{Name: "synth", Clients: 50, Source: "test"}, false); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	arrival := doc["clients"].(map[string]any)["arrival"].(map[string]any)
	trace, _ := arrival["trace"].(map[string]any)
	want := map[string]any{"file": ArrivalsFile, "format": "csv", "time_column": "time", "rate_column": "rate", "interpolate": "step", "scale": 1.0}
	for k, v := range want {
		if trace[k] != v {
			t.Errorf("clients.arrival.trace.%s: got %v, want %v", k, trace[k], v)
		}
	}
	if len(trace) != len(want) || arrival["process"] != "poisson" || arrival["rate"] != nil || arrival["total_rate"] != nil {
		t.Errorf("clients.arrival: got %v, want process poisson and exactly the trace contract's fields, no rate", arrival)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, ArrivalsFile))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "time,rate" || len(lines) != 13 || lines[1] != "0,100" || lines[9] != "80,300" {
		t.Errorf("arrivals.csv: got %q…, want a time,rate header and 12 rows from 0,100 with 80,300", lines[:3])
	}
	if !strings.Contains(string(text), "# sum(rate(http_requests_total[10s]))") {
		t.Errorf("no provenance comment naming the arrivals query in\n%s", text)
	}
	// Runnable now with a constant rate in place of the trace.
	delete(arrival, "trace")
	arrival["total_rate"] = "100/s"
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(b, filepath.Join(dir, ScenarioFile), nil)
	if err != nil {
		t.Fatalf("the fitted scenario without its trace: %v\n%s", err, b)
	}
	if got := sc.Backend.Service.MeanNS(); math.Abs(got-15e6) > 1 {
		t.Errorf("service mean: got %v ns, want 15 ms", got)
	}
	if sc.Backend.Workers != 6 || sc.Backend.ErrorRate != 0.02 || len(sc.Faults) != 2 || sc.Duration != scenario.Duration(120*time.Second) || sc.Clients.Count != 50 {
		t.Errorf("got workers %d, error rate %v, %d faults, duration %s, %d clients; want 6, 0.02, 2, 2m, 50",
			sc.Backend.Workers, sc.Backend.ErrorRate, len(sc.Faults), sc.Duration, sc.Clients.Count)
	}
}

// Requests slower than the last finite bound: fit states a cap (twice
// that bound) in inf_cap, says it is a guess, and the scenario parses.
func TestFittedScenarioInfCap(t *testing.T) {
	f := synthetic(false)
	f["duration_bucket"] = []scenario.PromSeries{counter("0.01", 600), counter("0.05", 1000), counter("+Inf", 1100)}
	r, err := Fit(context.Background(), f, Conventions["prometheus"], "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	text := string(r.Scenario(Options{Name: "cap", Clients: 1}))
	if !strings.Contains(text, "    inf_cap: 100ms\n") || !strings.Contains(text, "a guess") {
		t.Fatalf("no stated inf_cap of 100 ms in\n%s", text)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	arrival := doc["clients"].(map[string]any)["arrival"].(map[string]any)
	delete(arrival, "trace")
	arrival["total_rate"] = "100/s"
	b, _ := yaml.Marshal(doc)
	sc, err := scenario.Parse(b, "cap.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	// 600 in (0, 10 ms], 400 in (10, 50 ms], 100 in (50, 100 ms]: mean
	// (600·5 + 400·30 + 100·75)/1100 ms.
	if got, want := sc.Backend.Service.MeanNS(), (600*5.0+400*30+100*75)/1100*1e6; math.Abs(got-want) > 1 {
		t.Errorf("mean: got %v ns, want %v ns", got, want)
	}
}

// Nothing half-written: a failing source writes nothing, an existing
// folder is kept unless --force and then only if it holds a fit, and an
// unreachable Prometheus is a clear error.
func TestFitWritesWholeOrNothing(t *testing.T) {
	base := t.TempDir()
	r, err := Fit(context.Background(), synthetic(false), Conventions["prometheus"], "", synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "out")
	if err := r.Write(dir, Options{Name: "a", Clients: 1}, false); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(dir, Options{Name: "a", Clients: 1}, false); err == nil || !strings.Contains(err.Error(), "exists: choose another --out or give --force") {
		t.Errorf("a second write: got %v, want an error saying it exists", err)
	}
	if err := r.Write(dir, Options{Name: "b", Clients: 1}, true); err != nil {
		t.Errorf("--force over a fit: %v", err)
	}
	foreign := filepath.Join(base, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(foreign, Options{Name: "a", Clients: 1}, true); err == nil || !strings.Contains(err.Error(), "not replacing a folder fit did not write") {
		t.Errorf("--force over a foreign folder: got %v", err)
	}
	p, err := NewPrometheus("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Fit(context.Background(), p, Conventions["prometheus"], "", synthWindow)
	if err == nil || !strings.Contains(err.Error(), "cannot reach Prometheus at http://127.0.0.1:1") {
		t.Errorf("an unreachable Prometheus: got %v, want cannot reach", err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want 2 (out and foreign): a temporary folder was left", len(entries))
	}
	missing := synthetic(false)
	delete(missing, "duration_bucket")
	if _, err := Fit(context.Background(), missing, Conventions["prometheus"], "", synthWindow); err == nil || !strings.Contains(err.Error(), "query duration_bucket") {
		t.Errorf("no histogram: got %v, want an error naming the query", err)
	}
	bad := synthetic(false)
	bad["arrivals"] = []scenario.PromSeries{series(nil, func(k int) float64 { return -1 })}
	if _, err := Fit(context.Background(), bad, Conventions["prometheus"], "", synthWindow); err == nil || !strings.Contains(err.Error(), "a rate must be a number >= 0") {
		t.Errorf("a negative rate: got %v", err)
	}
}

func TestParseCSV(t *testing.T) {
	s, err := ParseCSV([]byte("time,code,value\n10,200,1.5\n20,200,2\n10,503,0\n2026-12-06T02:00:00Z,503,1\n"), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Metric["code"] != "200" || len(s[0].Points) != 2 || s[0].Points[1].V != 2 || s[1].Points[1].T != 1796522400 {
		t.Errorf("got %+v", s)
	}
	for _, tt := range []struct{ in, want string }{
		{"t,value\n1,2\n", "c.csv:1: the header must name a time and a value column"},
		{"time,value\n2,1\n1,1\n", "c.csv:3: times must increase within a series"},
		{"time,value\n1,x\n", `c.csv:2: value "x" is not a finite number`},
		{"time,value\nyesterday,1\n", `c.csv:2: time: "yesterday" is neither unix seconds nor RFC 3339`},
	} {
		if _, err := ParseCSV([]byte(tt.in), "c.csv"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want …%s…", tt.in, err, tt.want)
		}
	}
}

// FuzzParseCSV: any bytes parse or fail naming the file, never panic.
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("time,code,value\n10,200,1.5\n20,200,2\n"))
	f.Add([]byte("time,value\n2026-12-06T02:00:00Z,1\n"))
	f.Add([]byte("value,time\n\"1\",2\n# c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCSV(data, "f.csv")
		if err != nil {
			if !strings.Contains(err.Error(), "f.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, x := range s {
			for i := 1; i < len(x.Points); i++ {
				if !(x.Points[i].T > x.Points[i-1].T) {
					t.Fatalf("times do not increase: %+v", x.Points)
				}
			}
		}
	})
}

// The answers of a real run of TestPrometheusEndToEnd (Prometheus 2.42
// scraping the live server every second, step 5 s; refreshed with
// THROTTLESIM_PROMETHEUS_EXPORT=fit/testdata/serve-outage make
// test-prometheus) read back through --from-files: the same checks, with
// what that run's load generator counted, pass without a server.
func TestFitRecordedRun(t *testing.T) {
	r, err := Fit(context.Background(), Files{Dir: filepath.Join("testdata", "serve-outage")}, Conventions["throttlesim"], `job="serve"`, Window{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 5*time.Second || len(r.Arrivals) != 16 {
		t.Fatalf("window: got %d steps of %s, want 16 of 5s (80 s)", len(r.Arrivals), r.Step)
	}
	checkE2E(t, r, recorded)
}

// recorded is what the load generator of the run in testdata/serve-outage
// and serve-outage-generic counted (its log: "load: 11001 sent; outside
// the outage map[0:3 200:7016 500:377 503:1605]; during it
// map[0:2000]").
var recorded = &tally{sent: 11001, codes: map[int]int{0: 3, 200: 7016, 500: 377, 503: 1605}, outageCodes: map[int]int{0: 2000}}

// The same run under the generic names (no down or workers gauge; the
// arrivals are the answers): the outage found by the answered rate, its
// hidden arrivals filled, the rates as checked live.
func TestFitRecordedRunGeneric(t *testing.T) {
	r, err := Fit(context.Background(), Files{Dir: filepath.Join("testdata", "serve-outage-generic")}, genericNames, `job="serve"`, Window{})
	if err != nil {
		t.Fatal(err)
	}
	checkGeneric(t, r, recorded)
}

// A status-code label the server does not use is an error naming the
// labels it does use, not a server that answered nothing: the otel
// convention's http_response_status_code against promhttp's code (as
// throttlesim serve labels its requests).
func TestFitCodeLabelMissing(t *testing.T) {
	_, err := Fit(context.Background(), synthetic(false), Conventions["otel"], "", synthWindow)
	want := `fit: query codes: no series has the status code's label "http_response_status_code" (labels seen: code)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
}

// The otel convention queries the names OpenTelemetry's HTTP semantic
// conventions (v1.23 and later: http.server.request.duration, seconds,
// with http.response.status_code) take under its Prometheus exporter, and
// fits a server answering under them as the prometheus convention does.
func TestFitOtelNames(t *testing.T) {
	want := map[string]string{
		"arrivals":        `sum(rate(http_server_request_duration_seconds_count{job="api"}[10s]))`,
		"codes":           `sum by (http_response_status_code) (rate(http_server_request_duration_seconds_count{job="api"}[10s]))`,
		"duration_bucket": `sum by (le) (http_server_request_duration_seconds_bucket{http_response_status_code=~"2..",job="api"})`,
		"in_flight":       `sum(http_server_active_requests{job="api"})`,
	}
	for _, q := range Queries(Conventions["otel"], `job="api"`, synthWindow) {
		if w, ok := want[q.Name]; ok && q.Expr != w {
			t.Errorf("query %s: got %s, want %s", q.Name, q.Expr, w)
		}
	}
	f := synthetic(false)
	for i, s := range f["codes"] {
		f["codes"][i].Metric = map[string]string{"http_response_status_code": s.Metric["code"]}
	}
	got, err := Fit(context.Background(), f, Conventions["otel"], `job="api"`, synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Fit(context.Background(), synthetic(false), Conventions["prometheus"], `job="api"`, synthWindow)
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkersFit != ref.WorkersFit || got.QueueFit != ref.QueueFit || got.ErrorRate != ref.ErrorRate || got.RejectRate != ref.RejectRate {
		t.Errorf("otel names: got workers %d, queue %d, error rate %g, rejection rate %g; want the prometheus convention's %d, %d, %g, %g",
			got.WorkersFit, got.QueueFit, got.ErrorRate, got.RejectRate, ref.WorkersFit, ref.QueueFit, ref.ErrorRate, ref.RejectRate)
	}
}

// A folder without the arrivals answer is named as such, not as "the
// answer of )": Fit's first read (for the window) names no query.
func TestFitFilesMissingArrivals(t *testing.T) {
	_, err := Fit(context.Background(), Files{Dir: t.TempDir()}, Conventions["throttlesim"], "", Window{})
	if err == nil {
		t.Fatal("got no error, want a missing arrivals.json")
	}
	for _, want := range []string{"no arrivals.json or arrivals.csv", "the arrivals series"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "answer of )") {
		t.Errorf("got %q: an empty query", err)
	}
}
