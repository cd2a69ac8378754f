// Package fit builds a scenario from what Prometheus recorded of a real
// server over a window of time: the arrival trace, the service-time
// histogram, the capacity, the error and rejection rates and the faults
// (throttlesim fit). Its input is a Source: a Prometheus server's HTTP API
// through the official Go client, or the query answers exported to files.
package fit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Window is the span of time fitted and its resolution: the queries are
// evaluated every Step from Start+Step to End, each rate over the Step
// before it.
type Window struct {
	Start, End time.Time
	Step       time.Duration
}

// Query is one PromQL query fit runs, under a name: the name of its file
// among the exported answers (queries/NAME.json).
type Query struct {
	Name, Expr string
	// Optional queries may answer nothing (a server without the metric):
	// the estimate they feed is then skipped and the report says so.
	Optional bool
}

// Source answers range queries.
type Source interface {
	// QueryRange is q's answer over w: its series, and the JSON of the
	// answer as Prometheus's HTTP API gives it (written to queries/).
	QueryRange(ctx context.Context, q Query, w Window) ([]scenario.PromSeries, []byte, error)
}

// Prometheus is a Source that asks a Prometheus server through its HTTP
// API (github.com/prometheus/client_golang/api).
type Prometheus struct {
	URL string
	api v1.API
}

// NewPrometheus is the Source of the Prometheus server at url
// (http://host:9090).
func NewPrometheus(url string) (*Prometheus, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("fit: --prometheus %s: %w", url, err)
	}
	return &Prometheus{URL: url, api: v1.NewAPI(c)}, nil
}

// QueryRange runs q over w on the server.
func (p *Prometheus) QueryRange(ctx context.Context, q Query, w Window) ([]scenario.PromSeries, []byte, error) {
	v, _, _, err := p.api.QueryRange(ctx, q.Expr, v1.Range{Start: w.Start.Add(w.Step), End: w.End, Step: w.Step})
	if err != nil {
		var ae *v1.Error
		if errors.As(err, &ae) && ae.Type != v1.ErrClient {
			return nil, nil, fmt.Errorf("fit: Prometheus at %s: query %s (%s): %w", p.URL, q.Name, q.Expr, err)
		}
		return nil, nil, fmt.Errorf("fit: cannot reach Prometheus at %s (query %s): %w", p.URL, q.Name, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, nil, fmt.Errorf("fit: Prometheus at %s: query %s answered a %s, want a matrix", p.URL, q.Name, v.Type())
	}
	raw, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": m}})
	if err != nil {
		return nil, nil, fmt.Errorf("fit: query %s: %w", q.Name, err)
	}
	out := make([]scenario.PromSeries, 0, len(m))
	for _, s := range m {
		ps := scenario.PromSeries{Metric: map[string]string{}}
		for k, v := range s.Metric {
			ps.Metric[string(k)] = string(v)
		}
		for _, pt := range s.Values {
			ps.Points = append(ps.Points, scenario.PromPoint{T: float64(pt.Timestamp) / 1000, V: float64(pt.Value)})
		}
		out = append(out, ps)
	}
	return out, raw, nil
}

// Files is a Source that reads each query's answer from Dir: NAME.json
// (the JSON of query_range, as fit writes to queries/) or NAME.csv (a
// header row with a time column, unix seconds, a value column and any
// other columns as the series' labels).
type Files struct{ Dir string }

// QueryRange reads q's answer; w is not used (the files hold their own
// window).
func (f Files) QueryRange(_ context.Context, q Query, _ Window) ([]scenario.PromSeries, []byte, error) {
	for _, ext := range []string{".json", ".csv"} {
		name := filepath.Join(f.Dir, q.Name+ext)
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("fit: %w", err)
		}
		if ext == ".csv" {
			s, err := ParseCSV(data, name)
			return s, nil, err
		}
		s, err := scenario.ParsePromQuery(data, name)
		if err != nil {
			return nil, nil, fmt.Errorf("fit: %w", err)
		}
		return s, data, nil
	}
	if q.Optional {
		return nil, nil, nil
	}
	what := "the arrivals series, whose points give the window" // Fit's first read names no query
	if q.Expr != "" {
		what = "the answer of " + q.Expr
	}
	return nil, nil, fmt.Errorf("fit: --from-files %s: no %s.json or %s.csv (%s)", f.Dir, q.Name, q.Name, what)
}

// ParseCSV reads series from CSV: a header row naming a time column (unix
// seconds or RFC 3339), a value column and label columns; rows of one
// series (the same labels) in increasing time. Errors name file and line.
func ParseCSV(data []byte, file string) ([]scenario.PromSeries, error) {
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("fit: %s: %w", file, err)
	}
	ti, vi := -1, -1
	for i, h := range head {
		switch strings.TrimSpace(h) {
		case "time":
			ti = i
		case "value":
			vi = i
		}
	}
	if ti < 0 || vi < 0 {
		return nil, fmt.Errorf("fit: %s:1: the header must name a time and a value column, got %q", file, strings.Join(head, ","))
	}
	var out []scenario.PromSeries
	at := map[string]int{}
	for {
		rec, err := r.Read()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("fit: %s: %w", file, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(head) {
			return nil, fmt.Errorf("fit: %s:%d: %d fields, the header has %d", file, line, len(rec), len(head))
		}
		t, err := parseTime(rec[ti])
		if err != nil {
			return nil, fmt.Errorf("fit: %s:%d: time: %w", file, line, err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[vi]), 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, fmt.Errorf("fit: %s:%d: value %q is not a finite number", file, line, rec[vi])
		}
		labels := map[string]string{}
		for i, h := range head {
			if i != ti && i != vi {
				labels[strings.TrimSpace(h)] = rec[i]
			}
		}
		key := fmt.Sprint(labels)
		k, ok := at[key]
		if !ok {
			if len(out) >= 100_000 {
				return nil, fmt.Errorf("fit: %s:%d: more than 100000 series", file, line)
			}
			k = len(out)
			at[key] = k
			out = append(out, scenario.PromSeries{Metric: labels})
		}
		pts := out[k].Points
		if n := len(pts); n > 0 && !(t > pts[n-1].T) {
			return nil, fmt.Errorf("fit: %s:%d: times must increase within a series, got %v after %v", file, line, t, pts[n-1].T)
		}
		out[k].Points = append(pts, scenario.PromPoint{T: t, V: v})
	}
	return out, nil
}

// parseTime reads unix seconds or RFC 3339.
func parseTime(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither unix seconds nor RFC 3339", s)
	}
	return float64(t.UnixNano()) / 1e9, nil
}
