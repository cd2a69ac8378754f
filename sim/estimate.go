package sim

import (
	"fmt"
	"math"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Estimate is a rough forecast of what a run costs, made before it starts.
type Estimate struct {
	Events  float64 // events the run will process
	Bytes   float64 // peak memory of the simulation
	Seconds float64 // wall time on one core of a 2020s machine
}

// Cost model (measured with `make bench` on the 2-core development
// machine; see docs/performance.md): ~3 events per application request
// attempt (arrival or retry timer, completion, timeout), a connection
// attempt ~3 more; about 60 bytes per client (heap entry, ordinal, throttle
// counters, connection state), 400 bytes per metrics interval, 48 bytes per
// request in flight; 2.5 million events per second.
const (
	bytesPerClient   = 60
	bytesPerInterval = 400
	eventsPerSecond  = 2.5e6
)

// EstimateCost forecasts the cost of running sc.
func EstimateCost(sc *scenario.Scenario) Estimate {
	peak := 1.0
	for _, st := range sc.Clients.Arrival.Profile {
		peak = max(peak, st.Multiplier)
	}
	rate := sc.PerClientRate() * float64(sc.Clients.Count) * peak
	attempts := 1.0
	if r := sc.Clients.Retry; r != nil {
		attempts = float64(r.MaxAttempts)
	}
	secs := sc.Duration.Seconds()
	events := rate*secs*(1+2*attempts) + float64(sc.Clients.Count)
	if sc.Clients.Connection != nil {
		events += 3 * float64(sc.Clients.Count) * (1 + float64(len(sc.Faults)))
	}
	inflight := rate * attempts * math.Max(sc.Clients.Timeout.Seconds(), 1)
	bytes := float64(sc.Clients.Count)*bytesPerClient + float64(sc.Intervals())*bytesPerInterval + inflight*48
	return Estimate{Events: events, Bytes: bytes, Seconds: events / eventsPerSecond}
}

// Limits above which the CLI asks for --force.
const (
	LimitBytes   = 8 << 30 // 8 GiB
	LimitSeconds = 3600
)

// TooBig explains why a run exceeds the limits, or returns "".
func (e Estimate) TooBig() string {
	if e.Bytes <= LimitBytes && e.Seconds <= LimitSeconds {
		return ""
	}
	return fmt.Sprintf("this run would need about %s of memory and %s of CPU time (%.3g events); the limits are %s and %s",
		human(e.Bytes), humanDur(e.Seconds), e.Events, human(LimitBytes), humanDur(LimitSeconds))
}

func human(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

func humanDur(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 172800:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.3g days", s/86400)
}
