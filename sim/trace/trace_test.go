package trace

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		gap      int64
		wantT    []int64
		wantR    []float64
		wantErr  string
	}{
		{name: "seconds from 0", in: "time,rate\n0,1\n1,2\n2,3\n", wantT: []int64{0, 1e9, 2e9}, wantR: []float64{1, 2, 3}},
		{name: "other columns and order", in: "x,rate,time\na,5,10.5\nb,6,11.5\n", wantT: []int64{10.5e9, 11.5e9}, wantR: []float64{5, 6}},
		{name: "rfc3339", in: "time,rate\n2026-12-06T02:00:00Z,1\n2026-12-06T02:00:01Z,2\n", wantT: []int64{1796522400e9, 1796522401e9}, wantR: []float64{1, 2}},
		{name: "comments and blank lines", in: "# x\ntime,rate\n\n0,1\n# y\n1,2\n", wantT: []int64{0, 1e9}, wantR: []float64{1, 2}},
		{name: "empty file", in: "", wantErr: "empty file"},
		{name: "header only", in: "time,rate\n", wantErr: "line 1: no samples"},
		{name: "one sample", in: "time,rate\n0,1\n", wantErr: "1 samples; at least 2"},
		{name: "missing rate column", in: "time,qps\n0,1\n", wantErr: `line 1: no column "rate" (rate_column) in the header; it has "time", "qps"`},
		{name: "missing time column", in: "t,rate\n0,1\n", wantErr: `no column "time" (time_column)`},
		{name: "short line", in: "time,rate\n0,1\n1\n", wantErr: "line 3: 1 fields"},
		{name: "negative rate", in: "time,rate\n0,1\n1,-2\n", wantErr: "line 3: rate -2: expected a finite number"},
		{name: "NaN rate", in: "time,rate\n0,NaN\n1,2\n", wantErr: "line 2: rate NaN"},
		{name: "Inf rate", in: "time,rate\n0,1\n1,+Inf\n", wantErr: "line 3: rate +Inf"},
		{name: "not a number", in: "time,rate\n0,x\n", wantErr: `line 2: rate "x": expected a number`},
		{name: "bad time", in: "time,rate\nnoon,1\n", wantErr: `line 2: time "noon": expected seconds`},
		{name: "time goes back", in: "time,rate\n0,1\n2,1\n1,1\n", wantErr: "line 4: time 1s is not after the previous sample's (2s)"},
		{name: "repeated time", in: "time,rate\n0,1\n0,1\n", wantErr: "line 3: time 0s is not after"},
		{name: "gap", in: "time,rate\n0,1\n1,1\n2,1\n3,1\n20,1\n", wantErr: "line 6: a gap of 17s before this sample"},
		{name: "gap allowed by max_gap", in: "time,rate\n0,1\n1,1\n2,1\n3,1\n20,1\n", gap: 30e9, wantT: []int64{0, 1e9, 2e9, 3e9, 20e9}, wantR: []float64{1, 1, 1, 1, 1}},
		{name: "bad quotes", in: "time,rate\n0,\"1\n", wantErr: "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseCSV([]byte(tc.in), "time", "rate", tc.gap)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.T, tc.wantT) || !slices.Equal(r.Rate, tc.wantR) {
				t.Errorf("got %v %v, want %v %v", r.T, r.Rate, tc.wantT, tc.wantR)
			}
			if want := tc.wantT[len(tc.wantT)-1] + r.Step(); r.End != want {
				t.Errorf("got end %d, want the last sample + the median step, %d", r.End, want)
			}
		})
	}
}

func TestParsePrometheus(t *testing.T) {
	data, err := os.ReadFile("testdata/query_range.json")
	if err != nil {
		t.Fatal(err)
	}
	one := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"x"},"values":[[0,"1"],[15,"2"]]}]}}`
	for _, tc := range []struct {
		name, in, sel string
		wantR         []float64
		wantErr       string
	}{
		{name: "one series, no selector", in: one, wantR: []float64{1, 2}},
		{name: "selector picks a", in: string(data), sel: `{instance="a:9"}`, wantR: []float64{10, 12.5, 20, 0}},
		{name: "name and regex", in: string(data), sel: `rate{instance=~"b.*", job!="web"}`, wantR: []float64{1, 2, 3, 4}},
		{name: "several series, no selector", in: string(data), wantErr: `the matrix holds 2 series; set selector to pick one: rate{instance="a:9", job="api"}, rate{instance="b:9", job="api"}`},
		{name: "selector matches both", in: string(data), sel: `{job="api"}`, wantErr: "matches 2 series; it must match one"},
		{name: "selector matches none", in: string(data), sel: `{job="web"}`, wantErr: "matches none of the 2 series"},
		{name: "bad selector", in: one, sel: `{job=x}`, wantErr: "expected a quoted value"},
		{name: "status error", in: `{"status":"error","errorType":"bad_data","error":"parse error at char 4"}`, wantErr: `status "error" (bad_data): parse error at char 4`},
		{name: "vector", in: `{"status":"success","data":{"resultType":"vector","result":[]}}`, wantErr: `resultType "vector"`},
		{name: "no series", in: `{"status":"success","data":{"resultType":"matrix","result":[]}}`, wantErr: "holds no series"},
		{name: "not json", in: `time,rate`, wantErr: "not the JSON"},
		{name: "NaN value", in: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"x"},"values":[[0,"1"],[15,"NaN"]]}]}}`, wantErr: `series {job="x"} sample 2: rate NaN`},
		{name: "time goes back", in: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"x"},"values":[[15,"1"],[0,"1"]]}]}}`, wantErr: `sample 2: time 0s is not after`},
		{name: "value not a string", in: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[0,1]]}]}}`, wantErr: "sample 1: value 1: expected a string"},
		{name: "gap", in: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[0,"1"],[15,"1"],[30,"1"],[1000,"1"]]}]}}`, wantErr: "series {} sample 4: a gap of 16m10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParsePrometheus([]byte(tc.in), tc.sel, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Rate, tc.wantR) {
				t.Errorf("got rates %v, want %v", r.Rate, tc.wantR)
			}
		})
	}
}

func TestParseTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []int64
		wantErr  string
	}{
		{name: "seconds", in: "1.5\n2\n2\n3.25\n", want: []int64{1.5e9, 2e9, 2e9, 3.25e9}},
		{name: "rfc3339 and comments", in: "# x\n\n1970-01-01T00:00:01Z\n1970-01-01T00:00:01.5Z\n", want: []int64{1e9, 1.5e9}},
		{name: "empty", in: "# nothing\n", wantErr: "no timestamps"},
		{name: "decreasing", in: "1\n3\n2\n", wantErr: "line 3: time 2s is before line 2's (3s)"},
		{name: "not a time", in: "1\nGET /\n", wantErr: `line 2: time "GET /"`},
		{name: "NaN", in: "NaN\n", wantErr: `line 1: time "NaN"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTimestamps([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseAccessLog(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseAccessLog(data)
	if err != nil {
		t.Fatal(err)
	}
	// 13:55:36 -0700 is 20:55:36 UTC; two requests in that second are
	// spread over it; the 37 s line came after the 38 s one and is sorted.
	s := int64(971211336e9)
	if want := []int64{s, s + 0.5e9, s + 1e9, s + 2e9}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, tc := range []struct{ name, in, wantErr string }{
		{"no time field", "127.0.0.1 - - GET /\n", "line 1: no [time] field"},
		{"bad time", "x [10/Oct/2000 13:55:36] y\n", `line 1: time "10/Oct/2000 13:55:36"`},
		{"empty", "\n\n", "no requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAccessLog([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestCut(t *testing.T) {
	r := &Rates{T: []int64{0, 10, 20, 30}, Rate: []float64{1, 2, 3, 4}, End: 40}
	for _, tc := range []struct {
		name          string
		shift, window int64
		linear        bool
		wantT         []int64
		wantR         []float64
		wantEnd       int64
		wantErr       string
	}{
		{name: "all", wantT: []int64{0, 10, 20, 30}, wantR: []float64{1, 2, 3, 4}, wantEnd: 40},
		{name: "shift into a step", shift: 15, wantT: []int64{0, 5, 15}, wantR: []float64{2, 3, 4}, wantEnd: 25},
		{name: "shift onto a sample", shift: 10, wantT: []int64{0, 10, 20}, wantR: []float64{2, 3, 4}, wantEnd: 30},
		{name: "window", shift: 5, window: 20, wantT: []int64{0, 5, 15}, wantR: []float64{1, 2, 3}, wantEnd: 20},
		{name: "linear shift and window", shift: 15, window: 10, linear: true, wantT: []int64{0, 5, 10}, wantR: []float64{2.5, 3, 3.5}, wantEnd: 10},
		{name: "shift past the end", shift: 40, wantErr: "shift 40ns is not before the recording's end"},
		{name: "window past the end", shift: 10, window: 31, wantErr: "runs past the recording's end"},
		{name: "window so long shift+window overflows", shift: 10, window: math.MaxInt64 - 5, wantErr: "runs past the recording's end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Cut(tc.shift, tc.window, tc.linear)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.T, tc.wantT) || !slices.Equal(got.Rate, tc.wantR) || got.End != tc.wantEnd {
				t.Errorf("got %v %v end %d, want %v %v end %d", got.T, got.Rate, got.End, tc.wantT, tc.wantR, tc.wantEnd)
			}
		})
	}
}

func TestCutTimes(t *testing.T) {
	ts := []int64{100, 110, 110, 130, 150}
	for _, tc := range []struct {
		name          string
		shift, window int64
		want          []int64
		wantErr       string
	}{
		{name: "all", want: []int64{0, 10, 10, 30, 50}},
		{name: "shift", shift: 10, want: []int64{0, 0, 20, 40}},
		{name: "window excludes its end", shift: 10, window: 20, want: []int64{0, 0}},
		{name: "empty window", shift: 11, window: 5, wantErr: "no request in the window"},
		{name: "window so long start+window overflows", shift: 10, window: math.MaxInt64 - 50, want: []int64{0, 0, 20, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CutTimes(ts, tc.shift, tc.window)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}
