package sim

import "testing"

// A backend with a priority shedder (the PID shedder or DAGOR) and
// failsafe-go's prioritised limit together runs (admission keeps them
// apart; sim/admission's TestShedderWithPrioritizedLimit checks that each
// acts) and sheds under 2× overload, where the queue alone never would:
// pidScenario's backend (queue limit 100,000, clients that wait 60 s)
// for 60 s.
func TestShedderWithPrioritizedLimitRuns(t *testing.T) {
	const limit = "backend.concurrency_limit={kind: failsafe, initial: 20, min: 10, max: 40, prioritized: true, initial_rejection_factor: 2, max_rejection_factor: 3}"
	for _, tt := range []struct {
		name string
		sets []string
	}{
		{"pid_shedding", []string{limit}},
		{"priority_shedding", []string{limit, "backend.pid_shedding=null", "backend.priority_shedding={}"}},
		{"limit alone", []string{limit, "backend.pid_shedding=null"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, parseGraph(t, pidScenario, append([]string{"duration=60s"}, tt.sets...)...))
			s := res.Summary
			if s.Shed == 0 || s.Shed >= s.Received {
				t.Errorf("got %d shed of %d received, want some and not all", s.Shed, s.Received)
			}
			if *s.SuccessRatio < 0.3 {
				t.Errorf("got success ratio %.3f, want at least 0.3 (capacity is half the offered load)", *s.SuccessRatio)
			}
		})
	}
}
