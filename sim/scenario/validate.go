package scenario

import (
	"fmt"
	"github.com/throttlesim/throttlesim/sim/dist"
	"math"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/throttlesim/throttlesim/sim/threshold"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Limits that keep a run inside what one machine can hold. They are far
// above any scenario we ship.
const (
	MaxClients   = 1 << 31 // client ids are uint32
	MaxIntervals = 10_000_000
	MaxAttempts  = 255 // request.attempt is a uint8
	// MaxDuration keeps every sum of times far from int64 overflow.
	MaxDuration = Duration(10_000 * time.Hour)
	// MaxArrivals bounds the application requests of one run.
	MaxArrivals = 1e11
	// MaxReplicas: every replica is a pool, and an event names its pool in
	// 8 bits (all the replicas of all the services together).
	MaxReplicas = 255
)

// validator collects problems with their positions.
type validator struct {
	scenario *Scenario
	file     string
	pos      map[string]Pos
	errs     Errors
}

func (v *validator) check(ok bool, path, format string, args ...any) {
	if ok {
		return
	}
	p, found := v.pos[path]
	for q := path; !found && strings.Contains(q, "."); { // point at the nearest parent the file gives
		q = q[:strings.LastIndex(q, ".")]
		p, found = v.pos[q]
	}
	v.errs = append(v.errs, &FieldError{File: v.file, Pos: p, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// MaxNameLen and MaxDescriptionLen bound the scenario's name (a folder
// name, and the title of every chart and page: a 1 MB name took 45 s to
// draw) and its description (shown under the report's title). MaxLabelLen
// bounds every other name and label a scenario gives, which end up in
// legends, table columns, reports and messages as the name does: service
// and group names, the service names clients.target, calls, forward
// routes and faults refer to, sweep point labels, sweep.baseline and
// sweep.vary paths, and thresholds. MaxValueLen bounds a sweep value (a
// sweep.vary value, a sweep.points set entry: YAML text that becomes part
// of a point's label or is printed with it), MaxFileLen a data file path.
// Lengths are in bytes of UTF-8.
const (
	MaxNameLen        = 100
	MaxDescriptionLen = 10000
	MaxLabelLen       = 100
	MaxValueLen       = 1000
	MaxFileLen        = 4096
)

// fault checks what fault f (at path p) needs whatever the scenario around
// it: a kind, a duration, the fields of its kind in range. The scenario's
// faults: section adds what depends on the run (it fits in the run, no
// two overlap, a disconnect needs connections); the live server's admin
// endpoint checks the faults it is given with CheckFault, the same rules.
func (v *validator) fault(p string, f Fault) {
	if f.Kind == FaultDisconnect {
		v.check(f.Duration >= 0, p+".duration", "must be >= 0, got %s", f.Duration)
		v.check(f.Fraction > 0 && f.Fraction <= 1, p+".fraction", "must be in (0, 1]: the share of connections closed, got %g", f.Fraction)
	} else {
		v.check(f.Duration > 0, p+".duration", "must be > 0, got %s", f.Duration)
	}
	v.check(f.Kind != "", p+".kind", "is required: outage, capacity, disconnect or slowdown")
	if f.Kind == FaultCapacity {
		v.check(f.Fraction >= 0 && f.Fraction < 1, p+".fraction", "must be in [0, 1), got %g", f.Fraction)
	}
	if f.Kind == FaultOutage {
		v.check(f.Mode == "" || f.Mode == OutageRefuse || f.Mode == OutageBlackhole, p+".mode", "must be refuse or blackhole, got %q", f.Mode)
	}
	v.check(f.RetryAfter >= 0, p+".retry_after", "must be >= 0, got %s", f.RetryAfter)
	if f.Kind == FaultSlowdown {
		v.check((f.Factor != 0) != (f.ServiceTime != nil), p+".factor", "a slowdown needs factor (service time × factor) or service_time (another distribution), one of the two")
		v.check(f.Factor == 0 || (f.Factor > 0 && f.Factor <= 1e6), p+".factor", "must be in (0, 1000000], got %g", f.Factor)
		if f.ServiceTime != nil {
			sp := p + ".service_time"
			v.check(f.ServiceTime.Dist == ServiceConstant || f.ServiceTime.Dist == ServiceExponential || f.ServiceTime.Dist == ServiceLognormal || f.ServiceTime.Dist == ServiceMixture,
				sp+".dist", "a slowdown's service_time is constant, exponential, lognormal or mixture, got %q", f.ServiceTime.Dist)
			if f.ServiceTime.Dist != ServiceEmpirical {
				v.service(sp, *f.ServiceTime)
			}
		}
	} else {
		v.check(f.Factor == 0 && f.ServiceTime == nil && f.AppliesTo == "", p+".kind", "factor, service_time and applies_to are for kind: slowdown only")
	}
}

// CheckFault checks a fault given on its own (the live server's admin
// endpoint) by the rules a scenario's faults: entry follows; errors name
// the field as path.field. What depends on a run (start, overlap with
// other faults) is the caller's.
func CheckFault(f Fault, path string) error {
	v := &validator{file: "fault"}
	v.fault(path, f)
	if len(v.errs) > 0 {
		return v.errs
	}
	return nil
}

// short reports whether the string at path is at most max long, and an
// error saying how long it is when not, without printing it. Checks that
// would quote the string skip it when it is too long.
func (v *validator) short(path, s string, max int) bool {
	v.check(len(s) <= max, path, "is %d characters long; at most %d", len(s), max)
	return len(s) <= max
}

// Validate checks a scenario built in code (Load validates for you).
func (s *Scenario) Validate() error {
	if errs := s.validate("scenario", nil); len(errs) > 0 {
		return errs
	}
	return nil
}

func (s *Scenario) validate(file string, pos map[string]Pos) Errors {
	v := &validator{scenario: s, file: file, pos: pos}
	v.check(s.Name != "", "name", "is required: a short name for the results folder, e.g. outage")
	v.check(len(s.Name) <= MaxNameLen, "name", "is %d characters long; at most %d (it names the results folder and titles every chart)", len(s.Name), MaxNameLen)
	v.check(len(s.Description) <= MaxDescriptionLen, "description", "is %d characters long; at most %d", len(s.Description), MaxDescriptionLen)
	v.check(s.Name == "" || len(s.Name) > MaxNameLen || nameRE.MatchString(s.Name), "name", "%q must start with a letter or digit and hold only letters, digits, '.', '_' and '-' (it names the results folder)", s.Name)
	v.check(s.Duration > 0, "duration", "must be > 0, got %s", s.Duration)
	v.check(s.Duration <= MaxDuration, "duration", "must be at most %s, got %s", MaxDuration, s.Duration)

	m := s.Metrics
	v.check(m.Interval > 0, "metrics.interval", "must be > 0, got %s", m.Interval)
	if m.Interval > 0 && s.Duration > 0 {
		v.check(m.Interval <= s.Duration, "metrics.interval", "%s is longer than the run (%s)", m.Interval, s.Duration)
		v.check(s.Duration%m.Interval == 0, "duration", "%s is not a whole number of metrics intervals (%s): every row of timeseries.csv must be a full interval", s.Duration, m.Interval)
		n := int64(s.Duration) / int64(m.Interval)
		v.check(n <= MaxIntervals, "metrics.interval", "%s over %s makes %d rows (about %.3g GB of memory); at most %d (use a longer interval)", m.Interval, s.Duration, n, float64(n)*400/1e9, MaxIntervals)
		v.check(m.RecoveryWindow > 0 && m.RecoveryWindow%m.Interval == 0, "metrics.recovery_window", "must be a positive multiple of metrics.interval (%s), got %s", m.Interval, m.RecoveryWindow)
		v.check(m.Baseline > 0 && m.Baseline%m.Interval == 0, "metrics.baseline", "must be a positive multiple of metrics.interval (%s), got %s", m.Interval, m.Baseline)
	}
	v.check(m.RecoverFraction > 0 && m.RecoverFraction <= 1, "metrics.recover_fraction", "must be in (0, 1], got %g", m.RecoverFraction)
	v.check(m.StayFraction > 0 && m.StayFraction <= m.RecoverFraction, "metrics.stay_fraction", "must be in (0, recover_fraction=%g], got %g", m.RecoverFraction, m.StayFraction)

	c := s.Clients
	v.check(c.Count >= 1, "clients.count", "must be >= 1, got %d", c.Count)
	v.check(c.Count < MaxClients, "clients.count", "must be < %d, got %d", MaxClients, c.Count)
	a := c.Arrival
	v.check(!a.FirstAtStart || a.Process == ArrivalPoisson, "clients.arrival.first_at_start", "applies to process: poisson only (once already calls at the start)")
	switch {
	case a.Process == ArrivalOnce:
		v.check(a.Rate == 0 && a.TotalRate == 0, "clients.arrival.process", "once: every client issues one request when it starts; remove rate and total_rate")
		v.check(len(a.Profile) == 0, "clients.arrival.profile", "does not apply to process once (one request per client)")
		v.check(a.Trace == nil, "clients.arrival.trace", "does not apply to process once (one request per client); process: replay replays recorded requests")
		v.check(a.Cycle == nil, "clients.arrival.cycle", "does not apply to process once (one request per client)")
	case a.Process == ArrivalReplay || a.Trace != nil:
		s.validateTrace(v)
	case a.Rate == 0 && a.TotalRate == 0:
		v.check(false, "clients.arrival", "set rate (per client, e.g. 0.1/s) or total_rate (whole fleet, e.g. 600/s)")
	case a.Rate != 0 && a.TotalRate != 0:
		v.check(false, "clients.arrival.total_rate", "set either rate or total_rate, not both")
	default:
		v.check(a.Rate >= 0, "clients.arrival.rate", "must be > 0, got %s", a.Rate)
		v.check(a.TotalRate >= 0, "clients.arrival.total_rate", "must be > 0, got %s", a.TotalRate)
		peak := a.Cycle.peak()
		for _, st := range a.Profile {
			peak = max(peak, st.Multiplier*a.Cycle.peak())
		}
		total := float64(a.TotalRate)
		if a.Rate > 0 {
			total = float64(a.Rate) * float64(max(c.Count, 1))
		}
		if n := total * peak * s.Duration.Seconds(); n > MaxArrivals {
			path := "clients.arrival.total_rate"
			if a.Rate > 0 {
				path = "clients.arrival.rate"
			}
			v.check(false, path, "%s over %s is up to %.3g application requests; at most %.0g in one run", Rate(total), s.Duration, n, float64(MaxArrivals))
		}
	}
	var prev Duration = -1
	for i, st := range a.Profile {
		p := fmt.Sprintf("clients.arrival.profile.%d", i)
		v.check(st.At > prev, p+".at", "steps must be in increasing time order, got %s after %s", st.At, prev)
		v.check(st.At >= 0 && st.At < s.Duration, p+".at", "must be in [0, duration=%s), got %s", s.Duration, st.At)
		v.check(st.Multiplier >= 0, p+".multiplier", "must be >= 0, got %g", st.Multiplier)
		v.check(!st.Ramp || st.At > 0, p+".ramp", "a ramp ends at its step's time; a step at 0 has nothing to ramp from")
		v.check(!st.Ramp || (a.Trace == nil && a.Cycle == nil), p+".ramp", "applies without trace and cycle only (a ramp times a recorded or cyclic rate is not a straight line); use steps without ramp")
		prev = st.At
	}
	s.validateCycle(v)
	v.check(c.Timeout >= 0, "clients.timeout", "must be >= 0 (0: no per-attempt timeout), got %s", c.Timeout)
	v.check(c.Deadline >= 0, "clients.deadline", "must be >= 0 (0: no deadline), got %s", c.Deadline)
	v.check(c.Deadline <= s.Duration, "clients.deadline", "%s is longer than the run (%s)", c.Deadline, s.Duration)

	// The fleet's sections, in the order their problems were always
	// reported in: throttle and retry, the groups, then the others.
	c.Throttle.validate(v, "clients.throttle")
	c.Retry.validate(v, "clients.retry")
	namesOK := true // every group name short enough to quote
	for i, g := range c.Groups {
		p := fmt.Sprintf("clients.groups.%d", i)
		v.check(g.Name != "", p+".name", "is required: it names the group in the results")
		ok := v.short(p+".name", g.Name, MaxLabelLen)
		namesOK = namesOK && ok
		v.check(g.Share > 0, p+".share", "must be > 0 (a share of the fleet, e.g. 0.8), got %g", g.Share)
		for j := 0; j < i && ok; j++ {
			v.check(c.Groups[j].Name != g.Name, p+".name", "%q is also the name of clients.groups.%d", g.Name, j)
		}
		if g.given.timeout {
			v.check(g.Timeout >= 0, p+".timeout", "must be >= 0, got %s", g.Timeout)
		}
		if g.given.deadline {
			v.check(g.Deadline >= 0, p+".deadline", "must be >= 0, got %s", g.Deadline)
			v.check(g.Deadline <= s.Duration, p+".deadline", "%s is longer than the run (%s)", g.Deadline, s.Duration)
		}
		g.Policies.validate(v, p)
	}
	if len(c.Groups) > 0 {
		v.check(len(c.Groups) <= 255, "clients.groups", "at most 255 groups, got %d", len(c.Groups))
		sharesOK := true
		for _, g := range c.Groups {
			sharesOK = sharesOK && g.Share > 0
		}
		if sharesOK && namesOK && c.Count >= 1 {
			for i, g := range c.ResolvedGroups() {
				v.check(g.Count >= 1, fmt.Sprintf("clients.groups.%d.share", i), "gives group %q no client out of %d; raise its share or clients.count", g.Name, c.Count)
			}
		}
	}
	c.Breaker.validate(v, "clients.breaker")
	c.Hedge.validate(v, "clients.hedge")
	c.RateLimiter.validate(v, "clients.rate_limiter")
	c.AdaptiveBreaker.validate(v, "clients.adaptive_breaker")
	bk := s.Backend
	st := c.Startup
	v.check(st.Window >= 0, "clients.startup.window", "must be >= 0, got %s", st.Window)
	v.check(st.Mode == StartupImmediate || st.Window > 0, "clients.startup.window", "mode %q needs a window > 0", st.Mode)
	v.check(st.Window < s.Duration || s.Duration <= 0, "clients.startup.window", "%s is not shorter than the run (%s)", st.Window, s.Duration)
	v.check(st.Batches >= 1, "clients.startup.batches", "must be >= 1, got %d", st.Batches)
	if cn := c.Connection; cn != nil {
		v.check(cn.ConnectTimeout > 0, "clients.connection.connect_timeout", "must be > 0, got %s", cn.ConnectTimeout)
		r := cn.Reconnect
		v.check(r.Delay >= 0, "clients.connection.reconnect.delay", "must be >= 0, got %s", r.Delay)
		v.check(r.Policy == ReconnectBackoff || r.Delay > 0, "clients.connection.reconnect.delay", "policy %q needs a delay > 0 between failed attempts", r.Policy)
		v.check(r.JitterWindow >= 0, "clients.connection.reconnect.jitter_window", "must be >= 0, got %s", r.JitterWindow)
		v.check(r.JitterWindow < s.Duration || s.Duration <= 0, "clients.connection.reconnect.jitter_window", "%s is not shorter than the run (%s)", r.JitterWindow, s.Duration)
		rb := r.Backoff
		v.check(rb.Base >= 0, "clients.connection.reconnect.backoff.base", "must be >= 0, got %s", rb.Base)
		if r.Policy != ReconnectBackoff {
			rb = Backoff{Base: 1, Cap: 1, Multiplier: 1} // only the sign matters when unused
		}
		v.check(rb.Base > 0, "clients.connection.reconnect.backoff.base", "must be > 0, got %s", rb.Base)
		v.check(rb.Cap >= rb.Base, "clients.connection.reconnect.backoff.cap", "must be >= base (%s), got %s", rb.Base, rb.Cap)
		v.check(rb.Multiplier >= 1, "clients.connection.reconnect.backoff.multiplier", "must be >= 1, got %g", rb.Multiplier)
		v.check(rb.JitterFraction >= 0 && rb.JitterFraction <= 1, "clients.connection.reconnect.backoff.jitter_fraction", "must be in [0, 1], got %g", rb.JitterFraction)
		v.check(rb.ThrottleBase == 0, "clients.connection.reconnect.backoff.throttle_base", "applies to retries only (clients.retry.backoff)")
		v.check(bk.Connections.ConnectCost >= 0, "backend.connections.connect_cost", "must be >= 0, got %s", bk.Connections.ConnectCost)
	}
	v.check(bk.Connections.Limit >= 0, "backend.connections.limit", "must be >= 0 (0: no limit), got %d", bk.Connections.Limit)

	if nw := s.Network; nw != nil {
		d := nw.Delay
		v.check(d.Mean >= 0, "network.delay.mean", "must be >= 0, got %s", d.Mean)
		v.check(d.Mean <= s.Duration, "network.delay.mean", "%s is longer than the run (%s)", d.Mean, s.Duration)
		v.check(d.SD >= 0 && d.SD <= s.Duration, "network.delay.sd", "must be in [0, duration], got %s", d.SD)
		v.check(d.Dist == DelayNormal || d.SD == 0, "network.delay.sd", "applies to dist: normal only")
	}
	b := s.Backend
	if b.Kind == BackendOCC {
		v.check(s.Network != nil, "backend.kind", "occ needs a network: section (e.g. network: {delay: {dist: normal, mean: 10ms, sd: 2ms}}): its reads and writes are messages that cross it, and the delay between them is what lets writes conflict")
		v.check(c.Connection == nil, "clients.connection", "is not modelled with backend.kind occ (it has no workers to do handshakes)")
		for i, f := range s.Faults {
			v.check(f.Kind == FaultOutage, fmt.Sprintf("faults.%d.kind", i), "only outage faults apply to backend.kind occ (it has no workers or connections), got %s", f.Kind)
		}
		// The pool's fields must keep their defaults (a resolved scenario
		// states them, and must load back).
		def := Default().Backend
		for _, f := range []struct {
			name    string
			changed bool
		}{
			{"workers", b.Workers != def.Workers}, {"service", !reflect.DeepEqual(b.Service, def.Service)}, {"queue", b.Queue != def.Queue},
			{"reject_cost", b.RejectCost != def.RejectCost}, {"accept_backlog", b.AcceptBacklog != def.AcceptBacklog},
			{"retry_after", b.RetryAfter != def.RetryAfter}, {"dont_retry", b.DontRetry != def.DontRetry},
			{"error_rate", b.ErrorRate != def.ErrorRate}, {"cancel_timed_out", b.CancelTimedOut != def.CancelTimedOut},
			{"connections", b.Connections != def.Connections},
			{"replicas", b.Replicas != def.Replicas}, {"lb", b.LB != def.LB},
			{"outlier_detection", b.OutlierDetection != nil}, {"health_check", b.HealthCheck != nil}, {"subset", b.Subset != 0},
			{"autoscale", b.Autoscale != nil},
		} {
			v.check(!f.changed, "backend."+f.name, "does not apply to backend.kind occ (one row, no capacity limit); remove it")
		}
	}
	if nodes := s.Nodes(); len(nodes) > 0 {
		total := 0
		for _, nd := range nodes {
			total += nd.Pools()
		}
		v.check(total <= MaxReplicas, "services", "%d replicas in all; at most %d", total, MaxReplicas)
		for i, f := range s.Faults {
			if f.Replica == nil {
				continue
			}
			if j := s.FaultService(f); j >= 0 {
				n := nodes[j].Pools()
				v.check(*f.Replica >= 0 && *f.Replica < n, fmt.Sprintf("faults.%d.replica", i), "must be in 0..%d (%s has %d replicas), got %d", n-1, nodes[j].Name, n, *f.Replica)
			}
		}
	}
	v.validatePriorities(s)
	if !s.IsGraph() {
		v.backend("backend", b, s)
		v.check(s.Clients.Target == "", "clients.target", "applies to a service graph only (services:)")
		v.check(!s.Clients.PropagateDeadline, "clients.propagate_deadline", "applies to a service graph only (services:)")
		for i, f := range s.Faults {
			v.check(f.Service == "", fmt.Sprintf("faults.%d.service", i), "applies to a service graph only (services:)")
		}
	} else {
		_, given := v.pos["backend"]
		// A resolved scenario states the default backend: that one loads back.
		v.check(!given || reflect.DeepEqual(s.Backend, Default().Backend), "backend", "does not apply when services are given: the entry service (clients.target, default the first) is what the clients call")
		v.check(s.Clients.Connection == nil, "clients.connection", "is not modelled in a service graph yet")
		v.graph(s)
	}

	for i, f := range s.Faults {
		p := fmt.Sprintf("faults.%d", i)
		v.check(f.Start >= 0, p+".start", "must be >= 0, got %s", f.Start)
		if f.Start > s.Duration || f.Duration > s.Duration {
			v.check(false, p+".start", "the fault (start %s, duration %s) does not fit in the run (duration %s)", f.Start, f.Duration, s.Duration)
			continue
		}
		if f.Kind == FaultDisconnect {
			v.check(c.Connection != nil, p+".kind", "a disconnect fault needs clients.connection")
		}
		v.check(f.End() <= s.Duration, p+".duration", "the fault ends at %s, after the run (duration %s)", f.End(), s.Duration)
		v.fault(p, f)
		for j := 0; j < i; j++ {
			g := s.Faults[j]
			v.check(f.Start >= g.End() || g.Start >= f.End(), p+".start", "overlaps faults.%d (%s..%s); faults must not overlap", j, g.Start, g.End())
		}
	}
	if len(s.Faults) > 0 && s.Duration > 0 {
		first := 0
		for i, f := range s.Faults {
			if f.Start < s.Faults[first].Start {
				first = i
			}
		}
		at := s.Faults[first].Start
		v.check(at == 0 || at >= m.Interval, fmt.Sprintf("faults.%d.start", first), "the first fault starts at %s: leave at least one metrics interval (%s) before it for the goodput baseline, or start it at 0s for a backend that starts degraded (recovery is then not measured)", at, m.Interval)
	}
	if sw := s.Sweep; sw != nil {
		v.check(sw.Seeds >= 1 && sw.Seeds <= 100_000, "sweep.seeds", "must be in 1..100000, got %d", sw.Seeds)
		v.check(len(sw.Vary) > 0 || len(sw.Points) > 0, "sweep", "needs vary: (fields and values) or points: (labelled overrides)")
		v.short("sweep.baseline", sw.Baseline, MaxLabelLen)
		for i, vr := range sw.Vary {
			p := fmt.Sprintf("sweep.vary.%d", i)
			v.check(vr.Path != "", p+".path", "is required: the YAML path of the field to vary, e.g. clients.throttle.k")
			v.short(p+".path", vr.Path, MaxLabelLen)
			v.check(len(vr.Values) > 0, p+".values", "needs at least one value")
			for j, val := range vr.Values {
				v.short(fmt.Sprintf("%s.values.%d", p, j), string(val), MaxValueLen)
			}
			if len(vr.Labels) > 0 {
				v.check(len(vr.Labels) == len(vr.Values), p+".labels", "needs one label per value: %d labels for %d values", len(vr.Labels), len(vr.Values))
				seen := map[string]bool{}
				for j, l := range vr.Labels {
					lp := fmt.Sprintf("%s.labels.%d", p, j)
					if v.short(lp, l, MaxLabelLen) {
						v.check(strings.TrimSpace(l) != "", lp, "is empty: a label names its value in tables and legends")
						v.check(!seen[l], lp, "%q labels two values; each needs its own", l)
					}
					seen[l] = true
				}
			}
		}
		for i, pt := range sw.Points {
			p := fmt.Sprintf("sweep.points.%d", i)
			v.check(pt.Label != "", p+".label", "is required: it names the point in tables and legends")
			v.short(p+".label", pt.Label, MaxLabelLen)
			for j, st := range pt.Set {
				sp := fmt.Sprintf("%s.set.%d", p, j)
				if v.short(sp, st, MaxValueLen) {
					v.check(strings.Contains(st, "="), sp, "expected path=value, got %q", st)
				}
			}
		}
	}
	for i, t := range s.Thresholds {
		p := fmt.Sprintf("thresholds.%d", i)
		if v.short(p, t, MaxLabelLen) {
			_, err := threshold.Parse(t)
			v.check(err == nil, p, "%v", err)
		}
	}
	return v.errs
}

// Intervals is the number of metrics rows of a run: duration / interval,
// rounded up (validation makes the duration a whole number of intervals).
func (s *Scenario) Intervals() int {
	n := s.Duration / s.Metrics.Interval
	if s.Duration%s.Metrics.Interval != 0 {
		n++
	}
	return int(n)
}

// PerClientRate is the arrival rate of one client, per second (with
// process once, one request over the run; with a trace, its mean over the
// run, scaled).
func (s *Scenario) PerClientRate() float64 {
	if s.Clients.Arrival.Process == ArrivalOnce {
		return 1 / s.Duration.Seconds()
	}
	if r := s.traceRate(); r > 0 {
		return r / float64(s.Clients.Count)
	}
	if s.Clients.Arrival.TotalRate > 0 {
		return float64(s.Clients.Arrival.TotalRate) / float64(s.Clients.Count)
	}
	return float64(s.Clients.Arrival.Rate)
}

// Capacity is the backend's nominal throughput in requests per second:
// workers / mean service time.
func (s *Scenario) Capacity() float64 {
	b := s.EntryBackend()
	return float64(b.TotalWorkers()) / (b.Service.MeanNS() / float64(time.Second))
}

// MeanNS is the mean service time in ns: mean, or for a mixture Σ p_i ·
// mean_i, or the empirical or histogram distribution's mean (0 if its
// file was not read or its buckets are not valid).
func (sv Service) MeanNS() float64 {
	switch sv.Dist {
	case ServiceHistogram:
		if h, err := sv.HistogramDist(); err == nil {
			return h.Mean()
		}
		return 0
	case ServiceMixture:
		if m, err := sv.Mixture(); err == nil {
			return m.Mean()
		}
		return 0
	case ServiceEmpirical:
		if sv.Empirical != nil {
			return sv.Empirical.Mean()
		}
		return 0
	}
	return float64(sv.Mean)
}

// Mixture is the dist.Mixture of a dist: mixture service.
func (sv Service) Mixture() (*dist.Mixture, error) {
	comps := make([]dist.Component, len(sv.Components))
	for i, c := range sv.Components {
		k := dist.Constant
		switch c.Dist {
		case ComponentExponential:
			k = dist.Exponential
		case ComponentLognormal:
			k = dist.Lognormal
		}
		comps[i] = dist.Component{Weight: c.Weight, Kind: k, Mean: int64(c.Mean), Sigma: c.Sigma}
	}
	return dist.NewMixture(comps)
}

// backend checks a backend's (or a service's) pool fields, under path p.
func (v *validator) backend(p string, b Backend, s *Scenario) {
	v.check(b.Replicas >= 1 && b.Replicas <= MaxReplicas, p+".replicas", "must be in 1..%d, got %d", MaxReplicas, b.Replicas)
	v.autoscale(p, b, s)
	if s.Clients.Connection != nil && s.Network != nil && b.Pools() > 1 && (!s.IsGraph() || p == fmt.Sprintf("services.%d", s.EntryIndex())) {
		// The answer to a handshake would have to name the replica that
		// accepted it, which a client may have left by the time it comes.
		v.check(false, p+".replicas", "more than one replica with clients.connection is not modelled with a network: section yet")
	}
	if s.Clients.Connection != nil && b.Pools() > 1 && (!s.IsGraph() || p == fmt.Sprintf("services.%d", s.EntryIndex())) {
		// Clients send on their connection's replica, chosen when it
		// connects among every ready one: nothing yet steers connections
		// away from a replica taken out of rotation or outside a subset.
		for _, f := range []struct {
			name string
			set  bool
		}{{"outlier_detection", b.OutlierDetection != nil}, {"health_check", b.HealthCheck != nil}, {"subset", b.Subset != 0}} {
			v.check(!f.set, p+"."+f.name, "does not steer clients.connection's connections to replicas yet: it would have no effect; remove it or clients.connection")
		}
	}
	v.check(b.EWMADecay > 0, p+".ewma_decay", "must be > 0, got %s", b.EWMADecay)
	v.check(b.Workers >= 1 && b.Workers <= 10_000_000, p+".workers", "must be in 1..10000000, got %d", b.Workers)
	v.service(p+".service", b.Service)
	v.check(b.Queue.Limit >= 0 && b.Queue.Limit <= 100_000_000, p+".queue.limit", "must be in 0..100000000, got %d", b.Queue.Limit)
	v.check(b.Queue.Timeout >= 0, p+".queue.timeout", "must be >= 0 (0: none), got %s", b.Queue.Timeout)
	v.check(b.Queue.LIFOThreshold >= 0, p+".queue.lifo_threshold", "must be >= 0, got %d", b.Queue.LIFOThreshold)
	v.check(b.Queue.CoDelTarget > 0, p+".queue.codel_target", "must be > 0, got %s", b.Queue.CoDelTarget)
	v.check(b.Queue.CoDelInterval > 0, p+".queue.codel_interval", "must be > 0, got %s", b.Queue.CoDelInterval)
	if rl := b.RateLimit; rl != nil {
		v.check(rl.Rate > 0, p+".rate_limit.rate", "must be > 0, e.g. 500/s, got %s", rl.Rate)
		v.check(rl.Burst >= 1, p+".rate_limit.burst", "must be >= 1, got %d", rl.Burst)
	}
	if od := b.OutlierDetection; od != nil {
		q := p + ".outlier_detection"
		v.check(od.ConsecutiveErrors >= 1, q+".consecutive_errors", "must be >= 1, got %d", od.ConsecutiveErrors)
		v.check(len(od.FailureOutcomes) > 0, q+".failure_outcomes", "must name at least one outcome")
		v.check(od.Interval > 0, q+".interval", "must be > 0, got %s", od.Interval)
		v.check(od.BaseEjectionTime > 0, q+".base_ejection_time", "must be > 0, got %s", od.BaseEjectionTime)
		v.check(od.MaxEjectionTime > 0, q+".max_ejection_time", "must be > 0, got %s", od.MaxEjectionTime)
		v.check(od.MaxEjectionPercent > 0 && od.MaxEjectionPercent <= 100, q+".max_ejection_percent", "must be in (0, 100], got %g", od.MaxEjectionPercent)
		v.check(od.FailurePercentageThreshold >= 0 && od.FailurePercentageThreshold <= 100, q+".failure_percentage_threshold", "must be in [0, 100] (0: off), got %g", od.FailurePercentageThreshold)
		v.check(od.FailurePercentageMinimumHosts >= 1, q+".failure_percentage_minimum_hosts", "must be >= 1, got %d", od.FailurePercentageMinimumHosts)
		v.check(od.FailurePercentageRequestVolume >= 1, q+".failure_percentage_request_volume", "must be >= 1, got %d", od.FailurePercentageRequestVolume)
	}
	if hc := b.HealthCheck; hc != nil {
		q := p + ".health_check"
		v.check(hc.Interval > 0, q+".interval", "must be > 0, got %s", hc.Interval)
		v.check(hc.UnhealthyThreshold >= 1, q+".unhealthy_threshold", "must be >= 1, got %d", hc.UnhealthyThreshold)
		v.check(hc.HealthyThreshold >= 1, q+".healthy_threshold", "must be >= 1, got %d", hc.HealthyThreshold)
	}
	v.check(b.Subset >= 0 && b.Subset <= b.Replicas, p+".subset", "must be in 0..%d (replicas; 0: every replica), got %d", b.Replicas, b.Subset)
	v.concurrencyLimit(p, b.ConcurrencyLimit)
	v.priorityShedding(p, b.PriorityShedding)
	v.pidShedding(p, b)
	v.degrade(p, b.Degrade)
	v.check(b.RejectCost >= 0, p+".reject_cost", "must be >= 0, got %s", b.RejectCost)
	v.check(b.ErrorRate >= 0 && b.ErrorRate < 1, p+".error_rate", "must be in [0, 1), got %g", b.ErrorRate)
	v.check(b.AcceptBacklog >= 0, p+".accept_backlog", "must be >= 0, got %d", b.AcceptBacklog)
	v.check(b.RetryAfter >= 0, p+".retry_after", "must be >= 0 (0: none), got %s", b.RetryAfter)
	v.prequal(p, b)
}

// prequal checks lb: prequal's probing section at path p.prequal.
func (v *validator) prequal(p string, b Backend) {
	if b.LB == LBPrequal {
		// One probe pool per service (the balancer's), while a subset
		// is each caller's own view of the replicas.
		v.check(b.Subset == 0, p+".subset", "is not modelled with lb: prequal (one probe pool per service, not per caller); remove subset or use another lb")
	}
	q := b.Prequal
	if q == nil {
		return
	}
	p += ".prequal"
	v.check(b.LB == LBPrequal, p, "applies to lb: prequal only, got lb: %s", b.LB)
	v.check(q.ProbeRate > 0 && q.ProbeRate <= 64, p+".probe_rate", "must be in (0, 64] probes per pick, got %g", q.ProbeRate)
	v.check(q.PoolSize >= 1 && q.PoolSize <= 1024, p+".pool_size", "must be in 1..1024, got %d", q.PoolSize)
	v.check(q.QRIF >= 0 && q.QRIF <= 1, p+".q_rif", "must be in [0, 1], got %g", q.QRIF)
	v.check(q.MaxAge > 0, p+".max_age", "must be > 0, got %s", q.MaxAge)
	v.check(q.MaxReuse >= 1, p+".max_reuse", "must be >= 1, got %d", q.MaxReuse)
}

// TotalWorkers is the workers of every replica together.
func (b Backend) TotalWorkers() int { return b.Workers * max(1, b.Replicas) }

// service checks a service-time distribution at path (backend.service, a
// graph service's, or a slowdown fault's replacement).
func (v *validator) service(path string, sv Service) {
	switch sv.Dist {
	case ServiceMixture:
		v.check(len(sv.Components) >= 1 && len(sv.Components) <= 255, path+".components", "a mixture needs 1 to 255 components ({weight, dist, mean, sigma}), got %d", len(sv.Components))
		for i, c := range sv.Components {
			p := fmt.Sprintf("%s.components.%d", path, i)
			v.check(c.Weight > 0 && !math.IsInf(c.Weight, 1), p+".weight", "must be a finite number > 0 (weights are relative: 95 and 5, or 0.95 and 0.05), got %g", c.Weight)
			v.check(c.Mean > 0, p+".mean", "must be > 0, got %s", c.Mean)
			v.check(c.Dist != ComponentLognormal || (c.Sigma > 0 && c.Sigma <= 5), p+".sigma", "must be in (0, 5] for a lognormal, got %g", c.Sigma)
			v.check(c.Dist == ComponentLognormal || c.Sigma == 0, p+".sigma", "applies to dist: lognormal only")
		}
	case ServiceEmpirical:
		v.check(sv.File != "" || sv.Empirical != nil, path+".file", "dist: empirical needs a file of samples or a quantile table (relative to the scenario file's folder)")
		if v.short(path+".file", sv.File, MaxFileLen) {
			v.check(sv.File == "" || sv.Empirical != nil, path+".file", "%s was not read: dist: empirical is read for backend.service only, by scenario.Load", sv.File)
		}
	case ServiceHistogram:
		v.histogram(path, sv)
	default:
		v.check(sv.Mean > 0, path+".mean", "must be > 0, got %s", sv.Mean)
	}
	v.check(sv.Dist == ServiceMixture || len(sv.Components) == 0, path+".components", "applies to dist: mixture only")
	v.check(sv.Dist == ServiceEmpirical || sv.Dist == ServiceHistogram || (sv.File == "" && sv.FileSHA256 == ""), path+".file", "applies to dist: empirical and histogram only")
	if sv.Dist != ServiceHistogram {
		v.check(len(sv.Buckets) == 0, path+".buckets", "applies to dist: histogram only")
		v.check(sv.Within == "", path+".within", "applies to dist: histogram only")
		v.check(sv.InfCap == 0, path+".inf_cap", "applies to dist: histogram only")
		v.check(sv.Format == "" && sv.Metric == "" && sv.Selector == "", path+".format", "format, metric and selector apply to dist: histogram's file only")
	}
	v.check(sv.Dist != ServiceLognormal || (sv.Sigma > 0 && sv.Sigma <= 5), path+".sigma", "must be in (0, 5] for a lognormal, got %g", sv.Sigma)
	v.check(sv.PerConcurrent >= 0, path+".per_concurrent", "must be >= 0, got %s", sv.PerConcurrent)
	v.check(sv.Dist == ServiceConcurrency || sv.PerConcurrent == 0, path+".per_concurrent", "applies to dist: concurrency only")
}

// Spike is the span of the arrival profile where the multiplier is above
// 1: from the first such step to the first later step back at or below 1,
// or the end of the run (ok is false when there is none).
func (s *Scenario) Spike() (start, end int64, ok bool) {
	steps := s.Clients.Arrival.Profile
	for i, st := range steps {
		if st.Multiplier <= 1 {
			continue
		}
		end := int64(s.Duration)
		for _, nx := range steps[i+1:] {
			if nx.Multiplier <= 1 {
				end = int64(nx.At)
				break
			}
		}
		return int64(st.At), end, true
	}
	return 0, 0, false
}

// histogram checks a dist: histogram service: inline buckets or a file
// (read by Load for backend.service only), never both.
func (v *validator) histogram(path string, sv Service) {
	v.check(sv.InfCap >= 0, path+".inf_cap", "must be >= 0 (0: none), got %s", sv.InfCap)
	if sv.File != "" || sv.Histogram != nil {
		v.check(len(sv.Buckets) == 0, path+".buckets", "give buckets inline or a file, not both")
		if v.short(path+".file", sv.File, MaxFileLen) {
			v.check(sv.File == "" || sv.Histogram != nil, path+".file", "%s was not read: dist: histogram's file is read for backend.service only, by scenario.Load", sv.File)
		}
		v.short(path+".metric", sv.Metric, 256)
		v.short(path+".selector", sv.Selector, 1024)
		return
	}
	v.check(sv.Format == "" && sv.Metric == "" && sv.Selector == "", path+".format", "format, metric and selector apply to a histogram's file only")
	ok := len(sv.Buckets) >= 1 && len(sv.Buckets) <= 10_000
	v.check(ok, path+".buckets", "dist: histogram needs 1 to 10000 buckets ({le, count}, cumulative, the last le +Inf) or a file, got %d", len(sv.Buckets))
	if !ok {
		return
	}
	if _, err := sv.HistogramDist(); err != nil {
		v.check(false, path+".buckets", "%s", strings.TrimPrefix(err.Error(), "dist: "))
	}
}
