package admission

import (
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func backend(disc scenario.QueueDiscipline, qlimit int, rejCost, backlog int64) scenario.Backend {
	be := scenario.Default().Backend
	be.Queue.Limit, be.Queue.Discipline, be.Queue.LIFOThreshold = qlimit, disc, 2
	be.RejectCost, be.AcceptBacklog = scenario.Duration(rejCost), int(backlog)
	return be
}

// An arrival is served while a worker is free, queued while the queue has
// room, and otherwise refused: free, on a free worker, in the backlog,
// or unanswered when the backlog is full.
func TestArrive(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rejCost  int64
		overhead int64
		l        Load
		want     Verdict
	}{
		{"a worker free", 0, 0, Load{Busy: 1, Limit: 2}, Serve},
		{"queue room", 0, 0, Load{Busy: 2, Limit: 2, Queued: 2}, Queue},
		{"full, free rejection", 0, 0, Load{Busy: 2, Limit: 2, Queued: 3}, Reject},
		{"full, backlog room", 1e6, 0, Load{Busy: 2, Limit: 2, Queued: 3}, Reject},
		{"full, backlog full", 1e6, 1, Load{Busy: 2, Limit: 2, Queued: 3}, Unanswered},
		{"no queue, cut capacity", 1e6, 0, Load{Busy: 0, Limit: 0, Queued: 3}, Reject},
	} {
		a, err := New(backend(scenario.QueueFIFO, 3, tt.rejCost, 1), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		a.Overhead = tt.overhead
		if got, shed := a.Arrive(0, tt.l, 0); got != tt.want || shed {
			t.Errorf("%s: got %d (shed %v), want %d", tt.name, got, shed, tt.want)
		}
	}
	// A refusal with a free worker puts the rejection's work on it.
	a, _ := New(backend(scenario.QueueFIFO, 0, 1e6, 1), 0, nil)
	if got := a.Refuse(Load{Busy: 0, Limit: 1}); got != RejectWork {
		t.Errorf("refusal with a free worker: got %d, want RejectWork", got)
	}
}

// A free worker takes rejection work first, then the queue in its
// discipline's order; it idles with nothing to do or when capacity was
// cut below the workers busy.
func TestNext(t *testing.T) {
	for _, tt := range []struct {
		disc     scenario.QueueDiscipline
		overhead int64
		l        Load
		want     Take
	}{
		{scenario.QueueFIFO, 0, Load{Busy: 1, Limit: 1, Queued: 3}, TakeHead},
		{scenario.QueueFIFO, 1, Load{Busy: 1, Limit: 1, Queued: 3}, TakeReject},
		{scenario.QueueFIFO, 0, Load{Busy: 1, Limit: 1}, Idle},
		{scenario.QueueFIFO, 1, Load{Busy: 2, Limit: 1, Queued: 3}, Cut},
		{scenario.QueueLIFO, 0, Load{Busy: 1, Limit: 1, Queued: 1}, TakeTail},
		{scenario.QueueAdaptiveLIFO, 0, Load{Busy: 1, Limit: 1, Queued: 2}, TakeHead}, // threshold 2
		{scenario.QueueAdaptiveLIFO, 0, Load{Busy: 1, Limit: 1, Queued: 3}, TakeTail},
		{scenario.QueueCoDel, 0, Load{Busy: 1, Limit: 1, Queued: 3}, TakeHead},
	} {
		be := backend(tt.disc, 5, 0, 0)
		be.Queue.CoDelTarget, be.Queue.CoDelInterval = 5e6, 100e6
		a, err := New(be, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		a.Overhead = tt.overhead
		if got := a.Next(tt.l); got != tt.want {
			t.Errorf("%s, overhead %d, %+v: got %d, want %d", tt.disc, tt.overhead, tt.l, got, tt.want)
		}
	}
}

// The queue timeout rejects a job that waited longer than it.
func TestExpire(t *testing.T) {
	be := backend(scenario.QueueFIFO, 5, 0, 0)
	be.Queue.Timeout = scenario.Duration(50e6)
	a, _ := New(be, 0, nil)
	if got := a.Expire(1e9, 50e6, 0); got != Keep {
		t.Errorf("waited exactly the timeout: got %d, want Keep", got)
	}
	if got := a.Expire(1e9, 50e6+1, 0); got != TimedOut {
		t.Errorf("waited longer: got %d, want TimedOut", got)
	}
}

// Degradation answers a request that starts service past the level with
// a cheaper response: more than when_queue_above still queued, or more
// than when_utilization_above of the workers busy (counting its own).
func TestDegrade(t *testing.T) {
	q, u := 2, 0.75
	for _, tt := range []struct {
		name string
		d    scenario.Degrade
		l    Load
		want bool
	}{
		{"queue at the level", scenario.Degrade{WhenQueueAbove: &q}, Load{Busy: 4, Limit: 4, Queued: 2}, false},
		{"queue past the level", scenario.Degrade{WhenQueueAbove: &q}, Load{Busy: 4, Limit: 4, Queued: 3}, true},
		{"utilisation at the level", scenario.Degrade{WhenUtilizationAbove: &u}, Load{Busy: 3, Limit: 4}, false},
		{"utilisation past the level", scenario.Degrade{WhenUtilizationAbove: &u}, Load{Busy: 4, Limit: 4}, true},
		{"no workers", scenario.Degrade{WhenUtilizationAbove: &u}, Load{Busy: 0, Limit: 0}, false},
	} {
		be := backend(scenario.QueueFIFO, 10, 0, 0)
		tt.d.ServiceFraction = 0.25
		be.Degrade = &tt.d
		a, err := New(be, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Degrade(tt.l); got != tt.want || a.DegradeFraction() != 0.25 {
			t.Errorf("%s: got %v (fraction %g), want %v (0.25)", tt.name, got, a.DegradeFraction(), tt.want)
		}
	}
}
