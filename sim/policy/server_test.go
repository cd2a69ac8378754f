package policy

import (
	"errors"
	"math"
	"testing"
)

// CoDel's drop schedule under a persistent standing queue
// (overload-control.md §3.2 and §7.8): the first drop comes one interval
// after the sojourn first exceeds the target, the next ones 100, 70.7,
// 57.7, 50, 44.7, 40.8, 37.8, 35.4 ms apart; a request below the target
// stops dropping, and so does a queue of one.
func TestCoDelSchedule(t *testing.T) {
	const ms = int64(1e6)
	c, _ := NewCoDel(5*ms, 100*ms)
	var drops []int64
	for now := int64(0); now <= 600*ms; now += ms / 10 { // a request taken every 0.1 ms, each having waited 10 ms
		if c.Drop(now, 10*ms, 50) {
			drops = append(drops, now)
		}
	}
	want := []float64{100, 200, 270.7, 328.4, 378.4, 423.2, 464.0, 501.8, 537.1, 570.4}
	if len(drops) < len(want) {
		t.Fatalf("%d drops in 600 ms, want at least %d: %v", len(drops), len(want), drops)
	}
	for i, w := range want {
		// The requests come every 0.1 ms: a drop falls on the first one at
		// or after its scheduled time.
		if got := float64(drops[i]) / float64(ms); got < w-0.05 || got > w+0.15 {
			t.Errorf("drop %d at %.1f ms, want %.1f ms", i, got, w)
		}
	}
	if c.Drop(700*ms, 1*ms, 50) || c.dropping {
		t.Error("a request below the target was dropped or dropping went on")
	}
	d, _ := NewCoDel(5*ms, 100*ms)
	for now := int64(0); now <= 300*ms; now += ms {
		if d.Drop(now, 10*ms, 1) {
			t.Fatalf("dropped at %d ms with one request left", now/ms)
		}
	}
}

// The token bucket admits at most burst + rate·t over any window, and in
// the long run exactly its rate when asked more often.
func TestTokenBucket(t *testing.T) {
	b, _ := NewTokenBucket(100, 20)
	var admitted []int64
	for now := int64(0); now < 10e9; now += 1e6 { // asked 1,000 times a second
		if b.Allow(now) {
			admitted = append(admitted, now)
		}
	}
	if n := len(admitted); n != 20+999 {
		// 20 from the full bucket, then what refills by the last request at
		// 9.999 s: floor(100/s × 9.999 s) = 999.
		t.Errorf("admitted %d in 10 s, want %d", n, 20+999)
	}
	for i := range admitted {
		for j := i; j < len(admitted); j += 97 {
			window := float64(admitted[j]-admitted[i]) / 1e9
			if float64(j-i+1) > 20+100*window+1e-9 {
				t.Fatalf("%d admitted in %.3f s: more than burst + rate·t = %.1f", j-i+1, window, 20+100*window)
			}
		}
	}
	if math.IsNaN(b.tokens) {
		t.Fatal("NaN tokens")
	}
}

// The server queue policies' constructors apply defaults to zero settings
// and refuse bad ones with an error, never a panic.
func TestServerQueueConstructors(t *testing.T) {
	c, err := NewCoDel(0, 0)
	if err != nil || c.Target != 5e6 || c.Interval != 100e6 {
		t.Errorf("NewCoDel(0, 0): got %+v, %v; want the RFC's 5 ms and 100 ms", c, err)
	}
	if _, err := NewCoDel(-1, 0); !errors.Is(err, ErrServerQueueSettings) {
		t.Errorf("NewCoDel(-1, 0): got %v, want ErrServerQueueSettings", err)
	}
	b, err := NewTokenBucket(10, 0)
	if err != nil || b.Burst != 1 {
		t.Errorf("NewTokenBucket(10, 0): got %+v, %v; want a burst of 1", b, err)
	}
	for _, tt := range []struct {
		rate  float64
		burst int
	}{{0, 1}, {-1, 1}, {10, -1}} {
		if _, err := NewTokenBucket(tt.rate, tt.burst); !errors.Is(err, ErrServerQueueSettings) {
			t.Errorf("NewTokenBucket(%g, %d): got %v, want ErrServerQueueSettings", tt.rate, tt.burst, err)
		}
	}
}
