package policy

import "testing"

// DAGOR's window rule (overload-control.md §3.6) step by step: 10
// priorities, 100 arrivals of each per window (windows of 1 s), so a
// level admits 100·(level+1).
func TestDAGORSteps(t *testing.T) {
	d, err := NewDAGOR(DAGORSettings{WindowRequests: 1 << 30}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var waitSum float64
	var waitN int64
	// window is 1,000 arrivals from at, the first of which closes the
	// window before; it returns the level in force after that one.
	window := func(at int64, meanWait int64) int {
		level := -1
		for i := range 1000 {
			d.Admit(at+int64(i), i%10, waitSum, waitN)
			if i == 0 {
				level = d.Level()
			}
		}
		// every admitted request's wait, counted as it starts processing
		waitSum += float64(meanWait) * float64(100*(d.Level()+1))
		waitN += int64(100 * (d.Level() + 1))
		return level
	}
	steps := []struct {
		wait int64 // mean queueing time in the window, ns
		want int   // the level after it
	}{
		// Overloaded (30 ms > 20 ms): target 0.95 × 1000 = 950 → level 8
		// (900 ≤ 950 < 1000).
		{30e6, 8},
		// Again: 0.95 × 900 = 855 → level 7 (800).
		{30e6, 7},
		// 0.95 × 800 = 760 → 6.
		{30e6, 6},
		// Not overloaded (5 ms): 1.01 × 700 = 707 → stays at 6: β raises
		// the admitted count by 1%, less than one level of 10%.
		{5e6, 6},
	}
	at := int64(0)
	window(at, steps[0].wait)
	for i, s := range steps {
		at += 1e9
		next := 0
		if i+1 < len(steps) {
			next = int(steps[i+1].wait)
		}
		if got := window(at, int64(next)); got != s.want {
			t.Fatalf("after window %d: level %d, want %d", i, got, s.want)
		}
	}
	// Shedding: at level 6 priorities 7–9 are refused.
	if d.Admit(at+1, 7, waitSum, waitN) || !d.Admit(at+2, 6, waitSum, waitN) {
		t.Error("level 6 admitted 7 or refused 6")
	}
}

// With fine priorities DAGOR climbs back by β per window once the
// overload ends, and a window also ends after WindowRequests arrivals.
func TestDAGORRecovers(t *testing.T) {
	d, _ := NewDAGOR(DAGORSettings{WindowRequests: 1000}, 1000)
	d.level = 499 // half shed
	for w := range 200 {
		for i := range 1000 {
			d.Admit(int64(w)*1e6+int64(i), i, 0, 0) // 1,000 arrivals: a window every 1 ms, no waiting
		}
	}
	// Each window admits 1% more: 500 · 1.01^199 ≈ 3,600 > 1,000.
	if d.Level() != 999 {
		t.Errorf("after 200 calm windows level %d, want 999 (everything admitted)", d.Level())
	}
}
