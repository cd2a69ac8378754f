package sim

import "testing"

// Every adaptive breaker of a run updates at its own phase: two client
// groups' breakers and the calls' breakers are distinct processes, so no
// two of them may share a phase draw. Before the phase was keyed by the
// stack's First + breaker index, breaker 0 of every group and of every
// call drew the same phase and updated in lockstep.
func TestAdaptiveBreakerPhasesDistinctAcrossStacks(t *testing.T) {
	const yml = `name: phases
duration: 10s
clients:
  count: 8
  arrival: {total_rate: 8/s}
  groups:
    - {name: a, share: 0.5, adaptive_breaker: {interval: 1s}}
    - {name: b, share: 0.5, adaptive_breaker: {interval: 1s}}
services:
  - name: front
    calls:
      - {to: x, adaptive_breaker: {interval: 1s}}
      - {to: y, adaptive_breaker: {interval: 1s}}
  - {name: x}
  - {name: y}
`
	m, err := newModel(parseGraph(t, yml), 1)
	if err != nil {
		t.Fatal(err)
	}
	type inst struct {
		where string
		i     int
	}
	seen := map[int64]inst{}
	check := func(where string, p *cpol) {
		a := p.AdaptiveBreaker()
		if a == nil {
			t.Fatalf("%s: no adaptive breaker", where)
		}
		for i := range a.Len() {
			ph := a.Phase(i)
			if o, ok := seen[ph]; ok {
				t.Errorf("%s breaker %d: phase %d, the same as %s breaker %d", where, i, ph, o.where, o.i)
			}
			seen[ph] = inst{where, i}
		}
	}
	if got, want := len(m.cl.pols), 2; got != want {
		t.Fatalf("got %d client groups, want %d", got, want)
	}
	for i := range m.cl.pols {
		check(m.cl.pols[i].name, &m.cl.pols[i])
	}
	if got, want := len(m.edges), 2; got != want {
		t.Fatalf("got %d calls, want %d", got, want)
	}
	for i := range m.edges {
		check(m.edges[i].pol.name, &m.edges[i].pol)
	}
	if got, want := len(seen), 8+2; got != want {
		t.Errorf("got %d distinct phases, want %d", got, want)
	}
}
