package server

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// scrape GETs url's /metrics over HTTP and returns the text exposition.
func scrape(t *testing.T, hc *http.Client, url string) []byte {
	t.Helper()
	resp, err := hc.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	return b
}

// sample is the value of the line of the exposition whose name and labels
// are exactly series (e.g. `http_requests_total{code="200",method="get"}`).
func sample(t *testing.T, text []byte, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(string(text)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s in\n%s", series, text)
	return 0
}

// The server speaks the conventions (issue 23 part 4): scraped over real
// HTTP on loopback, its /metrics holds http_requests_total by code, the
// OpenTelemetry-named duration histogram with Prometheus's default buckets,
// the in-flight gauge and its own service-time histogram, with the counts
// the requests sent imply: 6 answered 200 one at a time (each 20 ms of
// constant service, so none in the service histogram's buckets below 5 ms;
// where above depends on the wall clock),
// then, with every worker taken away by a capacity fault posted on the
// admin endpoint (and no queue), 4 answered 503.
// (A burst of 10 on 2 workers was used before: how many of it overlap
// depends on the scheduler, and under -race on a loaded machine only 3
// were rejected; no worker rejects every request whatever the timing.)
func TestConventionalMetrics(t *testing.T) {
	s, hs, hc := start(t, "backend:\n  workers: 2\n  service: {dist: constant, mean: 20ms}\n  queue: {limit: 0}\n", nil)
	get := func() int {
		resp, err := hc.Get(hs.URL + "/work")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 6 {
		if c := get(); c != http.StatusOK {
			t.Fatalf("before the outage: got %d, want 200", c)
		}
	}
	if code, body := admin(s, "POST", "/admin/faults", `{"kind":"capacity","duration":"60s","fraction":0}`); code != http.StatusAccepted {
		t.Fatalf("posting a capacity fault: %d %s", code, body)
	}
	n503 := 0
	for range 4 {
		if c := get(); c == http.StatusServiceUnavailable {
			n503++
		}
	}
	text := scrape(t, hc, hs.URL)
	const ok = 6
	for _, tt := range []struct {
		series string
		want   float64
	}{
		{`http_requests_total{code="200",method="get"}`, ok},
		{`http_server_request_duration_seconds_count{code="200",method="get"}`, ok},
		{`http_server_active_requests`, 0},
		{`throttlesim_server_service_seconds_count`, ok},
		{`throttlesim_server_service_seconds_bucket{le="0.005"}`, 0}, // a timer's head start is at most half the service
		{`throttlesim_server_service_seconds_bucket{le="+Inf"}`, ok},
		{`throttlesim_server_workers_available`, 0}, // the capacity fault took both
	} {
		if got := sample(t, text, tt.series); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.series, got, tt.want)
		}
	}
	if n503 != 4 {
		t.Errorf("with no worker: got %d answers 503, want 4", n503)
	}
	if got := sample(t, text, `http_requests_total{code="503",method="get"}`); got != float64(n503) {
		t.Errorf("503s: got %v, want %d", got, n503)
	}
	// The histogram parses as dist: histogram's text format does.
	le, cnt, err := scenario.ParseHistogramFile(text, "metrics", scenario.FormatText, "http_server_request_duration_seconds", `code="200"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(le) != 12 || cnt[len(cnt)-1] != ok {
		t.Errorf("buckets: got %d, total %v; want 12 (Prometheus's 11 defaults and +Inf), total %v", len(le), cnt[len(cnt)-1], ok)
	}
}
