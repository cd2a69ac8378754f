// Package trace reads recorded load: a request-rate series over time (a CSV
// file, or the JSON of Prometheus's HTTP API for query_range) and recorded
// request times (one timestamp per line, or the time field of an access log
// in the common or combined log format). It checks the data (order, gaps,
// negative or non-finite rates) and cuts the part of a recording a scenario
// replays; turning it into arrivals is package sim's business.
//
// Times are nanoseconds. Parsed series keep their absolute times (unix
// nanoseconds, or seconds from 0 as the file gives them); Cut makes them
// relative to the first sample it keeps.
package trace

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultGapFactor: a step between two samples longer than this many times
// the series' median step is a gap, an error (missing data would
// otherwise be replayed as a rate held, or interpolated, across it).
const DefaultGapFactor = 10

// MaxSamples bounds the samples or timestamps of one file.
const MaxSamples = 50_000_000

// Error is a problem with a trace file's content: where (a line, or a
// series of a Prometheus response) and what.
type Error struct {
	Line   int    // 1-based line of the file; 0 when the problem is not on one line
	Series string // the Prometheus series (its labels), when the file is JSON
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("trace: line %d: %s", e.Line, e.Msg)
	case e.Series != "":
		return fmt.Sprintf("trace: series %s: %s", e.Series, e.Msg)
	}
	return "trace: " + e.Msg
}

// Rates is a recorded request rate: Rate[i] requests/s at T[i], held until
// the next sample (step) or moving in a straight line to it (linear). The
// last sample holds until End (one median step after it when parsed; a
// linear cut may end on its last sample, T[len(T)-1] == End).
type Rates struct {
	T    []int64   // sample times, ns, increasing
	Rate []float64 // requests/s, finite and >= 0
	End  int64     // where the recording ends, ns (>= the last T)
	// Line is each sample's line in its file (CSV), for messages; nil for
	// JSON.
	Line []int
}

// Step is the median spacing of the samples.
func (r *Rates) Step() int64 {
	if len(r.T) < 2 {
		return r.End - r.T[0]
	}
	d := make([]int64, len(r.T)-1)
	for i := range d {
		d[i] = r.T[i+1] - r.T[i]
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// At is the rate at time t (T[0] <= t < End): the sample in force (step)
// or the straight line between the two samples around t (linear; flat
// after the last sample).
func (r *Rates) At(t int64, linear bool) float64 {
	i, found := slices.BinarySearch(r.T, t)
	if found {
		return r.Rate[i]
	}
	i-- // the sample before t
	if !linear || i+1 >= len(r.T) {
		return r.Rate[i]
	}
	f := float64(t-r.T[i]) / float64(r.T[i+1]-r.T[i])
	return r.Rate[i] + f*(r.Rate[i+1]-r.Rate[i])
}

// Cut is the part of the recording from shift after its first sample, for
// window (0: to its end), with times relative to that start: its first
// sample is at 0 with the rate in force there (interpolated when linear).
// A shift or window that leaves the recording is an error.
func (r *Rates) Cut(shift, window int64, linear bool) (*Rates, error) {
	span := r.End - r.T[0]
	if shift < 0 || window < 0 {
		return nil, &Error{Msg: "shift and window must be >= 0"}
	}
	if shift >= span {
		return nil, &Error{Msg: fmt.Sprintf("shift %s is not before the recording's end (it lasts %s)", time.Duration(shift), time.Duration(span))}
	}
	end := r.End
	if window > 0 {
		if window > span-shift { // not shift+window: it may overflow
			return nil, &Error{Msg: fmt.Sprintf("shift %s + window %s runs past the recording's end (it lasts %s)", time.Duration(shift), time.Duration(window), time.Duration(span))}
		}
		end = r.T[0] + shift + window
	}
	start := r.T[0] + shift
	out := &Rates{T: []int64{0}, Rate: []float64{r.At(start, linear)}, End: end - start}
	i, found := slices.BinarySearch(r.T, start)
	if found {
		i++
	}
	for ; i < len(r.T) && r.T[i] < end; i++ {
		out.T = append(out.T, r.T[i]-start)
		out.Rate = append(out.Rate, r.Rate[i])
	}
	if linear && end < r.End {
		// The line to the sample after the window ends at its value there.
		out.T = append(out.T, end-start)
		out.Rate = append(out.Rate, r.At(end, true))
	}
	return out, nil
}

// CutTimes is the request times from shift after the first for window (0:
// to the last), relative to that start (t[0] + shift).
func CutTimes(t []int64, shift, window int64) ([]int64, error) {
	if len(t) == 0 {
		return nil, &Error{Msg: "no timestamps"}
	}
	if shift < 0 || window < 0 {
		return nil, &Error{Msg: "shift and window must be >= 0"}
	}
	start := t[0] + shift
	end := int64(math.MaxInt64)
	if window > 0 && window <= math.MaxInt64-start { // else to the last: start+window would overflow
		end = start + window
	}
	i, _ := slices.BinarySearch(t, start)
	j, _ := slices.BinarySearch(t, end)
	if i >= j {
		return nil, &Error{Msg: fmt.Sprintf("no request in the window: shift %s, window %s, recording %s long", time.Duration(shift), time.Duration(window), time.Duration(t[len(t)-1]-t[0]))}
	}
	out := make([]int64, j-i)
	for k := range out {
		out[k] = t[i+k] - start
	}
	return out, nil
}

// ParseTime reads a time: seconds as a decimal number (unix time such as
// 1733450000.25, or seconds from 0) or RFC 3339 (2026-12-06T02:00:00Z). It
// is in nanoseconds (unix nanoseconds for RFC 3339).
func ParseTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e9 {
			return 0, fmt.Errorf("time %q: expected seconds (unix time or from 0) up to 9e9", s)
		}
		return int64(math.Round(f * 1e9)), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("time %q: expected seconds (e.g. 1733450000.25) or RFC 3339 (e.g. 2026-12-06T02:00:00Z)", s)
	}
	if y := t.Year(); y < 1678 || y > 2261 {
		return 0, fmt.Errorf("time %q: year out of range", s)
	}
	return t.UnixNano(), nil
}

// check finishes a parsed series: at least two samples, increasing times,
// finite non-negative rates, no gap longer than maxGap (0: DefaultGapFactor
// times the median step); End is one median step after the last sample.
// where names sample i for messages.
func (r *Rates) check(maxGap int64, where func(i int) *Error) error {
	bad := func(i int, format string, a ...any) error {
		e := where(i)
		e.Msg = fmt.Sprintf(format, a...)
		return e
	}
	if len(r.T) < 2 {
		return &Error{Series: where(0).Series, Msg: fmt.Sprintf("%d samples; at least 2 are needed (the step between samples sets how long each holds)", len(r.T))}
	}
	for i, v := range r.Rate {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return bad(i, "rate %v: expected a finite number of requests/s >= 0", v)
		}
		if i > 0 && r.T[i] <= r.T[i-1] {
			return bad(i, "time %s is not after the previous sample's (%s): samples must be in increasing time order", fmtT(r.T[i]), fmtT(r.T[i-1]))
		}
	}
	step := r.Step()
	if maxGap <= 0 {
		maxGap = DefaultGapFactor * step
	}
	for i := 1; i < len(r.T); i++ {
		if d := r.T[i] - r.T[i-1]; d > maxGap {
			return bad(i, "a gap of %s before this sample (at %s), more than the %s allowed (max_gap; default %d× the median step %s): missing data? pick a window without it or fill it", time.Duration(d), fmtT(r.T[i]), time.Duration(maxGap), DefaultGapFactor, time.Duration(step))
		}
	}
	r.End = r.T[len(r.T)-1] + step
	return nil
}

// fmtT prints a time: seconds with up to nanoseconds, and the date too for
// unix times after 2001.
func fmtT(t int64) string {
	s := strconv.FormatFloat(float64(t)/1e9, 'f', -1, 64)
	if t > 1e18 {
		s += " (" + time.Unix(0, t).UTC().Format(time.RFC3339Nano) + ")"
	}
	return s + "s"
}

// Requests is the number of requests the rate series gives from its first
// sample (time 0 after a Cut) until t.
func (r *Rates) Requests(t int64, linear bool) float64 {
	var n float64
	for i := range r.T {
		from := r.T[i]
		if from >= t {
			break
		}
		to := r.End
		if i+1 < len(r.T) {
			to = r.T[i+1]
		}
		to = min(to, t)
		a := r.Rate[i]
		b := a
		if linear && i+1 < len(r.T) {
			b = r.At(to, true)
		}
		n += (a + b) / 2 * float64(to-from) / 1e9
	}
	if t > r.End { // the last rate holds
		n += r.Rate[len(r.Rate)-1] * float64(t-r.End) / 1e9
	}
	return n
}

// Peak is the highest rate.
func (r *Rates) Peak() float64 { return slices.Max(r.Rate) }
