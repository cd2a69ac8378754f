package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Prequal is the probe pool and the selection rule of Prequal ("Probing
// to Reduce Queuing and Latency"; Wydrowski, Kleinberg, Rumble et al.,
// "Load is not what you should balance: Introducing Prequal",
// NSDI '24). A client sends probes to random replicas, asynchronously to
// its queries; each answer (the replica's requests in flight, RIF, and
// its estimated latency) joins a pool of at most PoolSize probes, the
// oldest evicted first. A pick first drops the probes older than MaxAge,
// then applies the hot-cold lexicographic rule: a probe is hot when its
// RIF is above the QRIF quantile of the RIFs of the last PoolSize answers
// received (those still in the pool and those used up or evicted since);
// the pick is the cold probe with the lowest latency, or, when every
// probe is hot, the one with the lowest RIF. A probe serves at most
// MaxReuse picks.
//
// Who sends the probes, and what a replica answers, is the caller's:
// Prequal holds the pool and decides. Time is in ns.
type Prequal struct {
	cfg    PrequalConfig
	probes []Probe // oldest first
	recent []int   // the RIFs of the last PoolSize answers, a ring
	next   int     // recent's next slot
	rifs   []int   // scratch: recent, sorted
}

// PrequalConfig configures a Prequal pool.
type PrequalConfig struct {
	PoolSize int     // the most probes held
	QRIF     float64 // the quantile of the pool's RIFs above which a probe is hot, in [0, 1]
	MaxAge   int64   // ns a probe stays usable
	MaxReuse int     // picks one probe may serve
}

// Probe is one replica's answer to a probe.
type Probe struct {
	Replica int     // the replica that answered
	RIF     int     // its requests in flight when it answered
	Latency float64 // its latency estimate when it answered (ns)
	At      int64   // when the answer arrived
	uses    int     // picks it has served
}

// NewPrequal checks cfg and returns an empty pool.
func NewPrequal(cfg PrequalConfig) (*Prequal, error) {
	switch {
	case cfg.PoolSize < 1:
		return nil, fmt.Errorf("policy: prequal pool size must be >= 1, got %d", cfg.PoolSize)
	case !(cfg.QRIF >= 0 && cfg.QRIF <= 1):
		return nil, fmt.Errorf("policy: prequal q_rif must be in [0, 1], got %g", cfg.QRIF)
	case cfg.MaxAge <= 0:
		return nil, errors.New("policy: prequal max age must be > 0")
	case cfg.MaxReuse < 1:
		return nil, fmt.Errorf("policy: prequal max reuse must be >= 1, got %d", cfg.MaxReuse)
	}
	return &Prequal{cfg: cfg, probes: make([]Probe, 0, cfg.PoolSize), recent: make([]int, 0, cfg.PoolSize), rifs: make([]int, 0, cfg.PoolSize)}, nil
}

// Add puts the answer pr into the pool, evicting the oldest probe when
// the pool is full.
func (p *Prequal) Add(pr Probe) {
	pr.uses = 0
	if len(p.probes) == p.cfg.PoolSize {
		p.probes = slices.Delete(p.probes, 0, 1)
	}
	p.probes = append(p.probes, pr)
	if len(p.recent) < p.cfg.PoolSize {
		p.recent = append(p.recent, pr.RIF)
	} else {
		p.recent[p.next] = pr.RIF
	}
	p.next = (p.next + 1) % p.cfg.PoolSize
}

// Len is the number of probes held.
func (p *Prequal) Len() int { return len(p.probes) }

// Probes is the pool, oldest first (read only).
func (p *Prequal) Probes() []Probe { return p.probes }

// Pick drops the probes older than MaxAge at now and chooses a replica
// among the probes eligible (every probe when eligible is nil) by the
// hot-cold rule; ok is false when no probe is eligible. The probe chosen
// counts one use and leaves the pool at MaxReuse uses. Ties go to the
// lower RIF (among cold probes) or the lower latency (all hot), then to
// the newer probe.
func (p *Prequal) Pick(now int64, eligible func(replica int) bool) (replica int, ok bool) {
	p.probes = slices.DeleteFunc(p.probes, func(pr Probe) bool { return now-pr.At > p.cfg.MaxAge })
	best, bestCold := -1, false
	hot := 0
	if len(p.probes) > 0 {
		hot = Quantile(append(p.rifs[:0], p.recent...), p.cfg.QRIF)
	}
	for i := len(p.probes) - 1; i >= 0; i-- { // newest first: strict < keeps the newer of equals
		pr := &p.probes[i]
		if eligible != nil && !eligible(pr.Replica) {
			continue
		}
		cold := pr.RIF <= hot
		if best < 0 || better(pr, &p.probes[best], cold, bestCold) {
			best, bestCold = i, cold
		}
	}
	if best < 0 {
		return 0, false
	}
	pr := &p.probes[best]
	replica = pr.Replica
	if pr.uses++; pr.uses >= p.cfg.MaxReuse {
		p.probes = slices.Delete(p.probes, best, best+1)
	}
	return replica, true
}

// better reports whether probe a (cold or hot) beats probe b under the
// hot-cold lexicographic order: cold before hot; among cold, the lower
// latency, then the lower RIF; among hot, the lower RIF, then the lower
// latency.
func better(a, b *Probe, aCold, bCold bool) bool {
	if aCold != bCold {
		return aCold
	}
	if aCold {
		return a.Latency < b.Latency || a.Latency == b.Latency && a.RIF < b.RIF
	}
	return a.RIF < b.RIF || a.RIF == b.RIF && a.Latency < b.Latency
}

// Quantile is the q quantile of xs by the nearest-rank rule: the
// ⌈q·n⌉-th smallest (the smallest for q = 0). xs is sorted in place; it
// must not be empty.
func Quantile(xs []int, q float64) int {
	slices.Sort(xs)
	k := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(k, len(xs)-1))]
}
