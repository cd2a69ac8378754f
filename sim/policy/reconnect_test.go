package policy

import "testing"

const sec = int64(1e9)

func TestReconnectSequences(t *testing.T) {
	grpc := Backoff{Base: sec, Cap: 120 * sec, Multiplier: 1.6, Jitter: Proportional, Fraction: 0.2}
	tests := []struct {
		name  string
		r     Reconnect
		u, uw float64
		first int64
		after []int64 // waits after failures 1, 2, 3, ...
	}{
		{"immediate", Reconnect{Policy: Immediate, Delay: sec}, 0.5, 0.5, 0, []int64{sec, sec, sec}},
		{"fixed", Reconnect{Policy: Fixed, Delay: 2 * sec}, 0.5, 0.5, 2 * sec, []int64{2 * sec, 2 * sec}},
		{"immediate + 60 s window", Reconnect{Policy: Immediate, Delay: sec, Window: 60 * sec}, 0.5, 0.25, 15 * sec, []int64{16 * sec, 16 * sec}},
		// gRPC connection backoff at the middle of its ±20% jitter: 1, 1.6,
		// 2.56, 4.096, ... s, capped at 120 s (reached at n = 12).
		{"gRPC defaults, u = 0.5", Reconnect{Policy: ExpBackoff, Backoff: grpc}, 0.5, 0, 0,
			[]int64{sec, 1_600_000_000, 2_560_000_000, 4_096_000_000, 6_553_600_000}},
		{"gRPC defaults at +20%", Reconnect{Policy: ExpBackoff, Backoff: grpc}, 1, 0, 0,
			[]int64{1_200_000_000, 1_920_000_000, 3_072_000_000}},
		{"backoff full jitter, u = 0.5", Reconnect{Policy: ExpBackoff, Backoff: Backoff{Base: sec, Cap: 60 * sec, Multiplier: 2, Jitter: Full}}, 0.5, 0, 0,
			[]int64{sec / 2, sec, 2 * sec, 4 * sec, 8 * sec, 16 * sec, 30 * sec, 30 * sec}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.First(tt.uw); got != tt.first {
				t.Errorf("first wait: got %d, want %d", got, tt.first)
			}
			for i, want := range tt.after {
				if got := tt.r.AfterFailure(i+1, 0, tt.u, tt.uw); got != want {
					t.Errorf("wait after failure %d: got %d, want %d", i+1, got, want)
				}
			}
		})
	}
	// The cap: gRPC's 1.6^n passes 120 s at n = 12 (1.6^11 = 175.9).
	g := Reconnect{Policy: ExpBackoff, Backoff: grpc}
	if got := g.AfterFailure(12, 0, 0.5, 0); got != 120*sec {
		t.Errorf("failure 12: got %d, want the 120 s cap", got)
	}
}

func TestParseReconnectPolicy(t *testing.T) {
	for s, want := range map[string]ReconnectPolicy{"immediate": Immediate, "fixed": Fixed, "backoff": ExpBackoff} {
		if got, err := ParseReconnectPolicy(s); err != nil || got != want {
			t.Errorf("%q: got %v, %v", s, got, err)
		}
	}
	if _, err := ParseReconnectPolicy("sometimes"); err == nil {
		t.Error("no error for an unknown policy")
	}
}
