package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlesim/throttlesim/live/internal/decide"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// small is a 2-second scenario: 50 clients at 100 req/s against a
// 500 req/s backend, far from overload.
const small = `name: small
duration: 2s
metrics: {interval: 500ms}
clients:
  count: 50
  arrival: {process: poisson, total_rate: 100/s}
  timeout: 1s
  retry: {max_attempts: 2}
backend:
  workers: 5
  service: {dist: constant, mean: 10ms}
  queue: {limit: 100}
`

func parse(t *testing.T, src string, sets ...string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(src), "small.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A live run sends the simulation's arrivals (the same seed draws the
// same times) and, far from overload, every one succeeds. What holds by
// construction is checked: never more arrivals than the simulation draws,
// the server never receives more than was sent, four complete rows with
// the backend's capacity. How many of the arrivals start and succeed
// before the horizon depends on the machine's lag, so it is reported
// (timing), not asserted: on an idle machine at most 10 arrivals are lost
// (a 100 ms lag at the horizon at 100/s) and 5 requests are still in
// flight at the end (100 req/s × 10 ms service, generously).
func TestRunMatchesSimArrivals(t *testing.T) {
	sc := parse(t, small)
	want, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, info, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Offered > want.Summary.Offered || s.Offered == 0 {
		t.Errorf("offered %d live, %d simulated: want the simulation's arrivals, or fewer", s.Offered, want.Summary.Offered)
	}
	if s.Succeeded > s.Offered || s.Received > s.Attempts {
		t.Errorf("offered %d, succeeded %d; server received %d of %d attempts", s.Offered, s.Succeeded, s.Received, s.Attempts)
	}
	timing(t, s.Offered >= want.Summary.Offered-10, "offered %d live of %d simulated", s.Offered, want.Summary.Offered)
	timing(t, s.Failed == 0 && s.DropThrottle == 0 && s.Succeeded >= s.Offered-5, "succeeded %d of %d (failed %d, throttled %d)", s.Succeeded, s.Offered, s.Failed, s.DropThrottle)
	timing(t, s.Received >= s.Attempts-5, "server received %d of %d attempts", s.Received, s.Attempts)
	// (info.Arrivals is the rows' offered count by construction: not
	// checked here.)
	if !res.Complete || len(res.Series.Rows) != 4 || !info.InProcess {
		t.Errorf("complete %v, %d rows, in process %v", res.Complete, len(res.Series.Rows), info.InProcess)
	}
	// The backend's capacity integral is its 5 workers over each 500 ms
	// row, the last one included (the shutdown after the horizon is not
	// counted).
	for i, r := range res.Series.Rows {
		if r.CapacityNS != 5*500e6 {
			t.Errorf("row %d: capacity %d worker-ns, want %d", i, r.CapacityNS, int64(5*500e6))
		}
	}
	// 10 ms of constant service: the median latency is 10 ms plus the
	// loopback and the scheduler. It can come out a little below 10 ms:
	// the server sets its timers early by the lateness it has seen (so
	// that services average their draw), which on a loaded machine
	// varies from one timer to the next, and the histogram reports a
	// bucket's midpoint (±0.13 ms here). CI once measured 9.8 ms; an idle
	// machine stays within 9 to 60 ms.
	if s.LatencyP50MS == nil {
		t.Fatal("no latency p50")
	}
	p50 := *s.LatencyP50MS
	timing(t, p50 >= 9 && p50 <= 60, "latency p50 %.1f ms for 10 ms services", p50)
}

// Cancelling the context stops the run with a partial result: cancelled
// at 0.7 s of a 10 s run, it holds at least the 2 rows of 500 ms begun by
// then and fewer than the 20 of the whole run (how many more than 2 is
// the machine's lag, reported).
func TestRunInterrupted(t *testing.T) {
	sc := parse(t, small, "duration=10s")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	start := time.Now()
	res, _, err := Run(ctx, sc, Options{})
	if !errors.Is(err, sim.ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", err)
	}
	if n := len(res.Series.Rows); res.Complete || n < 2 || n >= 20 {
		t.Errorf("complete %v, %d rows; want a partial result of 2 to 19 rows", res.Complete, n)
	}
	d := time.Since(start)
	timing(t, len(res.Series.Rows) == 2 && d < 3*time.Second, "stopped after %v with %d rows (cancelled at 0.7 s)", d, len(res.Series.Rows))
}

// timing reports a wall-clock measurement against the bound an idle
// machine keeps. It never fails the test: on a loaded machine (CI's two
// shared cores) the bound is a matter of chance, and a unit test must not
// be. make test-live-timing (THROTTLESIM_TIMING=1) runs the suite verbose
// so the reports are read; there a miss is flagged, not failed.
func timing(t *testing.T, within bool, format string, args ...any) {
	t.Helper()
	mark := "within the idle-machine bound"
	if !within {
		mark = "OUTSIDE the idle-machine bound"
	}
	t.Logf("TIMING "+format+": "+mark, args...)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		sets []string
		want string
	}{
		{[]string{"clients.count=30000"}, "30000 clients"},
		{[]string{"clients.arrival.total_rate=2000/s"}, "4000 attempts/s"},
	}
	for _, tt := range tests {
		sc := parse(t, small, tt.sets...)
		if err := Check(sc, false); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error with %q", tt.sets, err, tt.want)
		}
		if err := Check(sc, true); err != nil {
			t.Errorf("%v with force: %v", tt.sets, err)
		}
	}
}

// Every field of the clients section and of a group has a decision in
// live mode: a field added to the scenario without one fails here,
// instead of being silently ignored by throttlesim live.
func TestEveryClientFieldIsDecided(t *testing.T) {
	for _, c := range []struct {
		section string
		typ     reflect.Type
		table   decide.Table
	}{
		{"clients", reflect.TypeFor[scenario.Clients](), clientFields},
		{"clients.groups[]", reflect.TypeFor[scenario.Group](), groupFields},
	} {
		missing, extra := c.table.Undecided(c.typ)
		for _, name := range missing {
			t.Errorf("%s.%s: live mode has no decision for it in live/run.go", c.section, name)
		}
		for _, name := range extra {
			t.Errorf("%s.%s: in the table but not a field of the scenario", c.section, name)
		}
	}
}

// Hedging, which the live client does not do, is refused by its path
// before anything runs, for the fleet and for a group.
func TestCheckRefusesHedging(t *testing.T) {
	for _, tt := range []struct {
		sets []string
		want string
	}{
		{[]string{"clients.hedge={delay: 50ms}"}, "clients.hedge"},
		{[]string{"clients.groups=[{name: a, share: 1, hedge: {delay: 50ms}}]"}, "clients.groups[0].hedge"},
	} {
		sc := parse(t, small, tt.sets...)
		if err := Check(sc, true); err == nil || !strings.Contains(err.Error(), tt.want+": not supported live") {
			t.Errorf("%v: got %v, want it refused naming %s", tt.sets, err, tt.want)
		}
	}
	if err := Check(parse(t, small, "clients.groups=[{name: a, share: 1, throttle: {}}]"), true); err != nil {
		t.Errorf("a group with a throttle: %v", err)
	}
	// Semian's adaptive breaker is the stack's own: live runs it.
	for _, set := range []string{"clients.adaptive_breaker={}", "clients.groups=[{name: a, share: 1, adaptive_breaker: {defensiveness: 2}}]"} {
		if err := Check(parse(t, small, set), true); err != nil {
			t.Errorf("%s: got %v, want it supported live", set, err)
		}
	}
}

// Recorded load runs live as in the simulation (sim.NewArrivals draws its
// arrivals): a rate trace, a cycle and a ramp are accepted, and their
// peak, not their mean, meets the attempt-rate limit.
func TestCheckTraces(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("rate.csv", "time,rate\n0,10\n1,3000\n2,10\n")
	write("req.txt", "0\n0.5\n1\n")
	file := write("small.yaml", small)
	for _, tt := range []struct {
		sets []string
		want string // "": accepted without force
	}{
		{[]string{"clients.arrival={process: poisson, trace: {file: rate.csv, format: csv, scale: 0.1}}"}, ""},
		{[]string{"clients.arrival={process: poisson, trace: {file: rate.csv, format: csv}}"}, "6000 attempts/s"},
		{[]string{"clients.arrival={process: replay, trace: {file: req.txt, format: timestamps}}"}, ""},
		{[]string{"clients.arrival.cycle={period: 1s, points: [{at: 0s, multiplier: 0.5}, {at: 500ms, multiplier: 30}]}"}, "6000 attempts/s"},
		{[]string{"clients.arrival.profile=[{at: 1s, multiplier: 3, ramp: true}]"}, ""},
	} {
		sc, err := scenario.Load(file, tt.sets)
		if err != nil {
			t.Fatal(err)
		}
		err = Check(sc, false)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: got %v, want %q", tt.sets, err, tt.want)
		}
	}
}

// A replay runs live: the server receives the recorded requests.
func TestLiveReplay(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%.3f\n", 1733450000+float64(i)*0.02)
	}
	if err := os.WriteFile(filepath.Join(dir, "req.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(filepath.Join(dir, "s.yaml"), []string{"duration=1s", "clients.arrival={process: replay, trace: {file: req.txt, format: timestamps}}"})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 40 requests in the first 0.8 s: all start before the horizon unless
	// the machine lags by 200 ms (reported, not asserted).
	s := res.Summary
	if s.Offered > 40 {
		t.Errorf("offered %d, more than the 40 recorded", s.Offered)
	}
	timing(t, s.Offered == 40, "offered %d of the 40 recorded", s.Offered)
}

// Every client field issue #26 added is live (the stack's own decisions,
// through scenario.Policies.StackConfig): Semian's adaptive breaker with
// each of its fields, for the fleet and a group, and the retry budget's
// charge time. A call's adaptive breaker is refused with the service
// graph (live/server's TestServiceFieldsAreRefused).
func TestIssue26ClientFieldsLive(t *testing.T) {
	for _, set := range []string{
		"clients.adaptive_breaker={defensiveness: 2, window: 5s, interval: 500ms, initial_error_rate: 0.02, cap: 0.2, failure_outcomes: [timeout, error], group_size: 10}",
		"clients.groups=[{name: a, share: 1, adaptive_breaker: {defensiveness: 2, window: 4s, interval: 1s, group_size: 5}}]",
		"clients.retry.budget={kind: finagle, charge: send}",
		"clients.retry.budget={kind: sre, charge: send}",
		"clients.groups=[{name: a, share: 1, retry: {max_attempts: 3, budget: {kind: finagle, charge: send}}}]",
	} {
		sc := parse(t, small, set)
		if err := Check(sc, true); err != nil {
			t.Errorf("%s: got %v, want it supported live", set, err)
		}
		if _, err := sc.Clients.Policies.StackConfig(); err != nil {
			t.Errorf("%s: StackConfig: %v", set, err)
		}
	}
}

// A histogram quantile can read a little above the exact max (a bucket's
// representative value): the reported p99 and p50 never exceed the max.
func TestLagFiguresNeverAboveMax(t *testing.T) {
	for _, lag := range []int64{3_035_862, 1_000_003, 39_230_000, 7} {
		var h metrics.Histogram
		for range 100 {
			h.Add(lag)
		}
		p50, p99, mx := lagFigures(&h, lag)
		if p99 > mx || p50 > p99 {
			t.Errorf("all lags %d ns: got p50 %v, p99 %v, max %v ms; want p50 <= p99 <= max", lag, p50, p99, mx)
		}
	}
}
