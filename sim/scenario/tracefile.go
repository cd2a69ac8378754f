package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/throttlesim/throttlesim/sim/trace"
)

// loadTrace reads clients.arrival.trace's file, relative to the folder of
// the scenario file name, checks its SHA-256 if given and records it, and
// keeps the part Shift and Window select. Problems inside the file are
// reported at the file's own line (or series).
func (s *Scenario) loadTrace(name string, pos map[string]Pos) Errors {
	a := &s.Clients.Arrival
	tr := a.Trace
	if tr == nil || tr.File == "" {
		return nil
	}
	replay := a.Process == ArrivalReplay
	if tr.Format == "" || tr.Format.Rates() == replay {
		return nil // validation says which formats the process takes
	}
	const path = "clients.arrival.trace"
	fail := func(p string, format string, a ...any) Errors {
		return Errors{&FieldError{File: name, Pos: pos[path+"."+p], Path: path + "." + p, Msg: fmt.Sprintf(format, a...)}}
	}
	if len(tr.File) > MaxFileLen {
		return fail("file", "is %d characters long; at most %d", len(tr.File), MaxFileLen)
	}
	file := tr.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(name), file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fail("file", "no such file %s (a path relative to the scenario file's folder)", file)
		}
		return fail("file", "%v", err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if tr.FileSHA256 != "" && !strings.EqualFold(tr.FileSHA256, hash) {
		return fail("file_sha256", "%s has SHA-256 %s, not %s: the data changed since this scenario was resolved", file, hash, tr.FileSHA256)
	}
	inFile := func(err error) Errors {
		fe := &FieldError{File: file, Path: path + ".file", Msg: strings.TrimPrefix(err.Error(), "trace: ")}
		var te *trace.Error
		if errors.As(err, &te) {
			fe.Pos.Line, fe.Msg = te.Line, te.Msg
			if te.Line > 0 {
				fe.Pos.Col = 1
			}
			if te.Series != "" {
				fe.Msg = "series " + te.Series + ": " + te.Msg
			}
		}
		return Errors{fe}
	}
	if tr.Shift < 0 || tr.Window < 0 || tr.MaxGap < 0 {
		return nil // validation reports them
	}
	linear := tr.Interpolate == InterpolateLinear
	switch tr.Format {
	case TraceCSV, TracePrometheus:
		var r *trace.Rates
		if tr.Format == TraceCSV {
			r, err = trace.ParseCSV(data, tr.TimeColumn, tr.RateColumn, int64(tr.MaxGap))
		} else {
			r, err = trace.ParsePrometheus(data, tr.Selector, int64(tr.MaxGap))
		}
		if err != nil {
			return inFile(err)
		}
		cut, err := r.Cut(int64(tr.Shift), int64(tr.Window), linear)
		if err != nil {
			return fail(cutField(tr), "%s: %s", file, strings.TrimPrefix(err.Error(), "trace: "))
		}
		if cut.Requests(cut.End, linear) <= 0 {
			return inFile(fmt.Errorf("every rate in the replayed part is 0: no request would arrive"))
		}
		tr.Rates = cut
	default:
		var t []int64
		if tr.Format == TraceTimestamps {
			t, err = trace.ParseTimestamps(data)
		} else {
			t, err = trace.ParseAccessLog(data)
		}
		if err != nil {
			return inFile(err)
		}
		cut, err := trace.CutTimes(t, int64(tr.Shift), int64(tr.Window))
		if err != nil {
			return fail(cutField(tr), "%s: %s", file, strings.TrimPrefix(err.Error(), "trace: "))
		}
		tr.Times = cut
	}
	tr.FileSHA256 = hash
	return nil
}

func cutField(tr *Trace) string {
	if tr.Window > 0 {
		return "window"
	}
	return "shift"
}

// MaxCycleSegments bounds the straight pieces a cycle makes over a run.
const MaxCycleSegments = 10_000_000

// traceRate is the fleet's mean rate over the run from a loaded trace
// (scaled), per second; 0 without one.
func (s *Scenario) traceRate() float64 {
	tr := s.Clients.Arrival.Trace
	if tr == nil {
		return 0
	}
	d := int64(s.Duration)
	if tr.Rates != nil && d > 0 {
		return tr.Scale * tr.Rates.Requests(d, tr.Interpolate == InterpolateLinear) / s.Duration.Seconds()
	}
	if tr.Times != nil && d > 0 {
		n, _ := slices.BinarySearch(tr.Times, d)
		return float64(max(n, 1)) / s.Duration.Seconds()
	}
	return 0
}

// validateTrace checks clients.arrival.trace with its process.
func (s *Scenario) validateTrace(v *validator) {
	a := s.Clients.Arrival
	const p = "clients.arrival.trace"
	tr := a.Trace
	replay := a.Process == ArrivalReplay
	if tr == nil {
		v.check(false, p, "process replay replays recorded requests: set trace: {file: requests.txt, format: timestamps} (or format: access_log)")
		return
	}
	v.check(a.Rate == 0 && a.TotalRate == 0, "clients.arrival.rate", "the trace sets the rate over time: remove rate and total_rate (scale the trace with trace.scale)")
	v.check(tr.File != "", p+".file", "is required: the recording to replay, relative to the scenario file's folder")
	v.short(p+".file", tr.File, MaxFileLen)
	if replay {
		v.check(tr.Format == TraceTimestamps || tr.Format == TraceAccessLog, p+".format", "process replay reads request times: timestamps or access_log, got %q (a rate series, csv or prometheus, goes with process poisson or constant)", tr.Format)
		v.check(tr.Scale == 1, p+".scale", "applies to a rate series (process poisson or constant); replay sends the recorded requests as they are")
		v.check(tr.Interpolate == InterpolateStep, p+".interpolate", "applies to a rate series (process poisson or constant)")
		v.check(len(a.Profile) == 0, "clients.arrival.profile", "does not apply to process replay (the recorded requests are sent as they happened)")
		v.check(a.Cycle == nil, "clients.arrival.cycle", "does not apply to process replay (the recorded requests are sent as they happened)")
		v.check(!a.FirstAtStart, "clients.arrival.first_at_start", "does not apply to process replay")
		v.check(tr.File == "" || tr.Times != nil || tr.Format.Rates() == replay || tr.Shift < 0 || tr.Window < 0 || tr.MaxGap < 0, p+".file", "%s was not read: a trace is read by scenario.Load", tr.File)
		if n := len(tr.Times); n > 0 {
			v.check(float64(n) <= MaxArrivals, p+".file", "%d requests; at most %.0g in one run", n, float64(MaxArrivals))
		}
	} else {
		v.check(tr.Format == TraceCSV || tr.Format == TracePrometheus, p+".format", "process %s reads a rate series: csv or prometheus, got %q (request times, timestamps or access_log, go with process: replay)", a.Process, tr.Format)
		v.check(tr.Scale > 0 && !math.IsInf(tr.Scale, 0), p+".scale", "must be > 0 (1.2: the recorded rates times 1.2), got %g", tr.Scale)
		v.check(a.Cycle == nil, "clients.arrival.cycle", "does not apply with a trace (the recording has its own daily shape); profile steps (without ramp) may multiply it")
		v.check(tr.File == "" || tr.Rates != nil || tr.Format.Rates() == replay || tr.Shift < 0 || tr.Window < 0 || tr.MaxGap < 0, p+".file", "%s was not read: a trace is read by scenario.Load", tr.File)
		if r := tr.Rates; r != nil {
			v.check(int64(s.Duration) <= r.End, "duration", "%s is longer than the replayed recording (%s of %s from shift %s); shorten duration or widen the window", s.Duration, Duration(r.End), tr.File, tr.Shift)
			peak := 1.0
			for _, st := range a.Profile {
				peak = max(peak, st.Multiplier)
			}
			if n := r.Peak() * tr.Scale * peak * s.Duration.Seconds(); n > MaxArrivals {
				v.check(false, p+".scale", "a peak of %s over %s is up to %.3g application requests; at most %.0g in one run", Rate(r.Peak()*tr.Scale), s.Duration, n, float64(MaxArrivals))
			}
		}
	}
	v.check(tr.Format == TraceCSV || (tr.TimeColumn == "time" && tr.RateColumn == "rate"), p+".time_column", "time_column and rate_column apply to format csv only")
	v.check(tr.Format == TracePrometheus || tr.Selector == "", p+".selector", "applies to format prometheus only")
	if tr.Selector != "" {
		_, err := trace.ParseSelector(tr.Selector)
		v.check(err == nil, p+".selector", "%v", err)
	}
	v.check(tr.Shift >= 0, p+".shift", "must be >= 0, got %s", tr.Shift)
	v.check(tr.Window >= 0, p+".window", "must be >= 0 (0: to the recording's end), got %s", tr.Window)
	v.check(tr.MaxGap >= 0, p+".max_gap", "must be >= 0 (0: 10× the median step), got %s", tr.MaxGap)
	v.check(tr.Format.Rates() || tr.MaxGap == 0, p+".max_gap", "applies to a rate series (csv, prometheus)")
}

// validateCycle checks clients.arrival.cycle.
func (s *Scenario) validateCycle(v *validator) {
	c := s.Clients.Arrival.Cycle
	if c == nil {
		return
	}
	const p = "clients.arrival.cycle"
	v.check(c.Period > 0, p+".period", "must be > 0 (24h: daily, 168h: weekly), got %s", c.Period)
	v.check(c.Start >= 0 && c.Start < c.Period, p+".start", "must be in [0, period=%s), got %s", c.Period, c.Start)
	v.check(len(c.Points) > 0, p+".points", "give at least one point, e.g. [{at: 0h, multiplier: 0.3}, {at: 14h, multiplier: 1.5}]")
	prev := Duration(-1)
	for i, pt := range c.Points {
		q := fmt.Sprintf("%s.points.%d", p, i)
		v.check(pt.At > prev, q+".at", "points must be in increasing time order, got %s after %s", pt.At, prev)
		v.check(pt.At >= 0 && pt.At < c.Period, q+".at", "must be in [0, period=%s), got %s", c.Period, pt.At)
		v.check(pt.Multiplier >= 0 && !math.IsInf(pt.Multiplier, 0), q+".multiplier", "must be >= 0, got %g", pt.Multiplier)
		prev = pt.At
	}
	if c.Period > 0 {
		n := (float64(s.Duration)/float64(c.Period) + 1) * float64(len(c.Points))
		v.check(n <= MaxCycleSegments, p+".period", "%s over %s makes %.3g straight pieces; at most %d", c.Period, s.Duration, n, MaxCycleSegments)
	}
}

// peak is the cycle's largest multiplier (1 without a cycle).
func (c *Cycle) peak() float64 {
	if c == nil || len(c.Points) == 0 {
		return 1
	}
	m := 0.0
	for _, p := range c.Points {
		m = max(m, p.Multiplier)
	}
	return m
}

// PeakRate is the fleet's highest arrival rate, per second: the base rate
// times the largest profile multiplier (at least 1) and the cycle's or the
// trace's peak; a replay's busiest second.
func (s *Scenario) PeakRate() float64 {
	a := s.Clients.Arrival
	peak := 1.0
	for _, st := range a.Profile {
		peak = max(peak, st.Multiplier)
	}
	if tr := a.Trace; tr != nil {
		switch {
		case tr.Rates != nil:
			return peak * tr.Scale * tr.Rates.Peak()
		case tr.Times != nil:
			most := 0
			for i, j := 0, 0; i < len(tr.Times); i++ {
				for tr.Times[i]-tr.Times[j] >= 1e9 {
					j++
				}
				most = max(most, i-j+1)
			}
			return float64(most)
		}
	}
	return s.PerClientRate() * float64(s.Clients.Count) * peak * a.Cycle.peak()
}
