package engine

import (
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
