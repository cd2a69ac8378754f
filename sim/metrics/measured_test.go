package metrics

import (
	"slices"
	"testing"
)

func TestForgetServer(t *testing.T) {
	x := 1.5
	s := Summary{Offered: 10, Succeeded: 9, Received: 12, Rejected: 3, Utilisation: &x, WastedWorkFraction: &x, SuccessRatio: &x, LatencyP99MS: &x}
	s.ForgetServer()
	if s.Received != 0 || s.Rejected != 0 || s.Utilisation != nil || s.WastedWorkFraction != nil {
		t.Errorf("server fields after ForgetServer: got received %d rejected %d utilisation %v wasted %v, want 0, 0, nil, nil", s.Received, s.Rejected, s.Utilisation, s.WastedWorkFraction)
	}
	if s.Offered != 10 || s.Succeeded != 9 || s.SuccessRatio == nil || s.LatencyP99MS == nil {
		t.Errorf("client fields after ForgetServer: got %+v, want them kept", s)
	}
	f := ServerFields()
	for _, want := range []string{"backend_received", "utilisation", "recovery_wasted_fraction"} {
		if !slices.Contains(f, want) {
			t.Errorf("ServerFields() = %q, want it to hold %q", f, want)
		}
	}
	for _, not := range []string{"offered", "success_ratio", "latency_p99_ms", "attempts"} {
		if slices.Contains(f, not) {
			t.Errorf("ServerFields() = %q, want no %q (the client measures it)", f, not)
		}
	}
}

// Quantiles gives what Quantile gives, for every q, in one pass.
func TestQuantilesMatchQuantile(t *testing.T) {
	var h Histogram
	x := uint64(12345)
	for i := 0; i < 5000; i++ {
		x = x*6364136223846793005 + 1442695040888963407 // a fixed LCG: no chance
		h.Add(int64(x>>40) + int64(i%7)*1_000_000)
	}
	qs := []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1}
	out := make([]float64, len(qs))
	if !h.Quantiles(qs, out) {
		t.Fatal("Quantiles of a full histogram: got false, want true")
	}
	for i, q := range qs {
		want, _ := h.Quantile(q)
		if out[i] != want {
			t.Errorf("Quantiles q=%g: got %g, want %g (Quantile)", q, out[i], want)
		}
	}
	var empty Histogram
	if empty.Quantiles(qs, out) {
		t.Error("Quantiles of an empty histogram: got true, want false")
	}
	var r Row
	r.SetLatency(&h)
	if p50, _ := h.Quantile(0.5); r.LatencyP50 != p50 || !(r.LatencyP50 <= r.LatencyP90 && r.LatencyP90 <= r.LatencyP99 && r.LatencyP99 <= r.LatencyMax) {
		t.Errorf("SetLatency: got p50 %g p90 %g p99 %g max %g, want p50 %g and them ascending", r.LatencyP50, r.LatencyP90, r.LatencyP99, r.LatencyMax, p50)
	}
}
