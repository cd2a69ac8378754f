package trace

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseCSV reads a rate series from CSV with a header line: timeCol names
// the time column (seconds, unix or from 0, or RFC 3339), rateCol the rate
// column (requests/s). Lines starting with # are comments; other columns
// are ignored. maxGap is the longest step allowed between samples (0:
// DefaultGapFactor times the median step). Errors name the line.
func ParseCSV(data []byte, timeCol, rateCol string, maxGap int64) (*Rates, error) {
	rd := csv.NewReader(bytes.NewReader(data))
	rd.Comment = '#'
	rd.FieldsPerRecord = -1
	rd.TrimLeadingSpace = true
	rd.ReuseRecord = true
	head, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Msg: "empty file: expected a header line naming the columns, e.g. time,rate"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	ti, ri := -1, -1
	var names []string
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\xef\xbb\xbf"))
		names = append(names, strconv.Quote(h))
		switch h {
		case timeCol:
			ti = i
		case rateCol:
			ri = i
		}
	}
	hl, _ := rd.FieldPos(0)
	for _, c := range []struct {
		i         int
		name, key string
	}{{ti, timeCol, "time_column"}, {ri, rateCol, "rate_column"}} {
		if c.i < 0 {
			return nil, &Error{Line: hl, Msg: fmt.Sprintf("no column %q (%s) in the header; it has %s", c.name, c.key, strings.Join(names, ", "))}
		}
	}
	r := &Rates{}
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := rd.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) <= max(ti, ri) {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("%d fields; the header has %d (%s is field %d, %s field %d)", len(rec), len(head), timeCol, ti+1, rateCol, ri+1)}
		}
		if len(r.T) >= MaxSamples {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("more than %d samples", MaxSamples)}
		}
		t, err := ParseTime(rec[ti])
		if err != nil {
			return nil, &Error{Line: line, Msg: err.Error()}
		}
		s := strings.TrimSpace(rec[ri])
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("rate %q: expected a number of requests/s", s)}
		}
		r.T, r.Rate, r.Line = append(r.T, t), append(r.Rate, v), append(r.Line, line)
	}
	if len(r.T) == 0 {
		return nil, &Error{Line: hl, Msg: "no samples after the header"}
	}
	if err := r.check(maxGap, func(i int) *Error { return &Error{Line: r.Line[i]} }); err != nil {
		return nil, err
	}
	return r, nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Line: pe.Line, Msg: pe.Err.Error()}
	}
	return &Error{Msg: err.Error()}
}
