package sim

import (
	"fmt"
	"math"
	"testing"
)

// Hedged requests against the closed form of overload-control.md §7.7:
// latency Exp(mean m) at a server that never queues (more workers than
// requests), a hedge after h = m·ln 20 (the p95): the mean latency is
// m·((1 − e^(−h/m)) + e^(−h/m)/2) = 0.975·m and exactly e^(−h/m) = 5% of
// requests send a hedge. Checked for the clients' hedge and for a hedged
// call between two services. Tolerances: 4 standard errors, from the
// latency's SD (≈ m) and the binomial SD of the hedged share, over the
// 100,000 requests.
func TestHedgingClosedForm(t *testing.T) {
	const mean = 0.1 // s
	h := mean * math.Log(20)
	hedgeYAML := fmt.Sprintf("{delay: %dns}", int64(h*1e9))
	for _, tc := range []struct {
		name, yml string
	}{
		{"clients", `name: hedge
duration: 2000s
clients:
  count: 100
  arrival: {process: poisson, total_rate: 50/s}
  timeout: 0s
  hedge: ` + hedgeYAML + `
services:
  - name: server
    workers: 100000
    service: {dist: exponential, mean: 100ms}
`},
		{"a call between services", `name: hedge
duration: 2000s
clients:
  count: 100
  arrival: {process: poisson, total_rate: 50/s}
  timeout: 0s
services:
  - name: api
    workers: 100000
    service: {dist: constant, mean: 1ns}
    calls: [{to: server, timeout: 0s, hedge: ` + hedgeYAML + `}]
  - name: server
    workers: 100000
    service: {dist: exponential, mean: 100ms}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRun(t, parseGraph(t, tc.yml))
			server := res.Services[len(res.Services)-1].Summary
			calls := float64(server.Calls)
			hedged := float64(server.Attempts-server.Calls) / calls
			lat := *server.LatencyMeanMS / 1000
			if res.Services[0].Name == "server" {
				lat = res.MeanLatencyS
			}
			wantLat, wantHedged := mean*0.975, 0.05
			seLat, seHedged := mean/math.Sqrt(calls), math.Sqrt(wantHedged*(1-wantHedged)/calls)
			record("hedged requests, "+tc.name+": mean latency, s", fmt.Sprintf("%.4f (0.975 m)", wantLat), fmt.Sprintf("%.4f", lat), "4 SE", math.Abs(lat-wantLat) <= 4*seLat)
			record("hedged requests, "+tc.name+": share hedged", "0.05 (e^(−h/m))", fmt.Sprintf("%.4f", hedged), "4 SE", math.Abs(hedged-wantHedged) <= 4*seHedged)
			if math.Abs(lat-wantLat) > 4*seLat {
				t.Errorf("mean latency %.5f s, want %.5f ± %.5f", lat, wantLat, 4*seLat)
			}
			if math.Abs(hedged-wantHedged) > 4*seHedged {
				t.Errorf("hedged share %.4f, want %.4f ± %.4f", hedged, wantHedged, 4*seHedged)
			}
			if server.Succeeded != server.Calls-int64(res.Summary.InFlight) && res.Services[0].Name == "server" {
				t.Errorf("%d of %d calls succeeded", server.Succeeded, server.Calls)
			}
		})
	}
}

// With quantile: 0.95 the delay is the observed p95 of first-attempt
// latency, so about 5% of requests are hedged once the estimate settles.
// Tolerance: the histogram's buckets (metrics.Histogram, a few percent of
// the value) move the delay, and with it the hedged share e^(−h/m), by up
// to ±0.5 percentage points; 4 binomial SE on top.
func TestHedgingAtObservedQuantile(t *testing.T) {
	res := mustRun(t, parseGraph(t, `name: hedge
duration: 2000s
clients:
  count: 100
  arrival: {process: poisson, total_rate: 50/s}
  timeout: 0s
  hedge: {quantile: 0.95, min_samples: 200}
services:
  - name: server
    workers: 100000
    service: {dist: exponential, mean: 100ms}
`))
	s := res.Summary
	hedged := float64(s.Hedges) / float64(s.Offered)
	tol := 0.005 + 4*math.Sqrt(0.05*0.95/float64(s.Offered))
	record("hedged requests at the observed p95: share hedged", "0.05", fmt.Sprintf("%.4f", hedged), fmt.Sprintf("±%.4f (histogram resolution + 4 SE)", tol), math.Abs(hedged-0.05) <= tol)
	if math.Abs(hedged-0.05) > tol {
		t.Errorf("hedged share %.4f, want 0.05 ± %.4f", hedged, tol)
	}
	if s.Hedges == 0 || s.Attempts != s.Offered+s.Hedges {
		t.Errorf("attempts %d, offered %d, hedges %d: every attempt is a first try or a hedge here", s.Attempts, s.Offered, s.Hedges)
	}
}

// cancel_loser drops the losing copy from the queue it waits in; false
// leaves it to be served. One worker, so copies queue behind each other.
func TestHedgeCancelLoser(t *testing.T) {
	run := func(cancel bool) (served, cancelled int64) {
		res := mustRun(t, parseGraph(t, fmt.Sprintf(`name: hedge
duration: 600s
clients:
  count: 10
  arrival: {process: poisson, total_rate: 5/s}
  timeout: 0s
  hedge: {delay: 100ms, cancel_loser: %v}
services:
  - name: server
    workers: 1
    service: {dist: exponential, mean: 150ms}
    queue: {limit: 100000}
`, cancel)))
		return res.Summary.Served, res.Summary.Cancelled
	}
	servedKeep, cancelledKeep := run(false)
	servedCancel, cancelledCancel := run(true)
	if cancelledKeep != 0 || cancelledCancel == 0 {
		t.Errorf("cancelled: %d without cancel_loser (want 0), %d with it (want > 0)", cancelledKeep, cancelledCancel)
	}
	if servedCancel >= servedKeep {
		t.Errorf("served %d with cancel_loser, not fewer than %d without", servedCancel, servedKeep)
	}
}
