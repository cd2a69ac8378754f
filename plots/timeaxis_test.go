package plots

import "testing"

// A live run's charts are on the wall clock, and say so.
func TestTimeAxis(t *testing.T) {
	for _, tt := range []struct {
		wall bool
		want string
	}{{false, "simulated time (s)"}, {true, "wall time (s), a live run"}} {
		if got := (Input{WallClock: tt.wall}).timeAxis(); got != tt.want {
			t.Errorf("WallClock %v: %q, want %q", tt.wall, got, tt.want)
		}
	}
}
