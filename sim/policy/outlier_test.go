package policy

import (
	"errors"
	"fmt"
	"testing"
)

// A step table of Envoy's consecutive-failure ejection with its defaults
// (5 in a row, 10 s sweeps, 30 s base, 300 s cap, 10% of hosts) over 10
// hosts: ejection times grow 30 s, 60 s, 90 s with repeated ejections,
// the multiplier is forgiven one per clean sweep, and only one of the ten
// hosts can be out at once (10%).
func TestOutlierSteps(t *testing.T) {
	o, err := NewOutlier(OutlierConfig{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(now int64, h, n int) bool {
		ej := false
		for range n {
			ej = o.Result(now, h, true) || ej
		}
		return ej
	}
	type step struct {
		name  string
		do    func() bool // what it reports
		want  bool
		check func() string // "" when the state is as expected
	}
	ejected := func(h int, want bool) func() string {
		return func() string {
			if o.Ejected(h) != want {
				return fmt.Sprintf("host %d ejected %v, want %v", h, o.Ejected(h), want)
			}
			return ""
		}
	}
	steps := []step{
		{"4 failures do not eject", func() bool { return fail(0, 3, 4) }, false, ejected(3, false)},
		{"a success resets the count", func() bool { return o.Result(0, 3, false) }, false, ejected(3, false)},
		{"4 more do not eject", func() bool { return fail(1*sec, 3, 4) }, false, ejected(3, false)},
		{"the 5th in a row ejects", func() bool { return o.Result(1*sec, 3, true) }, true, ejected(3, true)},
		{"a second host cannot go: 20% > 10%", func() bool { return fail(2*sec, 4, 5) }, false, ejected(4, false)},
		{"sweep at 30 s: not yet (ejected at 1 s)", func() bool { return o.Sweep(30 * sec) }, false, ejected(3, true)},
		{"sweep at 31 s: back after 30 s × 1", func() bool { return o.Sweep(31 * sec) }, true, ejected(3, false)},
		{"ejected again at 32 s", func() bool { return fail(32*sec, 3, 5) }, true, ejected(3, true)},
		{"still out at 91 s (60 s × 2 from 32 s is 92 s)", func() bool { return o.Sweep(91 * sec) }, false, ejected(3, true)},
		{"back at 92 s", func() bool { return o.Sweep(92 * sec) }, true, ejected(3, false)},
		{"a clean sweep forgives one ejection (multiplier 2 → 1)", func() bool { return o.Sweep(102 * sec) }, false, ejected(3, false)},
		{"ejected at 103 s: multiplier 2, out for 60 s", func() bool { return fail(103*sec, 3, 5) }, true, ejected(3, true)},
		{"still out at 162 s", func() bool { return o.Sweep(162 * sec) }, false, ejected(3, true)},
		{"back at 163 s", func() bool { return o.Sweep(163 * sec) }, true, ejected(3, false)},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: reported %v, want %v", s.name, got, s.want)
		}
		if msg := s.check(); msg != "" {
			t.Fatalf("%s: %s", s.name, msg)
		}
	}
	if o.Ejections() != 3 {
		t.Errorf("ejections: got %d, want 3", o.Ejections())
	}
}

// The ejection time is base × ejections, capped at the maximum: with a
// 30 s base and the 300 s cap the 11th ejection in a row lasts 300 s,
// not 330 s.
func TestOutlierEjectionCap(t *testing.T) {
	o, _ := NewOutlier(OutlierConfig{Consecutive: 1}, 1)
	now := int64(0)
	for i := 1; i <= 11; i++ {
		if !o.Result(now, 0, true) {
			t.Fatalf("ejection %d did not happen", i)
		}
		want := min(int64(i)*30*sec, 300*sec)
		if got := o.ejectionTime(0); got != want {
			t.Fatalf("ejection %d: time %d s, want %d s", i, got/sec, want/sec)
		}
		now += want
		if !o.Sweep(now) || o.Ejected(0) {
			t.Fatalf("ejection %d: not back after %d s", i, want/sec)
		}
	}
}

// One host can always be ejected, whatever the percentage (Envoy's proto;
// grpc-java PR #9489); a second only when the share allows it.
func TestOutlierMaxPercent(t *testing.T) {
	for _, tc := range []struct {
		hosts int
		pct   float64
		want  int // hosts ejected when all fail
	}{
		{3, 10, 1}, {10, 10, 1}, {10, 20, 2}, {10, 100, 10}, {4, 50, 2}, {20, 10, 2},
	} {
		o, err := NewOutlier(OutlierConfig{Consecutive: 1, MaxEjectionPercent: tc.pct}, tc.hosts)
		if err != nil {
			t.Fatal(err)
		}
		for h := range tc.hosts {
			o.Result(0, h, true)
		}
		if o.EjectedCount() != tc.want {
			t.Errorf("%d hosts, %g%%: %d ejected, want %d", tc.hosts, tc.pct, o.EjectedCount(), tc.want)
		}
	}
}

// The failure-percentage detector ejects at a sweep a host whose share of
// failures in the interval reaches the threshold, only with enough
// volume on enough hosts.
func TestOutlierFailurePercent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reqs, fails int // host 0's results in the interval (the other 4 hosts: reqs successes)
		hosts       int
		want        bool
	}{
		{"85% of 100 ejects", 100, 85, 5, true},
		{"84% of 100 does not", 100, 84, 5, false},
		{"100% of 49 is below the volume", 49, 49, 5, false},
		{"4 hosts are too few", 100, 100, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Consecutive failures high enough not to fire: failures are
			// interleaved with successes anyway.
			o, err := NewOutlier(OutlierConfig{Consecutive: 1000, FailurePercentThreshold: 85, MaxEjectionPercent: 100}, tc.hosts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.reqs {
				o.Result(0, 0, i < tc.fails)
				for h := 1; h < tc.hosts; h++ {
					o.Result(0, h, false)
				}
			}
			if got := o.Sweep(10 * sec); got != tc.want || o.Ejected(0) != tc.want {
				t.Errorf("sweep reported %v, host 0 ejected %v; want %v", got, o.Ejected(0), tc.want)
			}
		})
	}
}

func TestOutlierConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg OutlierConfig
		n   int
	}{
		{OutlierConfig{}, 0},
		{OutlierConfig{Consecutive: -1}, 3},
		{OutlierConfig{MaxEjectionPercent: 101}, 3},
		{OutlierConfig{FailurePercentThreshold: -5}, 3},
	} {
		if _, err := NewOutlier(tc.cfg, tc.n); !errors.Is(err, ErrOutlierConfig) {
			t.Errorf("%+v, %d hosts: got %v, want ErrOutlierConfig", tc.cfg, tc.n, err)
		}
	}
	if _, err := NewHealth(HealthConfig{UnhealthyThreshold: -1}, 2); !errors.Is(err, ErrOutlierConfig) {
		t.Errorf("health threshold -1: got %v, want ErrOutlierConfig", err)
	}
}

// Health checks: with thresholds 2 (unhealthy) and 3 (healthy), a host
// leaves after two failed checks in a row and comes back after three
// passed ones; a check that agrees with the state resets the streak.
func TestHealthSteps(t *testing.T) {
	hc, err := NewHealth(HealthConfig{UnhealthyThreshold: 2, HealthyThreshold: 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []struct {
		pass, changed, unhealthy bool
	}{
		{false, false, false},
		{true, false, false}, // the streak resets
		{false, false, false},
		{false, true, true}, // two in a row
		{true, false, true},
		{true, false, true},
		{false, false, true}, // resets the healthy streak
		{true, false, true},
		{true, false, true},
		{true, true, false}, // three in a row
	} {
		if got := hc.Check(1, s.pass); got != s.changed || hc.Unhealthy(1) != s.unhealthy {
			t.Fatalf("check %d (pass %v): changed %v unhealthy %v, want %v %v", i, s.pass, got, hc.Unhealthy(1), s.changed, s.unhealthy)
		}
		if hc.Unhealthy(0) {
			t.Fatalf("check %d: host 0 was never checked and must stay healthy", i)
		}
	}
}
