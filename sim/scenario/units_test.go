package scenario

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDurationParse(t *testing.T) {
	valid := []struct {
		in   string
		want time.Duration
	}{
		{"30s", 30 * time.Second},
		{"2m", 2 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"0", 0},
		{"0s", 0},
		{"1.5s", 1500 * time.Millisecond},
		{"10us", 10 * time.Microsecond},
		{"7ns", 7},
		{"  45s ", 45 * time.Second},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.in, func(t *testing.T) {
			var d Duration
			if err := d.unmarshalScalar(tc.in); err != nil {
				t.Fatalf("unmarshalScalar(%q): got error %v, want nil", tc.in, err)
			}
			if time.Duration(d) != tc.want {
				t.Errorf("unmarshalScalar(%q): got %v, want %v", tc.in, time.Duration(d), tc.want)
			}
		})
	}

	invalid := []struct {
		in      string
		wantMsg []string // substrings of the error message
	}{
		{"30", []string{"no unit", "30s"}},
		{"10", []string{"no unit", "10s"}},
		{"1.5", []string{"no unit"}},
		{"abc", []string{"unit", `"abc"`}},
		{"", []string{"empty"}},
		{"   ", []string{"empty"}},
		{"30 seconds", []string{"unit"}},
		{"s", []string{"unit"}},
		{"10/s", []string{"duration with a unit"}},
	}
	for _, tc := range invalid {
		t.Run("invalid/"+tc.in, func(t *testing.T) {
			d := Duration(42)
			err := d.unmarshalScalar(tc.in)
			if err == nil {
				t.Fatalf("unmarshalScalar(%q): got %v and no error, want an error", tc.in, time.Duration(d))
			}
			for _, s := range tc.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("unmarshalScalar(%q): got error %q, want it to mention %q", tc.in, err, s)
				}
			}
			if d != 42 {
				t.Errorf("unmarshalScalar(%q) failed but changed the value: got %d, want 42", tc.in, d)
			}
		})
	}
}

func TestRateParse(t *testing.T) {
	valid := []struct {
		in   string
		want float64 // per second
	}{
		{"10/s", 10},
		{"600/m", 10},
		{"5/100ms", 50},
		{"36000/h", 10},
		{"0.5/s", 0.5},
		{"1/2s", 0.5},
		{"3000/1m", 50},
		{"1e3/s", 1000},
		{"0/s", 0},
		{" 10 / s ", 10},
		{"1/us", 1e6},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.in, func(t *testing.T) {
			var r Rate
			if err := r.unmarshalScalar(tc.in); err != nil {
				t.Fatalf("unmarshalScalar(%q): got error %v, want nil", tc.in, err)
			}
			if math.Abs(float64(r)-tc.want) > 1e-9*math.Max(1, tc.want) {
				t.Errorf("unmarshalScalar(%q): got %v/s, want %v/s", tc.in, float64(r), tc.want)
			}
		})
	}

	invalid := []struct {
		in      string
		wantMsg []string
	}{
		{"10", []string{"no unit of time", "10/s"}},
		{"2.5", []string{"no unit of time"}},
		{"abc", []string{`"abc"`, "10/s"}},
		{"", []string{"rate"}},
		{"10/parsec", []string{`"parsec"`, "not a unit of time"}},
		{"NaN/s", []string{"not a number"}},
		{"Inf/s", []string{"not a number"}},
		{"-Inf/s", []string{"not a number"}},
		{"ten/s", []string{"not a number"}},
		{"/s", []string{"not a number"}},
		{"10/", []string{"not a unit of time"}},
		{"10/0s", []string{"not a unit of time"}},
		{"10/-1s", []string{"not a unit of time"}},
		{"10/s/s", []string{"not a unit of time"}},
	}
	for _, tc := range invalid {
		t.Run("invalid/"+tc.in, func(t *testing.T) {
			r := Rate(42)
			err := r.unmarshalScalar(tc.in)
			if err == nil {
				t.Fatalf("unmarshalScalar(%q): got %v and no error, want an error", tc.in, r)
			}
			for _, s := range tc.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("unmarshalScalar(%q): got error %q, want it to mention %q", tc.in, err, s)
				}
			}
			if r != 42 {
				t.Errorf("unmarshalScalar(%q) failed but changed the value: got %v, want 42", tc.in, float64(r))
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		d    Duration
		want string
	}{
		{0, "0s"},
		{1, "1ns"},
		{Duration(time.Microsecond), "1us"},
		{Duration(1001 * time.Microsecond), "1001us"},
		{Duration(250 * time.Millisecond), "250ms"},
		{Duration(1500 * time.Millisecond), "1500ms"},
		{Duration(30 * time.Second), "30s"},
		{Duration(90 * time.Second), "90s"},
		{Duration(2 * time.Minute), "2m"},
		{Duration(90 * time.Minute), "90m"},
		{Duration(time.Hour), "1h"},
		{Duration(36 * time.Hour), "36h"},
		{Duration(-30 * time.Second), "-30s"},
		{Duration(time.Second + 1), "1000000001ns"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("Duration(%d).String(): got %q, want %q", int64(tc.d), got, tc.want)
			}
		})
	}
}

// TestDurationRoundTrip checks that String gives back a string the loader
// reads as the same duration.
func TestDurationRoundTrip(t *testing.T) {
	values := []Duration{
		0, 1, 999, Duration(time.Microsecond), Duration(time.Millisecond), Duration(250 * time.Millisecond),
		Duration(time.Second), Duration(30 * time.Second), Duration(61 * time.Second), Duration(2 * time.Minute),
		Duration(90 * time.Minute), Duration(time.Hour), Duration(25*time.Hour + time.Millisecond),
		Duration(-time.Second), Duration(-1), Duration(math.MaxInt64), Duration(math.MaxInt64 - 1),
		Duration(2562047 * time.Hour),
	}
	for _, d := range values {
		s := d.String()
		t.Run(s, func(t *testing.T) {
			var back Duration
			if err := back.unmarshalScalar(s); err != nil {
				t.Fatalf("unmarshalScalar(%q) (from Duration(%d).String()): got error %v, want nil", s, int64(d), err)
			}
			if back != d {
				t.Errorf("unmarshalScalar(Duration(%d).String() = %q): got %d, want %d", int64(d), s, int64(back), int64(d))
			}
		})
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		r    Rate
		want string
	}{
		{10, "10/s"},
		{0.5, "0.5/s"},
		{0, "0/s"},
		{1e6, "1e+06/s"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("Rate(%v).String(): got %q, want %q", float64(tc.r), got, tc.want)
			}
			var back Rate
			if err := back.unmarshalScalar(tc.r.String()); err != nil {
				t.Fatalf("unmarshalScalar(%q): got error %v, want nil", tc.r.String(), err)
			}
			if back != tc.r {
				t.Errorf("round trip of %q: got %v, want %v", tc.r.String(), float64(back), float64(tc.r))
			}
		})
	}
}

func TestUnitsMarshalJSON(t *testing.T) {
	v := struct {
		D Duration `json:"d"`
		R Rate     `json:"r"`
	}{Duration(90 * time.Second), 600}
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: got error %v, want nil", err)
	}
	if want := `{"d":"90s","r":"600/s"}`; string(got) != want {
		t.Errorf("json.Marshal: got %s, want %s", got, want)
	}
}
