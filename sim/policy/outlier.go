package policy

import (
	"errors"
	"fmt"
)

// OutlierConfig configures outlier ejection as Envoy does it
// (envoy/config/cluster/v3/outlier_detection.proto and
// docs/root/intro/arch_overview/upstream/outlier.rst; overload-control.md
// §2.6). Zero fields take Envoy's defaults (OutlierDefaults).
//
// Two detectors:
//   - consecutive failures (Envoy's consecutive_5xx): a host whose last
//     Consecutive results were all failures is ejected at once, inline on
//     the result;
//   - failure percentage (Envoy's failure_percentage_*), checked at every
//     Interval sweep: a host with at least FailurePercentVolume results in
//     the interval and at least FailurePercentThreshold % of them
//     failures is ejected, when at least FailurePercentMinHosts hosts had
//     that volume. Off unless FailurePercentThreshold > 0 (Envoy's
//     enforcing_failure_percentage defaults to 0%).
//
// Ejection time = BaseEjection × (times ejected), capped at MaxEjection.
// At each sweep an ejected host whose time is up returns, and a host that
// is not ejected has its multiplier decremented (never below 0).
// MaxEjectionPercent caps the share of hosts ejected at once, but one
// host can always be ejected.
//
// Both detectors are always enforced (Envoy's enforcing_* at 100%).
type OutlierConfig struct {
	Consecutive             int     // consecutive failures that eject (0: Envoy's 5)
	Interval                int64   // ns between sweeps (0: 10 s)
	BaseEjection            int64   // ns (0: 30 s)
	MaxEjection             int64   // ns (0: 300 s, or BaseEjection if larger)
	MaxEjectionPercent      float64 // % of hosts (0: 10)
	FailurePercentThreshold float64 // % (0: the detector is off)
	FailurePercentMinHosts  int     // hosts with enough volume for the detector to run (0: 5)
	FailurePercentVolume    int     // results in an interval for a host to be judged (0: 50)
}

// OutlierDefaults are Envoy's defaults (outlier_detection.proto).
func OutlierDefaults() OutlierConfig {
	return OutlierConfig{Consecutive: 5, Interval: 10e9, BaseEjection: 30e9, MaxEjection: 300e9, MaxEjectionPercent: 10,
		FailurePercentMinHosts: 5, FailurePercentVolume: 50}
}

// ErrOutlierConfig is returned for settings outside their range.
var ErrOutlierConfig = errors.New("policy: bad outlier-detection settings")

type outlierHost struct {
	consec    int
	mult      int // ejections not yet forgiven: the ejection-time multiplier
	ejected   bool
	ejectedAt int64
	reqs      int // results since the last sweep
	fails     int
}

// Outlier is the outlier detector of one balancer in front of n hosts.
type Outlier struct {
	cfg     OutlierConfig
	hosts   []outlierHost
	ejected int
	total   int64 // ejections so far
}

// NewOutlier returns a detector for n hosts with cfg, zero fields at their
// defaults.
func NewOutlier(cfg OutlierConfig, n int) (*Outlier, error) {
	d := OutlierDefaults()
	if cfg.Consecutive == 0 {
		cfg.Consecutive = d.Consecutive
	}
	if cfg.Interval == 0 {
		cfg.Interval = d.Interval
	}
	if cfg.BaseEjection == 0 {
		cfg.BaseEjection = d.BaseEjection
	}
	if cfg.MaxEjection == 0 {
		cfg.MaxEjection = d.MaxEjection
	}
	cfg.MaxEjection = max(cfg.MaxEjection, cfg.BaseEjection) // Envoy: "or base_ejection_time if larger"
	if cfg.MaxEjectionPercent == 0 {
		cfg.MaxEjectionPercent = d.MaxEjectionPercent
	}
	if cfg.FailurePercentMinHosts == 0 {
		cfg.FailurePercentMinHosts = d.FailurePercentMinHosts
	}
	if cfg.FailurePercentVolume == 0 {
		cfg.FailurePercentVolume = d.FailurePercentVolume
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: %d hosts", ErrOutlierConfig, n)
	case cfg.Consecutive < 1, cfg.Interval < 0, cfg.BaseEjection < 0, cfg.FailurePercentMinHosts < 1, cfg.FailurePercentVolume < 1:
		return nil, fmt.Errorf("%w: %+v", ErrOutlierConfig, cfg)
	case cfg.MaxEjectionPercent < 0 || cfg.MaxEjectionPercent > 100, cfg.FailurePercentThreshold < 0 || cfg.FailurePercentThreshold > 100:
		return nil, fmt.Errorf("%w: a percentage outside 0..100: %+v", ErrOutlierConfig, cfg)
	}
	return &Outlier{cfg: cfg, hosts: make([]outlierHost, n)}, nil
}

// Config is the detector's settings with defaults applied.
func (o *Outlier) Config() OutlierConfig { return o.cfg }

// Ejected reports whether host h is ejected.
func (o *Outlier) Ejected(h int) bool { return o.hosts[h].ejected }

// EjectedCount is the number of hosts ejected now.
func (o *Outlier) EjectedCount() int { return o.ejected }

// Ejections is the number of ejections so far.
func (o *Outlier) Ejections() int64 { return o.total }

// Result records one result of host h at now (failure or not) and reports
// whether it ejected h. Results of an ejected host (answers to requests
// sent before it was ejected) are counted but cannot eject it again.
func (o *Outlier) Result(now int64, h int, failure bool) bool {
	s := &o.hosts[h]
	s.reqs++
	if !failure {
		s.consec = 0
		return false
	}
	s.fails++
	s.consec++
	if s.consec < o.cfg.Consecutive || s.ejected {
		return false
	}
	return o.eject(now, h)
}

// eject takes h out if the ejected share allows it (Envoy: at least one
// host can always be ejected), and reports whether it did.
func (o *Outlier) eject(now int64, h int) bool {
	if o.ejected > 0 && 100*float64(o.ejected+1) > o.cfg.MaxEjectionPercent*float64(len(o.hosts)) {
		return false
	}
	s := &o.hosts[h]
	s.ejected, s.ejectedAt, s.consec = true, now, 0
	s.mult++
	o.ejected++
	o.total++
	return true
}

// ejectionTime is how long h stays out for its current ejection.
func (o *Outlier) ejectionTime(h int) int64 {
	mult := int64(o.hosts[h].mult)
	if mult > 0 && o.cfg.BaseEjection > o.cfg.MaxEjection/mult {
		return o.cfg.MaxEjection
	}
	return min(o.cfg.BaseEjection*mult, o.cfg.MaxEjection)
}

// Sweep is the interval timer at now: hosts whose ejection time is up
// return, hosts that stayed in have their multiplier decremented, and the
// failure-percentage detector runs on the interval's results. It reports
// whether any host was ejected or returned.
func (o *Outlier) Sweep(now int64) bool {
	changed := false
	for h := range o.hosts {
		s := &o.hosts[h]
		if s.ejected {
			if now-s.ejectedAt >= o.ejectionTime(h) {
				o.Uneject(h)
				changed = true
			}
		} else if s.mult > 0 {
			s.mult--
		}
	}
	if o.cfg.FailurePercentThreshold > 0 {
		judged := 0
		for h := range o.hosts {
			if o.hosts[h].reqs >= o.cfg.FailurePercentVolume {
				judged++
			}
		}
		if judged >= o.cfg.FailurePercentMinHosts {
			for h := range o.hosts {
				s := &o.hosts[h]
				if !s.ejected && s.reqs >= o.cfg.FailurePercentVolume && 100*float64(s.fails) >= o.cfg.FailurePercentThreshold*float64(s.reqs) {
					changed = o.eject(now, h) || changed
				}
			}
		}
	}
	for h := range o.hosts {
		o.hosts[h].reqs, o.hosts[h].fails = 0, 0
	}
	return changed
}

// Uneject returns h to service and clears its consecutive count (its
// multiplier stays, so a host ejected again soon stays out longer). An
// active health check that passes calls it (Envoy's
// successful_active_health_check_uneject_host).
func (o *Outlier) Uneject(h int) {
	s := &o.hosts[h]
	if s.ejected {
		s.ejected = false
		o.ejected--
	}
	s.consec = 0
}

// HealthConfig configures active health checks: every Interval each host
// is checked; UnhealthyThreshold failed checks in a row take a healthy
// host out of rotation, HealthyThreshold passed checks in a row bring an
// unhealthy one back (Envoy's health_check unhealthy_threshold and
// healthy_threshold, which Envoy requires; our defaults are Kubernetes
// probes': failureThreshold 3, successThreshold 1, periodSeconds 10).
type HealthConfig struct {
	Interval           int64 // ns (0: 10 s)
	UnhealthyThreshold int   // (0: 3)
	HealthyThreshold   int   // (0: 1)
}

// Health is the active health-check state of n hosts. Hosts start
// healthy.
type Health struct {
	cfg       HealthConfig
	unhealthy []bool
	streak    []int // checks in a row that disagree with the host's state
}

// NewHealth returns the health-check state of n hosts with cfg, zero
// fields at their defaults.
func NewHealth(cfg HealthConfig, n int) (*Health, error) {
	if cfg.Interval == 0 {
		cfg.Interval = 10e9
	}
	if cfg.UnhealthyThreshold == 0 {
		cfg.UnhealthyThreshold = 3
	}
	if cfg.HealthyThreshold == 0 {
		cfg.HealthyThreshold = 1
	}
	if n < 1 || cfg.Interval < 0 || cfg.UnhealthyThreshold < 1 || cfg.HealthyThreshold < 1 {
		return nil, fmt.Errorf("%w: health check %+v for %d hosts", ErrOutlierConfig, cfg, n)
	}
	return &Health{cfg: cfg, unhealthy: make([]bool, n), streak: make([]int, n)}, nil
}

// Config is the health-check settings with defaults applied.
func (hc *Health) Config() HealthConfig { return hc.cfg }

// Unhealthy reports whether host h is out of rotation by its checks.
func (hc *Health) Unhealthy(h int) bool { return hc.unhealthy[h] }

// Check records one check of host h (passed or not) and reports whether
// h's state changed.
func (hc *Health) Check(h int, pass bool) bool {
	if pass != hc.unhealthy[h] { // the check agrees with the state
		hc.streak[h] = 0
		return false
	}
	hc.streak[h]++
	need := hc.cfg.UnhealthyThreshold
	if hc.unhealthy[h] {
		need = hc.cfg.HealthyThreshold
	}
	if hc.streak[h] < need {
		return false
	}
	hc.streak[h] = 0
	hc.unhealthy[h] = !hc.unhealthy[h]
	return true
}
