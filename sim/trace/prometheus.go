package trace

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// promResponse is the JSON of Prometheus's HTTP API
// (/api/v1/query_range answers a matrix).
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values []json.RawMessage `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// ParsePrometheus reads a rate series from the JSON of a Prometheus
// query_range answer (resultType matrix; each value is [unix seconds,
// "rate"]). selector picks one series by its labels
// ({instance="a:9",job=~"api.*"}; a metric name before the braces matches
// __name__) and is required when the matrix holds several. maxGap is as
// for ParseCSV. Errors name the series.
func ParsePrometheus(data []byte, selector string, maxGap int64) (*Rates, error) {
	var resp promResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("not the JSON of a Prometheus query_range answer: %v", err)}
	}
	switch {
	case resp.Status == "error":
		return nil, &Error{Msg: fmt.Sprintf("the query failed: Prometheus answered status \"error\" (%s): %s", resp.ErrorType, resp.Error)}
	case resp.Status != "success":
		return nil, &Error{Msg: fmt.Sprintf("status %q: expected \"success\" (the JSON of /api/v1/query_range)", resp.Status)}
	case resp.Data.ResultType != "matrix":
		return nil, &Error{Msg: fmt.Sprintf("resultType %q: expected \"matrix\" (the answer of query_range; query gives a vector)", resp.Data.ResultType)}
	}
	ms, err := ParseSelector(selector)
	if err != nil {
		return nil, err
	}
	var picked []int
	var all []string
	for i, s := range resp.Data.Result {
		all = append(all, Labels(s.Metric))
		if ms.Match(s.Metric) {
			picked = append(picked, i)
		}
	}
	switch {
	case len(resp.Data.Result) == 0:
		return nil, &Error{Msg: "the matrix holds no series (the query matched nothing in its range)"}
	case len(picked) == 0:
		return nil, &Error{Msg: fmt.Sprintf("selector %s matches none of the %d series: %s", selector, len(all), list(all))}
	case len(picked) > 1 && selector == "":
		return nil, &Error{Msg: fmt.Sprintf("the matrix holds %d series; set selector to pick one: %s", len(all), list(all))}
	case len(picked) > 1:
		var names []string
		for _, i := range picked {
			names = append(names, all[i])
		}
		return nil, &Error{Msg: fmt.Sprintf("selector %s matches %d series; it must match one: %s", selector, len(picked), list(names))}
	}
	s := resp.Data.Result[picked[0]]
	name := all[picked[0]]
	if len(s.Values) > MaxSamples {
		return nil, &Error{Series: name, Msg: fmt.Sprintf("%d samples; at most %d", len(s.Values), MaxSamples)}
	}
	r := &Rates{T: make([]int64, 0, len(s.Values)), Rate: make([]float64, 0, len(s.Values))}
	for i, raw := range s.Values {
		var pair []json.RawMessage
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return nil, &Error{Series: name, Msg: fmt.Sprintf("sample %d: expected [unix seconds, \"value\"], got %s", i+1, short(string(raw)))}
		}
		var ts float64
		if err := json.Unmarshal(pair[0], &ts); err != nil || math.Abs(ts) > 9e9 {
			return nil, &Error{Series: name, Msg: fmt.Sprintf("sample %d: time %s: expected unix seconds", i+1, short(string(pair[0])))}
		}
		var vs string
		if err := json.Unmarshal(pair[1], &vs); err != nil {
			return nil, &Error{Series: name, Msg: fmt.Sprintf("sample %d: value %s: expected a string such as \"12.5\"", i+1, short(string(pair[1])))}
		}
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil {
			return nil, &Error{Series: name, Msg: fmt.Sprintf("sample %d: value %q: expected a number of requests/s", i+1, vs)}
		}
		r.T, r.Rate = append(r.T, int64(math.Round(ts*1e9))), append(r.Rate, v)
	}
	err = r.check(maxGap, func(i int) *Error { return &Error{Series: fmt.Sprintf("%s sample %d", name, i+1)} })
	if err != nil {
		return nil, err
	}
	return r, nil
}

func list(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Labels prints a series' labels as Prometheus does: {a="1", b="2"},
// sorted, with __name__ in front of the braces.
func Labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(m["__name__"])
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + strconv.Quote(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// Matcher is one label matcher of a selector.
type Matcher struct {
	Name, Op, Value string // Op: = != =~ !~
	re              *regexp.Regexp
}

// Selector is a list of label matchers that all must hold.
type Selector []Matcher

// Match tells whether labels satisfy every matcher (a missing label is "").
func (s Selector) Match(labels map[string]string) bool {
	for _, m := range s {
		v := labels[m.Name]
		var ok bool
		switch m.Op {
		case "=":
			ok = v == m.Value
		case "!=":
			ok = v != m.Value
		case "=~":
			ok = m.re.MatchString(v)
		case "!~":
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}

var (
	selNameRE  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	labelRE    = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*`)
	selClosing = regexp.MustCompile(`^\s*,?\s*}\s*$`)
)

// ParseSelector reads a Prometheus series selector: an optional metric
// name, then label matchers in braces (name="v", name!="v", name=~"re",
// name!~"re"). "" selects every series.
func ParseSelector(s string) (Selector, error) {
	bad := func(why string) error {
		return &Error{Msg: fmt.Sprintf("selector %q: %s (e.g. {instance=\"a:9\", job=~\"api.*\"})", s, why)}
	}
	rest := strings.TrimSpace(s)
	var sel Selector
	if n := selNameRE.FindString(rest); n != "" {
		sel = append(sel, Matcher{Name: "__name__", Op: "=", Value: n})
		rest = strings.TrimSpace(rest[len(n):])
	}
	if rest == "" {
		return sel, nil
	}
	if rest[0] != '{' {
		return nil, bad("expected { after the metric name")
	}
	rest = rest[1:]
	for n := 0; !selClosing.MatchString(rest); n++ {
		if n > 0 {
			var ok bool
			if rest, ok = strings.CutPrefix(strings.TrimSpace(rest), ","); !ok {
				return nil, bad("expected , between matchers")
			}
		}
		m := labelRE.FindStringSubmatch(rest)
		if m == nil {
			return nil, bad("expected a matcher label=\"value\"")
		}
		rest = rest[len(m[0]):]
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, bad("expected a quoted value after " + m[1] + m[2])
		}
		rest = rest[len(q):]
		v, _ := strconv.Unquote(q)
		mt := Matcher{Name: m[1], Op: m[2], Value: v}
		if mt.Op == "=~" || mt.Op == "!~" {
			re, err := regexp.Compile("^(?:" + v + ")$")
			if err != nil {
				return nil, bad(fmt.Sprintf("regular expression %q: %v", v, err))
			}
			mt.re = re
		}
		sel = append(sel, mt)
	}
	return sel, nil
}
