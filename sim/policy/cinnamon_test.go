package policy

import (
	"errors"
	"math"
	"testing"
)

// The controller on a step table: interval 1 s, set point 10 ms, Kp 0.1,
// Ki 0.5 /s, Kd 0.2 s, four priorities. Each step is one interval: the
// arrivals by priority in it and the mean queueing time of the requests
// that started in it; the row's wants are the state after the update at
// the start of the next interval (worked by hand from the formula in
// cinnamon.go).
func TestPIDShedderSteps(t *testing.T) {
	p, err := NewPIDShedder(PIDShedderSettings{Interval: 1e9, QueueTime: 10e6, Kp: 0.1, Ki: 0.5, Kd: 0.2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		arrivals [4]int
		waitMS   float64 // mean wait of the interval; <0: nothing started
		// after the update:
		integ, reject float64
		level         int
	}{
		// e = 0: nothing moves, everything admitted.
		{[4]int{10, 10, 10, 10}, 10, 0, 0, 3},
		// e = +1 (20 ms, clamped at 1): I = 0.5; D = 0.2·(1−0)/1 = 0.2;
		// reject = 0.1 + 0.5 + 0.2 = 0.8; keep 20% of 40 = 8 < 10: level −1.
		{[4]int{10, 10, 10, 10}, 20, 0.5, 0.8, -1},
		// e = +0.5 (15 ms): I = 0.75; D = 0.2·(0.5−1) = −0.1;
		// reject = 0.05 + 0.75 − 0.1 = 0.7; keep 30% of 40 = 12: level 0.
		{[4]int{10, 10, 10, 10}, 15, 0.75, 0.7, 0},
		// e = −0.5 (5 ms): I = 0.5; D = 0.2·(−1) = −0.2;
		// reject = −0.05 + 0.5 − 0.2 = 0.25; keep 75% of 40 = 30: level 2.
		{[4]int{10, 10, 10, 10}, 5, 0.5, 0.25, 2},
		// e = −1 (nothing started): I = 0; D = −0.1; reject 0: level 3.
		{[4]int{1, 0, 0, 0}, -1, 0, 0, 3},
		// e = +2 (30 ms), skewed arrivals: I = 1 (clamped); D = 0.2·3 = 0.6;
		// reject = 0.2+1+0.6 = 1 (clamped); keep 0: level −1.
		{[4]int{50, 0, 0, 50}, 30, 1, 1, -1},
		// e = −0.2 (8 ms): I = 0.9; D = 0.2·(−0.2−2) = −0.44;
		// reject = −0.02+0.9−0.44 = 0.44; keep 56 of 100: priority 0's 50
		// fit, then nothing arrives at 1 or 2 (cum 50 ≤ 56), 3's do not: level 2.
		{[4]int{50, 0, 0, 50}, 8, 0.9, 0.44, 2},
	}
	var now int64
	var waitSum float64
	var waitN int64
	for i, s := range steps {
		for prio, n := range s.arrivals {
			for range n {
				p.Admit(now, prio, waitSum, waitN)
			}
		}
		if s.waitMS >= 0 {
			waitSum += 10 * s.waitMS * 1e6
			waitN += 10
		}
		now += 1e9
		// The next arrival closes the interval (priority 0 counts in the next).
		p.Admit(now, 0, waitSum, waitN)
		p.hist[0]--
		if math.Abs(p.integ-s.integ) > 1e-9 || math.Abs(p.Reject()-s.reject) > 1e-9 || p.Level() != s.level {
			t.Errorf("step %d: got I %.4f, reject %.4f, level %d; want I %.4f, reject %.4f, level %d",
				i, p.integ, p.Reject(), p.Level(), s.integ, s.reject, s.level)
		}
	}
}

// The error is bounded at 10 set points: with Kp alone (0.01), a mean
// wait of 200 ms against 10 ms (e = 19) asks for 0.10, not 0.19.
func TestPIDShedderErrorBound(t *testing.T) {
	p, err := NewPIDShedder(PIDShedderSettings{Interval: 1e9, QueueTime: 10e6, Kp: 0.01}, 4)
	if err != nil {
		t.Fatal(err)
	}
	p.Admit(0, 0, 0, 0)
	if p.Admit(1e9, 0, 200e6, 1); math.Abs(p.Reject()-0.1) > 1e-9 {
		t.Errorf("got reject %.4f, want 0.1000", p.Reject())
	}
}

// Admit admits by the level in force: priorities at most it.
func TestPIDShedderAdmitsByLevel(t *testing.T) {
	p, err := NewPIDShedder(PIDShedderSettings{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	p.level = 1
	for prio, want := range []bool{true, true, false, false} {
		if got := p.Admit(0, prio, 0, 0); got != want {
			t.Errorf("priority %d at level 1: got admit %v, want %v", prio, got, want)
		}
	}
}

func TestPIDShedderBadSettings(t *testing.T) {
	for _, c := range []struct {
		name   string
		s      PIDShedderSettings
		levels int
	}{
		{"no levels", PIDShedderSettings{}, 0},
		{"negative interval", PIDShedderSettings{Interval: -1}, 4},
		{"negative gain", PIDShedderSettings{Kp: -1}, 4},
	} {
		if _, err := NewPIDShedder(c.s, c.levels); !errors.Is(err, ErrPIDShedderSettings) {
			t.Errorf("%s: got error %v, want ErrPIDShedderSettings", c.name, err)
		}
	}
}
