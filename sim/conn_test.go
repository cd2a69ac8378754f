package sim

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// connScenario: clients with persistent connections to a backend with room
// to spare, an outage from 60 s to 90 s.
func connScenario(n int) *scenario.Scenario {
	sc := small()
	sc.Duration = dur(180 * time.Second)
	sc.Clients.Count = n
	sc.Clients.Arrival.TotalRate = 50
	cn := &scenario.Connection{}
	scenario.SetDefaults(cn)
	sc.Clients.Connection = cn
	sc.Backend.Workers = 20
	sc.Backend.Queue.Limit = 2000
	sc.Faults = []scenario.Fault{{Kind: "outage", Mode: "refuse", Start: dur(60 * time.Second), Duration: dur(30 * time.Second)}}
	return sc
}

// One client through a long refused outage: its connection attempts are at
// exactly the times the reconnect policy gives (no jitter here, so the
// table is exact).
func TestReconnectAttemptTimes(t *testing.T) {
	s := int64(time.Second)
	tests := []struct {
		name string
		rc   scenario.Reconnect
		want []int64 // attempt times during [60 s, 90 s), then the first one after
	}{
		{"immediate, then every 2 s", scenario.Reconnect{Policy: "immediate", Delay: dur(2 * time.Second)},
			[]int64{60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90}},
		{"fixed 4 s", scenario.Reconnect{Policy: "fixed", Delay: dur(4 * time.Second)},
			[]int64{64, 68, 72, 76, 80, 84, 88, 92}},
		{"backoff 1 s x2 cap 8 s", scenario.Reconnect{Policy: "backoff",
			Backoff: scenario.Backoff{Base: dur(time.Second), Cap: dur(8 * time.Second), Multiplier: 2, Jitter: "none"}},
			[]int64{60, 61, 63, 67, 75, 83, 91}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := connScenario(1)
			sc.Clients.Arrival.TotalRate = 0.01
			sc.Clients.Connection.Reconnect = tt.rc
			var got []int64
			_, err := Run(context.Background(), sc, Options{Trace: func(e TraceEvent) {
				if e.Kind == "connect" && e.At >= 60*s && len(got) < len(tt.want) {
					got = append(got, e.At)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int64, len(tt.want))
			for i, w := range tt.want {
				want[i] = w * s
			}
			if !slices.Equal(got, want) {
				t.Errorf("connection attempts at %v, want %v", got, want)
			}
		})
	}
}

func TestConnectionAccounting(t *testing.T) {
	variants := map[string]func(*scenario.Scenario){
		"refuse outage":    func(*scenario.Scenario) {},
		"blackhole outage": func(sc *scenario.Scenario) { sc.Faults[0].Mode = "blackhole" },
		"disconnect 40%": func(sc *scenario.Scenario) {
			sc.Faults = []scenario.Fault{{Kind: "disconnect", Start: dur(60 * time.Second), Fraction: 0.4}}
		},
		"connection limit": func(sc *scenario.Scenario) { sc.Backend.Connections.Limit = 150 },
		"tiny queue, immediate reconnect": func(sc *scenario.Scenario) {
			sc.Backend.Queue.Limit = 5
			sc.Backend.AcceptBacklog = 3
			sc.Backend.Connections.ConnectCost = dur(200 * time.Millisecond)
			sc.Clients.Connection.ConnectTimeout = dur(time.Second)
			sc.Clients.Connection.Reconnect = scenario.Reconnect{Policy: "immediate", Delay: dur(500 * time.Millisecond)}
		},
		"network, exponential 20 ms": func(sc *scenario.Scenario) { withNetwork(sc, "exponential", 20*time.Millisecond, 0) },
		"network slower than the connect timeout, blackhole": func(sc *scenario.Scenario) {
			withNetwork(sc, "normal", 200*time.Millisecond, 100*time.Millisecond)
			sc.Clients.Connection.ConnectTimeout = dur(400 * time.Millisecond)
			sc.Faults[0].Mode = "blackhole"
		},
		"network, tiny queue, connection limit": func(sc *scenario.Scenario) {
			withNetwork(sc, "exponential", 50*time.Millisecond, 0)
			sc.Backend.Queue.Limit = 5
			sc.Backend.AcceptBacklog = 3
			sc.Backend.Connections.Limit = 150
			sc.Backend.Connections.ConnectCost = dur(200 * time.Millisecond)
			sc.Clients.Connection.ConnectTimeout = dur(time.Second)
		},
	}
	for name, mod := range variants {
		t.Run(name, func(t *testing.T) {
			sc := connScenario(200)
			sc.Clients.Startup = scenario.Startup{Mode: "uniform", Window: dur(10 * time.Second), Batches: 1}
			mod(sc)
			res := mustRun(t, sc)
			cs := res.Summary.Connections
			if cs == nil {
				t.Fatal("no connection summary")
			}
			for i, r := range res.Series.Rows {
				if r.Connected < 0 || r.Connected > int64(sc.Clients.Count) {
					t.Fatalf("interval %d: %d connected of %d clients", i, r.Connected, sc.Clients.Count)
				}
				if lim := sc.Backend.Connections.Limit; lim > 0 && r.Connected > int64(lim) {
					t.Fatalf("interval %d: %d connected, limit %d", i, r.Connected, lim)
				}
			}
			// Every client is connected or still trying at the end.
			if got := cs.ConnectedAtEnd + cs.RetryingAtEnd; got != int64(sc.Clients.Count) {
				t.Errorf("connected %d + retrying %d = %d, want all %d clients", cs.ConnectedAtEnd, cs.RetryingAtEnd, got, sc.Clients.Count)
			}
			// Connections made minus connections closed = connected now.
			if cs.ConnectsOK-cs.Disconnects != cs.ConnectedAtEnd {
				t.Errorf("connects %d − disconnects %d != connected at end %d", cs.ConnectsOK, cs.Disconnects, cs.ConnectedAtEnd)
			}
			if last := res.Series.Rows[len(res.Series.Rows)-1].Connected; last != cs.ConnectedAtEnd {
				t.Errorf("last row says %d connected, summary %d", last, cs.ConnectedAtEnd)
			}
			// Every attempt ends one way or another, or is in flight at the end.
			ended := cs.ConnectsOK + cs.ConnectsFailed + cs.ConnectTimeouts
			if inflight := cs.ConnectAttempts - ended; inflight < 0 || inflight > int64(sc.Clients.Count) {
				t.Errorf("attempts %d, ended %d", cs.ConnectAttempts, ended)
			}
			if s := res.Summary; s.Offered != s.Succeeded+s.Failed+s.DropThrottle+s.DropNoConn+s.InFlight || s.InFlight < 0 {
				t.Errorf("request accounting does not close: %+v", s)
			}
		})
	}
}

// With persistent connections, requests issued while disconnected are
// dropped locally, and request-level policies still run on top.
func TestRequestsNeedAConnection(t *testing.T) {
	sc := withRetry(withThrottle(connScenario(200), 2), 3, "full")
	res := mustRun(t, sc)
	s := res.Summary
	if s.DropNoConn == 0 {
		t.Error("no request was dropped for lack of a connection during a 30 s outage")
	}
	for i, r := range res.Series.Rows[62:88] { // inside the outage, after the first retries
		if r.Attempts != 0 {
			t.Errorf("second %d of the outage: %d attempts sent without a connection", i+2, r.Attempts)
		}
	}
	if s.Retries == 0 || s.Succeeded == 0 {
		t.Errorf("retries %d, succeeded %d: policies did not run on top of connections", s.Retries, s.Succeeded)
	}
}

func TestStartupModes(t *testing.T) {
	for _, tc := range []struct {
		st            scenario.Startup
		firstSecond   int64 // connection attempts in [0 s, 1 s)
		lastAttemptBy int64 // seconds
	}{
		{scenario.Startup{Mode: "immediate", Batches: 1}, 1000, 1},
		{scenario.Startup{Mode: "uniform", Window: dur(50 * time.Second), Batches: 1}, 20, 50},
		{scenario.Startup{Mode: "ramp", Window: dur(50 * time.Second), Batches: 10}, 100, 46},
	} {
		t.Run(string(tc.st.Mode), func(t *testing.T) {
			sc := connScenario(1000)
			sc.Faults = nil
			sc.Clients.Startup = tc.st
			res := mustRun(t, sc)
			r0 := res.Series.Rows[0].ConnectAttempts
			// uniform: 1000 clients over 50 s give Binomial(1000, 1/50) in the
			// first second (mean 20, sd 4.4); 20 sd is a loose bound, while
			// immediate and ramp are exact.
			if tc.st.Mode == "uniform" {
				if r0 < 5 || r0 > 40 {
					t.Errorf("first second: %d attempts, want about 20", r0)
				}
			} else if r0 != tc.firstSecond {
				t.Errorf("first second: %d attempts, want %d", r0, tc.firstSecond)
			}
			var last int
			for i, r := range res.Series.Rows {
				if r.ConnectAttempts > 0 {
					last = i
				}
			}
			if int64(last) >= tc.lastAttemptBy {
				t.Errorf("attempts until second %d, want all before %d", last, tc.lastAttemptBy)
			}
			if res.Summary.Connections.ConnectedAtEnd != 1000 {
				t.Errorf("%d connected at the end", res.Summary.Connections.ConnectedAtEnd)
			}
		})
	}
}

// The reconnect-storm experiment: jitter must lower the peak connection
// rate and shorten recovery. Margins: the unjittered fleet reconnects in one
// second (100,000/s, 25x the 4,000/s handshake capacity) while 60 s of
// jitter spreads it to a few thousand per second, so a factor 10 between the
// peaks leaves a wide margin; the jittered fleet must recover within the
// 60 s window plus 30 s, the unjittered one must take at least three times
// as long or not recover at all.
func TestReconnectStormJitterHelps(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000-client scenarios")
	}
	storm := mustRun(t, loadScenario(t, "reconnect-storm.yaml")).Summary
	for _, name := range []string{"reconnect-storm-jitter.yaml", "reconnect-storm-backoff.yaml"} {
		t.Run(name, func(t *testing.T) {
			jit := mustRun(t, loadScenario(t, name)).Summary
			sp, jp := *storm.Connections.PeakConnectRate, *jit.Connections.PeakConnectRate
			t.Logf("peak connect rate: no jitter %.0f/s, %s %.0f/s", sp, name, jp)
			if jp*10 > sp {
				t.Errorf("peak connect rate %.0f/s is not 10x below the unjittered %.0f/s", jp, sp)
			}
			jr := jit.Recovery
			if !jr.Recovered || *jr.RecoveryTimeS > 90 {
				t.Fatalf("%s did not recover within 90 s: %+v", name, jr)
			}
			if sr := storm.Recovery; sr.Recovered && *sr.RecoveryTimeS < 3**jr.RecoveryTimeS {
				t.Errorf("no jitter recovered in %.0f s, jitter in %.0f s: want at least 3x longer without", *sr.RecoveryTimeS, *jr.RecoveryTimeS)
			}
			if *jit.Connections.WastedHandshakeFraction >= *storm.Connections.WastedHandshakeFraction {
				t.Errorf("wasted handshake work %.3f with %s, %.3f without jitter", *jit.Connections.WastedHandshakeFraction, name, *storm.Connections.WastedHandshakeFraction)
			}
		})
	}
}

// A once client with a connection sends its one request when its first
// connection is up (found by review: it used to be sent at the client's
// start, before the handshake, and dropped for lack of a connection).
func TestOnceClientsWaitForTheirConnection(t *testing.T) {
	sc := scenario.Default()
	sc.Name = "once-conn"
	sc.Duration = dur(60 * time.Second)
	sc.Clients.Count = 100
	sc.Clients.Arrival = scenario.Arrival{Process: "once"}
	sc.Clients.Startup = scenario.Startup{Mode: "uniform", Window: dur(10 * time.Second), Batches: 10}
	cn := &scenario.Connection{}
	scenario.SetDefaults(cn)
	sc.Clients.Connection = cn
	sc.Backend.Workers = 10
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	s := mustRun(t, sc).Summary
	if s.Offered != 100 || s.Succeeded != 100 || s.DropNoConn != 0 {
		t.Errorf("offered %d, succeeded %d, dropped for lack of a connection %d; want 100, 100, 0", s.Offered, s.Succeeded, s.DropNoConn)
	}
	if s.Connections == nil || s.Connections.ConnectsOK != 100 {
		t.Errorf("connections: %+v", s.Connections)
	}
}

// With a network the handshake crosses it both ways: a client reconnecting
// to an idle backend is connected after 2d + connect_cost, and one whose
// connect timeout is shorter than that never connects, while the backend
// still does (and wastes) every handshake.
func TestHandshakeCrossesTheNetwork(t *testing.T) {
	for _, tc := range []struct {
		name      string
		delay     time.Duration
		timeout   time.Duration
		wantAll   float64 // reconnected_all_s after the disconnect; <0: never
		wantWaste float64
	}{
		{"no network", 0, 5 * time.Second, 0.010, 0},
		{"50 ms each way", 50 * time.Millisecond, 5 * time.Second, 0.110, 0},
		{"round trip beyond the timeout", 300 * time.Millisecond, 500 * time.Millisecond, -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := connScenario(50)
			sc.Clients.Arrival.TotalRate = 1
			sc.Clients.Startup = scenario.Startup{Mode: "immediate", Batches: 10}
			sc.Clients.Connection.ConnectTimeout = dur(tc.timeout)
			sc.Clients.Connection.Reconnect = scenario.Reconnect{Policy: "backoff",
				Backoff: scenario.Backoff{Base: dur(time.Second), Cap: dur(8 * time.Second), Multiplier: 2, Jitter: "none"}}
			sc.Backend.Workers = 100 // every handshake starts at once
			sc.Backend.Connections.ConnectCost = dur(10 * time.Millisecond)
			sc.Faults = []scenario.Fault{{Kind: "disconnect", Start: dur(60 * time.Second), Fraction: 1}}
			if tc.delay > 0 {
				withNetwork(sc, "constant", tc.delay, 0)
			}
			cs := mustRun(t, sc).Summary.Connections
			if tc.wantAll < 0 {
				if cs.ConnectsOK != 0 || cs.ReconnectedAllS != nil {
					t.Errorf("connects ok %d, reconnected_all_s %v; want no connection at all", cs.ConnectsOK, cs.ReconnectedAllS)
				}
			} else if cs.ReconnectedAllS == nil || math.Abs(*cs.ReconnectedAllS-tc.wantAll) > 1e-9 {
				t.Errorf("reconnected_all_s %v, want %.3f", cs.ReconnectedAllS, tc.wantAll)
			}
			if cs.WastedHandshakeFraction == nil || math.Abs(*cs.WastedHandshakeFraction-tc.wantWaste) > 1e-9 {
				t.Errorf("wasted handshake fraction %v, want %g", cs.WastedHandshakeFraction, tc.wantWaste)
			}
		})
	}
}

// Found by review: an outage that starts and ends while a "connected" is
// on its way must still close that connection (the backend crashed after
// the handshake), not only one that is still going on when it arrives.
func TestShortOutageClosesAConnectionInFlight(t *testing.T) {
	sc := connScenario(1)
	sc.Duration = dur(10 * time.Second)
	sc.Clients.Arrival.TotalRate = 0.1
	sc.Clients.Connection.ConnectTimeout = dur(5 * time.Second)
	sc.Clients.Connection.Reconnect = scenario.Reconnect{Policy: "immediate", Delay: dur(time.Second)}
	sc.Backend.Connections.ConnectCost = dur(10 * time.Millisecond)
	withNetwork(sc, "constant", 200*time.Millisecond, 0)
	// connect at 2.000 s, hello at 2.200, handshake done at 2.210, outage
	// 2.250-2.300, "connected" arrives at 2.410.
	sc.Faults = []scenario.Fault{
		{Kind: "disconnect", Start: dur(2 * time.Second), Duration: dur(time.Millisecond), Fraction: 1},
		{Kind: "outage", Mode: "refuse", Start: dur(2250 * time.Millisecond), Duration: dur(50 * time.Millisecond)},
	}
	cs := mustRun(t, sc).Summary.Connections
	if cs.ConnectsFailed != 1 || cs.ConnectAttempts != 3 || cs.WastedHandshakeWorkerS < 0.0099 || cs.ConnectedAtEnd != 1 {
		t.Errorf("want the in-flight connection closed (1 failed, a third attempt that connects, 10 ms wasted); got %+v", *cs)
	}
}
