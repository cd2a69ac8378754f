package engine

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestQueueOrdersByTimeThenInsertion(t *testing.T) {
	var q Queue
	// Table: (at, kind) in insertion order; the want order is by time and,
	// within one instant, by insertion.
	in := []struct {
		at   Time
		kind uint8
	}{{5, 1}, {3, 2}, {5, 3}, {1, 4}, {3, 5}, {5, 6}, {0, 7}}
	for i, e := range in {
		q.Schedule(e.at, e.kind, uint32(i), 0)
	}
	want := []uint8{7, 4, 2, 5, 1, 3, 6}
	var got []uint8
	for {
		e, ok := q.Pop()
		if !ok {
			break
		}
		if e.At < q.Now() {
			t.Fatalf("clock ran backwards")
		}
		got = append(got, e.Kind())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got order %v, want %v", got, want)
	}
}

func TestQueueMatchesSortedOrder(t *testing.T) {
	// Random interleaving of pushes and pops against a reference: a sorted
	// slice keyed by (time, sequence).
	r := rand.New(rand.NewPCG(1, 2))
	var q Queue
	type ref struct {
		at  Time
		seq uint64
	}
	var pending []ref
	for step := 0; step < 20000; step++ {
		if len(pending) == 0 || r.IntN(3) > 0 {
			at := q.Now() + Time(r.IntN(50))
			pending = append(pending, ref{at, q.Scheduled()})
			q.Schedule(at, uint8(step), 0, 0)
			continue
		}
		slices.SortFunc(pending, func(a, b ref) int {
			if a.at != b.at {
				if a.at < b.at {
					return -1
				}
				return 1
			}
			if a.seq < b.seq {
				return -1
			}
			return 1
		})
		e, _ := q.Pop()
		if e.At != pending[0].at || e.Seq() != pending[0].seq {
			t.Fatalf("step %d: got (%d,%d), want (%d,%d)", step, e.At, e.Seq(), pending[0].at, pending[0].seq)
		}
		pending = pending[1:]
	}
}

func TestScheduleInPastPanics(t *testing.T) {
	var q Queue
	q.Schedule(10, 0, 0, 0)
	q.Pop()
	defer func() {
		if recover() == nil {
			t.Fatal("scheduling before Now did not panic")
		}
	}()
	q.Schedule(9, 0, 0, 0)
}

func BenchmarkQueueHoldModel(b *testing.B) {
	// The classic "hold" benchmark: a steady population of n events, each
	// pop followed by one push a random distance ahead.
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			q := NewQueue(n)
			for i := 0; i < n; i++ {
				q.Schedule(Time(r.Int64N(int64(Second))), 0, uint32(i), 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, _ := q.Pop()
				q.Schedule(e.At+Time(r.Int64N(int64(Second))), 0, e.ID, 0)
			}
		})
	}
}

// refHeap is a plain binary heap on (At, Seq): the reference order.
type refHeap []Event

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h refHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(Event)) }
func (h *refHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// TestCalendarKeepsTheHeapOrder drives the queue well past the size that
// starts its calendar, through phases that retune the bucket width (the
// time scale changes 1000-fold), empty the ring (jumps over long gaps),
// and schedule many events at one instant (ties), and checks every pop
// against a plain binary heap on (At, Seq).
func TestCalendarKeepsTheHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	q := NewQueue(50_000)
	var ref refHeap
	sched := func(at Time, id uint32) {
		e := Event{At: at, key: q.Scheduled()<<8 | uint64(id%7), ID: id}
		q.Schedule(at, uint8(id%7), id, 0)
		heap.Push(&ref, e)
	}
	for i := 0; i < 20_000; i++ {
		sched(Time(r.Int64N(int64(Second))), uint32(i))
	}
	id := uint32(20_000)
	usedCalendar := false
	scale := int64(Second)
	for step := 0; step < 1_500_000; step++ {
		switch step {
		case 300_000:
			scale = int64(Millisecond) // events 1000x denser: the width shrinks
		case 700_000:
			scale = int64(1000 * Second) // 1000x sparser, beyond the ring: jumps
		case 1_000_000:
			scale = int64(Second)
		}
		e, ok := q.Pop()
		want := heap.Pop(&ref).(Event)
		if !ok || e != want {
			t.Fatalf("step %d: popped %+v (ok %v), want %+v", step, e, ok, want)
		}
		usedCalendar = usedCalendar || q.cal
		n := 1
		switch x := r.IntN(20); {
		case x == 0:
			n = 0
		case x == 1:
			n = 2
		}
		for k := 0; k < n; k++ {
			var d Time
			switch x := r.IntN(10); {
			case x == 0: // a tie with the event just popped
			case x == 1: // far ahead
				d = Time(r.Int64N(100 * scale))
			case x == 2: // a tie with other events on a coarse grid
				d = Time(r.Int64N(4)) * Time(scale)
			default:
				d = Time(r.Int64N(scale))
			}
			sched(e.At+d, id)
			id++
		}
		if q.Len() != ref.Len() {
			t.Fatalf("step %d: Len %d, want %d", step, q.Len(), ref.Len())
		}
	}
	if !usedCalendar {
		t.Fatal("the calendar never started: the test does not test it")
	}
	for ref.Len() > 0 {
		e, _ := q.Pop()
		if want := heap.Pop(&ref).(Event); e != want {
			t.Fatalf("draining: popped %+v, want %+v", e, want)
		}
	}
	if _, ok := q.Pop(); ok {
		t.Fatal("the queue has events the reference does not")
	}
}

// Events near the end of Time (found by review: the calendar's epoch
// arithmetic overflowed and refill ran off its bucket array): the calendar
// steps aside and the order is still the heap's.
func TestCalendarNearTheEndOfTime(t *testing.T) {
	q := &Queue{}
	var ref refHeap
	sched := func(at Time, id uint32) {
		heap.Push(&ref, Event{At: at, key: q.Scheduled()<<8 | 1, ID: id})
		q.Schedule(at, 1, id, 0)
	}
	for i := 0; i < 70_000; i++ {
		sched(Time(i), uint32(i))
	}
	for i := 0; i < 600; i++ {
		sched(math.MaxInt64-Time(i), uint32(i))
	}
	check := func(step int) Event {
		e, ok := q.Pop()
		want := heap.Pop(&ref).(Event)
		if !ok || e != want {
			t.Fatalf("pop %d: got %+v (ok %v), want %+v", step, e, ok, want)
		}
		return e
	}
	for i := 0; i < 70_000; i++ {
		check(i)
	}
	for k := 0; k < 5_000; k++ {
		e := check(70_000 + k)
		sched(e.At, uint32(k)) // ties at the very end of Time
	}
	for ref.Len() > 0 {
		check(-1)
	}
}

// TestLoops checks the event loops: Step stops before the horizon and
// leaves the event there in the queue, RunUntil and Run hand the events
// over in order and stop when the handler says so, and a handler may
// schedule more events.
func TestLoops(t *testing.T) {
	fill := func() *Queue {
		q := NewQueue(4)
		for i, at := range []Time{30, 10, 20, 40} {
			q.Schedule(at, 1, uint32(i), 0)
		}
		return q
	}
	tests := []struct {
		name      string
		run       func(q *Queue, h func(Event) bool) uint64
		stopAt    uint32 // the handler returns false on this ID (99: never)
		want      []Time
		wantLeft  int
		wantCount uint64
	}{
		{"RunUntil 35", func(q *Queue, h func(Event) bool) uint64 { return q.RunUntil(35, h) }, 99, []Time{10, 20, 25, 30}, 1, 4},
		{"RunUntil stops", func(q *Queue, h func(Event) bool) uint64 { return q.RunUntil(35, h) }, 2, []Time{10, 20}, 3, 2},
		{"Run", func(q *Queue, h func(Event) bool) uint64 { return q.Run(h) }, 99, []Time{10, 20, 25, 30, 40}, 0, 5},
		{"Run stops", func(q *Queue, h func(Event) bool) uint64 { return q.Run(h) }, 0, []Time{10, 20, 25, 30}, 1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := fill()
			var got []Time
			n := tt.run(q, func(e Event) bool {
				got = append(got, e.At)
				if e.At == 20 && e.Kind() == 1 {
					q.Schedule(25, 2, 7, 0) // scheduled by a handler
				}
				return e.ID != tt.stopAt
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("got times %v, want %v", got, tt.want)
			}
			if n != tt.wantCount {
				t.Errorf("got %d events handled, want %d", n, tt.wantCount)
			}
			if l := q.Len(); l != tt.wantLeft {
				t.Errorf("got %d events left, want %d", l, tt.wantLeft)
			}
		})
	}
	// Step: the event at the horizon stays, and the clock does not move to it.
	q := fill()
	for _, want := range []Time{10, 20} {
		e, ok := q.Step(30)
		if !ok || e.At != want {
			t.Fatalf("got Step (%v, %v), want (%v, true)", e.At, ok, want)
		}
	}
	if e, ok := q.Step(30); ok {
		t.Fatalf("got Step (%v, true) at the horizon, want false", e.At)
	}
	if q.Now() != 20 || q.Len() != 2 {
		t.Errorf("got clock %v and %d left, want 20 and 2", q.Now(), q.Len())
	}
	if e, ok := q.Peek(); !ok || e.At != 30 {
		t.Errorf("got Peek (%v, %v), want (30, true)", e.At, ok)
	}
}

// TestBigHeapKeepsTheOrder fills a queue past bigHeap before its calendar
// starts (NewQueue waits tuneEvery pops), so that the branching sift of
// large heaps runs, and checks every pop against the sorted order.
func TestBigHeapKeepsTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := bigHeap + bigHeap/2
	q := NewQueue(n)
	want := make([]Event, 0, n)
	for i := range n {
		at := Time(r.Int64N(1000)) // many ties: the sequence decides
		q.Schedule(at, 1, uint32(i), 0)
		want = append(want, Event{At: at, ID: uint32(i)})
	}
	slices.SortStableFunc(want, func(a, b Event) int { return int(a.At - b.At) })
	for i, w := range want {
		e, ok := q.Pop()
		if !ok || e.At != w.At || e.ID != w.ID {
			t.Fatalf("pop %d: got (%v, %d, %v), want (%v, %d, true)", i, e.At, e.ID, ok, w.At, w.ID)
		}
	}
}
