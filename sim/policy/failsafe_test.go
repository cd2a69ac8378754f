package policy

import (
	"errors"
	"math"
	"testing"
)

// warmFailsafe is failsafe-go's TestAdaptiveLimiter_record set-up: default
// limits, one-sample windows of 1 s, a baseline warmed with ten 1 s values.
func warmFailsafe(t *testing.T) *Failsafe {
	t.Helper()
	f, err := NewFailsafe(FailsafeSettings{MinWindow: 1e9, MaxWindow: 1e9, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range failsafeWarmup {
		f.base.add(1e9)
	}
	return f
}

// TestFailsafeStepTable pins updateLimit on failsafe-go's own table
// (adaptivelimiter_test.go, TestAdaptiveLimiter_record): each sample is
// recorded 2 s after the one before.
func TestFailsafeStepTable(t *testing.T) {
	type step struct {
		rtt      int64
		inflight int
		want     int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"increase", []step{{1e9, 5, 21}, {500e6, 5, 22}}},
		{"decrease", []step{{2e9, 10, 19}, {2e9, 10, 18}}},
		{"hold", []step{{1300e6, 10, 20}, {1300e6, 10, 20}}},
		// 21 > 5·4 = 20: the max limit factor turns the increase into a decrease.
		{"max limit factor", []step{{1e9, 4, 19}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := warmFailsafe(t)
			now := int64(0)
			for i, s := range tc.steps {
				now += 2e9
				f.Sample(now, s.rtt, s.inflight, false, 0)
				if got := f.Limit(now); got != s.want {
					t.Fatalf("step %d (rtt %d ns, inflight %d): got limit %d, want %d", i, s.rtt, s.inflight, got, s.want)
				}
			}
		})
	}
}

// TestFailsafeSmoothsAndFilters is failsafe-go's "should smooth and
// filter RTTs": 100, 300, 200, 200, 250 ms give a median and a smoothed
// recent RTT of 200 ms.
func TestFailsafeSmoothsAndFilters(t *testing.T) {
	f := warmFailsafe(t)
	now := int64(0)
	for _, ms := range []int64{100, 300, 200, 200, 250} {
		now += 2e9
		f.Sample(now, ms*1e6, 10, false, 0)
	}
	s := f.med
	if got, want := f.smooth.v, 200e6; got != want {
		t.Errorf("smoothed recent RTT: got %g, want %g", got, want)
	}
	if got := s[4]; got != 250e6 {
		t.Errorf("last value in the median filter: got %g, want 2.5e8", got)
	}
}

// TestFailsafeWindow: a window closes only after MinWindow and with
// MinSamples; a dropped request adds no sample.
func TestFailsafeWindow(t *testing.T) {
	f, err := NewFailsafe(FailsafeSettings{MinWindow: 1e9, MaxWindow: 30e9, MinSamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	f.Sample(1, 10e6, 5, false, 0)
	f.Sample(2, 10e6, 5, false, 0)
	f.Sample(3, 10e6, 5, true, 0)
	if got := len(f.win); got != 2 {
		t.Fatalf("window after 2 samples and a drop: got %d, want 2", got)
	}
	f.Sample(4, 10e6, 5, false, 0) // closes: now > next (0) with 3 samples
	if got, want := f.next, int64(4+1e9); got != want {
		t.Fatalf("next window end: got %d, want %d (now + max(2·minRTT, 1 s))", got, want)
	}
	if got, want := f.Limit(4), 21; got != want {
		t.Errorf("limit after one window at the baseline: got %d, want %d", got, want)
	}
	for i := range int64(5) {
		f.Sample(5+i, 10e6, 5, false, 0)
	}
	if got, want := f.Limit(9), 21; got != want {
		t.Errorf("limit inside the window: got %d, want %d", got, want)
	}
}

// TestFailsafeQueueRejection is queueStats.ComputeRejectionRate on
// failsafe-go.dev's example (limit 10, factors 2 and 3).
func TestFailsafeQueueRejection(t *testing.T) {
	for _, tc := range []struct {
		queued int
		want   float64
	}{{0, 0}, {19, 0}, {20, 0}, {25, 0.5}, {29, 0.9}, {30, 1}, {45, 1}} {
		if got := FailsafeQueueRejection(tc.queued, 10, 2, 3); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("queued %d: got %g, want %g", tc.queued, got, tc.want)
		}
	}
}

// TestFailsafeLatencyRejection is failsafe-go's TestComputeRejectionRate
// table (latencylimiter_test.go), and the estimate it is fed.
func TestFailsafeLatencyRejection(t *testing.T) {
	ms := int64(1e6)
	for _, tc := range []struct {
		rtt, thr, max int64
		want          float64
	}{
		{50 * ms, 100 * ms, 500 * ms, 0},
		{100 * ms, 100 * ms, 500 * ms, 0},
		{200 * ms, 100 * ms, 500 * ms, 0.25},
		{500 * ms, 100 * ms, 500 * ms, 1},
		{600 * ms, 100 * ms, 500 * ms, 1},
		{110 * ms, 100 * ms, 120 * ms, 0.5},
		{250 * ms, 200 * ms, 100 * ms, 1},
	} {
		if got := FailsafeLatencyRejection(tc.rtt, tc.thr, tc.max); math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("rtt %d ms, threshold %d ms, max %d ms: got %g, want %g", tc.rtt/ms, tc.thr/ms, tc.max/ms, got, tc.want)
		}
	}
	for _, tc := range []struct {
		queued, limit int
		want          int64
	}{{0, 10, 100 * ms}, {9, 10, 100 * ms}, {10, 10, 200 * ms}, {25, 10, 300 * ms}} {
		if got := FailsafeEstimateRTT(tc.queued, tc.limit, float64(100*ms)); got != tc.want {
			t.Errorf("estimate with %d queued, limit %d: got %d, want %d", tc.queued, tc.limit, got, tc.want)
		}
	}
}

// TestFailsafeCorrelation: with the baseline following the recent RTT
// (age 1: the queue is always 0, an increase), RTT rising with inflight
// and flat throughput (corr(inflight, RTT) = 1, throughput's CV < 1%,
// so its correlation reads 0) decrease the limit only when it is full.
func TestFailsafeCorrelation(t *testing.T) {
	f, err := NewFailsafe(FailsafeSettings{Initial: 20, BaselineAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range failsafeWarmup {
		f.base.add(100e6)
	}
	for i := range 12 {
		inflight := 40 + i
		f.update(float64(inflight)*1e6, inflight, false)
		if got, want := f.Limit(0), 21+i; got != want {
			t.Fatalf("step %d, not full: got limit %d, want %d", i, got, want)
		}
	}
	f.update(52e6, 52, true)
	if got, want := f.Limit(0), 31; got != want {
		t.Errorf("full, flat throughput, RTT rising with inflight: got limit %d, want %d", got, want)
	}
}

func TestFailsafeSettingsErrors(t *testing.T) {
	for _, s := range []FailsafeSettings{
		{Min: 5, Initial: 2},
		{MaxLimitFactor: 0.5},
		{MinWindow: 2e9, MaxWindow: 1e9},
		{Quantile: 1.5},
		{CorrelationWindow: 1},
	} {
		if _, err := NewFailsafe(s); !errors.Is(err, ErrLimitAlgorithmSettings) {
			t.Errorf("%+v: got %v, want ErrLimitAlgorithmSettings", s, err)
		}
	}
}

// TestFailsafePrioritizer: windowedLevelTracker.GetLevel's quantile and
// the calibration of the threshold from the queue (limit 10, factors 2
// and 3: rate 0.5 at 25 queued).
func TestFailsafePrioritizer(t *testing.T) {
	p, err := NewFailsafePrioritizer(1e9, 4, 500)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Level(0.5); got != 0 {
		t.Errorf("no levels: got %d, want 0", got)
	}
	for _, lv := range []int{100, 300, 200, 400, 450} { // 100 falls out of the window of 4
		p.Record(lv)
	}
	for _, tc := range []struct {
		q    float64
		want int
	}{{0.01, 200}, {0.25, 200}, {0.5, 300}, {0.75, 400}, {1, 450}} {
		if got := p.Level(tc.q); got != tc.want {
			t.Errorf("level at quantile %g of 300, 200, 400, 450: got %d, want %d", tc.q, got, tc.want)
		}
	}
	for _, tc := range []struct {
		now    int64
		queued int
		want   int
	}{
		{0, 25, 300},       // calibrates at 0: rate 0.5
		{5e8, 0, 300},      // not due until 1 s
		{1e9, 15, 0},       // rate 0: no threshold
		{2.5e9, 29, 450},   // rate 0.9: the level at ⌈4·0.9⌉ = 4th
		{2.9e9, 25, 450},   // next due at 3 s
		{3e9 + 1, 30, 450}, // rate 1
	} {
		p.Calibrate(tc.now, tc.queued, 10, 2, 3)
		if got := p.Threshold(); got != tc.want {
			t.Errorf("calibrate at %d ns with %d queued: got threshold %d, want %d", tc.now, tc.queued, got, tc.want)
		}
	}
}
