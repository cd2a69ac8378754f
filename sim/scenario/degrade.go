package scenario

// Degrade is graceful degradation at a service (after Meta's Defcon; see
// docs/policies.md): a request that starts service while the service is
// past a load level is served with a cheaper response that takes
// service_fraction of its service time, instead of being queued at full
// cost or rejected. The level is one of when_queue_above (more than this
// many requests still waiting as it starts) or when_utilization_above
// (more than this share of the available workers busy, counting it).
type Degrade struct {
	WhenQueueAbove       *int     `yaml:"when_queue_above" json:"when_queue_above,omitempty"`
	WhenUtilizationAbove *float64 `yaml:"when_utilization_above" json:"when_utilization_above,omitempty"`
	ServiceFraction      float64  `yaml:"service_fraction" json:"service_fraction"`
}

// A fifth of the service time: ours (Defcon measures each knob's saving
// rather than assuming one).
func (d *Degrade) setDefaults() { *d = Degrade{ServiceFraction: 0.2} }

// degrade checks backend p's degrade.
func (v *validator) degrade(p string, d *Degrade) {
	if d == nil {
		return
	}
	p += ".degrade"
	v.check((d.WhenQueueAbove == nil) != (d.WhenUtilizationAbove == nil), p,
		"needs exactly one of when_queue_above and when_utilization_above")
	if q := d.WhenQueueAbove; q != nil {
		v.check(*q >= 0, p+".when_queue_above", "must be >= 0, got %d", *q)
	}
	if u := d.WhenUtilizationAbove; u != nil {
		v.check(*u >= 0 && *u < 1, p+".when_utilization_above", "must be in [0, 1), got %g", *u)
	}
	v.check(d.ServiceFraction > 0 && d.ServiceFraction <= 1, p+".service_fraction", "must be in (0, 1], got %g", d.ServiceFraction)
}
