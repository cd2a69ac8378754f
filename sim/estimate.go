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

// Cost model (from `make bench` on the 2-core development machine; see
// docs/performance.md), kept on the safe side: every allowed attempt of
// every request is counted, with about 2 events each (completion or
// rejection, and a timeout or retry timer), 2 more with a network delay,
// 4 in all with the occ backend; about 3 events per connection attempt (5
// with a network), with as many attempts after each connection-closing
// fault as the reconnect policy allows until the run ends. About 60 bytes per client,
// 400 per metrics interval, 48 per request in flight; 2.5 million events
// per second (R1 runs at 2.4-7.8 M). TestEstimateIsAnUpperBoundWithinReason
// checks the events against real runs.
const (
	bytesPerClient   = 60
	bytesPerInterval = 400
	eventsPerSecond  = 2.5e6
)

// EstimateCost forecasts the cost of running sc.
func EstimateCost(sc *scenario.Scenario) Estimate {
	rate := sc.PeakRate() // with the profile's, a cycle's or a trace's peak
	attempts := 1.0
	if r := sc.Clients.Retry; r != nil {
		attempts = float64(r.MaxAttempts)
	}
	secs := sc.Duration.Seconds()
	perAttempt := 2.0 // completion or rejection, timeout or retry timer
	if sc.Network != nil {
		perAttempt += 2 // the request's arrival and the answer's
	}
	if sc.Backend.Kind == scenario.BackendOCC {
		perAttempt = 4 // read there and back, write there and back
	}
	events := rate*secs*(1+perAttempt*attempts) + float64(sc.Clients.Count)
	if cn := sc.Clients.Connection; cn != nil {
		// Connection attempts per client: the first, and after every fault
		// that closes connections as many as the reconnect policy allows
		// until the run ends (a storm may never settle).
		per := 1.0
		for _, f := range sc.Faults {
			if f.Kind == scenario.FaultCapacity {
				continue
			}
			rest := (sc.Duration - f.Start).Seconds()
			rc := cn.Reconnect
			jw := rc.JitterWindow.Seconds() / 2 // the mean jitter every attempt waits
			if rc.Policy == scenario.ReconnectBackoff {
				// Up to the cap, then waits of at least half of it (full
				// jitter) each.
				base := max(rc.Backoff.Base.Seconds(), 1e-3)
				ceil := max(rc.Backoff.Cap.Seconds(), base)
				per += math.Log2(ceil/base) + 1 + rest/(ceil/2+jw)
			} else {
				per += rest / max(rc.Delay.Seconds()+jw, 1e-3)
			}
		}
		perConnect := 3.0
		if sc.Network != nil {
			perConnect += 2 // the hello's arrival and the answer's
		}
		events += perConnect * float64(sc.Clients.Count) * per
	}
	inflight := rate * attempts * math.Max(sc.Clients.Timeout.Seconds(), 1)
	bytes := float64(sc.Clients.Count)*bytesPerClient + float64(sc.Intervals())*bytesPerInterval + inflight*48
	bytes += adaptiveBreakerBytes(sc)
	return Estimate{Events: events, Bytes: bytes, Seconds: events / eventsPerSecond}
}

// adaptiveBreakerBytes is the adaptive breakers' windows
// (policy.AdaptiveBreakerSet): two uint32 counts per interval of the
// window, per breaker. A window of up to 65536 intervals is allowed per
// breaker, so with many clients this, not bytesPerClient, is the run's
// memory (a million clients at 65536 intervals: 512 GiB).
func adaptiveBreakerBytes(sc *scenario.Scenario) float64 {
	var b float64
	for _, g := range sc.Clients.ResolvedGroups() {
		if a := g.Policies.AdaptiveBreaker; a != nil && a.Interval > 0 {
			breakers := math.Ceil(float64(g.Count) / float64(max(a.GroupSize, 1)))
			b += breakers * 8 * math.Ceil(float64(a.Window)/float64(a.Interval))
		}
	}
	return b
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
