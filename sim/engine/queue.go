package engine

import "math"

// Time is virtual time: nanoseconds since the start of the scenario.
type Time = int64

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
	w      Time       // fine bucket width
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
	tuneAt Time   // clock at the last tuning
}

// Calendar tuning: the calendar starts once the heap holds calMin events;
// the bucket width is retuned every tuneEvery pops, when the mean time
// between pops has changed by more than retuneFactor.
const (
	nFine        = 1024
	nCoarse      = 1024
	calMin       = 512
	tuneEvery    = 1 << 16
	perBucket    = 8
	retuneFactor = 2
	// calLimit: the calendar's epochs and eras must fit below the end of
	// Time (an era spans at most 2^52 ns). Events at or after it are kept
	// in the heap alone: the calendar does not start or restart once the
	// clock has reached it, and stops when only such events are left.
	calLimit = math.MaxInt64 - 1<<53
)

// NewQueue returns a queue whose backing array starts with room for n events.
func NewQueue(n int) *Queue { return &Queue{h: make([]Event, 0, n)} }

// Now is the time of the event most recently popped (0 before the first).
func (q *Queue) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue) Len() int {
	q.settle()
	return len(q.h) + q.inFine + q.inCrs + len(q.far)
}

// settle removes a popped root that nothing replaced.
func (q *Queue) settle() {
	if !q.pending {
		return
	}
	q.pending = false
	n := len(q.h)
	last := q.h[n-1]
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
	q.h = append(q.h, e)
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
	if q.pops++; q.pops >= tuneEvery {
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

// edge is where the heap's events end: e0 + cur·w.
func (q *Queue) edge() Time { return q.e0 + Time(q.cur)*q.w }

// span is the length of an epoch, F.
func (q *Queue) span() Time { return nFine * q.w }

// place puts an event at or after edge into its fine or coarse bucket, or
// the overflow.
func (q *Queue) place(e Event) {
	if d := (e.At - q.e0) / q.w; d < nFine {
		q.fine[d] = append(q.fine[d], e)
		q.inFine++
		return
	}
	if k := (e.At - q.c0) / q.span(); k < nCoarse {
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
				q.heapify()
				continue
			}
			q.c0, q.ck = t, 0
			far := q.far
			q.far = q.far[:0]
			for _, e := range far {
				if k := (e.At - q.c0) / q.span(); k < nCoarse {
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
				d := (e.At - q.e0) / q.w
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
	q.pops, q.tuneAt = 0, q.now
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
	q.w, q.e0, q.cur, q.c0, q.ck, q.inFine, q.inCrs = max(w, 1), q.now, 0, q.now, 0, 0, 0
	// Guard the arithmetic: an epoch and an era must fit in a Time.
	for q.span() > 1<<52/nCoarse {
		q.w /= 2
	}
	for _, e := range all {
		q.place(e)
	}
	clear(all)
	q.h = all[:0]
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

// siftDown moves h[i] down to its place.
func (q *Queue) siftDown(i int) {
	h := q.h
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h[j].less(h[m]) {
				m = j
			}
		}
		if !h[m].less(e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
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
