package sim

import (
	"fmt"
	"testing"
)

// fastFailScenario is ten replicas of 2 workers, 50 ms constant service
// (capacity 400/s) at 240/s offered, with client retries (3 attempts);
// replica 3 refuses every request at once (an outage in refuse mode: a
// fast failure) for the whole run. extra is added under the service.
func fastFailScenario(lb, extra string) string {
	return fmt.Sprintf(`name: fast-failure
duration: 300s
clients:
  count: 2000
  arrival: {process: poisson, total_rate: 240/s}
  timeout: 1s
  retry: {max_attempts: 3, backoff: {base: 10ms, cap: 100ms}}
services:
  - name: server
    replicas: 10
    lb: %s
    workers: 2
    service: {dist: constant, mean: 50ms}
    queue: {limit: 100}
%s
faults:
  - {kind: outage, mode: refuse, start: 0s, duration: 300s, replica: 3}
`, lb, extra)
}

// The pathology of overload-control.md §6.8 (SRE book ch. 20,
// "Least-Loaded Round Robin"): a replica that fails fast has no
// outstanding requests, so least-outstanding balancing sends it far more
// than its 1/10 share, and requests fail even with retries. Envoy's
// consecutive-error ejection (defaults) fixes it: each time the replica
// comes back it takes exactly 5 attempts (its failures are immediate,
// and the 5th in a row ejects it inline), and it comes back at most 4
// times in 300 s (ejection times 30, 60, 90, 120 s add up to 300 s), so
// it sees at most 5 × 5 = 25 attempts: an exact bound, not a tolerance.
func TestFastFailureAttractsTraffic(t *testing.T) {
	const bad = 3
	share := func(res *Result) (float64, int64) {
		picks := res.Services[0].ReplicaAttempts
		var total int64
		for _, p := range picks {
			total += p
		}
		return float64(picks[bad]) / float64(total), picks[bad]
	}
	for _, tc := range []struct {
		lb string
		// the bad replica's share of attempts without ejection, at least
		minShare float64
	}{
		// Least outstanding sees 0 outstanding at the failing replica
		// whenever another replica has any: the pathology. 3× the fair
		// share is the signature asked for ("far above 1/n").
		{"least_outstanding", 0.3},
		// P2C (and peak EWMA, P2C on a cost that is 0 for a replica
		// whose answers take no time) pick it whenever one of the two
		// draws lands on it and the other replica is busy: at most
		// 1 − 0.9² = 19% of the picks (measured 17.6% and 18.9%, seed 1);
		// 1.5× the fair share is the signature.
		{"p2c", 0.15},
		{"peak_ewma", 0.15},
		// Round robin is blind to load and gives it exactly 1/10 of the
		// picks.
		{"round_robin", 0.1},
		// Prequal's probes answer with the replica's RIF (0: it holds
		// nothing) and its latency at that RIF, measured on the requests
		// it served (none: the estimate is 0). The failing replica is
		// always cold and the fastest: it wins every pick whose pool holds
		// a probe of it (measured 71%, seed 1), as least outstanding.
		{"prequal", 0.3},
	} {
		t.Run(tc.lb, func(t *testing.T) {
			off := mustRun(t, parseGraph(t, fastFailScenario(tc.lb, "")))
			on := mustRun(t, parseGraph(t, fastFailScenario(tc.lb, "    outlier_detection: {}")))
			offShare, _ := share(off)
			onShare, onPicks := share(on)
			okOff := float64(off.Summary.Succeeded) / float64(off.Summary.Offered)
			okOn := float64(on.Summary.Succeeded) / float64(on.Summary.Offered)
			t.Logf("%s: failing replica's share %.3f without ejection, %.5f (%d attempts, %d ejections) with; success %.4f → %.4f",
				tc.lb, offShare, onShare, onPicks, on.Services[0].Summary.Ejections, okOff, okOn)
			if offShare < tc.minShare {
				t.Errorf("without ejection: share %.3f, want ≥ %.2f", offShare, tc.minShare)
			}
			if onPicks > 25 {
				t.Errorf("with ejection: %d attempts to the failing replica, want ≤ 25", onPicks)
			}
			if ej := on.Services[0].Summary.Ejections; ej < 1 || ej > 5 {
				t.Errorf("ejections: got %d, want 1..5 (one at the start and at most one per return)", ej)
			}
			if okOn < okOff {
				t.Errorf("success ratio fell with ejection: %.4f → %.4f", okOff, okOn)
			}
		})
	}
}

// Active health checks take a black-holed replica out of rotation after
// unhealthy_threshold failed checks and bring it back after
// healthy_threshold passed ones once the outage ends. Checks every 5 s,
// thresholds 2 and 1; replica 3 is black-holed from 60 s to 120 s: the
// checks at 60 s (the fault starts first: it was scheduled first, at
// load time) and 65 s fail, so it is out from 65 s, and the check at
// 120 s passes (the fault ends before it, for the same reason), so it is
// back from 120 s. (The checks are scheduled as they run, so one at the
// instant a fault starts or ends runs after it.) A run is the same up to
// its horizon whatever the horizon (the fault is cut to end with the
// shorter runs, at their horizon, where nothing runs), so the attempts sent to replica 3 by 65 s, by 120 s and by
// 180 s say: none between 65 s and 120 s (exactly), some after. Without
// health checks the first check fails (a black hole keeps taking
// attempts).
func TestHealthCheckBlackhole(t *testing.T) {
	yml := `name: health
duration: %ds
clients:
  count: 1000
  arrival: {process: poisson, total_rate: 200/s}
  timeout: 1s
services:
  - name: server
    replicas: 10
    lb: %s
    workers: 2
    service: {dist: constant, mean: 50ms}
    queue: {limit: 100}
%s
faults:
  - {kind: outage, mode: blackhole, start: 60s, duration: %ds, replica: 3}
`
	const hc = "    health_check: {interval: 5s, unhealthy_threshold: 2, healthy_threshold: 1}"
	for _, lb := range []string{"round_robin", "random", "least_outstanding", "p2c", "peak_ewma"} {
		t.Run(lb, func(t *testing.T) {
			picks := func(secs int, extra string) int64 {
				return mustRun(t, parseGraph(t, fmt.Sprintf(yml, secs, lb, extra, min(60, secs-60)))).Services[0].ReplicaAttempts[3]
			}
			at65, at120, at180 := picks(65, hc), picks(120, hc), picks(180, hc)
			t.Logf("attempts to replica 3 by 65 s: %d, by 120 s: %d, by 180 s: %d", at65, at120, at180)
			if at120 != at65 {
				t.Errorf("replica 3 got %d attempts while unhealthy (65–120 s), want 0", at120-at65)
			}
			if at180 == at120 {
				t.Errorf("replica 3 got no attempts after it came back at 120 s")
			}
			if without65, without120 := picks(65, ""), picks(120, ""); without120 == without65 {
				t.Errorf("without health checks replica 3 got no attempts in 65–120 s either: the check cannot fail")
			}
		})
	}
}

// Deterministic subsetting (SRE book ch. 20): callers in a round of n/k
// split a shuffle of the replicas, so with a whole number of rounds every
// replica is in exactly callers·k/n subsets (the book's 300 clients, 300
// backends, subsets of 10: exactly 10 each), each subset is k distinct
// replicas, and a caller's subset is the same every time it is asked.
func TestSubsetBalanced(t *testing.T) {
	for _, tc := range []struct{ n, k, clients int }{{300, 10, 300}, {12, 3, 40}, {10, 5, 1000}, {7, 7, 5}} {
		t.Run(fmt.Sprintf("n=%d,k=%d,clients=%d", tc.n, tc.k, tc.clients), func(t *testing.T) {
			yml := fmt.Sprintf(`name: subset
duration: 10s
clients: {count: %d, arrival: {total_rate: 10/s}}
services:
  - {name: server, replicas: %d, subset: %d, lb: p2c}
`, tc.clients, min(tc.n, 255), tc.k)
			if tc.n > 255 { // more replicas than a run may have: the subset maths alone
				yml = fmt.Sprintf("name: subset\nduration: 10s\nclients: {count: %d, arrival: {total_rate: 10/s}}\nservices:\n  - {name: server, replicas: 2}\n", tc.clients)
			}
			m, err := newModel(parseGraph(t, yml), 1)
			if err != nil {
				t.Fatal(err)
			}
			nd := &m.nodes[0]
			nd.n = uint16(tc.n)
			nd.g = &lbGuard{subset: tc.k, out: make([]bool, tc.n)}
			count := make([]int, tc.n)
			for c := range tc.clients {
				r := &request{client: uint32(c)}
				sub := m.subsetOf(nil, nd, 0, r)
				again := m.subsetOf(nil, nd, 0, r)
				if len(sub) != tc.k || fmt.Sprint(sub) != fmt.Sprint(again) {
					t.Fatalf("client %d: subset %v, then %v; want the same %d replicas", c, sub, again, tc.k)
				}
				seen := map[uint16]bool{}
				for _, j := range sub {
					if seen[j] || int(j) >= tc.n {
						t.Fatalf("client %d: subset %v repeats or overflows", c, sub)
					}
					seen[j] = true
					count[j]++
				}
			}
			want := tc.clients * tc.k / tc.n
			for j, c := range count {
				if c != want {
					t.Fatalf("replica %d is in %d subsets, want %d (all: %v)", j, c, want, count)
				}
			}
		})
	}
}

// With subsets, every attempt of a client goes to its own subset: one
// client, subsets of 2 out of 10, random balancing.
func TestSubsetRouting(t *testing.T) {
	res := mustRun(t, parseGraph(t, `name: subset
duration: 60s
clients: {count: 1, arrival: {total_rate: 20/s}}
services:
  - {name: server, replicas: 10, subset: 2, lb: random}
`))
	used := 0
	for _, p := range res.Services[0].ReplicaAttempts {
		if p > 0 {
			used++
		}
	}
	if used != 2 {
		t.Errorf("one client's attempts reached %d replicas (%v), want its 2", used, res.Services[0].ReplicaAttempts)
	}
}

// replicas_out is the time-mean number of replicas out of rotation: in
// the fast-failure scenario with ejection, exactly one replica is out
// while ejected, so the column is 1 in every full interval of an
// ejection, and its integral over the run equals the time the failing
// replica spent ejected (between 0 and the 300 s run).
func TestReplicasOutColumn(t *testing.T) {
	res := mustRun(t, parseGraph(t, fastFailScenario("least_outstanding", "    outlier_detection: {}")))
	ser := res.Services[0].Series
	var total int64
	full := 0
	for _, r := range ser.Rows {
		total += r.OutNS
		if r.OutNS > ser.Interval {
			t.Fatalf("an interval with more than one replica out (%d ns of %d): only one of ten can be (10%%)", r.OutNS, ser.Interval)
		}
		if r.OutNS == ser.Interval {
			full++
		}
	}
	// Ejected 4 times (the test above): out 30+60+90 s and the last
	// ejection until the end, at least 180 s in all; at most the run.
	if total < 180e9 || total > 300e9 || full < 170 {
		t.Errorf("replica-seconds out: %.1f, full intervals %d; want 180..300 s and ≥ 170", float64(total)/1e9, full)
	}
	t.Logf("replica-seconds out of rotation: %.1f of 300; %d full intervals", float64(total)/1e9, full)
}

// The panic threshold counts the replicas an autoscaler has ready, not
// the ones it holds back: of 10 replicas with 3 ready and 2 of those
// ejected, fewer than half of the ready ones are left, so the balancer
// ignores ejection (all 3 ready are candidates); with 1 of them ejected,
// the 2 healthy ones are.
func TestPanicThresholdCountsReadyReplicas(t *testing.T) {
	m, err := newModel(parseGraph(t, "name: panic\nduration: 10s\nclients: {count: 10, arrival: {total_rate: 10/s}}\nservices:\n  - {name: server, replicas: 10}\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	nd := &m.nodes[0]
	nd.act = []uint16{nd.first + 2, nd.first + 5, nd.first + 7}
	for _, tc := range []struct {
		out  []uint16
		want string
	}{{[]uint16{2, 5}, "[2 5 7]"}, {[]uint16{5}, "[2 7]"}} {
		g := &lbGuard{out: make([]bool, nd.n)}
		for _, j := range tc.out {
			g.out[j] = true
			g.nOut++
		}
		nd.g = g
		if got := fmt.Sprint(m.candidates(nd, 0, &request{})); got != tc.want {
			t.Errorf("ready 2, 5, 7 with %v ejected: candidates %s, want %s", tc.out, got, tc.want)
		}
	}
}
