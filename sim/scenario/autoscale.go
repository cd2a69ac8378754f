package scenario

import (
	"time"

	"github.com/throttlesim/throttlesim/sim/policy"
)

// Autoscale is a backend's (or a service's) horizontal autoscaler: target
// tracking as the Kubernetes HorizontalPodAutoscaler does it
// (docs/scenario-reference.md, "autoscale"). With it, replicas is the
// count at the start, and the service has max_replicas replica pools of
// which the autoscaler keeps some running.
type Autoscale struct {
	// Metric is what is tracked, as a mean over the ready replicas:
	// utilization (busy workers ÷ workers), concurrency (requests queued
	// or in service per replica) or queue_time (the mean time the
	// requests that started service in the window waited).
	Metric AutoscaleMetric `yaml:"metric" json:"metric"`
	// Target is the desired value of utilization (a fraction in (0, 1])
	// or concurrency (requests per replica); TargetQueueTime that of
	// queue_time.
	Target          float64  `yaml:"target" json:"target"`
	TargetQueueTime Duration `yaml:"target_queue_time" json:"target_queue_time"`
	// Tolerance: no change while |metric ÷ target − 1| ≤ tolerance.
	Tolerance   float64 `yaml:"tolerance" json:"tolerance"`
	MinReplicas int     `yaml:"min_replicas" json:"min_replicas"`
	MaxReplicas int     `yaml:"max_replicas" json:"max_replicas"`
	// Period is the controller's sync period: one decision per period.
	Period Duration `yaml:"period" json:"period"`
	// SampleInterval is how often the metric is sampled on every ready
	// replica; Window is the span the samples are averaged over, and
	// MetricLag how old the newest sample a decision sees is (metrics
	// pipeline delay). Period, Window and MetricLag are multiples of it.
	SampleInterval Duration `yaml:"sample_interval" json:"sample_interval"`
	Window         Duration `yaml:"window" json:"window"`
	MetricLag      Duration `yaml:"metric_lag" json:"metric_lag"`
	// ScaleUpWindow and ScaleDownWindow are the stabilisation windows:
	// a scale-up goes no higher than the lowest recommendation of the
	// last ScaleUpWindow, a scale-down no lower than the highest of the
	// last ScaleDownWindow.
	ScaleUpWindow   Duration `yaml:"scale_up_window" json:"scale_up_window"`
	ScaleDownWindow Duration `yaml:"scale_down_window" json:"scale_down_window"`
	// ScaleUpPods and ScaleUpPercent limit a scale-up within any
	// ScaleUpPeriod to the larger of +pods and +percent of the replicas
	// at the start of the period (0 s: no limit).
	ScaleUpPods    int      `yaml:"scale_up_pods" json:"scale_up_pods"`
	ScaleUpPercent float64  `yaml:"scale_up_percent" json:"scale_up_percent"`
	ScaleUpPeriod  Duration `yaml:"scale_up_period" json:"scale_up_period"`
	// Provisioning is the delay from a scale-up decision until the new
	// replica takes work (scheduling, image pull, start, readiness).
	Provisioning Duration `yaml:"provisioning" json:"provisioning"`
	// Warmup is how long a new replica runs with only WarmCapacity of its
	// workers once ready (cold caches, JIT): 0 s, none.
	Warmup       Duration `yaml:"warmup" json:"warmup"`
	WarmCapacity float64  `yaml:"warm_capacity" json:"warm_capacity"`
}

// setDefaults: the Kubernetes HPA's defaults (sync period 15 s, tolerance
// 0.1, no scale-up window, 300 s scale-down window, scale-up at most 4
// pods or 100% per 15 s; kubernetes/website horizontal-pod-autoscale.md),
// metrics-server's 15 s resolution as the window, and a 30 s provisioning
// delay (HPA's 30 s initial-readiness delay; there is no universal value).
// Target and max_replicas have no default.
func (a *Autoscale) setDefaults() {
	*a = Autoscale{
		Metric:          MetricUtilization,
		Tolerance:       0.1,
		MinReplicas:     1,
		Period:          Duration(15 * time.Second),
		SampleInterval:  Duration(time.Second),
		Window:          Duration(15 * time.Second),
		ScaleDownWindow: Duration(300 * time.Second),
		ScaleUpPods:     4,
		ScaleUpPercent:  100,
		ScaleUpPeriod:   Duration(15 * time.Second),
		Provisioning:    Duration(30 * time.Second),
		WarmCapacity:    1,
	}
}

// AutoscaleMetric is autoscale.metric.
type AutoscaleMetric string

// Autoscaling metrics.
const (
	MetricUtilization AutoscaleMetric = "utilization"
	MetricConcurrency AutoscaleMetric = "concurrency"
	MetricQueueTime   AutoscaleMetric = "queue_time"
)

// Names lists the valid autoscaling metrics.
func (AutoscaleMetric) Names() []string { return []string{"utilization", "concurrency", "queue_time"} }

// Pools is the replica pools the service needs: max_replicas with an
// autoscaler, else replicas.
func (b Backend) Pools() int {
	if b.Autoscale != nil {
		return max(1, b.Autoscale.MaxReplicas)
	}
	return max(1, b.Replicas)
}

// TargetValue is the target in the metric's own unit (seconds for
// queue_time).
func (a *Autoscale) TargetValue() float64 {
	if a.Metric == MetricQueueTime {
		return a.TargetQueueTime.Seconds()
	}
	return a.Target
}

// Policy is the decision rule's configuration.
func (a *Autoscale) Policy() policy.AutoscalerConfig {
	return policy.AutoscalerConfig{
		Target: a.TargetValue(), Tolerance: a.Tolerance, MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas,
		UpWindow: int64(a.ScaleUpWindow), DownWindow: int64(a.ScaleDownWindow),
		UpPods: a.ScaleUpPods, UpPercent: a.ScaleUpPercent, UpPeriod: int64(a.ScaleUpPeriod),
	}
}

// autoscale checks backend b's autoscaler, under path p.
func (v *validator) autoscale(p string, b Backend, s *Scenario) {
	a := b.Autoscale
	if a == nil {
		return
	}
	p += ".autoscale"
	v.check(a.MaxReplicas >= 1 && a.MaxReplicas <= MaxReplicas, p+".max_replicas", "must be in 1..%d (the autoscaler never runs more), got %d", MaxReplicas, a.MaxReplicas)
	v.check(a.MinReplicas >= 1 && a.MinReplicas <= a.MaxReplicas, p+".min_replicas", "must be in 1..max_replicas (%d), got %d", a.MaxReplicas, a.MinReplicas)
	v.check(b.Replicas >= a.MinReplicas && b.Replicas <= a.MaxReplicas, p[:len(p)-len(".autoscale")]+".replicas",
		"with autoscale it is the count at the start and must be in min_replicas..max_replicas (%d..%d), got %d", a.MinReplicas, a.MaxReplicas, b.Replicas)
	switch a.Metric {
	case MetricUtilization:
		v.check(a.Target > 0 && a.Target <= 1, p+".target", "utilization needs a target in (0, 1] (the busy share of the workers, e.g. 0.7), got %g", a.Target)
	case MetricConcurrency:
		v.check(a.Target > 0 && a.Target <= 1e9, p+".target", "concurrency needs a target > 0 (requests queued or in service per replica, e.g. 50), got %g", a.Target)
	case MetricQueueTime:
		v.check(a.TargetQueueTime > 0, p+".target_queue_time", "queue_time needs a target_queue_time > 0 (e.g. 50ms), got %s", a.TargetQueueTime)
	}
	v.check(a.Metric == MetricQueueTime || a.TargetQueueTime == 0, p+".target_queue_time", "applies to metric queue_time only; use target")
	v.check(a.Metric != MetricQueueTime || a.Target == 0, p+".target", "metric queue_time takes target_queue_time (a duration), not target")
	v.check(a.Tolerance >= 0 && a.Tolerance < 1, p+".tolerance", "must be in [0, 1), got %g", a.Tolerance)
	v.check(a.SampleInterval > 0, p+".sample_interval", "must be > 0, got %s", a.SampleInterval)
	if si := a.SampleInterval; si > 0 {
		v.check(a.Period > 0 && a.Period%si == 0, p+".period", "must be a positive multiple of sample_interval (%s), got %s", si, a.Period)
		v.check(a.Window > 0 && a.Window%si == 0, p+".window", "must be a positive multiple of sample_interval (%s), got %s", si, a.Window)
		v.check(a.MetricLag >= 0 && a.MetricLag%si == 0, p+".metric_lag", "must be 0 or a multiple of sample_interval (%s), got %s", si, a.MetricLag)
		v.check(a.Window+a.MetricLag <= 100_000*si, p+".window", "window + metric_lag must be at most 100000 samples, got %s", a.Window+a.MetricLag)
	}
	v.check(a.ScaleUpWindow >= 0, p+".scale_up_window", "must be >= 0, got %s", a.ScaleUpWindow)
	v.check(a.ScaleDownWindow >= 0, p+".scale_down_window", "must be >= 0, got %s", a.ScaleDownWindow)
	v.check(a.ScaleUpPods >= 0, p+".scale_up_pods", "must be >= 0, got %d", a.ScaleUpPods)
	v.check(a.ScaleUpPercent >= 0, p+".scale_up_percent", "must be >= 0, got %g", a.ScaleUpPercent)
	v.check(a.ScaleUpPeriod >= 0, p+".scale_up_period", "must be >= 0 (0: no limit), got %s", a.ScaleUpPeriod)
	v.check(a.ScaleUpPeriod == 0 || a.ScaleUpPods > 0 || a.ScaleUpPercent > 0, p+".scale_up_pods", "with a scale_up_period, scale_up_pods or scale_up_percent must be > 0, or no scale-up could happen")
	v.check(a.Provisioning >= 0, p+".provisioning", "must be >= 0, got %s", a.Provisioning)
	v.check(a.Warmup >= 0, p+".warmup", "must be >= 0, got %s", a.Warmup)
	v.check(a.WarmCapacity > 0 && a.WarmCapacity <= 1, p+".warm_capacity", "must be in (0, 1] (the share of the workers a warming replica runs), got %g", a.WarmCapacity)
}
