package engine

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

// Queue is a 4-ary min-heap of events with a virtual clock. The zero value is
// ready to use.
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
}

// NewQueue returns a queue whose backing array starts with room for n events.
func NewQueue(n int) *Queue { return &Queue{h: make([]Event, 0, n)} }

// Now is the time of the event most recently popped (0 before the first).
func (q *Queue) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue) Len() int {
	q.settle()
	return len(q.h)
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
	if len(q.h) == 0 {
		return Event{}, false
	}
	return q.h[0], true
}

// Pop removes the next event, advances the clock to its time and returns
// it. ok is false when the queue is empty.
func (q *Queue) Pop() (e Event, ok bool) {
	q.settle()
	if len(q.h) == 0 {
		return Event{}, false
	}
	e = q.h[0]
	q.pending = true
	q.now = e.At
	return e, true
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
	h := q.h
	n := len(h)
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := c + 4
		if end > n {
			end = n
		}
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
