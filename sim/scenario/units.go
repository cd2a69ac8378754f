package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a span of virtual time in nanoseconds. In YAML and JSON it is
// a string with a unit: "30s", "2m", "1h30m", "250ms".
type Duration int64

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return float64(d) / 1e9 }

func (d Duration) String() string {
	if d == 0 {
		return "0s"
	}
	units := []struct {
		n    Duration
		name string
	}{{Duration(time.Hour), "h"}, {Duration(time.Minute), "m"}, {Duration(time.Second), "s"},
		{Duration(time.Millisecond), "ms"}, {Duration(time.Microsecond), "us"}}
	for _, u := range units {
		if d%u.n == 0 {
			return strconv.FormatInt(int64(d/u.n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

func (d *Duration) unmarshalScalar(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return fmt.Errorf("expected a duration with a unit, e.g. 30s or 2m, got an empty value")
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && s != "0" {
		return fmt.Errorf("duration %q has no unit: write e.g. %ss or %sms", s, s, s)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("expected a duration with a unit (ns, us, ms, s, m, h), e.g. 30s or 2m, got %q", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as its YAML string form.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(d.String())), nil }

// Rate is a rate in events per second. In YAML it is written with a unit of
// time: "10/s", "600/m", "36000/h", "5/100ms".
type Rate float64

func (r Rate) String() string {
	return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s"
}

func (r *Rate) unmarshalScalar(s string) error {
	s = strings.TrimSpace(s)
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return fmt.Errorf("rate %q has no unit of time: write e.g. %s/s or %s/m", s, s, s)
		}
		return fmt.Errorf("expected a rate such as 10/s, 600/m or 5/100ms, got %q", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return fmt.Errorf("expected a rate such as 10/s, got %q: %q is not a number", s, num)
	}
	per = strings.TrimSpace(per)
	switch per {
	case "s", "ms", "us", "ns", "m", "h":
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return fmt.Errorf("expected a rate such as 10/s, 600/m or 5/100ms, got %q: %q is not a unit of time", s, per)
	}
	v := n / d.Seconds()
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("rate %q is too large to represent", s)
	}
	*r = Rate(v)
	return nil
}

// MarshalJSON writes the rate as a string "N/s".
func (r Rate) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(r.String())), nil }

// UnmarshalJSON reads the string form written by MarshalJSON, so result
// files can be read back.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("expected a duration string such as \"30s\", got %s", b)
	}
	return d.unmarshalScalar(s)
}

// UnmarshalJSON reads the string form written by MarshalJSON.
func (r *Rate) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("expected a rate string such as \"10/s\", got %s", b)
	}
	return r.unmarshalScalar(s)
}
