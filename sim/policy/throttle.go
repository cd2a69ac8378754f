package policy

import (
	"fmt"
	"math"
)

// SREProbability is the probability with which the SRE adaptive throttle
// rejects a new request locally (Google SRE book, "Handling Overload",
// eq. 21-1):
//
//	max(0, (requests − K·accepts) / (requests + padding))
//
// The book's padding is 1; grpc-go's RLS throttler uses 8.
//
//	requests accepts  K   p
//	0        0        2   0
//	1        0        2   0.5     (a sparse client's one reject)
//	10       5        2   0
//	30       10       2   0.3226  (= 10/31)
//	300      100      2   0.3322  (→ 1/3: demand 3× what is accepted)
func SREProbability(requests, accepts, k, padding float64) float64 {
	d, den := requests-k*accepts, requests+padding
	if d <= 0 && den > 0 { // p ≤ 0, known without dividing (the common case)
		return 0
	}
	if p := d / den; p >= 0 || p != p { // p != p: NaN, returned as before
		return p
	}
	return 0
}

// ThrottleForm generalises the SRE formula to the variants real clients
// and proxies use:
//
//	p = min(MaxP, max(0, (requests − K·accepts) / (requests + Padding))^(1/Aggression))
//
// and p = 0 while requests < MinRequests. The SRE book: K 2, Padding 1,
// Aggression 1, MaxP 1, MinRequests 0. grpc-go's RLS throttler: Padding 8.
// Envoy admission control: K = 1/sr_threshold (0.95 → 1.053), Aggression,
// MaxP max_rejection_probability (0.8), MinRequests from rps_threshold
// times the window. failsafe-go: K = 1/0.9, MaxP 0.9.
type ThrottleForm struct {
	K, Padding, Aggression, MaxP float64
	MinRequests                  uint32
}

// Probability is the form's local rejection probability.
//
//	requests accepts  form                          p
//	10       0        K 2, padding 8 (gRPC RLS)     10/18 = 0.5556
//	100      90       K 1/0.95, aggression 2        sqrt(5.263/101) = 0.2283
//	100      0        max_p 0.8                     0.8
//	5        0        min_requests 10               0
func (f ThrottleForm) Probability(requests, accepts uint32) float64 {
	if requests < f.MinRequests {
		return 0
	}
	p := SREProbability(float64(requests), float64(accepts), f.K, f.Padding)
	if p > 0 && f.Aggression != 1 && f.Aggression > 0 {
		p = math.Pow(p, 1/f.Aggression)
	}
	if f.MaxP > 0 && p > f.MaxP {
		p = f.MaxP
	}
	return p
}

// Window keeps the requests and accepts counters of many throttles over a
// sliding window of Buckets buckets of Width nanoseconds each. A record made
// at time t goes into bucket floor(t/Width); at time t the window holds the
// buckets b > floor(t/Width) − Buckets: the current one and the Buckets−1
// before it.
//
// All throttles share one window length, so records expire in the order
// they were made, whichever throttle they belong to: one FIFO of records
// serves every throttle, each throttle keeps only its two running totals
// (8 bytes), and updating is O(1) amortised per record. The memory is the
// number of records inside one window (request rate × window), not
// throttles × buckets.
type Window struct {
	width, buckets int64
	cur            int64 // bucket of the latest Advance
	next           int64 // where bucket cur+1 starts: Advance divides only past it
	req, acc       []uint32
	fifo           ring
}

// NewWindow makes the counters of n throttles. width is the bucket width in
// nanoseconds and buckets the number of buckets in the window.
func NewWindow(n int, width, buckets int64) *Window {
	return &Window{width: width, buckets: buckets, next: width, req: make([]uint32, n), acc: make([]uint32, n)}
}

const acceptFlag = 1 << 31

// Advance expires the records that have left the window at time now. Time
// must not go backwards. Its common case, now in the bucket of the latest
// call, is small enough to be inlined.
func (w *Window) Advance(now int64) {
	if now >= w.next {
		w.expire(now / w.width)
	}
}

// expire moves the window to bucket b and drops the records that left it.
func (w *Window) expire(b int64) {
	w.cur = b
	w.next = math.MaxInt64
	if b < math.MaxInt64/w.width-1 {
		w.next = (b + 1) * w.width
	}
	limit := b - w.buckets
	for w.fifo.n > 0 {
		r := w.fifo.front()
		if int64(r.bucket) > limit {
			break
		}
		w.fifo.pop()
		id := r.id &^ acceptFlag
		if r.id&acceptFlag != 0 {
			w.acc[id]--
		} else {
			w.req[id]--
		}
	}
}

// Counts returns throttle id's requests and accepts in the window as of the
// latest Advance.
func (w *Window) Counts(id int) (requests, accepts uint32) { return w.req[id], w.acc[id] }

// Probability is the form's probability for throttle id at time now.
func (w *Window) Probability(now int64, id int, f ThrottleForm) float64 {
	w.Advance(now)
	return f.Probability(w.req[id], w.acc[id])
}

// RecordRequest adds one request to throttle id at time now.
func (w *Window) RecordRequest(now int64, id int) {
	w.Advance(now)
	w.addRequest(id)
}

// RecordAccept adds one accept to throttle id at time now.
func (w *Window) RecordAccept(now int64, id int) {
	w.Advance(now)
	w.acc[id]++
	w.fifo.push(record{bucket: uint32(w.cur), id: uint32(id) | acceptFlag}) // cur = now / width after Advance
}

// addRequest adds one request to throttle id in the current bucket (the
// one of the latest Advance).
func (w *Window) addRequest(id int) {
	w.req[id]++
	w.fifo.push(record{bucket: uint32(w.cur), id: uint32(id)})
}

// Records is the number of records inside the window (for memory checks).
func (w *Window) Records() int { return w.fifo.n }

type record struct{ bucket, id uint32 }

// ring is a FIFO of records in fixed-size blocks. Full blocks are never
// copied when the FIFO grows, and emptied blocks are kept for reuse, so a
// long run allocates only as many blocks as the window ever holds at once
// and touches no fresh memory once it has settled.
type ring struct {
	blocks     [][]record // blocks[first:] in FIFO order; blocks[first] holds the front
	spare      [][]record // emptied blocks, for reuse
	first      int
	head, tail int // front index in blocks[first]; next free index in the last block
	n          int
}

const ringBlock = 512 // records per block (4 KiB)

func (r *ring) front() record { return r.blocks[r.first][r.head] }

func (r *ring) pop() {
	r.head++
	r.n--
	if r.n == 0 { // empty: keep the last block, start it over
		r.spare = append(r.spare, r.blocks[r.first:len(r.blocks)-1]...)
		r.blocks[0] = r.blocks[len(r.blocks)-1]
		r.blocks = r.blocks[:1]
		r.first, r.head, r.tail = 0, 0, 0
		return
	}
	if r.head == ringBlock {
		r.spare = append(r.spare, r.blocks[r.first])
		r.blocks[r.first] = nil
		r.first++
		r.head = 0
		if r.first >= 32 && 2*r.first >= len(r.blocks) { // compact the block list now and then
			k := copy(r.blocks, r.blocks[r.first:])
			clear(r.blocks[k:])
			r.blocks = r.blocks[:k]
			r.first = 0
		}
	}
}

func (r *ring) push(x record) {
	if len(r.blocks) == 0 || r.tail == ringBlock {
		var b []record
		if k := len(r.spare); k > 0 {
			b, r.spare = r.spare[k-1], r.spare[:k-1]
		} else {
			b = make([]record, ringBlock)
		}
		r.blocks = append(r.blocks, b)
		r.tail = 0
	}
	r.blocks[len(r.blocks)-1][r.tail] = x
	r.tail++
	r.n++
}

// ThrottleConfig configures a set of adaptive throttles.
type ThrottleConfig struct {
	// Window is the lookback of the requests and accepts counters in
	// nanoseconds, kept in Buckets buckets of Window/Buckets each.
	Window, Buckets int64
	// Form is the rejection formula (the SRE book's: K 2, Padding 1,
	// Aggression 1, MaxP 1).
	Form ThrottleForm
	// CountLocalRejects records locally dropped requests in `requests`, as
	// the SRE book does; false records only the requests that were sent
	// (the throttle sketch this project started from).
	CountLocalRejects bool
	// Uniform, when set, is where Allow gets its uniform draw in [0, 1) for
	// a request named (stream, n): called only when the rejection
	// probability is above 0, which is most of the time 0. Without it,
	// AllowU takes the draw from the caller.
	Uniform func(stream, n uint64) float64
}

// Throttle is a set of adaptive throttles (SRE "Handling Overload") that
// share one sliding window and one formula. Like rate.Limiter's AllowN, it
// owns its settings and makes the decision: callers say when a request
// comes (Allow) and when the backend accepted one (Accept).
type Throttle struct {
	win        *Window
	form       ThrottleForm
	countLocal bool
	uniform    func(stream, n uint64) float64
}

// NewThrottle makes n throttles, or returns an error for settings that
// cannot work (n < 0, no buckets, a bucket narrower than a nanosecond,
// K ≤ 0). A zero Window, Buckets or K takes the SRE book's value (2
// minutes, in 120 buckets; K 2).
func NewThrottle(n int, c ThrottleConfig) (*Throttle, error) {
	if c.Window == 0 {
		c.Window = 120e9
	}
	if c.Buckets == 0 {
		c.Buckets = 120
	}
	if c.Form.K == 0 {
		c.Form.K = 2
	}
	switch {
	case n < 0:
		return nil, fmt.Errorf("policy: number of throttles must be >= 0, got %d", n)
	case c.Buckets <= 0:
		return nil, fmt.Errorf("policy: throttle buckets must be > 0, got %d", c.Buckets)
	case c.Window/c.Buckets <= 0:
		return nil, fmt.Errorf("policy: throttle window %d ns is shorter than its %d buckets", c.Window, c.Buckets)
	case !(c.Form.K > 0):
		return nil, fmt.Errorf("policy: throttle K must be > 0, got %v", c.Form.K)
	}
	return &Throttle{win: NewWindow(n, c.Window/c.Buckets, c.Buckets), form: c.Form, countLocal: c.CountLocalRejects, uniform: c.Uniform}, nil
}

// Allow decides whether throttle id lets a new request through at time
// now: it rejects it locally with the form's probability, drawing from
// the configured Uniform for the request named (stream, n). The request
// is recorded in the window (always when local rejects count, else only
// when it goes through).
func (t *Throttle) Allow(now int64, id int, stream, n uint64) bool {
	w := t.win
	w.Advance(now) // once: the records below go into its bucket
	p := t.form.Probability(w.req[id], w.acc[id])
	if t.countLocal {
		w.addRequest(id)
	}
	if p > 0 && t.uniform(stream, n) < p {
		return false
	}
	if !t.countLocal {
		w.addRequest(id)
	}
	return true
}

// AllowU is Allow with the uniform draw u in [0, 1) given by the caller.
func (t *Throttle) AllowU(now int64, id int, u float64) bool {
	p := t.win.Probability(now, id, t.form)
	if t.countLocal {
		t.win.RecordRequest(now, id)
	}
	if p > 0 && u < p {
		return false
	}
	if !t.countLocal {
		t.win.RecordRequest(now, id)
	}
	return true
}

// Accept records that the backend accepted one of throttle id's requests.
func (t *Throttle) Accept(now int64, id int) { t.win.RecordAccept(now, id) }

// Probability is throttle id's local rejection probability at time now.
func (t *Throttle) Probability(now int64, id int) float64 {
	return t.win.Probability(now, id, t.form)
}

// Counts returns throttle id's requests and accepts in the window as of
// the latest update.
func (t *Throttle) Counts(id int) (requests, accepts uint32) { return t.win.Counts(id) }
