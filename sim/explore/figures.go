package explore

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/internal/suggest"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/threshold"
)

// Figures are the numbers of one run's summary by name: every numeric or
// boolean field of metrics.Summary by its JSON name (nested ones dotted:
// recovery.recovery_time_s, connections.connect_attempts; booleans are 0
// or 1; a null figure is NaN), the names thresholds use (sim/threshold:
// recovery_s, recovered, reconnected_99_s, ...), and the rates
// DerivedMetrics lists.
type Figures map[string]float64

// DerivedMetrics are figures computed from the summary and the run's
// length rather than read from it.
var DerivedMetrics = map[string]string{
	"backend_load_rps": "attempts received by the backend per second (backend_received ÷ duration)",
	"goodput_rps":      "successful application requests per second (succeeded ÷ duration)",
	"offered_rps":      "application requests per second (offered ÷ duration)",
}

// NewFigures flattens a summary; durationS is the run's length in seconds.
func NewFigures(s *metrics.Summary, durationS float64) Figures {
	f := Figures{}
	flatten(reflect.ValueOf(*s), "", f)
	f["backend_load_rps"] = float64(s.Received) / durationS
	f["goodput_rps"] = float64(s.Succeeded) / durationS
	f["offered_rps"] = float64(s.Offered) / durationS
	// The short names of --threshold (recovery_s, reconnected_99_s, ...)
	// too, so that a constraint reads like a threshold.
	for _, n := range threshold.Names() {
		if _, dup := f[n]; !dup {
			v, ok := threshold.Value(n, s)
			if !ok {
				v = math.NaN()
			}
			f[n] = v
		}
	}
	return f
}

func jsonName(sf reflect.StructField) string {
	n, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if n == "" || n == "-" {
		return ""
	}
	return n
}

func flatten(v reflect.Value, prefix string, f Figures) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name == "" {
			continue
		}
		fv := v.Field(i)
		key := prefix + name
		switch fv.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			f[key] = float64(fv.Int())
		case reflect.Float64:
			f[key] = fv.Float()
		case reflect.Bool:
			f[key] = 0
			if fv.Bool() {
				f[key] = 1
			}
		case reflect.Struct:
			flatten(fv, key+".", f)
		case reflect.Pointer:
			switch fv.Type().Elem().Kind() {
			case reflect.Float64:
				f[key] = math.NaN()
				if !fv.IsNil() {
					f[key] = fv.Elem().Float()
				}
			case reflect.Struct:
				if fv.IsNil() {
					flatten(reflect.Zero(fv.Type().Elem()), key+".", f)
					for k := range f {
						if strings.HasPrefix(k, key+".") {
							f[k] = math.NaN()
						}
					}
				} else {
					flatten(fv.Elem(), key+".", f)
				}
			}
		}
	}
}

// MetricNames lists every figure name, sorted.
func MetricNames() []string {
	f := NewFigures(&metrics.Summary{}, 1)
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// CheckMetric returns an error naming the closest known metric when name
// is not one.
func CheckMetric(name string) error {
	names := MetricNames()
	if slices.Contains(names, name) {
		return nil
	}
	msg := fmt.Sprintf("unknown metric %q", name)
	if s := closest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return fmt.Errorf("%s (the metrics are the figures of summary.json, the names of --threshold, and %s; see docs/cli.md)", msg, strings.Join(slices.Sorted(keys(DerivedMetrics)), ", "))
}

func keys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// closest returns the candidate nearest to s by edit distance (also
// matching a bare name against a dotted one), if close enough to be a typo.
func closest(s string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		d := suggest.Distance(s, c)
		if i := strings.LastIndex(c, "."); i >= 0 {
			d = min(d, suggest.Distance(s, c[i+1:]))
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(s)/3) {
		return best
	}
	return ""
}

// Constraint is "metric <= bound" or "metric >= bound".
type Constraint struct {
	Metric string
	AtMost bool // <=; false: >=
	Bound  float64
}

// String writes the constraint as it is given on the command line.
func (c Constraint) String() string {
	op := ">="
	if c.AtMost {
		op = "<="
	}
	return c.Metric + op + strconv.FormatFloat(c.Bound, 'g', -1, 64)
}

// ParseConstraint reads "metric<=x" or "metric>=x" (a percentage such as
// 60% is read as 0.6).
func ParseConstraint(s string) (Constraint, error) {
	var c Constraint
	var lhs, rhs string
	switch {
	case strings.Contains(s, "<="):
		lhs, rhs, _ = strings.Cut(s, "<=")
		c.AtMost = true
	case strings.Contains(s, ">="):
		lhs, rhs, _ = strings.Cut(s, ">=")
	default:
		return c, fmt.Errorf("--subject-to %q: expected METRIC<=x or METRIC>=x, e.g. 'local_drop_rate<=0.6'", s)
	}
	c.Metric = strings.TrimSpace(lhs)
	rhs = strings.TrimSpace(rhs)
	scale := 1.0
	if strings.HasSuffix(rhs, "%") {
		rhs, scale = strings.TrimSuffix(rhs, "%"), 0.01
	}
	x, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return c, fmt.Errorf("--subject-to %q: expected a number after the operator, got %q", s, rhs)
	}
	c.Bound = x * scale
	if err := CheckMetric(c.Metric); err != nil {
		return c, fmt.Errorf("--subject-to %q: %w", s, err)
	}
	return c, nil
}

// violation is how far v is on the wrong side of the bound (0 if met).
func (c Constraint) violation(v float64) float64 {
	if c.AtMost {
		return math.Max(0, v-c.Bound)
	}
	return math.Max(0, c.Bound-v)
}
