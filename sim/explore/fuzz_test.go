package explore

import (
	"math"
	"testing"
)

// FuzzParseRange: any input gives a range with Lo < Hi and finite bounds,
// or an error; never a panic.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"k=1..2", "x=400/s..900/s/20", "x=1s..2s", "=..", "x=1..", "x=..2/3", "x=1e308..1e309", "x=-.5..+.5/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange("--param", s)
		if err != nil {
			return
		}
		if !(r.Lo < r.Hi) || math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) || r.Steps < 0 || r.Path == "" {
			t.Fatalf("%q: got %+v", s, r)
		}
		for _, x := range r.Values(max(r.Steps, 2)) {
			if x < r.Lo || x > r.Hi {
				t.Fatalf("%q: value %g outside [%g, %g]", s, x, r.Lo, r.Hi)
			}
		}
	})
}

// FuzzParseConstraint: an error or a known metric with a finite bound.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"success_ratio>=0.999", "local_drop_rate<=60%", "x<=", ">=1", "a<=b>=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			return
		}
		if CheckMetric(c.Metric) != nil || math.IsNaN(c.Bound) || math.IsInf(c.Bound, 0) {
			t.Fatalf("%q: got %+v", s, c)
		}
	})
}
