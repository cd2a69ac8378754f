package fit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/live/server"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// The backend of the end-to-end run: 4 workers, exponential service of
// mean 20 ms (capacity 200 req/s), a queue of 20, 5% errors, and an outage
// that refuses every request from 30 s to 50 s.
const e2eScenario = `name: e2e
duration: 5m
clients: {count: 1, arrival: {total_rate: 1/s}}
backend:
  workers: 4
  service: {dist: exponential, mean: 20ms}
  queue: {limit: 20}
  error_rate: 0.05
faults:
  - {kind: outage, start: 30s, duration: 20s}
`

// The load: a request every 1/rate seconds in each phase.
var e2ePhases = []struct {
	until time.Duration
	rate  float64
}{{30 * time.Second, 100}, {50 * time.Second, 100}, {65 * time.Second, 100}, {80 * time.Second, 300}}

// tally is what the load generator knows: requests sent and answers by
// status code (0: no answer), in and out of the outage.
type tally struct {
	mu          sync.Mutex
	sent        int
	codes       map[int]int // outside the outage [30 s, 50 s)
	outageCodes map[int]int
}

// TestPrometheusEndToEnd (make test-prometheus; THROTTLESIM_PROMETHEUS=1):
// a real Prometheus scrapes the live server (the code throttlesim serve
// runs, on a loopback port) every second while a load loop drives it
// through an outage and an overload; fit reads the window back through
// Prometheus's HTTP API, and its numbers must match what the load
// generator and the server's configuration know, within the tolerances
// stated at each check.
func TestPrometheusEndToEnd(t *testing.T) {
	if os.Getenv("THROTTLESIM_PROMETHEUS") == "" {
		t.Skip("opt-in: THROTTLESIM_PROMETHEUS=1 (make test-prometheus) runs a real Prometheus for ~2 minutes")
	}
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary on PATH (Debian: apt-get install prometheus)")
	}
	sc, err := scenario.Parse([]byte(e2eScenario), "e2e.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(sc, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()

	// Prometheus, scraping the server every second, storage in a temp dir.
	dir := t.TempDir()
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	paddr := pl.Addr().String()
	pl.Close()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: serve\n    static_configs: [{targets: ['%s']}]\n", ln.Addr())
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var plog bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+paddr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &plog, &plog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", plog.String())
		}
	}()
	url := "http://" + paddr
	ready := false
	for range 100 {
		if resp, err := http.Get(url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ready = true
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !ready {
		t.Fatalf("prometheus at %s not ready after 20 s", url)
	}
	time.Sleep(3 * time.Second) // a few scrapes before the load: the counters' starting values

	// The load, from a second boundary so that the steps line up.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	start := time.Now()
	srv.Start()
	defer srv.Close()
	tl := drive(t, "http://"+ln.Addr().String()+"/work", start)
	end := start.Add(e2ePhases[len(e2ePhases)-1].until)
	time.Sleep(time.Until(end.Add(6 * time.Second))) // the last scrapes

	w := Window{Start: start.Truncate(time.Second), End: end.Truncate(time.Second), Step: 5 * time.Second}
	p, err := NewPrometheus(url)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), p, Conventions["throttlesim"], `job="serve"`, w)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fit")
	if err := res.Write(out, Options{Name: "e2e", Clients: 100, Source: url}, false); err != nil {
		t.Fatal(err)
	}
	if exp := os.Getenv("THROTTLESIM_PROMETHEUS_EXPORT"); exp != "" { // refresh testdata/
		if err := os.CopyFS(exp, os.DirFS(filepath.Join(out, QueriesDir))); err != nil {
			t.Fatal(err)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, ReportFile))
	t.Logf("fit report:\n%s", report)
	checkE2E(t, res, tl)

	// The fitted scenario as written, with the load generator's 5 s
	// timeout, against what Prometheus recorded: goodput per step within
	// 10% on average (TestFittedScenarioAsWritten's tolerance).
	fsc, err := res.Load(Options{Name: "e2e", Clients: 100, Source: url})
	if err != nil {
		t.Fatal(err)
	}
	fsc.Clients.Timeout = scenario.Duration(5 * time.Second)
	cmp, err := res.Simulate(context.Background(), fsc, []uint64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if gp := cmp.Get(SeriesGoodput); gp.Rel > 0.10 {
		t.Errorf("the fitted scenario's goodput per step: got a mean absolute error of %.1f%% of the recorded mean, want <= 10%%", 100*gp.Rel)
	}
	t.Logf("simulated against recorded: %s", cmp.Verdict)

	// The same window under the generic names any HTTP server exposes
	// (no workers or down gauge): serve's conventional metrics.
	res, err = Fit(context.Background(), p, genericNames, `job="serve"`, w)
	if err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "fit-generic")
	if err := res.Write(out, Options{Name: "e2e-generic", Clients: 100, Source: url}, false); err != nil {
		t.Fatal(err)
	}
	if exp := os.Getenv("THROTTLESIM_PROMETHEUS_EXPORT"); exp != "" {
		if err := os.CopyFS(exp+"-generic", os.DirFS(filepath.Join(out, QueriesDir))); err != nil {
			t.Fatal(err)
		}
	}
	report, _ = os.ReadFile(filepath.Join(out, ReportFile))
	t.Logf("fit report, generic names:\n%s", report)
	checkGeneric(t, res, tl)
}

// genericNames are serve's metrics under the prometheus convention's
// shape: the requests counter by code, the request-duration histogram
// (OpenTelemetry's name, promhttp's code label) and the in-flight gauge.
var genericNames = Names{Requests: "http_requests_total", CodeLabel: "code",
	Duration: "http_server_request_duration_seconds", DurationFilter: `code=~"2.."`, InFlight: "http_server_active_requests"}

// checkGeneric checks the fit from the generic names: no down gauge, so
// the outage is found by the answered-rate rule (within one 5 s step) and
// its steps' arrivals, never answered so never counted, filled; the error
// and rejection rates as in checkE2E. The request-duration histogram
// counts the queue's wait (at saturation 20 queued × 20 ms / 4 workers ≈
// 100 ms), so fit takes it from the calm steps only, where M/M/4 at load
// 0.5 waits E[W] = C·S/(c(1−ρ)) = 0.174 × 20 ms / 2 ≈ 1.7 ms on average
// (C the Erlang C probability of waiting): the mean within 15% of the
// bucketed exponential's m_b (10% as in checkE2E, plus the wait), and the
// saturation estimate of the workers 4 ± 1.
func checkGeneric(t *testing.T, r *Result, tl *tally) {
	var outages []Fault
	for _, f := range r.Faults {
		if f.Kind == scenario.FaultOutage {
			outages = append(outages, f)
		}
	}
	if len(outages) != 1 || math.Abs(outages[0].Start.Seconds()-30) > 5 || math.Abs(outages[0].Duration.Seconds()-20) > 5 {
		t.Errorf("generic names: outages got %+v, want one from 30 s for 20 s ± 5 s", outages)
	}
	if math.Abs(r.ErrorRate-0.05) > 0.015 {
		t.Errorf("generic names: error rate got %.4f, want 0.05 ± 0.015", r.ErrorRate)
	}
	ans := float64(tl.codes[200] + tl.codes[500] + tl.codes[503])
	if want := float64(tl.codes[503]) / ans; math.Abs(r.RejectRate-want) > 0.03 {
		t.Errorf("generic names: rejection rate got %.4f, want %.4f ± 0.03", r.RejectRate, want)
	}
	// The outage's hidden arrivals filled with the rate before it keep
	// the mean arrival rate within 5% of the load generator's, as checkE2E
	// requires of the server's own counter.
	sent := float64(tl.sent) / 80
	if got := total(r.Arrivals) / float64(len(r.Arrivals)); math.Abs(got-sent) > 0.05*sent || r.Filled != 4 {
		t.Errorf("generic names: mean arrival rate got %.1f req/s with %d steps filled, want %.1f ± 5%% with 4 (the 20 s outage)", got, r.Filled, sent)
	}
	if mb := bucketedMean(); math.Abs(r.MeanService-mb) > 0.15*mb {
		t.Errorf("generic names: mean request duration over calm steps got %.2f ms, want %.2f ms ± 15%%", r.MeanService*1e3, mb*1e3)
	}
	if math.Abs(float64(r.WorkersFit)-4) > 1 {
		t.Errorf("generic names: workers from saturation got %d, want 4 ± 1", r.WorkersFit)
	}
	t.Logf("generic names: %d workers fitted, mean request duration over calm steps %.1f ms", r.WorkersFit, r.MeanService*1e3)
}

// drive sends the phases' load at the server and counts the answers.
func drive(t *testing.T, url string, start time.Time) *tally {
	tl := &tally{codes: map[int]int{}, outageCodes: map[int]int{}}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	var wg sync.WaitGroup
	next := start
	for _, ph := range e2ePhases {
		gap := time.Duration(float64(time.Second) / ph.rate)
		for next.Sub(start) < ph.until {
			time.Sleep(time.Until(next))
			at := next.Sub(start)
			tl.sent++
			wg.Go(func() {
				code := 0
				if resp, err := hc.Get(url); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				tl.mu.Lock()
				if at >= 30*time.Second && at < 50*time.Second {
					tl.outageCodes[code]++
				} else {
					tl.codes[code]++
				}
				tl.mu.Unlock()
			})
			next = next.Add(gap)
		}
	}
	wg.Wait()
	t.Logf("load: %d sent; outside the outage %v; during it %v", tl.sent, tl.codes, tl.outageCodes)
	return tl
}

// checkE2E compares the fit with what the load generator knows.
func checkE2E(t *testing.T, r *Result, tl *tally) {
	// Arrival rate: every request sent over the 80 s (100/s for 65 s and
	// 300/s for 15 s: 11,000). Prometheus's rate() extrapolates each 5 s
	// step from the 1 s scrapes inside it, and a scrape lands up to 1 s
	// either side of a phase change: ±5% of the mean.
	sent := float64(tl.sent) / 80
	got := total(r.Arrivals) / float64(len(r.Arrivals))
	if math.Abs(got-sent) > 0.05*sent {
		t.Errorf("mean arrival rate: got %.1f req/s, want %.1f ± 5%%", got, sent)
	}
	// The overload phase: the last three steps at 300 req/s, ±10% each
	// (one step's rate is from 5 scrapes).
	for k := len(r.Arrivals) - 2; k < len(r.Arrivals); k++ {
		if math.Abs(r.Arrivals[k]-300) > 30 {
			t.Errorf("arrival rate at step %d (overload): got %.1f req/s, want 300 ± 30", k, r.Arrivals[k])
		}
	}
	// Mean service time: the server's service histogram has Prometheus's
	// default buckets; for an exponential of mean 20 ms the mean of the
	// piecewise-uniform density over those buckets is m_b (computed
	// below), and the sample's bucket shares vary by the binomial's SE;
	// Go timers fire late by ~0.1–1 ms on a loaded machine (the server
	// corrects most of it). ±10% of m_b covers both. fit may pick
	// log-uniform within buckets (when _sum/_count is closer to its mean),
	// whose mean lies between the exponential's 20 ms and m_b: 10% below
	// m_b is 19.7 ms, so the same tolerance holds.
	mb := bucketedMean()
	if math.Abs(r.MeanService-mb) > 0.1*mb {
		t.Errorf("mean service time (histogram): got %.2f ms, want %.2f ms ± 10%% (the bucketed exponential's)", r.MeanService*1e3, mb*1e3)
	}
	for _, e := range r.Estimates {
		if e.Name == "mean service time, _sum/_count" && math.Abs(e.Value-0.02) > 0.002 {
			t.Errorf("mean service time (_sum/_count): got %.2f ms, want 20 ms ± 10%%", e.Value*1e3)
		}
	}
	// Error rate: 5% of the served; n ≈ 8,000 served, SE sqrt(.05·.95/n) ≈
	// 0.0024: ±0.015 is over 5 SE.
	if math.Abs(r.ErrorRate-0.05) > 0.015 {
		t.Errorf("error rate: got %.4f, want 0.05 ± 0.015", r.ErrorRate)
	}
	// Rejection rate: the generator's 503s over its answers outside the
	// outage; the fit's is over rate() steps, whose edges cut requests
	// differently: ±0.03 absolute.
	ans := float64(tl.codes[200] + tl.codes[500] + tl.codes[503])
	want := float64(tl.codes[503]) / ans
	if math.Abs(r.RejectRate-want) > 0.03 {
		t.Errorf("rejection rate: got %.4f, want %.4f ± 0.03 (the load generator's)", r.RejectRate, want)
	}
	// Workers: the gauge says 4, exactly; the saturation estimate
	// (throughput at saturation × mean service time) within ±25%.
	if r.WorkersFit != 4 {
		t.Errorf("workers: got %d, want 4 (the workers gauge)", r.WorkersFit)
	}
	for _, e := range r.Estimates {
		if e.Name == "workers, saturation" && math.Abs(e.Value-4) > 1 {
			t.Errorf("workers from saturation: got %.2f, want 4 ± 1", e.Value)
		}
	}
	// The outage: from 30 s for 20 s; the down gauge is scraped every
	// second and read every 5 s step: start and duration within one step.
	var outages []Fault
	for _, f := range r.Faults {
		if f.Kind == scenario.FaultOutage {
			outages = append(outages, f)
		}
	}
	if len(outages) != 1 {
		t.Fatalf("outages: got %d (%+v), want 1", len(outages), r.Faults)
	}
	if o := outages[0]; math.Abs(o.Start.Seconds()-30) > 5 || math.Abs(o.Duration.Seconds()-20) > 5 {
		t.Errorf("outage: got start %s duration %s, want 30s and 20s ± 5s", o.Start, o.Duration)
	}
}

// bucketedMean is the mean of an exponential of mean 20 ms read through
// Prometheus's default buckets, uniform within each (s).
func bucketedMean() float64 {
	var mb, lo float64
	for _, hi := range []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1} {
		mb += (math.Exp(-lo/0.02) - math.Exp(-hi/0.02)) * (lo + hi) / 2
		lo = hi
	}
	return mb
}
