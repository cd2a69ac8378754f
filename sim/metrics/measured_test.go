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
