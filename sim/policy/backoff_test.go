package policy

import (
	"math"
	"testing"
)

const ms = int64(1e6)

func TestExpoAndDelayTable(t *testing.T) {
	b := Backoff{Base: 100 * ms, Cap: 10_000 * ms, Multiplier: 2, Fraction: 0.2}
	tests := []struct {
		jitter Jitter
		n      int
		u      float64
		want   int64
	}{
		{NoJitter, 1, 0.7, 100 * ms},
		{NoJitter, 2, 0.7, 200 * ms},
		{NoJitter, 3, 0.7, 400 * ms},
		{NoJitter, 8, 0.7, 10_000 * ms}, // 12.8 s capped
		{Full, 1, 0.5, 50 * ms},
		{Full, 3, 0, 0},
		{Full, 8, 0.5, 5_000 * ms},
		{Equal, 1, 0.5, 75 * ms},
		{Equal, 3, 0, 200 * ms},
		{Equal, 8, 0.5, 7_500 * ms},
		{Proportional, 1, 0.5, 100 * ms},
		{Proportional, 1, 1, 120 * ms},
		{Proportional, 3, 0, 320 * ms},
		{Proportional, 8, 1, 12_000 * ms}, // after the cap: may exceed it
	}
	for _, tt := range tests {
		b.Jitter = tt.jitter
		if got := b.Delay(tt.n, 0, tt.u); got != tt.want {
			t.Errorf("jitter %d retry %d u=%v: got %v, want %v", tt.jitter, tt.n, tt.u, got, tt.want)
		}
	}
}

func TestDecorrelatedTable(t *testing.T) {
	b := Backoff{Base: 100 * ms, Cap: 1_000 * ms, Multiplier: 2, Jitter: Decorrelated}
	// sleep = min(cap, base + u*(3*prev - base)), prev starts at base.
	steps := []struct {
		prev int64
		u    float64
		want int64
	}{
		{0, 0, 100 * ms},          // prev0 = base: U(100, 300)
		{0, 0.5, 200 * ms},        // midpoint of (100, 300)
		{200 * ms, 0.5, 350 * ms}, // U(100, 600)
		{400 * ms, 1, 1_000 * ms}, // 1200 capped
	}
	for _, st := range steps {
		if got := b.Delay(3, st.prev, st.u); got != st.want {
			t.Errorf("prev %v u=%v: got %v, want %v", st.prev, st.u, got, st.want)
		}
	}
}

// Over a fine grid of u in [0, 1) each jitter stays in its range and has
// its analytic mean: full expo/2, equal 3·expo/4, decorrelated (with prev)
// (base + 3·prev)/2 below the cap. The grid mean of a linear function of u
// is exact up to the 1/n step, hence the 1e-3 relative tolerance.
func TestJitterRangesAndMeans(t *testing.T) {
	const n = 10_000
	b := Backoff{Base: 100 * ms, Cap: 60_000 * ms, Multiplier: 2, Fraction: 0.2}
	expo := float64(b.Expo(4)) // 800 ms
	prev := int64(500 * ms)
	cases := []struct {
		j        Jitter
		lo, hi   float64
		wantMean float64
	}{
		{Full, 0, expo, expo / 2},
		{Equal, expo / 2, expo, 3 * expo / 4},
		{Decorrelated, float64(b.Base), 3 * float64(prev), (float64(b.Base) + 3*float64(prev)) / 2},
		{Proportional, 0.8 * expo, 1.2 * expo, expo},
	}
	for _, c := range cases {
		b.Jitter = c.j
		var sum float64
		for i := 0; i < n; i++ {
			u := (float64(i) + 0.5) / n
			d := float64(b.Delay(4, prev, u))
			if d < c.lo || d > c.hi {
				t.Fatalf("jitter %d: delay %v outside [%v, %v]", c.j, d, c.lo, c.hi)
			}
			sum += d
		}
		if m := sum / n; math.Abs(m-c.wantMean)/c.wantMean > 1e-3 {
			t.Errorf("jitter %d: mean %v, want %v", c.j, m, c.wantMean)
		}
	}
}

func TestHonorRetryAfter(t *testing.T) {
	tests := []struct{ delay, ra, want int64 }{
		{100 * ms, 0, 100 * ms},            // no hint: the backoff
		{100 * ms, 2_000 * ms, 2_000 * ms}, // wait at least Retry-After
		{5_000 * ms, 2_000 * ms, 5_000 * ms},
	}
	for _, tt := range tests {
		if got := HonorRetryAfter(tt.delay, tt.ra); got != tt.want {
			t.Errorf("delay %v retry-after %v: got %v, want %v", tt.delay, tt.ra, got, tt.want)
		}
	}
}

func TestParseJitter(t *testing.T) {
	for s, want := range map[string]Jitter{"none": NoJitter, "full": Full, "equal": Equal, "decorrelated": Decorrelated, "proportional": Proportional} {
		if got, err := ParseJitter(s); err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParseJitter("ful"); err == nil {
		t.Error("ParseJitter(\"ful\") gave no error")
	}
}
