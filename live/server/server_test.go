package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start serves a minimal scenario with the given backend section (and
// faults) on a loopback httptest server.
func start(t *testing.T, backend string, ser *metrics.Series) (*Server, *httptest.Server, *http.Client) {
	t.Helper()
	src := "name: t\nduration: 10s\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\n" + backend
	sc, err := scenario.Parse([]byte(src), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sc, Options{Series: ser})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	hs := httptest.NewServer(s.Handler())
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		s.Close()
		hs.Close()
	})
	return s, hs, &http.Client{Transport: tr}
}

// burst sends n GETs at once and returns their status codes (0: error)
// and Retry-After headers, in the order sent.
func burst(hc *http.Client, url string, n int, gap time.Duration) ([]int, []string) {
	codes, ras := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := hc.Get(url)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i], ras[i] = resp.StatusCode, resp.Header.Get("Retry-After")
		})
		time.Sleep(gap)
	}
	wg.Wait()
	return codes, ras
}

func tally(codes []int) map[int]int {
	m := map[int]int{}
	for _, c := range codes {
		m[c]++
	}
	return m
}

// Two workers and a queue of one admit three of five simultaneous
// requests; the other two are rejected at once with Retry-After. The
// series and the Prometheus metrics count the same. The services last
// 500 ms so that the five requests (20 ms apart at most) all arrive
// before any worker frees up, even when a loaded machine delays one by a
// few hundred ms (200 ms services let a fourth one in, in review).
func TestAdmission(t *testing.T) {
	ser := metrics.NewSeries(1e9, 10)
	s, hs, hc := start(t, "backend:\n  workers: 2\n  service: {dist: constant, mean: 500ms}\n  queue: {limit: 1}\n  retry_after: 1500ms\n", ser)
	codes, ras := burst(hc, hs.URL, 5, 5*time.Millisecond)
	if got := tally(codes); got[200] != 3 || got[503] != 2 {
		t.Fatalf("codes %v, want 3×200 and 2×503", codes)
	}
	for i, c := range codes {
		if c == 503 && ras[i] != "2" {
			t.Errorf("Retry-After %q, want \"2\" (1.5 s rounded up)", ras[i])
		}
	}
	resp, err := hc.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`throttlesim_server_requests_total{result="received"} 5`,
		`throttlesim_server_requests_total{result="rejected"} 2`,
		`throttlesim_server_requests_total{result="served"} 3`,
		`throttlesim_server_workers_available 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	s.Close()
	tot := ser.Totals()
	if tot.Received != 5 || tot.Accepted != 3 || tot.Rejected != 2 || tot.Served != 3 {
		t.Errorf("series: received %d accepted %d rejected %d served %d, want 5 3 2 3", tot.Received, tot.Accepted, tot.Rejected, tot.Served)
	}
	// Three services of 500 ms of useful work; the tolerance is timer
	// and lock lateness on a loaded machine (0.1 s per service) above, and
	// below the timers' early start, an eighth of the lateness learnt so
	// far (learn), well under 50 ms in all.
	if u := float64(tot.UsefulNS) / 1e9; u < 1.45 || u > 1.8 {
		t.Errorf("useful worker time %.3f s, want 1.5 s (+ timer lateness)", u)
	}
}

// A request that waited in the queue longer than the queue timeout is
// rejected when it reaches a worker. Of three near-simultaneous requests
// one is served and the two that queued behind it time out; without the
// timeout the queue of five would let all three be served. Which of the
// three arrives first is up to the scheduler (CI once saw the second
// request overtake the first), so the test counts codes, not positions.
func TestQueueTimeout(t *testing.T) {
	_, hs, hc := start(t, "backend:\n  workers: 1\n  service: {dist: constant, mean: 150ms}\n  queue: {limit: 5, timeout: 50ms}\n", nil)
	codes, _ := burst(hc, hs.URL, 3, 5*time.Millisecond)
	if got := tally(codes); got[200] != 1 || got[503] != 2 {
		t.Errorf("codes %v, want one 200 and two 503", codes)
	}
}

// Rejections cost worker time: with one worker, a rejection charged while
// it serves keeps it busy afterwards, so a request that would otherwise
// find it free is rejected too.
func TestRejectCost(t *testing.T) {
	for _, cost := range []string{"0s", "300ms"} {
		t.Run(cost, func(t *testing.T) {
			_, hs, hc := start(t, "backend:\n  workers: 1\n  service: {dist: constant, mean: 100ms}\n  queue: {limit: 0}\n  reject_cost: "+cost+"\n", nil)
			// t=0: served until 100 ms; t=30 ms: rejected (its work runs
			// 100–400 ms with the cost); t=200 ms: free without the cost.
			codes, _ := burst(hc, hs.URL, 2, 30*time.Millisecond)
			time.Sleep(170 * time.Millisecond)
			late, _ := burst(hc, hs.URL, 1, 0)
			want := 200
			if cost != "0s" {
				want = 503
			}
			// Counted, not by position: which of the two reaches the
			// server first is the scheduler's choice (see TestQueueTimeout).
			if got := tally(codes); got[200] != 1 || got[503] != 1 || late[0] != want {
				t.Errorf("codes %v then %v, want one 200 and one 503, then %d", codes, late, want)
			}
		})
	}
}

// The admin endpoint starts an outage now: refused connections while it
// lasts, answers again after.
func TestAdminOutage(t *testing.T) {
	_, hs, hc := start(t, "backend:\n  workers: 2\n  service: {dist: constant, mean: 1ms}\n", nil)
	post := func(body string) int {
		resp, err := hc.Post(hs.URL+"/admin/faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, bad := range []string{`{"kind":"disconnect","duration":"1s"}`, `{"kind":"outage"}`, `{"kind":"capacity","duration":"1s","fraction":2}`, `{"kind":"outage","duration":"1s","bogus":1}`, `not json`} {
		if code := post(bad); code != http.StatusBadRequest {
			t.Errorf("%s: got %d, want 400", bad, code)
		}
	}
	if code := post(`{"kind":"outage","duration":"300ms"}`); code != http.StatusAccepted {
		t.Fatalf("outage: got %d, want 202", code)
	}
	if _, err := hc.Get(hs.URL); err == nil {
		t.Error("a request during the outage was answered")
	}
	time.Sleep(350 * time.Millisecond)
	resp, err := hc.Get(hs.URL)
	if err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the outage: %d", resp.StatusCode)
	}
}

// In a blackhole outage nothing answers: the client times out.
func TestBlackhole(t *testing.T) {
	s, hs, _ := start(t, "backend:\n  workers: 2\n  service: {dist: constant, mean: 1ms}\n", nil)
	if err := s.StartFault(scenario.Fault{Kind: scenario.FaultOutage, Mode: scenario.OutageBlackhole, Duration: scenario.Duration(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 100 * time.Millisecond}
	_, err := hc.Get(hs.URL)
	if err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("got %v, want a client timeout", err)
	}
}

// The scenario's faults run on their schedule: a capacity fault halves
// the workers available from 100 ms to 300 ms.
func TestScheduledCapacityFault(t *testing.T) {
	s, _, _ := start(t, "metrics: {interval: 50ms}\nbackend:\n  workers: 4\n  service: {dist: constant, mean: 1ms}\nfaults:\n  - {kind: capacity, start: 100ms, duration: 200ms, fraction: 0.5}\n", nil)
	avail := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.limit
	}
	got := []int{avail()}
	time.Sleep(200 * time.Millisecond)
	got = append(got, avail())
	time.Sleep(200 * time.Millisecond)
	got = append(got, avail())
	if fmt.Sprint(got) != "[4 2 4]" {
		t.Errorf("workers available at 0, 200, 400 ms: %v, want [4 2 4]", got)
	}
}

func TestUnsupported(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"backend:\n  workers: 2\n  replicas: 2\n  service: {dist: constant, mean: 1ms}\n", "replicas"},
		{"backend:\n  workers: 2\n  service: {dist: constant, mean: 1ms}\n  queue: {limit: 10, discipline: lifo}\n", "discipline"},
		{"backend:\n  workers: 2\n  service: {dist: constant, mean: 1ms}\n  rate_limit: {rate: 10/s}\n", "rate_limit"},
	} {
		sc, err := scenario.Parse([]byte("name: t\nduration: 10s\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\n"+tt.yaml), "t.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(sc, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want an error naming %s", err, tt.want)
		}
	}
}

// Service times take their draw on average: the server corrects the Go
// timer's lateness (spend). 200 constant 10 ms services on 4 workers: the
// mean useful time per service is within 3% of 10 ms. Without the
// correction it is 2 to 4% long on an idle machine and more on a loaded
// one; the first few services, before the correction has learnt the
// lateness, are inside the 3%.
func TestServiceTimeIsTheDraw(t *testing.T) {
	if testing.Short() {
		// make test-race runs -short: the race detector's slowdown between
		// a timer firing and the work being counted is not timer lateness,
		// and the correction rightly does not learn it (10.5 ms measured).
		t.Skip("wall-clock accuracy: checked by make test, not under -short")
	}
	ser := metrics.NewSeries(1e9, 10)
	s, hs, hc := start(t, "backend:\n  workers: 4\n  service: {dist: constant, mean: 10ms}\n  queue: {limit: 1000}\n", ser)
	burst(hc, hs.URL, 200, 0)
	s.Close()
	tot := ser.Totals()
	// util_useful rows hold ns of worker time; Served counts services.
	mean := float64(tot.UsefulNS) / float64(tot.Served) / 1e6
	if tot.Served != 200 || mean < 9.7 || mean > 10.3 {
		t.Errorf("%d services, mean %.3f ms; want 200 of 10 ms ± 3%%", tot.Served, mean)
	}
}

// A fault ends after it starts, however short: its end is armed when it
// starts. With the start and the end on two timers armed apart, a 1 µs
// outage could end first and then start for good (2 of 300 tries in
// review). 300 tries here, each given up to 2 s to come back up. The old
// order fails it only under load (it did with four CPU burners, 5 runs;
// on an idle machine it usually passes), the fixed one never can.
func TestShortFaultAlwaysEnds(t *testing.T) {
	s, _, _ := start(t, "backend:\n  workers: 1\n  service: {dist: constant, mean: 1ms}\n", nil)
	for i := range 300 {
		if err := s.StartFault(scenario.Fault{Kind: scenario.FaultOutage, Mode: scenario.OutageRefuse, Duration: scenario.Duration(time.Microsecond)}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for {
			s.mu.Lock()
			down := s.down
			s.mu.Unlock()
			if !down {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("try %d: a 1 µs outage still on after 2 s", i)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
}
