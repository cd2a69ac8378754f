package sim

import (
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// connReplicas is 400 clients holding connections to 4 replicas (10
// workers, 100 ms each) placed in turn (round robin), plus extra.
func connReplicas(t *testing.T, extra string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(`name: conn-replicas
duration: 300s
clients:
  count: 400
  arrival: {process: poisson, total_rate: 100/s}
  timeout: 2s
  connection:
    connect_timeout: 3s
    reconnect: {policy: immediate, delay: 1s, jitter_window: 10s}
backend:
  workers: 10
  replicas: 4
  lb: round_robin
  service: {dist: exponential, mean: 100ms}
  queue: {limit: 1000}
  connections: {connect_cost: 10ms}
`+extra), "conn.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// An outage of one replica closes the connections held with it and no
// others: the 400 clients connect at 0 s in client order, round robin
// puts 100 on each replica, so the outage of replica 1 disconnects
// exactly 100; they reconnect (round robin again, so some are refused by
// the replica that is down and retry), and everyone is connected at the
// end.
func TestReplicaOutageClosesItsConnections(t *testing.T) {
	res := mustRun(t, connReplicas(t, "faults:\n  - {kind: outage, replica: 1, start: 60s, duration: 20s}\n"))
	cs := res.Summary.Connections
	if cs == nil {
		t.Fatal("no connection summary")
	}
	if cs.Disconnects != 100 {
		t.Errorf("disconnects %d, want 100 (the clients of one replica of 4)", cs.Disconnects)
	}
	if cs.ConnectedAtEnd != 400 {
		t.Errorf("connected at the end %d, want 400", cs.ConnectedAtEnd)
	}
	// A client sends only on its connection: no request reaches the
	// replica that is down (balancing per request would send it a
	// quarter of them).
	if res.Summary.FailedOutage != 0 {
		t.Errorf("%d attempts sent into the outage, want 0", res.Summary.FailedOutage)
	}
	// The other three replicas kept serving their clients: goodput never
	// fell below 3/4 of the offered 100/s by more than Poisson noise
	// (75/s, 3 SD of a 1 s count ≈ 26 → a floor of 40).
	for i, r := range res.Series.Rows {
		if i >= 61 && i < 80 && r.Succeeded < 40 {
			t.Errorf("row %d: %d succeeded, want >= 40 (three replicas of four still up)", i, r.Succeeded)
		}
	}
}

// Scale-in closes the removed replicas' connections and the clients
// reconnect to the others: 40 replicas' worth of connections start on 4,
// the load falls from 300/s to 30/s at 100 s, the autoscaler (utilisation
// target 0.5, 30 s scale-down window) drains down to its minimum of 2.
// Every disconnect is a scale-in's (there is no fault), at least the 200
// clients of the two replicas removed, and they all reconnect.
func TestScaleInClosesConnections(t *testing.T) {
	sc := connReplicas(t, "  autoscale: {target: 0.5, min_replicas: 2, max_replicas: 8, provisioning: 5s, scale_down_window: 30s}\n")
	sc.Clients.Arrival.TotalRate = 300
	sc.Clients.Arrival.Profile = []scenario.Step{{At: scenario.Duration(100e9), Multiplier: 0.1}}
	res := mustRun(t, sc)
	cs := res.Summary.Connections
	if got := readyAt(res, 299); got != 2 {
		t.Fatalf("replicas at the end: %g, want 2", got)
	}
	if cs.Disconnects < 200 {
		t.Errorf("disconnects %d, want >= 200 (the clients of the 2 replicas scaled in)", cs.Disconnects)
	}
	if cs.ConnectedAtEnd != 400 {
		t.Errorf("connected at the end %d, want 400", cs.ConnectedAtEnd)
	}
	var before, after int64
	for i, r := range res.Series.Rows {
		if i < 100 {
			before += r.Disconnects
		} else {
			after += r.Disconnects
		}
	}
	if before != 0 {
		t.Errorf("%d disconnects before the load fell, want 0 (4 → more replicas only adds)", before)
	}
	t.Logf("disconnects %d, peak replicas %d", after, res.Summary.Replicas.Peak)
}
