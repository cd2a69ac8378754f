// Package rng provides throttlesim's counter-based random streams.
//
// Every random draw in a run is named by (master seed, purpose, client,
// counter): the stream of a client for a purpose is SplitMix64 seeded with
// a key mixed from (master seed, purpose, client), and the counter is the
// position in that stream. Because a draw depends only on its name, never on
// how many other draws happened before it, enabling a policy cannot shift
// any client's arrival times or service times: comparisons between policies
// see the same arrivals (common random numbers). A stream costs no memory:
// the counter is something the caller already has (a request ordinal, an
// attempt number).
//
// SplitMix64 is Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators" (OOPSLA 2014); its output passes BigCrush. Distinct stream
// keys are distinct starting points in one 2^64-long Weyl sequence.
package rng

import "math"

// Purpose names what a stream is for. New purposes are appended; existing
// values never change, or every fingerprint would.
type Purpose uint64

// Purposes of random streams.
const (
	Arrival   Purpose = 1  // inter-arrival times, per client
	Service   Purpose = 2  // service times, per client request and attempt
	Throttle  Purpose = 3  // adaptive-throttle accept/drop draws
	Backoff   Purpose = 4  // retry backoff jitter
	Phase     Purpose = 5  // phase of constant-rate arrivals
	Reconnect Purpose = 6  // reconnect and startup jitter
	Breaker   Purpose = 7  // circuit-breaker probes and open-time jitter
	Startup   Purpose = 8  // client start times
	Fault     Purpose = 9  // which clients a fault hits
	Network   Purpose = 10 // network delay per hop (sim/occ)
	Route     Purpose = 11 // service graphs: which calls are made, where a request is forwarded
	Subset    Purpose = 12 // load balancing: the order of the replicas a round of callers splits into subsets
	Probe     Purpose = 13 // load balancing: which replicas lb prequal probes, and its fallback pick
	// AdaptiveBreaker: the adaptive breaker's rejection coin (per attempt,
	// keyed by the attempt's stream) and each breaker's update phase (keyed
	// by the breaker's index, at draw AdaptivePhaseDraw).
	AdaptiveBreaker Purpose = 14
)

// AdaptivePhaseDraw is the draw index of an adaptive breaker's update
// phase: above every attempt's index (stack.Index is below 2^40).
const AdaptivePhaseDraw = 1 << 62

// DerivationVersion names the seed-derivation scheme; it is written into
// every manifest so that results state how their random numbers were made.
const DerivationVersion = "splitmix64-keyed-v2"

const golden = 0x9e3779b97f4a7c15

// Mix is the SplitMix64 output function (a bijective 64-bit finaliser).
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Source names the streams of one run.
type Source struct {
	keys [16]uint64 // per-purpose key derived from the master seed
}

// New derives the per-purpose keys of a run from its master seed.
func New(seed uint64) Source {
	var s Source
	for p := range s.keys {
		s.keys[p] = Mix(Mix(seed) ^ Mix(uint64(p)*golden+1))
	}
	return s
}

// Key is the seed of the stream of one client (or any entity) for one
// purpose.
func (s Source) Key(p Purpose, entity uint64) uint64 {
	return Mix(s.keys[p] ^ (entity+1)*golden)
}

// Uint64 is draw number n of the stream named by key.
func Uint64(key, n uint64) uint64 { return Mix(key + (n+1)*golden) }

// Float64 is a uniform draw in [0, 1) with 53 random bits.
func Float64(key, n uint64) float64 {
	return float64(Uint64(key, n)>>11) * (1.0 / (1 << 53))
}

// Open01 is a uniform draw in (0, 1], safe to take the logarithm of.
func Open01(key, n uint64) float64 {
	return (float64(Uint64(key, n)>>11) + 1) * (1.0 / (1 << 53))
}

// Exp is an exponential draw with mean 1: draw n of the stream named by
// key. It uses the ziggurat method of Marsaglia and Tsang ("The Ziggurat
// Method for Generating Random Variables", J. Stat. Software 5(8), 2000)
// with 256 layers: one 64-bit draw gives the layer (low 8 bits) and a
// 53-bit uniform (high bits); about 98.9% of draws are accepted at once,
// with no logarithm. The rare wedge and tail cases take further uniforms
// from a sub-stream seeded by the first draw, so draw n still depends on
// (key, n) alone.
func Exp(key, n uint64) float64 {
	w := Uint64(key, n)
	i := w & (zigLayers - 1)
	x := float64(w>>11) * zigScale[i]
	if w>>11 < zigFast[i] {
		return x // inside the layer's rectangle, under the curve
	}
	return expSlow(w, i, x)
}

// expSlow finishes a ziggurat draw that fell outside the fast rectangle:
// the tail beyond r for the base layer, the wedge test otherwise, and a
// fresh try when the wedge test fails. Its uniforms are draws 0, 1, ... of
// the stream keyed by the first 64-bit draw w.
func expSlow(w, i uint64, x float64) float64 {
	for j := uint64(0); ; j += 2 {
		if i == 0 {
			if x < zigR { // the base rectangle (only at the rounding edge)
				return x
			}
			// Beyond r the exponential is r + Exp(1) (memorylessness).
			// The inverse transform is fine here: 1 draw in ~2,200.
			return zigR - math.Log(Open01(w, j))
		}
		// The wedge: accept x if a uniform height in the layer falls
		// under the curve.
		if zigF[i+1]+Float64(w, j)*(zigF[i]-zigF[i+1]) < math.Exp(-x) {
			return x
		}
		v := Uint64(w, j+1)
		i = v & (zigLayers - 1)
		x = float64(v>>11) * zigScale[i]
		if v>>11 < zigFast[i] {
			return x
		}
	}
}

// Ziggurat tables, f(x) = exp(−x). Layer i (0 < i < 256) is the rectangle
// of width zigX[i] between the heights f(zigX[i]) and f(zigX[i+1]) (zigF);
// zigX decreases from zigX[1] = r to zigX[256] = 0 and every layer has the
// area v. Layer 0 is the base rectangle [0, r] × [0, f(r)] plus the tail
// beyond r; its width zigX[0] = v/f(r) gives it the area v too, and a point
// beyond r in it means "draw from the tail". zigScale[i] = zigX[i]/2⁵³ maps
// a 53-bit integer into the layer; zigFast[i] bounds the integers whose
// point lies left of zigX[i+1], entirely under the curve.
const (
	zigLayers = 256
	zigR      = 7.69711747013104972  // start of the tail (Marsaglia and Tsang, 256 layers)
	zigV      = 3.949659822581572e-3 // area of every layer
)

var (
	zigX     [zigLayers + 1]float64
	zigF     [zigLayers + 1]float64
	zigScale [zigLayers]float64
	zigFast  [zigLayers]uint64
)

func init() {
	f := func(x float64) float64 { return math.Exp(-x) }
	zigX[0] = zigV / f(zigR)
	zigX[1] = zigR
	for i := 1; i < zigLayers-1; i++ {
		zigX[i+1] = -math.Log(f(zigX[i]) + zigV/zigX[i])
	}
	zigX[zigLayers] = 0
	for i := range zigF {
		zigF[i] = f(zigX[i])
	}
	for i := 0; i < zigLayers; i++ {
		zigScale[i] = zigX[i] / (1 << 53)
		zigFast[i] = uint64(zigX[i+1] / zigX[i] * (1 << 53))
	}
}

// Normal is a standard normal draw (Box–Muller, using draws 2n and 2n+1).
func Normal(key, n uint64) float64 {
	u1 := Open01(key, 2*n)
	u2 := Float64(key, 2*n+1)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
