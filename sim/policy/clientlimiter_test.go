package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestClientRateLimiterConfigValidate(t *testing.T) {
	if err := ClientRateLimiterDefaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	d := ClientRateLimiterDefaults()
	if d.Beta != 0.7 || d.C != 0.4 || d.Smoothing != 0.8 || d.MinRate != 0.5 || d.BucketInterval != 500*ms {
		t.Errorf("defaults %+v", d)
	}
	bad := []func(*ClientRateLimiterConfig){
		func(c *ClientRateLimiterConfig) { c.Beta = 0 },
		func(c *ClientRateLimiterConfig) { c.Beta = 1 },
		func(c *ClientRateLimiterConfig) { c.Beta = math.NaN() },
		func(c *ClientRateLimiterConfig) { c.C = 0 },
		func(c *ClientRateLimiterConfig) { c.Smoothing = 0 },
		func(c *ClientRateLimiterConfig) { c.Smoothing = 1.5 },
		func(c *ClientRateLimiterConfig) { c.MinRate = 0 },
		func(c *ClientRateLimiterConfig) { c.BucketInterval = 0 },
	}
	for i, f := range bad {
		c := ClientRateLimiterDefaults()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
	c := ClientRateLimiterDefaults()
	c.Smoothing = 1 // no smoothing: allowed
	if err := c.Validate(); err != nil {
		t.Errorf("smoothing 1: %v", err)
	}
}

// botocore tests/unit/retries/test_throttling.py (TestCubicCalculator),
// whose values the authors "by-hand verified".
func TestCubicBotocore(t *testing.T) {
	c := ClientRateLimiterDefaults()
	// test_starting_params: W_max 10 → K = ∛7.5.
	if k := c.K(10); !near(k, 1.9574338205844317, 1e-15) {
		t.Errorf("K(10) = %v", k)
	}
	// test_error_response_decreases_rate_by_beta: throttled at 8 TPS.
	if k := c.K(8); !near(k, 1.8171205928321397, 1e-15) {
		t.Errorf("K(8) = %v", k)
	}
	if r := 8 * c.Beta; !near(r, 5.6, 1e-15) {
		t.Errorf("8·β = %v", r)
	}
	// test_success_responses_until_max_hit: below W_max before K, W_max
	// at K, above after.
	k := c.K(10)
	for _, dt := range []float64{k / 3, k / 2, k / 1.1} {
		if r := c.Cubic(10, k, dt); r > 10 {
			t.Errorf("dt %v: %v > W_max", dt, r)
		}
	}
	if r := c.Cubic(10, k, k); r != 10 {
		t.Errorf("at K: %v", r)
	}
	for _, dt := range []float64{k * 1.1, k * 2} {
		if r := c.Cubic(10, k, dt); r < 10 {
			t.Errorf("dt %v: %v < W_max", dt, r)
		}
	}
	// test_t_0_should_match_beta_decrease: β 0.6, throttled at 10 → 6,
	// and the curve starts there.
	c6 := c
	c6.Beta = 0.6
	if r := c6.Cubic(10, c6.K(10), 0); !near(r, 6, 1e-14) {
		t.Errorf("β 0.6 at t=0: %v", r)
	}
}

// The curve around K: W_max at K, W_max + C one second later, W_max + 8C
// two seconds later, and β·W_max at the throttle.
func TestCubicShape(t *testing.T) {
	c := ClientRateLimiterDefaults()
	for _, w := range []float64{0.5, 4.3264, 10, 250} {
		k := c.K(w)
		steps := []struct{ dt, want float64 }{
			{0, 0.7 * w},
			{k, w},
			{k + 1, w + 0.4},
			{k + 2, w + 3.2},
			{k - 1, w - 0.4},
		}
		for _, s := range steps {
			if got := c.Cubic(w, k, s.dt); !near(got, s.want, 1e-12*max(1, w)) {
				t.Errorf("W_max %v dt %v: got %v, want %v", w, s.dt, got, s.want)
			}
		}
	}
}

// aws-sdk-go-v2 aws/retry/adaptive_ratelimit_test.go,
// TestAdaptiveRateLimit_cubic: lastMaxRate 10, lastThrottleTime 5 s; each
// step recomputes K from the current W_max, then a throttle does
// rate = β·(previous computed rate), last = t, W_max = rate, and a success
// rate = C(t − last − K)³ + W_max. (The test's throttle sets W_max to the
// reduced rate, unlike Update, which sets it to the rate before the
// decrease: it exercises the formulas, not the Update sequence.)
func TestCubicGoSDKTable(t *testing.T) {
	type step struct {
		throttled bool
		at        float64 // s
		want      float64
	}
	cases := map[string][]step{
		"success": {
			{false, 5, 7.},
			{false, 6, 9.64893600966},
			{false, 7, 10.000030849917364},
			{false, 8, 10.453284520772092},
			{false, 9, 13.408697022224185},
			{false, 10, 21.26626835427364},
			{false, 11, 36.425998516920465},
		},
		"mixed": {
			{false, 5, 7.},
			{false, 6, 9.64893600966},
			{true, 7, 6.754255206761999},
			{true, 8, 4.727978644733399},
			{false, 9, 4.670125557970046},
			{false, 10, 4.770870456867401},
			{false, 11, 6.011819748005445},
			{false, 12, 10.792973431384178},
		},
	}
	c := ClientRateLimiterDefaults()
	for name, steps := range cases {
		wmax, last, rate := 10.0, 5.0, 0.0
		for _, s := range steps {
			k := c.K(wmax)
			if s.throttled {
				rate *= c.Beta
				last, wmax = s.at, rate
			} else {
				rate = c.Cubic(wmax, k, s.at-last)
			}
			// The SDK test's epsilon.
			if !near(rate, s.want, 1e-15) {
				t.Errorf("%s t=%v: got %v, want %v", name, s.at, rate, s.want)
			}
		}
	}
}

// aws-sdk-go-v2 aws/retry/adaptive_ratelimit_test.go,
// TestAdaptiveRateLimit_Update "base": a limiter created at 0, a response
// every 200 ms, throttles at 2.0 s and 3.2 s. Reproduced through Update.
func TestClientRateLimiterUpdateGoSDKTable(t *testing.T) {
	steps := []struct {
		throttled      bool
		atMs           int64
		measured, fill float64
	}{
		{false, 200, 0, 0.5},
		{false, 400, 0, 0.5},
		{false, 600, 4.8, 0.5}, // 3 responses over the 0.5 s bucket: 6 rps · 0.8
		{false, 800, 4.8, 0.5},
		{false, 1000, 4.16, 0.5},
		{false, 1200, 4.16, 0.6912}, // C·1.2³ (W_max 0, K 0 since creation)
		{false, 1400, 4.16, 1.0976},
		{false, 1600, 5.632, 1.6384},
		{false, 1800, 5.632, 2.3328},
		{true, 2000, 4.3264, 3.02848}, // β · measured (not yet enabled)
		{false, 2200, 4.3264, 3.4866391734702598},
		{false, 2400, 4.3264, 3.8218744160402554},
		{false, 2600, 5.665280, 4.053385727709987},
		{false, 2800, 5.665280, 4.200373108479455},
		{false, 3000, 4.333056, 4.282036558348658},
		{true, 3200, 4.333056, 2.99742559084406}, // β · min(measured, fill)
		{false, 3400, 4.333056, 3.4522263943863463},
	}
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	for _, s := range steps {
		a.Update(s.atMs*ms, 0, s.throttled)
		if got := a.Measured(0); !near(got, s.measured, 1e-15) {
			t.Errorf("t=%dms: measured %v, want %v", s.atMs, got, s.measured)
		}
		if got := a.FillRate(0); !near(got, s.fill, 1e-15) { // the SDK's epsilon
			t.Errorf("t=%dms: fill %v, want %v", s.atMs, got, s.fill)
		}
		if got, want := a.Enabled(0), s.atMs >= 2000; got != want {
			t.Errorf("t=%dms: enabled %v", s.atMs, got)
		}
	}
}

// botocore tests/unit/retries/test_adaptive.py, TestRateClocker, through
// Update: the measured rate of responses at the given times (s), for a
// client created at 0. botocore asserts bounds in some cases; the exact
// values are given here.
func TestClientRateLimiterMeasuredRateBotocore(t *testing.T) {
	cases := []struct {
		name  string
		times []float64
		want  float64
	}{
		{"time_updates_if_after_bucket_range", []float64{1}, 0.8},
		{"times_are_grouped_per_time_bucket (same bucket: still 0)", []float64{0.1, 0.2, 0.3, 0.4, 0.49}, 0},
		{"times_are_grouped_per_time_bucket (next bucket: 12·0.8)", []float64{0.1, 0.2, 0.3, 0.4, 0.49, 0.5}, 12 * 0.8},
		{"uses_smoothing_to_favor_recent_weights (≤ 2)", []float64{1, 1.5, 2, 2.5, 3, 3.5, 4}, 1.9999232},
		{"uses_smoothing_to_favor_recent_weights (then 10 s gap)", []float64{1, 1.5, 2, 2.5, 3, 3.5, 4, 14}, 0.47998464},
		{"noop_when_delta_t_is_0", []float64{1, 1, 1, 2, 3}, 1.312},
	}
	for _, c := range cases {
		a := mustLimiter(t, 1, ClientRateLimiterDefaults())
		for _, s := range c.times {
			a.Update(int64(math.Round(s*1e9)), 0, false)
		}
		if got := a.Measured(0); !near(got, c.want, 1e-12) {
			t.Errorf("%s: measured %v, want %v", c.name, got, c.want)
		}
	}
	// can_measure_constant_rate: one response a second → 1 − 0.2ⁿ.
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	for s := int64(1); s <= 20; s++ {
		a.Update(s*sec, 0, false)
		if got, want := a.Measured(0), 1-math.Pow(0.2, float64(s)); !near(got, want, 1e-12) {
			t.Fatalf("t=%ds: %v, want %v", s, got, want)
		}
	}
}

// Steady responses at 10 rps are measured as exactly 10 rps at every bucket
// boundary once the smoothing has converged; the smoothing converges as
// 1 − 0.2ⁿ from 0.
func TestClientRateLimiterMeasuredRateSmoothing(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	for j := int64(1); j <= 50; j++ { // 10 rps for 5 s
		a.Update(j*100*ms, 0, false)
		if j%5 == 0 {
			n := float64(j / 5) // buckets closed
			if got, want := a.Measured(0), 10*(1-math.Pow(0.2, n)); !near(got, want, 1e-12) {
				t.Fatalf("t=%v: measured %v, want %v", time.Duration(j*100*ms), got, want)
			}
		}
	}
}

// measuredAt10 puts client i into the state "measured exactly 10 rps, then
// throttled at 2 s": 24 responses in the first bucket, the 25th (throttled)
// at 2 s closes it over Δ = 2 s: 25/2 = 12.5 rps, · 0.8 = 10.
func measuredAt10(a *ClientRateLimiter, i int) {
	for j := int64(1); j <= 24; j++ {
		a.Update(j*20*ms, i, false)
	}
	a.Update(2*sec, i, true)
}

// feed10 sends client i successes every 100 ms at times strictly between
// from and to.
func feed10(a *ClientRateLimiter, i int, from, to int64) {
	for t := (from/(100*ms) + 1) * 100 * ms; t < to; t += 100 * ms {
		a.Update(t, i, false)
	}
}

// After a throttle at measured 10 rps, a client answered at a steady 10 rps
// follows the CUBIC curve of the aws-sdk-go-v2 "success" table (whose
// throttle is at 5 s; here at 2 s), until it meets the 2·measured cap.
func TestClientRateLimiterRecoveryAfterThrottle(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	measuredAt10(a, 0)
	if !a.Enabled(0) || a.Measured(0) != 10 {
		t.Fatalf("after the throttle: enabled %v measured %v", a.Enabled(0), a.Measured(0))
	}
	w, k, last := a.CubicState(0)
	if w != 10 || !near(k, 1.9574338205844317, 1e-15) || last != 2*sec {
		t.Fatalf("W_max %v K %v last_fail %v", w, k, last)
	}
	if a.FillRate(0) != 7 || a.Capacity(0) != 7 {
		t.Fatalf("fill %v capacity %v, want 7, 7", a.FillRate(0), a.Capacity(0))
	}
	steps := []struct {
		at   int64
		fill float64
	}{
		{3 * sec, 9.64893600966},
		{4 * sec, 10.000030849917364},
		{5 * sec, 10.453284520772092},
		{6 * sec, 13.408697022224185},
		{7 * sec, 20}, // CUBIC 21.266: capped at 2·measured
		{8 * sec, 20}, // CUBIC 36.426
	}
	prev := int64(2 * sec)
	for _, s := range steps {
		feed10(a, 0, prev, s.at)
		a.Update(s.at, 0, false)
		prev = s.at
		if a.Measured(0) != 10 {
			t.Fatalf("t=%v: measured %v", time.Duration(s.at), a.Measured(0))
		}
		if got := a.FillRate(0); !near(got, s.fill, 1e-12) {
			t.Errorf("t=%v: fill %v, want %v", time.Duration(s.at), got, s.fill)
		}
		if got := a.Capacity(0); !near(got, s.fill, 1e-12) {
			t.Errorf("t=%v: capacity %v, want %v", time.Duration(s.at), got, s.fill)
		}
	}
}

// The same, at last_fail + K (+1, +2): W_max, W_max + C, W_max + 8C.
func TestClientRateLimiterAtK(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	measuredAt10(a, 0)
	_, k, last := a.CubicState(0)
	kn := int64(math.Round(k * 1e9))
	steps := []struct {
		at   int64
		fill float64
	}{
		{last + kn, 10},
		{last + kn + sec, 10.4},
		{last + kn + 2*sec, 13.2},
	}
	prev := last
	for _, s := range steps {
		feed10(a, 0, prev, s.at)
		a.Update(s.at, 0, false)
		prev = s.at
		// K is rounded to the nanosecond: 3·C·(dt−K)²·0.4 ns ≤ 2e-9.
		if got := a.FillRate(0); !near(got, s.fill, 1e-8) {
			t.Errorf("t=%v: fill %v, want %v", time.Duration(s.at), got, s.fill)
		}
	}
}

// A throttle takes min(measured, fill) once enabled; then the rate is
// floored at MinRate, the capacity at 1; and the cap 2·measured binds
// when responses thin out.
func TestClientRateLimiterFloorAndCap(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	// A throttle before any bucket closed: measured 0 → W_max 0, rate 0,
	// floored.
	a.Update(100*ms, 0, true)
	if !a.Enabled(0) || a.FillRate(0) != 0.5 || a.Capacity(0) != 1 {
		t.Fatalf("enabled %v fill %v capacity %v, want true 0.5 1", a.Enabled(0), a.FillRate(0), a.Capacity(0))
	}
	if w, k, _ := a.CubicState(0); w != 0 || k != 0 {
		t.Fatalf("W_max %v K %v", w, k)
	}

	// Throttled at measured 10, then one success 10 s later: CUBIC says
	// 0.4·(10 − K)³ + 10 ≈ 218, but the 8 s gap closes one bucket at
	// 1/10 rps: measured = 0.8·0.1 + 0.2·10 = 2.08, cap 4.16.
	b := mustLimiter(t, 1, ClientRateLimiterDefaults())
	measuredAt10(b, 0)
	b.Update(12*sec, 0, false)
	if got, want := b.FillRate(0), 2*(0.8*0.1+0.2*10); !near(got, want, 1e-12) {
		t.Errorf("fill %v, want the cap %v", got, want)
	}
	// A second throttle uses min(measured 2.08, fill 4.16) = 2.08.
	b.Update(12*sec+100*ms, 0, true)
	w, _, _ := b.CubicState(0)
	if !near(w, 2.08, 1e-12) || !near(b.FillRate(0), 0.7*2.08, 1e-12) {
		t.Errorf("W_max %v fill %v, want 2.08, 1.456", w, b.FillRate(0))
	}
	// ... and a third, right after, min(measured 2.08, fill 1.456).
	b.Update(12*sec+200*ms, 0, true)
	if w, _, _ := b.CubicState(0); !near(w, 1.456, 1e-12) || !near(b.FillRate(0), 0.7*1.456, 1e-12) {
		t.Errorf("W_max %v fill %v, want 1.456, 1.0192", w, b.FillRate(0))
	}
}

// Before the first throttle sends are not limited and take no token.
func TestClientRateLimiterNoWaitBeforeThrottle(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	for j := int64(0); j < 1000; j++ {
		if w := a.Acquire(j*ms, 0); w != 0 {
			t.Fatalf("send %d waited %d", j, w)
		}
		if !a.TryAcquire(j*ms, 0) {
			t.Fatalf("try %d refused", j)
		}
		a.Update(j*ms, 0, false)
	}
	if a.Enabled(0) {
		t.Fatal("enabled without a throttle")
	}
	// The bucket filled meanwhile (Go: from the first Update) at 0.5 rps,
	// up to the capacity of 1.
	if got := a.Tokens(sec, 0); !near(got, 0.5, 1e-12) {
		t.Errorf("tokens at 1 s: %v, want 0.5", got)
	}
	if got := a.Tokens(10*sec, 0); got != a.Capacity(0) || got != 1 {
		t.Errorf("tokens %v, capacity %v", got, a.Capacity(0))
	}
}

// Reservations: with the 0.5 rps floor, sends after a throttle are spaced
// 2 s apart; each call reserves the next token.
func TestClientRateLimiterAcquireAfterThrottle(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	a.Update(100*ms, 0, true) // fill 0.5, capacity 1, 0 tokens (Go: none accrued)
	steps := []struct{ at, wait int64 }{
		{100 * ms, 2 * sec},
		{100 * ms, 4 * sec},
		{1100 * ms, 5 * sec},  // 3 reserved, one second repaid: the 3rd token at 6.1 s
		{10100 * ms, 0},       // at 10.1 s the 3rd token came at 6.1, the 4th at 8.1
		{10100 * ms, 2 * sec}, // capacity 1: nothing banked beyond it
	}
	for i, s := range steps {
		if got := a.Acquire(s.at, 0); got != s.wait {
			t.Errorf("step %d at %v: wait %v, want %v", i, time.Duration(s.at), time.Duration(got), time.Duration(s.wait))
		}
	}
}

// Token bucket step tables at fixed fill rates (set as Update sets them).
func TestClientRateLimiterBucketTable(t *testing.T) {
	type step struct {
		at   int64
		op   string // "acq", "try", or "rate" (set the fill rate to r)
		r    float64
		wait int64 // acq: the wait; try: 0 ok, 1 refused
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"fill 2 rps: tokens 0.5 s apart", []step{
			{0, "rate", 2, 0},
			{0, "acq", 0, 500 * ms},
			{0, "acq", 0, 1000 * ms},
			{0, "acq", 0, 1500 * ms},
			{0, "acq", 0, 2000 * ms},
			{2 * sec, "acq", 0, 500 * ms}, // debt of 4 repaid at 2 s
			{10 * sec, "acq", 0, 0},       // full: capacity 2
			{10 * sec, "acq", 0, 0},
			{10 * sec, "acq", 0, 500 * ms},
			{10 * sec, "try", 0, 1}, // fail fast: refused, takes nothing
			{10*sec + 500*ms, "try", 0, 1},
			{10*sec + 1000*ms, "try", 0, 0},
		}},
		// A rate cut repays the remaining debt more slowly: later
		// reservations wait longer, those handed out stay as they were.
		{"rate change under debt", []step{
			{0, "rate", 4, 0},
			{0, "acq", 0, 250 * ms},
			{0, "acq", 0, 500 * ms},
			{100 * ms, "rate", 1, 0},        // debt 2 − 0.4 = 1.6, now at 1 rps
			{100 * ms, "acq", 0, 2600 * ms}, // debt 2.6 at 1 rps
			{100 * ms, "rate", 0.2, 0},      // floored at MinRate 0.5
			{100 * ms, "acq", 0, 7200 * ms}, // debt 3.6 at 0.5 rps
		}},
		// botocore test_bucket.py test_acquiring_blocks_when_capacity_reached:
		// rate 10 from 0; a token at 0.1 s; none at 0.15 s, so a wait of
		// 0.05 s; at 0.300001 s one again.
		{"botocore acquiring_blocks_when_capacity_reached", []step{
			{0, "rate", 10, 0},
			{100 * ms, "try", 0, 0},
			{150 * ms, "acq", 0, 50 * ms},
			{300001 * 1000, "try", 0, 0},
		}},
		// test_can_change_max_capacity_lower: 1 TPS at rate 10, then 1.
		{"botocore can_change_max_capacity_lower", []step{
			{0, "rate", 10, 0},
			{1 * sec, "try", 0, 0}, {2 * sec, "try", 0, 0}, {3 * sec, "try", 0, 0},
			{4 * sec, "try", 0, 0}, {5 * sec, "try", 0, 0},
			{5 * sec, "rate", 1, 0},
			{6 * sec, "try", 0, 0}, {7 * sec, "try", 0, 0}, {8 * sec, "try", 0, 0},
			{9 * sec, "try", 0, 0}, {10 * sec, "try", 0, 0},
		}},
		// test_can_retrieve_at_max_send_rate: 20 at 10 TPS.
		{"botocore can_retrieve_at_max_send_rate", func() []step {
			s := []step{{0, "rate", 10, 0}}
			for i := int64(0); i < 20; i++ {
				s = append(s, step{sec + i*100*ms, "try", 0, 0})
			}
			return s
		}()},
	}
	for _, c := range cases {
		a := mustLimiter(t, 1, ClientRateLimiterDefaults())
		a.enabled[0] = true
		for i, s := range c.steps {
			switch s.op {
			case "rate":
				a.setRate(0, s.at, s.r)
			case "acq":
				if got := a.Acquire(s.at, 0); got != s.wait {
					t.Errorf("%s: step %d: wait %v, want %v", c.name, i, time.Duration(got), time.Duration(s.wait))
				}
			case "try":
				if got := a.TryAcquire(s.at, 0); got != (s.wait == 0) {
					t.Errorf("%s: step %d: try %v", c.name, i, got)
				}
			}
		}
	}
}

// botocore test_bucket.py: test_max_capacity_is_at_least_one and
// test_rate_cant_go_below_min (min rate 0.2 there).
func TestClientRateLimiterSetRateFloors(t *testing.T) {
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	a.setRate(0, sec, 0.5)
	if a.FillRate(0) != 0.5 || a.Capacity(0) != 1 {
		t.Errorf("0.5: fill %v capacity %v", a.FillRate(0), a.Capacity(0))
	}
	c := ClientRateLimiterDefaults()
	c.MinRate = 0.2
	b := mustLimiter(t, 1, c)
	b.setRate(0, 0, 1)
	b.setRate(0, sec, 0.1)
	if b.FillRate(0) != 0.2 || b.Capacity(0) != 1 {
		t.Errorf("0.1 with min 0.2: fill %v capacity %v", b.FillRate(0), b.Capacity(0))
	}
}

// Over any span, reservations at a fixed fill rate admit no more sends than
// capacity + fill·span: the send times of successive reservations never
// beat the bucket.
func TestClientRateLimiterReservationRate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	a := mustLimiter(t, 1, ClientRateLimiterDefaults())
	a.enabled[0] = true
	a.setRate(0, 0, 3)
	now, last := int64(0), int64(0)
	var sends []int64
	for j := 0; j < 5000; j++ {
		now += r.Int64N(int64(400 * ms))
		s := now + a.Acquire(now, 0)
		if s < last {
			t.Fatalf("send %d at %d before the previous one at %d", j, s, last)
		}
		last = s
		sends = append(sends, s)
	}
	for j := 0; j < len(sends); j += 97 {
		for m := j + 1; m < len(sends); m += 13 {
			span := float64(sends[m]-sends[j]) / 1e9
			if n := float64(m - j + 1); n > 3+3*span+1e-6 {
				t.Fatalf("%v sends in %v s", n, span)
			}
		}
	}
}

// Clients are independent: client 1 fed a fixed sequence behaves the same
// whatever is done to clients 0 and 2 in between.
func TestClientRateLimiterIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	all := mustLimiter(t, 3, ClientRateLimiterDefaults())
	alone := mustLimiter(t, 1, ClientRateLimiterDefaults())
	now := int64(0)
	for j := 0; j < 20_000; j++ {
		now += r.Int64N(int64(50 * ms))
		other := 2 * r.IntN(2)
		all.Update(now, other, r.IntN(3) == 0)
		all.Acquire(now, other)
		if j%3 == 0 {
			thr := j%30 == 0
			all.Update(now, 1, thr)
			alone.Update(now, 0, thr)
			if w1, w0 := all.Acquire(now, 1), alone.Acquire(now, 0); w1 != w0 {
				t.Fatalf("step %d: waits %d vs %d", j, w1, w0)
			}
			if all.FillRate(1) != alone.FillRate(0) || all.Measured(1) != alone.Measured(0) ||
				all.Enabled(1) != alone.Enabled(0) || all.Tokens(now, 1) != alone.Tokens(now, 0) {
				t.Fatalf("step %d: client 1 differs from the lone client", j)
			}
		}
	}
	if !all.Enabled(0) || !all.Enabled(2) || !all.Enabled(1) {
		t.Fatal("clients not enabled")
	}
}

// Reset starts a fresh client; its first rate bucket starts at the whole
// second (both SDKs: math.floor(now)).
func TestClientRateLimiterReset(t *testing.T) {
	a := mustLimiter(t, 2, ClientRateLimiterDefaults())
	measuredAt10(a, 0)
	a.Reset(3700*ms, 0)
	if a.Enabled(0) || a.FillRate(0) != 0 || a.Measured(0) != 0 || a.Capacity(0) != 0 || a.Tokens(5*sec, 0) != 0 {
		t.Fatalf("not fresh after Reset")
	}
	if w, k, last := a.CubicState(0); w != 0 || k != 0 || last != 3700*ms {
		t.Fatalf("CUBIC state %v %v %v", w, k, last)
	}
	a.Update(3900*ms, 0, false) // bucket 3.5 s > 3 s: 1 response over 0.5 s
	if got := a.Measured(0); !near(got, 1.6, 1e-15) {
		t.Errorf("measured %v, want 1.6", got)
	}
	a.Reset(3700*ms, 1)
	a.Update(4*sec, 1, false) // bucket 4 s: 1 response over 1 s
	if got := a.Measured(1); !near(got, 0.8, 1e-15) {
		t.Errorf("measured %v, want 0.8", got)
	}
}

func TestClientRateLimiterZeroAllocs(t *testing.T) {
	a := mustLimiter(t, 16, ClientRateLimiterDefaults())
	var now int64
	allocs := testing.AllocsPerRun(1000, func() {
		now += 7 * ms
		i := int(now/ms) % 16
		a.Acquire(now, i)
		a.TryAcquire(now, i)
		a.Update(now, i, now%(50*ms) == 0)
		_ = a.FillRate(i) + a.Tokens(now, i) + a.Measured(i)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call", allocs)
	}
}

func BenchmarkClientRateLimiterAcquireUpdate(b *testing.B) {
	a := mustLimiter(b, 1000, ClientRateLimiterDefaults())
	b.ReportAllocs()
	var now int64
	for i := 0; i < b.N; i++ {
		now += 1e6 // 1000 sends per simulated second over 1000 clients
		id := i % 1000
		a.Acquire(now, id)
		a.Update(now, id, i%97 == 0)
	}
}

func ExampleClientRateLimiter() {
	a, _ := NewClientRateLimiter(1, ClientRateLimiterDefaults())
	// A client sending 10 rps; its 25th response, at 2 s, is a throttle.
	for j := int64(1); j <= 24; j++ {
		a.Update(j*int64(20*time.Millisecond), 0, false)
	}
	a.Update(int64(2*time.Second), 0, true)
	fmt.Printf("fill %.1f rps\n", a.FillRate(0))
	// At 3 s the bucket is full (capacity 7): of ten sends at once seven
	// go now, the others wait for tokens 1/7 s apart.
	for j := 0; j < 10; j++ {
		fmt.Print(time.Duration(a.Acquire(int64(3*time.Second), 0)).Round(time.Millisecond), " ")
	}
	fmt.Println()
	// Output:
	// fill 7.0 rps
	// 0s 0s 0s 0s 0s 0s 0s 143ms 286ms 429ms
}

// mustLimiter is NewClientRateLimiter(n, c), failing the test on an error.
func mustLimiter(t testing.TB, n int, c ClientRateLimiterConfig) *ClientRateLimiter {
	t.Helper()
	a, err := NewClientRateLimiter(n, c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Zero fields take the defaults; an invalid field or size is an error.
func TestNewClientRateLimiterDefaultsAndErrors(t *testing.T) {
	a, err := NewClientRateLimiter(2, ClientRateLimiterConfig{Beta: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := ClientRateLimiterDefaults()
	want.Beta = 0.5
	if got := a.Config(); got != want {
		t.Errorf("got config %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		n int
		c ClientRateLimiterConfig
	}{{1, ClientRateLimiterConfig{Beta: 1.5}}, {1, ClientRateLimiterConfig{Smoothing: -1}}, {-1, ClientRateLimiterConfig{}}} {
		if _, err := NewClientRateLimiter(tt.n, tt.c); err == nil {
			t.Errorf("NewClientRateLimiter(%d, %+v): got no error, want one", tt.n, tt.c)
		}
	}
}
