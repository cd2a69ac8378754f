package policy

import (
	"errors"
	"fmt"
	"math"
)

// AutoscalerConfig is the Kubernetes HorizontalPodAutoscaler's decision
// rule for one metric (kubernetes/kubernetes
// pkg/controller/podautoscaler/horizontal.go and replica_calculator.go;
// the defaults in kubernetes/website horizontal-pod-autoscale.md,
// "Default Behavior"). Durations are ns.
type AutoscalerConfig struct {
	// Target is the metric's desired value per replica (e.g. 0.7 of the
	// workers busy, 50 requests outstanding, 0.05 s of queueing).
	Target float64
	// Tolerance: no change while |metric/target − 1| ≤ Tolerance
	// (Kubernetes: 0.1).
	Tolerance float64
	// MinReplicas and MaxReplicas bound every decision.
	MinReplicas, MaxReplicas int
	// UpWindow and DownWindow are the stabilisation windows: a scale-up
	// goes no higher than the lowest recommendation within UpWindow, a
	// scale-down no lower than the highest within DownWindow
	// (Kubernetes: 0 and 300 s).
	UpWindow, DownWindow int64
	// UpPods and UpPercent limit a scale-up within any UpPeriod to
	// max(start + UpPods, ceil(start × (1 + UpPercent/100))), start being
	// the replicas at the beginning of the period (Kubernetes: 4 pods or
	// 100% per 15 s, select Max). UpPeriod 0 means no limit.
	UpPods    int
	UpPercent float64
	UpPeriod  int64
}

// Autoscaler decides a replica count from a metric at each controller
// period. It keeps the recommendations of the longer stabilisation window
// and the scale events of the rate-limit period; nothing else. It reads
// no clock: every decision takes now.
type Autoscaler struct {
	cfg    AutoscalerConfig
	recs   []scaleRec // raw recommendations, oldest first
	events []scaleRec // replicas added (> 0) or removed (< 0), oldest first
}

type scaleRec struct {
	at int64
	n  int
}

// ErrAutoscalerConfig is returned (wrapped) for settings no autoscaler
// can work with.
var ErrAutoscalerConfig = errors.New("policy: bad autoscaler settings")

// NewAutoscaler checks cfg and returns an autoscaler.
func NewAutoscaler(cfg AutoscalerConfig) (*Autoscaler, error) {
	switch {
	case !(cfg.Target > 0) || math.IsInf(cfg.Target, 1):
		return nil, fmt.Errorf("%w: target must be a finite number > 0, got %g", ErrAutoscalerConfig, cfg.Target)
	case !(cfg.Tolerance >= 0 && cfg.Tolerance < 1):
		return nil, fmt.Errorf("%w: tolerance must be in [0, 1), got %g", ErrAutoscalerConfig, cfg.Tolerance)
	case cfg.MinReplicas < 1 || cfg.MaxReplicas < cfg.MinReplicas:
		return nil, fmt.Errorf("%w: need 1 <= min replicas (%d) <= max replicas (%d)", ErrAutoscalerConfig, cfg.MinReplicas, cfg.MaxReplicas)
	case cfg.UpWindow < 0 || cfg.DownWindow < 0 || cfg.UpPeriod < 0 || cfg.UpPods < 0 || cfg.UpPercent < 0:
		return nil, fmt.Errorf("%w: windows, periods and scale-up limits must be >= 0", ErrAutoscalerConfig)
	}
	return &Autoscaler{cfg: cfg}, nil
}

// Sample is what the controller sees at a decision: Ready replicas with
// metrics, whose mean metric is Metric, and Pending replicas created but
// not yet ready (they have no metrics). Valid is false when no metric
// could be computed (no ready replica, or no sample yet).
type Sample struct {
	Ready, Pending int
	Metric         float64
	Valid          bool
}

// Recommend is the replica calculator (replica_calculator.go,
// GetResourceReplicas): the raw desired count, before stabilisation and
// limits, for a scale whose spec says current replicas.
//
//	ratio = Metric / Target
//	no pending:   |ratio − 1| ≤ tol → current, else ceil(ratio × Ready)
//	pending, ratio > 1: the pending replicas count as using 0, so
//	    ratio' = Metric·Ready / (Target·(Ready + Pending));
//	    |ratio' − 1| ≤ tol, or ratio' on the other side of 1 → current,
//	    else ceil(ratio' × (Ready + Pending))
//
// (Pending replicas are left out of a scale-down's computation, as
// Kubernetes sets not-yet-ready pods aside for CPU.)
func (a *Autoscaler) Recommend(current int, s Sample) int {
	if !s.Valid || s.Ready <= 0 {
		return current
	}
	ratio := s.Metric / a.cfg.Target
	if s.Pending == 0 || ratio <= 1 {
		if math.Abs(ratio-1) <= a.cfg.Tolerance {
			return current
		}
		return int(math.Ceil(ratio * float64(s.Ready)))
	}
	n := float64(s.Ready + s.Pending)
	r2 := s.Metric * float64(s.Ready) / (a.cfg.Target * n)
	if math.Abs(r2-1) <= a.cfg.Tolerance || r2 < 1 {
		return current
	}
	return int(math.Ceil(r2 * n))
}

// Decide is one controller period at now: the recommendation for s,
// stabilised over the windows (horizontal.go,
// stabilizeRecommendationWithBehaviors: the result is current clamped to
// [min of the recommendations within UpWindow, max of those within
// DownWindow], this one included), then limited by the scale-up rate and
// by [MinReplicas, MaxReplicas]. The change from current is recorded as a
// scale event; the caller makes it happen.
func (a *Autoscaler) Decide(now int64, current int, s Sample) int {
	raw := a.Recommend(current, s)
	a.recs = append(a.recs, scaleRec{now, raw})
	a.forget(now)
	up, down := raw, raw
	for _, r := range a.recs {
		if r.at > now-a.cfg.UpWindow {
			up = min(up, r.n)
		}
		if r.at > now-a.cfg.DownWindow {
			down = max(down, r.n)
		}
	}
	d := min(max(current, up), down)
	switch {
	case d > current:
		limit := a.cfg.MaxReplicas
		if a.cfg.UpPeriod > 0 {
			added := 0
			for _, e := range a.events {
				if e.at > now-a.cfg.UpPeriod {
					added += e.n
				}
			}
			start := current - added
			byPods := start + a.cfg.UpPods
			byPct := int(math.Ceil(float64(start) * (1 + a.cfg.UpPercent/100)))
			limit = min(limit, max(byPods, byPct, current))
		}
		d = min(d, limit)
	case d < current:
		d = max(d, a.cfg.MinReplicas)
	}
	d = min(max(d, a.cfg.MinReplicas), a.cfg.MaxReplicas)
	if d != current {
		a.events = append(a.events, scaleRec{now, d - current})
	}
	return d
}

// Start records replicas as a recommendation made at now: an
// autoscaler that has been running with that count, so that its
// scale-down window holds the count for a window's length instead of
// following the first recommendation at once.
func (a *Autoscaler) Start(now int64, replicas int) {
	a.recs = append(a.recs, scaleRec{now, replicas})
}

// forget drops what no window or period can see any more.
func (a *Autoscaler) forget(now int64) {
	keep := max(a.cfg.UpWindow, a.cfg.DownWindow)
	i := 0
	for i < len(a.recs) && a.recs[i].at <= now-keep {
		i++
	}
	a.recs = append(a.recs[:0], a.recs[i:]...)
	j := 0
	for j < len(a.events) && a.events[j].at <= now-a.cfg.UpPeriod {
		j++
	}
	a.events = append(a.events[:0], a.events[j:]...)
}
