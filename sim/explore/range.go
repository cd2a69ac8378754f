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
// (PATH=a..b/steps). Step, when > 0, is the spacing of the values a search
// may try (PATH=a..b:step): tune evaluates only multiples of Step.
type Range struct {
	Path   string
	Lo, Hi float64
	Unit   string
	Steps  int
	Step   float64 `json:",omitempty"`
	// Integer: only whole values (the field is an integer, e.g.
	// clients.retry.max_attempts).
	Integer bool
}

var numRe = regexp.MustCompile(`^([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(.*)$`)

// ParseRange reads "PATH=a..b", "PATH=a..b/steps" or "PATH=a..b:step"; a
// and b are numbers with the same unit suffix (61s..80s, 400/s..900/s,
// 1.1..4), and step a number above 0 and at most b − a, in that unit or
// without one (1s..2s:0.1s, 1..4:0.1). flag names the option in error
// messages.
func ParseRange(flag, s string) (Range, error) {
	path, spec, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return Range{}, fmt.Errorf("%s %q: expected PATH=a..b[/steps] or PATH=a..b:step, e.g. clients.throttle.k=1.1..4", flag, s)
	}
	r := Range{Path: path}
	spec = strings.TrimSpace(spec)
	spec, stepText, hasStep := strings.Cut(spec, ":")
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
	if hasStep {
		if r.Steps != 0 {
			return Range{}, fmt.Errorf("%s %q: give a number of steps (/steps) or a step (:step), not both", flag, s)
		}
		st, us, err := parseNum(strings.TrimSpace(stepText))
		if err != nil {
			return Range{}, fmt.Errorf("%s %q: step: %w", flag, s, err)
		}
		if us != "" && us != ua {
			return Range{}, fmt.Errorf("%s %q: the step's unit %q is not the bounds' %q; write it the same way or without a unit", flag, s, us, ua)
		}
		if !(st > 0) {
			return Range{}, fmt.Errorf("%s %q: the step must be above 0, got %g", flag, s, st)
		}
		if st > hi-lo {
			return Range{}, fmt.Errorf("%s %q: the step %g is wider than the range (%.6g): no two values to compare", flag, s, st, hi-lo)
		}
		r.Step = st
	}
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

// Grid is the spacing of the values a tuning evaluates and reports: the
// Step when one is given, 1 for an integer field, else the range / 1024
// rounded down to 1, 2 or 5 × 10^k, finer than the search can tell apart
// (its last box is 1/64 of the range and its grid 1/8 of that) and short
// to write (k=1..4: 0.002).
func (r Range) Grid() float64 {
	switch {
	case r.Step > 0:
		return r.Step
	case r.Integer:
		return 1
	}
	x := (r.Hi - r.Lo) / 1024
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	e := math.Floor(math.Log10(x))
	m := x / math.Pow(10, e)
	mant := 1
	switch {
	case m >= 5:
		mant = 5
	case m >= 2:
		mant = 2
	}
	g, err := strconv.ParseFloat(fmt.Sprintf("%de%d", mant, int(e)), 64)
	if err != nil || !(g > 0) {
		return 0
	}
	return g
}

// stepped: the range's values are the multiples of Grid only (a Step, or
// an integer field); else its bounds are values too.
func (r Range) stepped() bool { return r.Step > 0 || r.Integer }

// onGrid is n·g written with g's decimals, so that 3 × 0.1 is 0.3.
func onGrid(n, g float64) float64 {
	d := 0
	if s := strconv.FormatFloat(g, 'f', -1, 64); strings.Contains(s, ".") {
		d = len(s) - strings.Index(s, ".") - 1
	}
	y, err := strconv.ParseFloat(strconv.FormatFloat(n*g, 'f', d, 64), 64)
	if err != nil {
		return n * g
	}
	return y
}

// gridIndex is the first (up: last) multiple of g at or above (below) x.
func gridIndex(x, g float64, up bool) float64 {
	if up {
		n := math.Floor(x/g + 1e-9)
		if onGrid(n, g) > x {
			n--
		}
		return n
	}
	n := math.Ceil(x/g - 1e-9)
	if onGrid(n, g) < x {
		n++
	}
	return n
}

// gridCount is the number of multiples of g in [lo, hi].
func gridCount(lo, hi, g float64) int {
	n := gridIndex(hi, g, true) - gridIndex(lo, g, false) + 1
	return int(max(0, min(n, 1e6)))
}

// Snap is x moved to the nearest value a tuning evaluates: the nearest
// multiple of Grid inside [Lo, Hi]; for a continuous range without a
// Step, Lo and Hi themselves when the nearest multiple lies outside.
func (r Range) Snap(x float64) float64 {
	x = math.Min(math.Max(x, r.Lo), r.Hi)
	g := r.Grid()
	if !(g > 0) {
		return r.Clamp(x)
	}
	n := math.Round(x / g)
	if r.stepped() {
		n = min(max(n, gridIndex(r.Lo, g, false)), gridIndex(r.Hi, g, true))
		return onGrid(n, g)
	}
	return math.Min(math.Max(onGrid(n, g), r.Lo), r.Hi)
}
