package scenario

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dist: histogram (issue 23 part 2): inline buckets, the Prometheus text
// exposition and query_range JSON, and every way the data can be wrong.
func TestServiceHistogram(t *testing.T) {
	dir := filepath.Join("testdata", "histogram")
	parse := func(service string, sets ...string) (*Scenario, error) {
		return Parse([]byte("name: s\nclients:\n  arrival: {total_rate: 10/s}\nbackend:\n  service: "+service+"\n"),
			filepath.Join(dir, "s.yaml"), sets)
	}
	for _, tt := range []struct {
		name, service string
		sets          []string
		mean          float64 // ns
	}{
		// (10·25 + 20·75 + 10·175) ms / 40 = 87.5 ms
		{"inline", "{dist: histogram, buckets: [{le: 0.05, count: 10}, {le: 100ms, count: 30}, {le: 0.25, count: 40}, {le: +Inf, count: 40}]}", nil, 87.5e6},
		{"inline, inf capped", "{dist: histogram, inf_cap: 1s, buckets: [{le: 0.5, count: 1}, {le: +Inf, count: 2}]}", nil, (0.25e9 + 0.75e9) / 2},
		{"set path", "{dist: histogram, buckets: [{le: 1, count: 1}, {le: +Inf, count: 1}]}", []string{"backend.service.buckets.0.le=2"}, 1e9},
		{"text, selector", "{dist: histogram, file: metrics.txt, selector: 'code=\"200\"'}", nil, 87.5e6},
		{"text, metric and braces", "{dist: histogram, file: metrics.txt, format: text, metric: http_server_request_duration_seconds, selector: '{code=\"200\", method=\"GET\"}'}", nil, 87.5e6},
		// The increase over the window: 10 in (0, 0.1], 20 in (0.1, 0.2].
		{"query_range", "{dist: histogram, file: range.json}", nil, (10*0.05e9 + 20*0.15e9) / 30},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := parse(tt.service, tt.sets...)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.Backend.Service.MeanNS(); math.Abs(got-tt.mean) > 1 {
				t.Errorf("mean: got %v ns, want %v ns", got, tt.mean)
			}
		})
	}
	for _, tt := range []struct{ service, want string }{
		{"{dist: histogram}", "backend.service.buckets: dist: histogram needs 1 to 10000 buckets"},
		{"{dist: histogram, buckets: [{le: 0.1, count: 1}]}", "backend.service.buckets: a histogram must end with the +Inf bucket"},
		{"{dist: histogram, buckets: [{le: 0.2, count: 1}, {le: 0.1, count: 2}, {le: +Inf, count: 2}]}", "bounds (le) must be >= 0 and increase"},
		{"{dist: histogram, buckets: [{le: 0.1, count: 3}, {le: 0.2, count: 2}, {le: +Inf, count: 3}]}", "cumulative counts must be finite and must not decrease"},
		{"{dist: histogram, buckets: [{le: 0.1, count: 0}, {le: +Inf, count: 0}]}", "the +Inf bucket's count is 0"},
		{"{dist: histogram, buckets: [{le: 0.1, count: 1}, {le: +Inf, count: 2}]}", "give a finite cap above 1e+08 ns for them (inf_cap)"},
		{"{dist: histogram, buckets: [{le: fast, count: 1}]}", `backend.service.buckets.0.le: a bucket bound (le) is a number of seconds (0.005), a duration (5ms) or +Inf, got "fast"`},
		{"{dist: histogram, within: log, buckets: [{le: +Inf, count: 1}]}", `"log" is not one of uniform, log_uniform`},
		{"{dist: histogram, file: metrics.txt}", "2 series of http_server_request_duration_seconds_bucket match"},
		{"{dist: histogram, file: metrics.txt, selector: 'code=\"404\"'}", `no series of http_server_request_duration_seconds_bucket matches selector "code=\"404\""`},
		{"{dist: histogram, file: metrics.txt, metric: nope, selector: 'code=\"200\"'}", "no series nope_bucket"},
		{"{dist: histogram, file: metrics.txt, selector: 'code=200'}", "selector: the value of code must be in double quotes"},
		{"{dist: histogram, file: noinf.txt}", filepath.Join(dir, "noinf.txt") + ": a histogram must end with the +Inf bucket"},
		{"{dist: histogram, file: badline.txt}", filepath.Join(dir, "badline.txt") + ":3: labels of x_bucket have no closing brace"},
		{"{dist: histogram, file: reset.json}", "series 0 {__name__=\"x_bucket\",le=\"0.1\"}: the count over the window is -95"},
		{"{dist: histogram, file: range.json, buckets: [{le: +Inf, count: 1}]}", "backend.service.buckets: give buckets inline or a file, not both"},
		{"{dist: exponential, mean: 1s, within: log_uniform}", "backend.service.within: applies to dist: histogram only"},
		{"{dist: exponential, mean: 1s, buckets: [{le: +Inf, count: 1}]}", "backend.service.buckets: applies to dist: histogram only"},
		{"{dist: histogram, buckets: [{le: +Inf, count: 1}], metric: x}", "backend.service.format: format, metric and selector apply to a histogram's file only"},
	} {
		_, err := parse(tt.service)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", tt.service, err, tt.want)
		}
	}
	// A slowdown's replacement is one of the simple distributions or a
	// mixture, as for empirical.
	_, err := Parse([]byte("name: s\nclients:\n  arrival: {total_rate: 10/s}\nfaults:\n  - {kind: slowdown, start: 1m, duration: 10s, service_time: {dist: histogram, buckets: [{le: 1, count: 1}, {le: +Inf, count: 1}]}}\n"), "s.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), `a slowdown's service_time is constant, exponential, lognormal or mixture, got "histogram"`) {
		t.Errorf("a histogram in a slowdown: got %v", err)
	}
}

// FuzzParseHistogramFile: any bytes, in either format, give buckets that
// make a histogram or an error naming the file; never a panic.
func FuzzParseHistogramFile(f *testing.F) {
	for _, name := range []string{"metrics.txt", "range.json", "noinf.txt", "badline.txt", "reset.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "histogram", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "", `code="200"`)
	}
	f.Add([]byte(`a_bucket{le="1",x="a\"}"} 3 1700000000`), "a", "")
	f.Fuzz(func(t *testing.T, data []byte, metric, selector string) {
		for _, format := range []HistogramFormat{"", FormatText, FormatQueryRange} {
			le, cnt, err := ParseHistogramFile(data, "f.txt", format, metric, selector)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f.txt") {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			if len(le) != len(cnt) {
				t.Fatalf("%d bounds, %d counts", len(le), len(cnt))
			}
			for i := range le {
				le[i] *= 1e9
			}
			_, _ = newHistogram(le, cnt, Service{InfCap: 1e12})
		}
	})
}

// FuzzParsePromLabels: label strings parse or fail, never panic, and a
// parsed set is read back the same from its key.
func FuzzParsePromLabels(f *testing.F) {
	for _, s := range []string{``, `{}`, `a="b"`, `{a="b", c="d\"e"}`, `a=b`, `{a="b"`, `a="\n\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParsePromLabels(s)
		if err != nil {
			return
		}
		back, err := ParsePromLabels(labelKey(m))
		if err != nil {
			t.Fatalf("%q: its key %q does not parse: %v", s, labelKey(m), err)
		}
		if labelKey(back) != labelKey(m) {
			t.Fatalf("%q: got %q back, want %q", s, labelKey(back), labelKey(m))
		}
	})
}
