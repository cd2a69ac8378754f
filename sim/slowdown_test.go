package sim

import (
	"context"
	"testing"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// A slowdown's replacement service time is the attempt's own draw, the
// one its usual service time is named by (client, request ordinal,
// attempt number, hop), even when the attempt reaches the service (with a
// network) or starts service (from the queue) after its client has given
// up on it and the request slot holds a later attempt or a new request
// (issue 21 item 7.1). The run is traced; at every trace event the live
// requests' identities are noted by (slot, generation), so that at each
// worker-done the attempt just served, named by its slot and token, has
// the identity it had when it was sent, whatever the slot holds now. One
// worker, a slowdown with an exponential replacement for the whole run
// and timeouts far shorter than it: most attempts are stale when served.
func TestSlowdownReplacementIsTheAttemptsOwnDraw(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
	}{
		{"applies_to start", `name: stale-start
duration: 20s
clients: {count: 3, arrival: {total_rate: 20/s}, timeout: 30ms, retry: {max_attempts: 3, backoff: {base: 1ms, jitter: none}}}
backend: {workers: 1, queue: {limit: 10000}, service: {dist: constant, mean: 1ms}}
faults: [{kind: slowdown, start: 0s, duration: 20s, service_time: {dist: exponential, mean: 40ms}, applies_to: start}]
`},
		{"applies_to arrival, over a network", `name: stale-arrival
duration: 20s
network: {delay: {dist: constant, mean: 20ms}}
clients: {count: 3, arrival: {total_rate: 20/s}, timeout: 10ms, retry: {max_attempts: 3, backoff: {base: 1ms, jitter: none}}}
backend: {workers: 1, queue: {limit: 10000}, service: {dist: constant, mean: 1ms}}
faults: [{kind: slowdown, start: 0s, duration: 20s, service_time: {dist: exponential, mean: 40ms}, applies_to: arrival}]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte(tc.yml), "slow.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel(sc, 1)
			if err != nil {
				t.Fatal(err)
			}
			type who struct {
				entity uint64
				ord    uint32
			}
			ids := map[uint64]who{} // slot<<32 | generation
			b := m.be
			var served, stale int
			trace := func(e TraceEvent) {
				if e.Kind == "worker-done" {
					wk := &b.workers[e.ID]
					if wk.kind == wkServe && wk.busy && wk.gen == e.Aux&genMask {
						id, ok := ids[uint64(wk.slot)<<32|uint64(wk.token>>8)]
						if !ok {
							t.Fatalf("worker-done at %d: slot %d token %#x was never seen live", e.At, wk.slot, wk.token)
						}
						want := b.slow.sample(m.src.Key(rng.Service, id.entity), drawIndex(id.ord, uint8(wk.token))|uint64(wk.hop)<<56)
						if got := e.At - wk.start; got != want {
							t.Fatalf("attempt %d of request %d of entity %d (slot %d) served for %d ns, want its own slowed draw %d",
								uint8(wk.token), id.ord, id.entity, wk.slot, got, want)
						}
						served++
						if !m.waiting(wk.slot, wk.token) {
							stale++
						}
					}
				}
				for s := range m.cl.reqs {
					if r := &m.cl.reqs[s]; r.state != stFree {
						ids[uint64(s)<<32|uint64(r.gen)] = who{m.entity(r), r.ord}
					}
				}
			}
			m.start()
			if _, err := m.loop(context.Background(), nil, trace); err != nil {
				t.Fatal(err)
			}
			// The check must have seen stale attempts, or it proved nothing.
			if served < 100 || stale < served/2 {
				t.Fatalf("%d attempts served, %d of them stale: want at least 100, half stale", served, stale)
			}
			t.Logf("%d attempts served, %d stale", served, stale)
		})
	}
}
