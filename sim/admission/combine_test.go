package admission

import (
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// A priority shedder (the PID shedder or DAGOR) and failsafe-go's
// prioritised limit on one backend: admission.New keeps them apart (the
// shedder in `shed`, both reading priorities through `prio`) and both
// act, each where the other admits. The limit is 10 (min = max), factors
// 2 and 3.
//
//   - The shedder: held requests (1) stay below the limit, so the limit
//     admits every arrival; the queueing time is 25 ms a request, above
//     either shedder's set point (20 ms), so after some intervals the shedder
//     refuses the least important arrivals, and more of them than of
//     priority 0 (DAGOR none of those; the PID shedder's integral, fed
//     this queueing time whatever it sheds, reaches a rejection rate of 1
//     and then refuses priority 0 too).
//   - The limit: a fresh value with no queueing time (the shedder admits
//     everything) and 30 waiting beyond the full limit of 10 (its maximum
//     factor): every arrival is refused, priority 0 included.
func TestShedderWithPrioritizedLimit(t *testing.T) {
	const limit = "  concurrency_limit: {kind: failsafe, initial: 10, min: 10, max: 10, prioritized: true, initial_rejection_factor: 2, max_rejection_factor: 3}\n"
	for _, tt := range []struct {
		name, shedder string
		levels        int // the shedder's user levels: the arrivals' priority is business·levels + user
	}{
		{"pid_shedding", "  pid_shedding: {}\n", 128},
		{"priority_shedding", "  priority_shedding: {}\n", 128},
	} {
		t.Run(tt.name, func(t *testing.T) {
			build := func() Admission {
				t.Helper()
				sc, err := scenario.Parse([]byte("name: t\nduration: 10s\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\n"+
					"backend:\n  workers: 4\n  queue: {limit: 1000}\n"+tt.shedder+limit), "t.yaml", nil)
				if err != nil {
					t.Fatal(err)
				}
				a, err := New(sc.Backend, 7, nil)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			a := build()
			if !a.Prioritized() || !a.shed || a.conc == nil || a.conc.q == nil || a.conc.q.pz == nil {
				t.Fatalf("got Prioritized %v, shedder %v, prioritised limit %v, want all three", a.Prioritized(), a.shed, a.conc != nil && a.conc.q != nil && a.conc.q.pz != nil)
			}
			if a.UserLevels() != tt.levels || a.conc.q.ul != tt.levels {
				t.Fatalf("got user levels %d (limit %d), want %d for both", a.UserLevels(), a.conc.q.ul, tt.levels)
			}
			low := scenario.MaxBusinessPriority*tt.levels + tt.levels - 1 // the least important priority
			// The shedder: 20 s of arrivals 10 ms apart, each seeing 1 s of
			// queueing per request started.
			l := Load{Busy: 1, Limit: 4}
			shedLow, shedTop := 0, 0
			for i := range 2000 {
				now := int64(i) * 10e6
				l.WaitSum += 25e6
				l.WaitN++
				for _, prio := range []int{0, low} {
					_, shed := a.Arrive(now, l, prio)
					if shed {
						if prio == 0 {
							shedTop++
						} else {
							shedLow++
						}
					}
				}
			}
			if shedLow == 0 || shedLow <= shedTop || tt.name == "priority_shedding" && shedTop != 0 {
				t.Errorf("shedder, limit not full, 25 ms queueing: got %d of 2000 least important and %d of 2000 priority-0 arrivals shed, want some, more than priority 0 (none for DAGOR)", shedLow, shedTop)
			}
			// The limit: no queueing time, 30 beyond the full limit.
			a = build()
			full := Load{Busy: 4, Limit: 4, Queued: 36}
			admitted := 0
			for i := range 2000 {
				now := int64(i) * 10e6
				full.WaitN++ // started service at once
				if _, shed := a.Arrive(now, full, 0); !shed {
					admitted++
				}
			}
			if admitted != 0 {
				t.Errorf("limit full with 30 beyond it: got %d of 2000 priority-0 arrivals admitted, want none", admitted)
			}
			if !a.admitPrio(20e9, 0, full) {
				t.Errorf("no queueing time: got the shedder refusing priority 0, want it admitted (the refusals above are the limit's)")
			}
		})
	}
}
