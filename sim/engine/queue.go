package engine

import (
	"math"
	"math/bits"
	"slices"
)

// Time is virtual time: nanoseconds since the start of the scenario. It
// is a type of its own, so that a duration or a count cannot be scheduled
// as a time by mistake; callers that keep int64 times (package sim)
// convert at their one call of Schedule and their one of Step, which
// costs nothing at run time.
type Time int64

// Common durations in virtual time.
const (
	Nanosecond  Time = 1
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
)

// Event is one scheduled occurrence. It is a plain value (24 bytes); the
// meaning of ID and Aux depends on Kind and is up to the caller.
type Event struct {
	At  Time   // when the event fires
	key uint64 // seq<<8 | kind: insertion order, then the kind in the low byte
	ID  uint32 // e.g. a client, request slot or worker index
	Aux uint32 // e.g. a generation token that detects stale events
}

// Kind is the caller-defined event type.
func (e Event) Kind() uint8 { return uint8(e.key) }

// Seq is the insertion sequence number that breaks ties between events at
// the same instant.
func (e Event) Seq() uint64 { return e.key >> 8 }

func (e Event) less(o Event) bool {
	if e.At != o.At {
		return e.At < o.At
	}
	return e.key < o.key
}

// Queue is a 4-ary min-heap of events with a virtual clock, and, once the
// heap grows large, a two-level calendar of later events in front of it.
// The zero value is ready to use.
//
// The calendar keeps the heap small, as ladder queues do (Tang, Goh and
// Thng, 2005): the heap holds only the events before edge. Later events
// wait unsorted: those of the current epoch [E, E+F) in fine buckets of
// width w (F = nFine·w), those of the following epochs in coarse buckets,
// one per epoch, and the rest in an overflow list. When the heap runs
// empty, the next fine bucket is heapified; when the epoch is used up,
// the next coarse bucket is spread over the fine buckets; when the coarse
// buckets are used up, the overflow is spread over them. Appending to a
// bucket is sequential, so a large population costs cache misses only when
// a bucket is read back, not at every level of a deep heap. An event is
// popped only when every event before it in (At, Seq) order has been: the
// order is exactly the heap's. w follows the observed time between pops
// (about perBucket events per fine bucket) and is retuned as the run goes.
//
// Pop does not remove the event at once: it stays at the root until the
// next call. If the handler of the popped event schedules a new one (most
// do: the next arrival of the client, the next job of the worker), the new
// event replaces the root and sifts down once, instead of a removal
// (sift-down) plus an insertion (sift-up). The order of events is the same
// either way: it is the total order on (At, Seq).
type Queue struct {
	h       []Event
	seq     uint64
	now     Time
	pending bool // h[0] was popped and not yet removed

	cal    bool       // the calendar is in use
	w      Time       // fine bucket width, a power of two
	ws     uint       // log2(w): a bucket index is a shift, not a division
	e0     Time       // start of the current epoch; fine bucket i covers e0 + [i·w, (i+1)·w)
	cur    int        // the next fine bucket to heapify; the heap holds the events before e0 + cur·w
	fine   [][]Event  // nFine buckets, made when the calendar starts
	c0     Time       // start of the current era; coarse bucket k covers c0 + [k·F, (k+1)·F)
	ck     int        // the coarse bucket of the current epoch
	coarse [][]*chunk // nCoarse buckets, each a list of chunks
	spare  []*chunk   // emptied chunks, for reuse
	far    []Event    // events of later eras
	inFine int
	inCrs  int
	pops   uint64 // pops since the last tuning
	tuneN  uint64 // pops before the next tuning: tuneEvery, or calCheck while the heap is too small for the calendar (0 in a zero Queue: the first pop)
	tuneAt Time   // clock at the last tuning
}

// Calendar tuning: the calendar starts once the heap holds calMin events
// (looked at after tuneEvery pops from NewQueue, on the first pop of a
// zero Queue, and every calCheck pops after that); the
// bucket width is retuned every tuneEvery pops, when the mean time
// between pops has changed by more than retuneFactor.
const (
	nFine        = 1 << nFineLog
	nFineLog     = 10
	nCoarse      = 1024
	calMin       = 512
	tuneEvery    = 1 << 16
	calCheck     = 1 << 12
	perBucket    = 8
	retuneFactor = 2
	// calLimit: the calendar's epochs and eras must fit below the end of
	// Time (an era spans at most 2^52 ns). Events at or after it are kept
	// in the heap alone: the calendar does not start or restart once the
	// clock has reached it, and stops when only such events are left.
	calLimit = math.MaxInt64 - 1<<53
)

// NewQueue returns a queue whose backing array starts with room for n events.
func NewQueue(n int) *Queue {
	q := &Queue{h: make([]Event, 0, n+4), tuneN: tuneEvery}
	q.seal()
	return q
}

// sentinel comes after every event: At and key are as large as they go
// (no event's key is: its sequence number would have to reach 2^56).
var sentinel = Event{At: math.MaxInt64, key: math.MaxUint64}

// seal writes four sentinels after the heap's last event, in its backing
// array, so that siftDown can read the four children of any node without
// counting them. It is called whenever the heap's length changes.
func (q *Queue) seal() {
	n := len(q.h)
	if cap(q.h) < n+4 {
		q.h = slices.Grow(q.h, 4)
	}
	s := q.h[n : n+4 : n+4]
	s[0], s[1], s[2], s[3] = sentinel, sentinel, sentinel, sentinel
}

// Now is the time of the event most recently popped (0 before the first).
func (q *Queue) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue) Len() int {
	q.settle()
	return len(q.h) + q.inFine + q.inCrs + len(q.far)
}

// settle removes a popped root that nothing replaced. It is small
// enough to be inlined; remove does the work.
func (q *Queue) settle() {
	if q.pending {
		q.remove()
	}
}

// remove takes the popped root out of the heap.
func (q *Queue) remove() {
	q.pending = false
	n := len(q.h)
	last := q.h[n-1]
	q.h[n-1] = sentinel // h[n:n+3] are already (seal)
	q.h = q.h[:n-1]
	if n > 1 {
		q.down(last)
	}
}

// Scheduled is the number of events ever scheduled.
func (q *Queue) Scheduled() uint64 { return q.seq }

// Schedule adds an event of the given kind at time at. Scheduling in the
// past is a programming error and panics: the clock never runs backwards.
func (q *Queue) Schedule(at Time, kind uint8, id, aux uint32) {
	if at < q.now {
		panic("engine: event scheduled in the past")
	}
	e := Event{At: at, key: q.seq<<8 | uint64(kind), ID: id, Aux: aux}
	q.seq++
	if q.cal && at >= q.edge() {
		q.settle()
		q.place(e)
		return
	}
	if q.pending { // replace the popped root: one sift-down
		q.pending = false
		q.down(e)
		return
	}
	if n := len(q.h); n+5 <= cap(q.h) {
		s := q.h[:n+5]
		s[n], s[n+4] = e, sentinel // h[n+1:n+4] are already (seal)
		q.h = s[:n+1]
	} else {
		q.h = append(q.h, e)
		q.seal()
	}
	q.up(len(q.h) - 1)
}

// Peek returns the next event without removing it. ok is false when the
// queue is empty.
func (q *Queue) Peek() (e Event, ok bool) {
	q.settle()
	if len(q.h) == 0 && !q.refill() {
		return Event{}, false
	}
	return q.h[0], true
}

// Pop removes the next event, advances the clock to its time and returns
// it. ok is false when the queue is empty.
func (q *Queue) Pop() (e Event, ok bool) {
	q.settle()
	if q.pops++; q.pops >= q.tuneN {
		q.tune()
	}
	if len(q.h) == 0 && !q.refill() {
		return Event{}, false
	}
	e = q.h[0]
	q.pending = true
	q.now = e.At
	return e, true
}

// Step removes the next event if it comes before end, advances the clock
// to its time and returns it: Peek and Pop in one, the step of an event
// loop that runs to a horizon. ok is false when no event is left before
// end; an event at or after end stays in the queue.
func (q *Queue) Step(end Time) (e Event, ok bool) {
	q.settle()
	if q.pops++; q.pops >= q.tuneN {
		q.tune()
	}
	if len(q.h) == 0 && !q.refill() {
		return Event{}, false
	}
	e = q.h[0]
	if e.At >= end {
		return Event{}, false
	}
	q.pending = true
	q.now = e.At
	return e, true
}

// RunUntil runs the event loop: it removes the events before end one by
// one, in order, and hands each to handle, until none is left before end
// or handle returns false. It returns the number of events handled. The
// handler is called through a function value, which costs an indirect
// call per event: sim's hot loop calls Step itself.
func (q *Queue) RunUntil(end Time, handle func(Event) bool) uint64 {
	var n uint64
	for {
		e, ok := q.Step(end)
		if !ok {
			return n
		}
		n++
		if !handle(e) {
			return n
		}
	}
}

// Run is RunUntil with no horizon: it runs until the queue is empty or
// handle returns false.
func (q *Queue) Run(handle func(Event) bool) uint64 {
	var n uint64
	for {
		e, ok := q.Pop()
		if !ok {
			return n
		}
		n++
		if !handle(e) {
			return n
		}
	}
}

// edge is where the heap's events end: e0 + cur·w.
func (q *Queue) edge() Time { return q.e0 + Time(q.cur)*q.w }

// span is the length of an epoch, F.
func (q *Queue) span() Time { return nFine * q.w }

// spanShift is log2(span()).
func (q *Queue) spanShift() uint { return q.ws + nFineLog }

// place puts an event at or after edge into its fine or coarse bucket, or
// the overflow.
func (q *Queue) place(e Event) {
	if d := (e.At - q.e0) >> q.ws; d < nFine {
		q.fine[d] = append(q.fine[d], e)
		q.inFine++
		return
	}
	if k := (e.At - q.c0) >> q.spanShift(); k < nCoarse {
		q.toCoarse(int(k), e)
		return
	}
	q.far = append(q.far, e)
}

// chunk is a piece of a coarse bucket. Coarse buckets are lists of
// fixed-size chunks taken from and returned to a common pool: a bucket
// never copies itself to grow, and the memory stays that of the events
// pending, however long the run.
type chunk struct {
	n  int
	ev [chunkLen]Event
}

const chunkLen = 128

// toCoarse appends e to coarse bucket k.
func (q *Queue) toCoarse(k int, e Event) {
	cs := q.coarse[k]
	if len(cs) == 0 || cs[len(cs)-1].n == chunkLen {
		var c *chunk
		if n := len(q.spare); n > 0 {
			c, q.spare = q.spare[n-1], q.spare[:n-1]
		} else {
			c = new(chunk)
		}
		cs = append(cs, c)
		q.coarse[k] = cs
	}
	c := cs[len(cs)-1]
	c.ev[c.n] = e
	c.n++
	q.inCrs++
}

// release returns the chunks of coarse bucket k, whose events the caller
// has taken, to the pool.
func (q *Queue) release(k int) {
	for _, c := range q.coarse[k] {
		q.inCrs -= c.n
		clear(c.ev[:c.n])
		c.n = 0
		q.spare = append(q.spare, c)
	}
	clear(q.coarse[k])
	q.coarse[k] = q.coarse[k][:0]
}

// refill moves the next non-empty fine bucket into the empty heap, moving
// on to later epochs and eras as they run out; it reports whether there
// was any event left.
func (q *Queue) refill() bool {
	for len(q.h) == 0 {
		if q.inFine > 0 {
			for len(q.fine[q.cur]) == 0 {
				q.cur++
			}
			b := q.fine[q.cur]
			q.h = append(q.h, b...)
			q.inFine -= len(b)
			clear(b)
			q.fine[q.cur] = b[:0]
			q.cur++
			q.seal()
			q.heapify()
			continue
		}
		// The epoch is used up: the next one with events.
		if q.inCrs > 0 {
			q.ck++
			for len(q.coarse[q.ck]) == 0 {
				q.ck++
			}
		} else if len(q.far) > 0 {
			// The era is used up: start the next at the earliest event.
			t := q.far[0].At
			for _, e := range q.far[1:] {
				t = min(t, e.At)
			}
			if t >= calLimit { // too close to the end of Time: the heap alone
				q.h = append(q.h, q.far...)
				clear(q.far)
				q.far = q.far[:0]
				q.cal = false
				q.seal()
				q.heapify()
				continue
			}
			q.c0, q.ck = t, 0
			far := q.far
			q.far = q.far[:0]
			for _, e := range far {
				if k := (e.At - q.c0) >> q.spanShift(); k < nCoarse {
					q.toCoarse(int(k), e)
				} else {
					q.far = append(q.far, e) // writes only where far was already read
				}
			}
			clear(far[len(q.far):])
			for len(q.coarse[q.ck]) == 0 {
				q.ck++
			}
		} else {
			return false
		}
		q.e0, q.cur = q.c0+Time(q.ck)*q.span(), 0
		for _, c := range q.coarse[q.ck] {
			for _, e := range c.ev[:c.n] {
				d := (e.At - q.e0) >> q.ws
				q.fine[d] = append(q.fine[d], e)
			}
			q.inFine += c.n
		}
		q.release(q.ck)
	}
	return true
}

// tune starts the calendar when the heap is large, and keeps the fine
// bucket width at about perBucket times the mean time between events: at
// the start from the pending events (n events spread over [now, now+T)
// have a mean distance T/2 from now and a spacing T/n), later from the
// time between pops. A stretch with no time passing (many events at one
// instant) says nothing about the spacing and changes nothing.
func (q *Queue) tune() {
	pops, elapsed := q.pops, q.now-q.tuneAt
	q.pops, q.tuneAt, q.tuneN = 0, q.now, tuneEvery
	if q.now >= calLimit {
		return
	}
	if !q.cal {
		if n := len(q.h); n >= calMin {
			var sum float64
			for _, e := range q.h {
				sum += float64(e.At - q.now)
			}
			q.rebuild(Time(min(2*perBucket*sum/float64(n)/float64(n), 1<<40)))
		} else {
			q.tuneN = calCheck
		}
		return
	}
	if elapsed == 0 {
		return
	}
	w := elapsed / Time(pops) * perBucket
	if w > retuneFactor*q.w || w*retuneFactor < q.w {
		q.rebuild(w)
	}
}

// rebuild lays every pending event out again with fine bucket width w,
// the epoch and the era starting at the clock. The heap is left empty
// (refill fills it): every pending event is at or after the clock.
func (q *Queue) rebuild(w Time) {
	all := q.h
	for i, b := range q.fine {
		all = append(all, b...)
		clear(b)
		q.fine[i] = b[:0]
	}
	for k, cs := range q.coarse {
		for _, c := range cs {
			all = append(all, c.ev[:c.n]...)
		}
		q.release(k)
	}
	all = append(all, q.far...)
	clear(q.far)
	q.far = q.far[:0]
	if !q.cal {
		q.fine, q.coarse = make([][]Event, nFine), make([][]*chunk, nCoarse)
		q.cal = true
	}
	// The width is rounded to a power of two (up from 4/3 of one), so
	// that a bucket's index is a shift; the order of events does not
	// depend on it.
	u := uint64(max(w, 1))
	q.ws = uint(bits.Len64(u+u/2)) - 1
	// Guard the arithmetic: an epoch and an era must fit in a Time.
	for q.ws > 0 && Time(1)<<(q.ws+nFineLog) > 1<<52/nCoarse {
		q.ws--
	}
	q.w, q.e0, q.cur, q.c0, q.ck, q.inFine, q.inCrs = Time(1)<<q.ws, q.now, 0, q.now, 0, 0, 0
	for _, e := range all {
		q.place(e)
	}
	clear(all)
	q.h = all[:0]
	q.seal()
}

// heapify orders h as a heap.
func (q *Queue) heapify() {
	n := len(q.h)
	if n < 2 {
		return
	}
	for i := (n - 2) / 4; i >= 0; i-- {
		q.siftDown(i)
	}
}

// siftDown moves h[i] down to its place. The smallest of a node's four
// children (sentinels where it has fewer) is found by a tournament without branches
// (before gives 0 or 1, which selects an index arithmetically): which
// child is smallest is as good as random, and a mispredicted branch per
// comparison was most of the sift's cost.
func (q *Queue) siftDown(i int) {
	h := q.h
	n := len(h)
	if n > bigHeap {
		q.siftDownBig(i)
		return
	}
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		k := h[c : c+4 : c+4] // missing children are sentinels (seal)
		a := int(before(&k[1], &k[0]))
		b := 2 + int(before(&k[3], &k[2]))
		a += (b - a) & -int(before(&k[b], &k[a]))
		if !k[a].less(e) {
			break
		}
		h[i] = k[a]
		i = c + a
	}
	h[i] = e
}

// bigHeap is the size above which siftDown branches again: a heap that
// large is out of the caches (before the calendar starts, at a million
// clients), and a predicted branch lets the next level's load start
// before the comparison is known, which beats waiting for it.
const bigHeap = 1 << 15

// siftDownBig is siftDown for a large heap: the smallest child by
// comparisons that branch.
func (q *Queue) siftDownBig(i int) {
	h := q.h
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		k := h[c : c+4 : c+4] // missing children are sentinels (seal)
		m := 0
		for j := 1; j < 4; j++ {
			if k[j].less(k[m]) {
				m = j
			}
		}
		if !k[m].less(e) {
			break
		}
		h[i] = k[m]
		i = c + m
	}
	h[i] = e
}

// before is 1 if a comes before b in (At, Seq) order and 0 otherwise,
// computed without a branch: the borrow of the 128-bit subtraction
// (At, key)(a) − (At, key)(b), At's sign bit flipped so that it compares
// as unsigned.
func before(a, b *Event) uint64 {
	_, br := bits.Sub64(a.key, b.key, 0)
	_, br = bits.Sub64(uint64(a.At)^1<<63, uint64(b.At)^1<<63, br)
	return br
}

func (q *Queue) up(i int) {
	h := q.h
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// down places e, which replaces the root, at its position.
func (q *Queue) down(e Event) {
	q.h[0] = e
	q.siftDown(0)
}
