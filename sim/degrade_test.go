package sim

import (
	"fmt"
	"math"
	"testing"
)

// degradeChain is the exact steady state of an M/M/c/K queue whose
// requests are served with a degraded response (service time × f, so
// rate μ/f) when they start service with more than n still queued: a
// continuous-time Markov chain on (requests in the system, degraded
// requests in service), solved by Gauss–Seidel. It returns the mean queue
// length and the rate of degraded starts.
func degradeChain(lambda, mu, f float64, c, k, n int) (meanQ, degRate float64) {
	w := c + 1
	idx := func(s, d int) int { return s*w + d }
	p := make([]float64, (k+1)*w)
	type tr struct {
		from int
		rate float64
	}
	in := make([][]tr, len(p))          // in[j]: the transitions into j
	out := make([]float64, len(p))      // the total rate out of each state
	degStart := make([]float64, len(p)) // rate of degraded starts from each state
	add := func(from, to int, rate float64) {
		if rate > 0 {
			in[to] = append(in[to], tr{from, rate})
			out[from] += rate
		}
	}
	for s := 0; s <= k; s++ {
		b := min(s, c)
		for d := 0; d <= b; d++ {
			i := idx(s, d)
			if s < k {
				add(i, idx(s+1, d), lambda) // a start at arrival finds no queue: never degraded
			}
			// A completion, normal or degraded; the next queued request
			// starts with s−c−1 still queued.
			start := s > c
			deg := start && s-c-1 > n
			next := func(dd int) int {
				if deg {
					dd++
				}
				return idx(s-1, dd)
			}
			if b-d > 0 {
				add(i, next(d), float64(b-d)*mu)
				if deg {
					degStart[i] += float64(b-d) * mu
				}
			}
			if d > 0 {
				add(i, next(d-1), float64(d)*mu/f)
				if deg {
					degStart[i] += float64(d) * mu / f
				}
			}
		}
	}
	p[0] = 1
	for range 20000 {
		for j := range p {
			if out[j] == 0 && j != 0 {
				continue
			}
			var s float64
			for _, t := range in[j] {
				s += p[t.from] * t.rate
			}
			if out[j] > 0 && (s > 0 || j != 0) {
				p[j] = s / out[j]
			}
		}
		var tot float64
		for _, x := range p {
			tot += x
		}
		for j := range p {
			p[j] /= tot
		}
	}
	for s := 0; s <= k; s++ {
		for d := 0; d <= min(s, c); d++ {
			meanQ += p[idx(s, d)] * float64(max(s-c, 0))
			degRate += p[idx(s, d)] * degStart[idx(s, d)]
		}
	}
	return meanQ, degRate
}

// The chain solver on a case with a closed form: with f = 1 degrading
// changes nothing, so the mean queue is M/M/c/K's.
func TestDegradeChainIsMMcK(t *testing.T) {
	got, _ := degradeChain(24, 10, 1, 2, 42, 5)
	// Product form: p_s ∝ a^s/s! for s ≤ c, a^c/c!·(a/c)^(s−c) above.
	a, pk, norm, want := 24.0/10, 1.0, 0.0, 0.0
	for s := 0; s <= 42; s++ {
		if s > 0 {
			pk *= a / float64(min(s, 2))
		}
		norm += pk
		want += pk * float64(max(s-2, 0))
	}
	want /= norm
	if math.Abs(got-want) > 1e-6*want {
		t.Errorf("mean queue: got %.6f, want %.6f (M/M/2/42)", got, want)
	}
}

const degradeScenario = `name: degrade
duration: 4000s
metrics: {interval: 10s}
clients:
  count: 1000
  arrival: {process: poisson, total_rate: 24/s}
  timeout: 1h
backend:
  workers: 2
  service: {dist: exponential, mean: 100ms}
  queue: {limit: 40}
  degrade: {when_queue_above: 5, service_fraction: 0.25}
`

// Graceful degradation at 1.2× capacity (2 workers × 100 ms, 24/s
// offered, 40 may wait): a request that starts with more than 5 still
// queued takes a quarter of its service time. The run's mean queue
// length and rate of degraded starts match the chain's steady state.
// Tolerance: four standard errors of the run's figure, each estimated by
// batch means over 20 batches of 200 s (the queue's relaxation time is
// well under a second, so batches are nearly independent), plus 1% of
// the value for the start-up transient.
func TestDegradeMatchesBirthDeath(t *testing.T) {
	r := mustRun(t, parseGraph(t, degradeScenario))
	wantQ, wantDeg := degradeChain(24, 10, 0.25, 2, 42, 5)
	iv := float64(r.Series.Interval) / 1e9
	const batches = 20
	per := len(r.Series.Rows) / batches
	var q, dg [batches]float64
	for i, row := range r.Series.Rows[:batches*per] {
		q[i/per] += float64(row.QueueAreaNS) / float64(r.Series.Interval) / float64(per)
		dg[i/per] += float64(row.Degraded) / iv / float64(per)
	}
	for _, c := range []struct {
		name string
		b    [batches]float64
		want float64
	}{{"mean queue length", q, wantQ}, {"degraded starts per second", dg, wantDeg}} {
		mean, se := batchMean(c.b[:])
		tol := 4*se + 0.01*c.want
		ok := math.Abs(mean-c.want) <= tol
		record("degrade M/M/2/42, queue > 5 → ¼ service: "+c.name, fmt.Sprintf("%.4f", c.want), fmt.Sprintf("%.4f", mean), fmt.Sprintf("±%.4f", tol), ok)
		t.Logf("%s: got %.4f ± %.4f (SE), chain %.4f", c.name, mean, se, c.want)
		if !ok {
			t.Errorf("%s: got %.4f, want %.4f ± %.4f", c.name, mean, c.want, tol)
		}
	}
	if got := r.Summary.Degraded; got == 0 {
		t.Errorf("summary degraded: got 0, want > 0")
	}
}

// batchMean is the mean of b and its standard error.
func batchMean(b []float64) (mean, se float64) {
	for _, x := range b {
		mean += x
	}
	mean /= float64(len(b))
	var ss float64
	for _, x := range b {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(b)-1) / float64(len(b)))
}
