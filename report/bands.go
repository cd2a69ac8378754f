package report

import (
	"math"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// Bands are the per-interval bands of a comparison's charts (mean and
// min–max over a point's runs of the received load, the goodput, the local
// drops, the effective capacity and the handshakes), accumulated run by
// run. A sweep's aggregation then holds points × intervals, not runs ×
// intervals: sweep.LoadRunsEach gives each run's series to Add and drops
// it.
//
// Add the runs in the order of the points' Runs (sweep.Plan.Runs' order):
// every sum is then the same sequence of floating-point additions as over
// the kept series, and the charts are the same bytes
// (TestBandsStreamedAreTheKeptOnes).
type Bands struct {
	interval int64 // the first run's: the charts' x axis and the rates' unit
	started  bool
	pts      []pointBands
}

type pointBands struct {
	runs                                int
	received, goodput, drops            *bandAcc
	capacity, handshakes, handshakeWork *bandAcc // nil where not charted
}

// NewBands accumulates the bands of points points.
func NewBands(points int) *Bands { return &Bands{pts: make([]pointBands, points)} }

// Add adds a run of point i (its Doc and Series).
func (b *Bands) Add(i int, run *sweep.RunData) {
	if !b.started {
		b.interval, b.started = run.Series.Interval, true
	}
	pb := &b.pts[i]
	interval := b.interval
	if pb.runs == 0 {
		sc := run.Doc.Scenario
		rate, level := true, false
		pb.received = newBandAcc(interval, rate, func(r *metrics.Row) float64 { return float64(r.Received) })
		pb.goodput = newBandAcc(interval, rate, func(r *metrics.Row) float64 { return float64(r.Succeeded) })
		pb.drops = newBandAcc(interval, level, func(r *metrics.Row) float64 {
			if r.Offered == 0 {
				return math.NaN()
			}
			return 100 * float64(r.DropThrottle+r.DropNoConn+r.DropBreaker) / float64(r.Offered)
		})
		if hasCapacity(sc) {
			p := metrics.Params{Workers: int64(sc.EntryBackend().TotalWorkers()), CapacityRPS: sc.Capacity()}
			pb.capacity = newBandAcc(interval, level, func(r *metrics.Row) float64 { return metrics.EffectiveCapacity(r, interval, p) })
		}
		if sc.Clients.Connection != nil {
			workers := float64(max(sc.EntryBackend().Workers, 1))
			pb.handshakes = newBandAcc(interval, rate, func(r *metrics.Row) float64 { return float64(r.ConnectsRcvd) })
			pb.handshakeWork = newBandAcc(interval, level, func(r *metrics.Row) float64 {
				return 100 * float64(r.HandshakeUsefulNS+r.HandshakeWastedNS) / float64(interval) / workers
			})
		}
	}
	pb.runs++
	for _, a := range []*bandAcc{pb.received, pb.goodput, pb.drops, pb.capacity, pb.handshakes, pb.handshakeWork} {
		if a != nil {
			a.add(run.Series)
		}
	}
}

// bandsOf accumulates the bands of points whose runs kept their series.
func bandsOf(pts []sweep.PointData) *Bands {
	b := NewBands(len(pts))
	for i := range pts {
		for j := range pts[i].Runs {
			b.Add(i, &pts[i].Runs[j])
		}
	}
	return b
}

// bandAcc is one band being accumulated: per interval, the sum, count,
// minimum and maximum of a value over the runs (NaN values left out), the
// number of intervals set by the first run.
type bandAcc struct {
	v       func(*metrics.Row) float64
	sec     float64 // divide by it (per second) when rate
	rate    bool
	started bool
	sum     []float64
	lo, hi  []float64
	cnt     []int32
}

func newBandAcc(interval int64, rate bool, v func(*metrics.Row) float64) *bandAcc {
	return &bandAcc{v: v, rate: rate, sec: float64(interval) / 1e9}
}

func (a *bandAcc) add(s *metrics.Series) {
	if !a.started {
		n := len(s.Rows)
		a.sum, a.lo, a.hi, a.cnt = make([]float64, n), make([]float64, n), make([]float64, n), make([]int32, n)
		for j := range n {
			a.lo[j], a.hi[j] = math.Inf(1), math.Inf(-1)
		}
		a.started = true
	}
	for j := range min(len(a.sum), len(s.Rows)) {
		x := a.v(&s.Rows[j])
		if math.IsNaN(x) {
			continue
		}
		if a.rate {
			x /= a.sec
		}
		a.sum[j] += x
		a.cnt[j]++
		a.lo[j], a.hi[j] = min(a.lo[j], x), max(a.hi[j], x)
	}
}

// band is the mean and the min–max; an interval no run has a value for
// is NaN.
func (a *bandAcc) band() plots.Band {
	if a == nil || !a.started {
		return plots.Band{}
	}
	n := len(a.sum)
	bd := plots.Band{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	for j := range n {
		if a.cnt[j] == 0 {
			bd.Mean[j], bd.Lo[j], bd.Hi[j] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		bd.Mean[j], bd.Lo[j], bd.Hi[j] = a.sum[j]/float64(a.cnt[j]), a.lo[j], a.hi[j]
	}
	return bd
}
