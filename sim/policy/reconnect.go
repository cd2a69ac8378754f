package policy

import "fmt"

// ReconnectPolicy names how long a client waits between connection
// attempts.
type ReconnectPolicy uint8

// Reconnect policies.
const (
	Immediate  ReconnectPolicy = iota // first attempt at once, then Delay after each failure
	Fixed                             // Delay before every attempt
	ExpBackoff                        // first attempt at once, then Backoff.Delay(n) after the n-th failure
)

// ParseReconnectPolicy maps a scenario name to a ReconnectPolicy.
func ParseReconnectPolicy(s string) (ReconnectPolicy, error) {
	switch s {
	case "immediate":
		return Immediate, nil
	case "fixed":
		return Fixed, nil
	case "backoff":
		return ExpBackoff, nil
	}
	return 0, fmt.Errorf("policy: unknown reconnect policy %q", s)
}

// Reconnect computes the waits before connection attempts. Every wait also
// gets U(0, Window) added: reconnect jitter, which spreads a fleet that lost
// its connections at the same instant. The backoff resets after a
// successful connection (the caller starts counting failures from zero).
type Reconnect struct {
	Policy  ReconnectPolicy
	Delay   int64 // ns
	Backoff Backoff
	Window  int64 // ns
}

// First is the wait before the first attempt after the connection was lost
// (or at start-up), given a uniform draw uw for the jitter window.
//
//	policy      Delay 1s, Window 60s, uw = 0.5
//	immediate   30s
//	fixed       31s
//	backoff     30s
func (r Reconnect) First(uw float64) int64 {
	var d int64
	if r.Policy == Fixed {
		d = r.Delay
	}
	return d + r.window(uw)
}

// AfterFailure is the wait after the n-th consecutive failed attempt
// (n >= 1), given the previous backoff wait prev (decorrelated jitter), a
// uniform draw u for the backoff jitter and uw for the jitter window.
//
//	backoff 1s ×1.6 cap 120s, no jitter, Window 0:  n = 1 → 1s, 2 → 1.6s, 3 → 2.56s
func (r Reconnect) AfterFailure(n int, prev int64, u, uw float64) int64 {
	d := r.Delay
	if r.Policy == ExpBackoff {
		d = r.Backoff.Delay(n, prev, u)
	}
	return d + r.window(uw)
}

func (r Reconnect) window(uw float64) int64 {
	if r.Window <= 0 {
		return 0
	}
	return int64(uw * float64(r.Window))
}
