package explore

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Range is a numeric field of a scenario, by its --set path, and the
// interval [Lo, Hi] it is searched over. Unit is the text after the number
// in the bounds ("s", "ms", "/s" or nothing), written back after every
// value. Steps, when > 0, is the number of evenly spaced values asked for
// (PATH=a..b/steps).
type Range struct {
	Path   string
	Lo, Hi float64
	Unit   string
	Steps  int
	// Integer: only whole values (the field is an integer, e.g.
	// clients.retry.max_attempts).
	Integer bool
}

var numRe = regexp.MustCompile(`^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(.*)$`)

// ParseRange reads "PATH=a..b" or "PATH=a..b/steps"; a and b are numbers
// with the same unit suffix (61s..80s, 400/s..900/s, 1.1..4). flag names
// the option in error messages.
func ParseRange(flag, s string) (Range, error) {
	path, spec, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return Range{}, fmt.Errorf("%s %q: expected PATH=a..b[/steps], e.g. clients.throttle.k=1.1..4", flag, s)
	}
	r := Range{Path: path}
	spec = strings.TrimSpace(spec)
	if i := strings.LastIndex(spec, "/"); i >= 0 {
		if n, err := strconv.Atoi(spec[i+1:]); err == nil {
			if n < 1 {
				return Range{}, fmt.Errorf("%s %q: steps must be at least 1, got %d", flag, s, n)
			}
			r.Steps, spec = n, spec[:i]
		}
	}
	a, b, ok := strings.Cut(spec, "..")
	if !ok {
		return Range{}, fmt.Errorf("%s %q: expected a range a..b after %s=, got %q", flag, s, path, spec)
	}
	lo, ua, err := parseNum(strings.TrimSpace(a))
	if err != nil {
		return Range{}, fmt.Errorf("%s %q: lower bound: %w", flag, s, err)
	}
	hi, ub, err := parseNum(strings.TrimSpace(b))
	if err != nil {
		return Range{}, fmt.Errorf("%s %q: upper bound: %w", flag, s, err)
	}
	if ua != ub {
		return Range{}, fmt.Errorf("%s %q: the bounds have different units (%q and %q); write both the same way, e.g. 61s..80s", flag, s, ua, ub)
	}
	if !(hi > lo) {
		return Range{}, fmt.Errorf("%s %q: empty range: the upper bound must be above the lower bound", flag, s)
	}
	r.Lo, r.Hi, r.Unit = lo, hi, ua
	return r, nil
}

func parseNum(s string) (float64, string, error) {
	m := numRe.FindStringSubmatch(s)
	if m == nil {
		return 0, "", fmt.Errorf("expected a number with an optional unit (2, 1.5, 61s, 500ms, 400/s), got %q", s)
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, "", fmt.Errorf("expected a finite number, got %q", m[1])
	}
	return x, m[2], nil
}

// Value reads one value of the range's field, in its unit (as --rare-at
// gives them).
func (r Range) Value(s string) (float64, error) {
	x, u, err := parseNum(s)
	if err != nil {
		return 0, err
	}
	if u != r.Unit {
		return 0, fmt.Errorf("%q: expected a value in the range's unit %q", s, r.Unit)
	}
	return x, nil
}

// Format writes x as a --set value: the number, then the unit.
func (r Range) Format(x float64) string {
	if r.Integer {
		return strconv.FormatInt(int64(math.Round(x)), 10) + r.Unit
	}
	return strconv.FormatFloat(x, 'f', -1, 64) + r.Unit
}

// Set is the override "path=value" for x.
func (r Range) Set(x float64) string { return r.Path + "=" + r.Format(x) }

// Clamp rounds x to the range's resolution (whole numbers for integer
// ranges, else 10 significant digits, so that values that differ only by
// floating-point noise are one candidate) and keeps it inside [Lo, Hi].
func (r Range) Clamp(x float64) float64 {
	x = math.Min(math.Max(x, r.Lo), r.Hi)
	if r.Integer {
		return math.Round(x)
	}
	if y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 10, 64), 64); y >= r.Lo && y <= r.Hi {
		return y
	}
	return x
}

// Values is n evenly spaced values from Lo to Hi (n = 1: the middle);
// integer ranges give whole numbers without repeats.
func (r Range) Values(n int) []float64 {
	if n <= 1 {
		return []float64{r.Clamp((r.Lo + r.Hi) / 2)}
	}
	var out []float64
	for i := 0; i < n; i++ {
		x := r.Clamp(r.Lo + (r.Hi-r.Lo)*float64(i)/float64(n-1))
		if len(out) == 0 || x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// Short writes x for people: 6 significant digits, then the unit.
func (r Range) Short(x float64) string {
	return strconv.FormatFloat(x, 'g', 6, 64) + r.Unit
}
