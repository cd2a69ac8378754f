package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ParseTimestamps reads recorded request times, one per line (seconds,
// unix or from 0, or RFC 3339), in non-decreasing order; blank lines and
// lines starting with # are skipped. Errors name the line.
func ParseTimestamps(data []byte) ([]int64, error) {
	var t []int64
	prev := 0
	err := lines(data, func(n int, text string) error {
		if text == "" || strings.HasPrefix(text, "#") {
			return nil
		}
		v, err := ParseTime(text)
		if err != nil {
			return &Error{Line: n, Msg: err.Error()}
		}
		if k := len(t); k > 0 && v < t[k-1] {
			return &Error{Line: n, Msg: fmt.Sprintf("time %s is before line %d's (%s): timestamps must not decrease", fmtT(v), prev, fmtT(t[k-1]))}
		}
		if len(t) >= MaxSamples {
			return &Error{Line: n, Msg: fmt.Sprintf("more than %d timestamps", MaxSamples)}
		}
		t, prev = append(t, v), n
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t) == 0 {
		return nil, &Error{Msg: "no timestamps: expected one time per line (seconds or RFC 3339)"}
	}
	return t, nil
}

// accessLayout is the time field of the common log format, inside [ ].
const accessLayout = "02/Jan/2006:15:04:05 -0700"

// ParseAccessLog reads request times from an access log in the common or
// combined log format (host ident user [10/Oct/2000:13:55:36 -0700]
// "GET / HTTP/1.0" 200 2326 ...): the bracketed time field of each line;
// blank lines are skipped. Servers write a line when a request ends, so
// lines may be slightly out of order: the times are sorted. The format has
// whole seconds, so the k requests of one second are spread evenly over
// it (the j-th at j/k s after it), a rule that keeps their number and
// their second and makes no burst at its start.
func ParseAccessLog(data []byte) ([]int64, error) {
	var t []int64
	err := lines(data, func(n int, text string) error {
		if text == "" {
			return nil
		}
		i := strings.IndexByte(text, '[')
		j := strings.IndexByte(text, ']')
		if i < 0 || j < i {
			return &Error{Line: n, Msg: fmt.Sprintf("no [time] field: expected the common log format, e.g. 127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326; got %q", short(text))}
		}
		v, err := time.Parse(accessLayout, text[i+1:j])
		if err != nil {
			return &Error{Line: n, Msg: fmt.Sprintf("time %q: expected day/Mon/year:hh:mm:ss zone, e.g. 10/Oct/2000:13:55:36 -0700", short(text[i+1:j]))}
		}
		if y := v.Year(); y < 1678 || y > 2261 {
			return &Error{Line: n, Msg: fmt.Sprintf("time %q: year out of range", text[i+1:j])}
		}
		if len(t) >= MaxSamples {
			return &Error{Line: n, Msg: fmt.Sprintf("more than %d requests", MaxSamples)}
		}
		t = append(t, v.UnixNano())
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t) == 0 {
		return nil, &Error{Msg: "no requests: expected access log lines with a [10/Oct/2000:13:55:36 -0700] time field"}
	}
	slices.Sort(t)
	for i := 0; i < len(t); {
		j := i
		for j < len(t) && t[j] == t[i] {
			j++
		}
		for k := i; k < j; k++ {
			t[k] += int64(k-i) * int64(time.Second) / int64(j-i)
		}
		i = j
	}
	return t, nil
}

// lines calls f with each line's number and text (spaces trimmed).
func lines(data []byte, f func(n int, text string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := f(n, strings.TrimSpace(sc.Text())); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &Error{Line: n + 1, Msg: err.Error()}
	}
	return nil
}
