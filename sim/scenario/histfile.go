package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/throttlesim/throttlesim/sim/dist"
)

// Bound is a histogram bucket's upper bound (le) in seconds, the unit
// Prometheus histograms of durations use. In YAML it is a number of
// seconds (0.005), a duration (5ms) or +Inf.
type Bound float64

// Inf reports whether b is the +Inf bucket's bound.
func (b Bound) Inf() bool { return math.IsInf(float64(b), 1) }

func (b Bound) String() string {
	if b.Inf() {
		return "+Inf"
	}
	return strconv.FormatFloat(float64(b), 'g', -1, 64)
}

func (b *Bound) unmarshalScalar(s string) error {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "+inf", "inf", ".inf", "+.inf":
		*b = Bound(math.Inf(1))
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return fmt.Errorf("a bucket bound (le) is a number of seconds >= 0 or +Inf, got %q", s)
		}
		*b = Bound(f)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("a bucket bound (le) is a number of seconds (0.005), a duration (5ms) or +Inf, got %q", s)
	}
	*b = Bound(d.Seconds())
	return nil
}

// MarshalJSON writes the bound as a number, or the string "+Inf".
func (b Bound) MarshalJSON() ([]byte, error) {
	if b.Inf() {
		return []byte(`"+Inf"`), nil
	}
	return []byte(b.String()), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *Bound) UnmarshalJSON(data []byte) error {
	if s, err := strconv.Unquote(string(data)); err == nil {
		return b.unmarshalScalar(s)
	}
	return b.unmarshalScalar(string(data))
}

// HistogramDist is the dist.Histogram of a dist: histogram service: the one
// read from its file, or its inline buckets'.
func (sv Service) HistogramDist() (*dist.Histogram, error) {
	if sv.Histogram != nil {
		return sv.Histogram, nil
	}
	le, cnt := make([]float64, len(sv.Buckets)), make([]float64, len(sv.Buckets))
	for i, b := range sv.Buckets {
		le[i], cnt[i] = float64(b.Le)*1e9, b.Count
	}
	return newHistogram(le, cnt, sv)
}

func newHistogram(leNS, cnt []float64, sv Service) (*dist.Histogram, error) {
	w := dist.Uniform
	if sv.Within == WithinLogUniform {
		w = dist.LogUniform
	}
	return dist.NewHistogram(leNS, cnt, w, float64(sv.InfCap))
}

// maxSeries bounds the series a histogram file may hold.
const maxSeries = 100_000

// histSeries is one series of a histogram's _bucket family: its labels
// other than le (and __name__), by le its count, and where it was read.
type histSeries struct {
	key    string
	labels map[string]string
	counts map[float64]float64
	line   int
}

// ParseHistogramFile reads the cumulative buckets (le in seconds, counts)
// of one histogram from a Prometheus export: the text exposition format
// (format text) or query_range JSON (format query_range; a series' count
// is its last value minus its first, the increase over the window, or its
// only value). metric is the histogram's name without _bucket ("": the
// only histogram in the file); selector (label="value",… ) picks one
// series when there are several. Errors name the file and, for text, the
// line.
func ParseHistogramFile(data []byte, file string, format HistogramFormat, metric, selector string) (le, counts []float64, err error) {
	sel, err := ParsePromLabels(selector)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: selector: %w", file, err)
	}
	if format == "" {
		format = FormatText
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
			format = FormatQueryRange
		}
	}
	var series map[string]map[string]*histSeries // by metric base name, by key
	switch format {
	case FormatText:
		series, err = textBuckets(data, file)
	case FormatQueryRange:
		series, err = jsonBuckets(data, file)
	default:
		return nil, nil, fmt.Errorf("%s: unknown format %q (text, query_range)", file, format)
	}
	if err != nil {
		return nil, nil, err
	}
	if metric == "" {
		names := mapKeys(series)
		switch len(names) {
		case 0:
			return nil, nil, fmt.Errorf("%s: no histogram: no series named *_bucket with an le label", file)
		case 1:
			metric = names[0]
		default:
			return nil, nil, fmt.Errorf("%s: %d histograms (%s): name one with metric", file, len(names), strings.Join(names, ", "))
		}
	}
	fam, ok := series[strings.TrimSuffix(metric, "_bucket")]
	if !ok {
		return nil, nil, fmt.Errorf("%s: no series %s_bucket with an le label (histograms here: %s)", file, strings.TrimSuffix(metric, "_bucket"), strings.Join(mapKeys(series), ", "))
	}
	var picked []*histSeries
	for _, s := range fam {
		if matches(s.labels, sel) {
			picked = append(picked, s)
		}
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].key < picked[j].key })
	switch {
	case len(picked) == 0:
		return nil, nil, fmt.Errorf("%s: no series of %s_bucket matches selector %q", file, metric, selector)
	case len(picked) > 1:
		keys := make([]string, 0, 3)
		for _, s := range picked[:min(3, len(picked))] {
			keys = append(keys, "{"+s.key+"}")
		}
		return nil, nil, fmt.Errorf("%s: %d series of %s_bucket match (%s…): pick one with selector", file, len(picked), metric, strings.Join(keys, ", "))
	}
	s := picked[0]
	for b := range s.counts {
		le = append(le, b)
	}
	sort.Float64s(le)
	counts = make([]float64, len(le))
	for i, b := range le {
		counts[i] = s.counts[b]
	}
	return le, counts, nil
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// add records a bucket count of the series of base name with labels.
func addBucket(out map[string]map[string]*histSeries, base string, labels map[string]string, le, v float64, line int) error {
	delete(labels, "__name__")
	delete(labels, "le")
	key := labelKey(labels)
	fam := out[base]
	if fam == nil {
		fam = map[string]*histSeries{}
		out[base] = fam
	}
	s := fam[key]
	if s == nil {
		if len(fam) >= maxSeries {
			return fmt.Errorf("more than %d series", maxSeries)
		}
		s = &histSeries{key: key, labels: labels, counts: map[float64]float64{}, line: line}
		fam[key] = s
	}
	if _, dup := s.counts[le]; dup {
		return fmt.Errorf("%s_bucket{%s} has le %v twice", base, key, le)
	}
	s.counts[le] = v
	return nil
}

func labelKey(labels map[string]string) string {
	keys := mapKeys(labels)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(labels[k]))
		b.WriteByte('"')
	}
	return b.String()
}

func parseLe(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, -1) || f < 0 {
		return 0, fmt.Errorf("le %q is not a bound >= 0 or +Inf", s)
	}
	return f, nil
}

// textBuckets reads the _bucket samples of a text exposition.
func textBuckets(data []byte, file string) (map[string]map[string]*histSeries, error) {
	out := map[string]map[string]*histSeries{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fail := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, a...))
		}
		end := strings.IndexAny(text, "{ \t")
		if end < 0 {
			return nil, fail("expected a sample: a metric name, labels in braces and a value, got %q", text)
		}
		name, rest := text[:end], text[end:]
		labels := map[string]string{}
		if rest[0] == '{' {
			close := closingBrace(rest)
			if close < 0 {
				return nil, fail("labels of %s have no closing brace", name)
			}
			var err error
			if labels, err = ParsePromLabels(rest[:close+1]); err != nil {
				return nil, fail("%s: %v", name, err)
			}
			rest = rest[close+1:]
		}
		if !strings.HasSuffix(name, "_bucket") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 1 || len(fields) > 2 {
			return nil, fail("expected a value (and an optional timestamp) after %s, got %q", name, rest)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fail("%s: a bucket count is a finite number >= 0, got %q", name, fields[0])
		}
		les, ok := labels["le"]
		if !ok {
			continue // a _bucket series that is not a histogram's
		}
		le, err := parseLe(les)
		if err != nil {
			return nil, fail("%s: %v", name, err)
		}
		if err := addBucket(out, strings.TrimSuffix(name, "_bucket"), labels, le, v, line); err != nil {
			return nil, fail("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", file, line+1, err)
	}
	return out, nil
}

// closingBrace is the index of the brace closing s's labels, skipping
// quoted values; -1 if none.
func closingBrace(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return i
		}
	}
	return -1
}

// ParsePromLabels reads label matchers or a series' labels: name="value"
// pairs separated by commas, braces optional (Prometheus's escapes \\, \"
// and \n in values). An empty string is no labels.
func ParsePromLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return nil, fmt.Errorf("labels %q: no closing brace", s)
		}
		s = s[1 : len(s)-1]
	}
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("expected name=\"value\", got %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		if !validLabelName(name) {
			return nil, fmt.Errorf("%q is not a label name", name)
		}
		s = strings.TrimLeft(s[eq+1:], " \t")
		if s == "" || s[0] != '"' {
			return nil, fmt.Errorf("the value of %s must be in double quotes", name)
		}
		var val strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, fmt.Errorf("the value of %s has no closing quote", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("label %s given twice", name)
		}
		out[name] = val.String()
		s = s[i+1:]
	}
}

func validLabelName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// promResponse is the JSON of Prometheus's HTTP API for query and
// query_range: a matrix (values) or a vector (value) of series.
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// PromPoint is one sample of a series: unix seconds and value.
type PromPoint struct{ T, V float64 }

// PromSeries is one series of a query's answer.
type PromSeries struct {
	Metric map[string]string
	Points []PromPoint
}

// ParsePromQuery reads the JSON of a query or query_range answer into
// its series; errors name file and series.
func ParsePromQuery(data []byte, file string) ([]PromSeries, error) {
	var r promResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not Prometheus query JSON: %w", file, err)
	}
	if r.Status != "" && r.Status != "success" {
		return nil, fmt.Errorf("%s: the query failed: %s: %s", file, r.ErrorType, r.Error)
	}
	switch r.Data.ResultType {
	case "matrix", "vector":
	default:
		return nil, fmt.Errorf("%s: data.resultType is %q: expected matrix (query_range) or vector", file, r.Data.ResultType)
	}
	if len(r.Data.Result) > maxSeries {
		return nil, fmt.Errorf("%s: more than %d series", file, maxSeries)
	}
	out := make([]PromSeries, 0, len(r.Data.Result))
	for i, res := range r.Data.Result {
		vals := res.Values
		if r.Data.ResultType == "vector" {
			vals = [][2]any{res.Value}
		}
		s := PromSeries{Metric: res.Metric}
		for j, v := range vals {
			t, ok := v[0].(float64)
			str, ok2 := v[1].(string)
			if !ok || !ok2 {
				return nil, fmt.Errorf("%s: series %d {%s}, point %d: expected [unix seconds, \"value\"], got %v", file, i, labelKey(res.Metric), j, v)
			}
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: series %d {%s}, point %d: value %q is not a number", file, i, labelKey(res.Metric), j, str)
			}
			if j > 0 && !(t > s.Points[j-1].T) {
				return nil, fmt.Errorf("%s: series %d {%s}, point %d: timestamps must increase, got %v after %v", file, i, labelKey(res.Metric), j, t, s.Points[j-1].T)
			}
			s.Points = append(s.Points, PromPoint{t, f})
		}
		out = append(out, s)
	}
	return out, nil
}

// jsonBuckets reads the _bucket series of a query_range answer; a series
// without __name__ (rate, increase) counts as the only histogram, named
// "".
func jsonBuckets(data []byte, file string) (map[string]map[string]*histSeries, error) {
	series, err := ParsePromQuery(data, file)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]*histSeries{}
	for i, s := range series {
		name := s.Metric["__name__"]
		les, ok := s.Metric["le"]
		if !ok || (name != "" && !strings.HasSuffix(name, "_bucket")) {
			continue
		}
		le, err := parseLe(les)
		if err != nil {
			return nil, fmt.Errorf("%s: series %d: %w", file, i, err)
		}
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("%s: series %d {%s} has no points", file, i, labelKey(s.Metric))
		}
		v := s.Points[len(s.Points)-1].V
		if len(s.Points) > 1 {
			v -= s.Points[0].V
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s: series %d {%s}: the count over the window is %v: a bucket counter must be finite and must not decrease (a counter reset?)", file, i, labelKey(s.Metric), v)
		}
		labels := make(map[string]string, len(s.Metric))
		for k, v := range s.Metric {
			labels[k] = v
		}
		if err := addBucket(out, strings.TrimSuffix(name, "_bucket"), labels, le, v, 0); err != nil {
			return nil, fmt.Errorf("%s: series %d: %w", file, i, err)
		}
	}
	return out, nil
}

// readHistogram reads dist: histogram's file into sv.Histogram.
func readHistogram(sv *Service, data []byte, file string) error {
	le, cnt, err := ParseHistogramFile(data, file, sv.Format, sv.Metric, sv.Selector)
	if err != nil {
		return err
	}
	for i := range le {
		le[i] *= 1e9
	}
	h, err := newHistogram(le, cnt, *sv)
	if err != nil {
		return fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "dist: "))
	}
	sv.Histogram = h
	return nil
}
