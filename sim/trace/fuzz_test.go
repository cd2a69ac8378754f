package trace

import (
	"os"
	"slices"
	"testing"
)

func seed(f *testing.F, files ...string) {
	for _, name := range files {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkRates: a parsed series keeps the invariants Cut and package sim
// rely on.
func checkRates(t *testing.T, r *Rates) {
	if len(r.T) < 2 || len(r.T) != len(r.Rate) || r.End <= r.T[len(r.T)-1] {
		t.Fatalf("bad shape: %d times, %d rates, end %d", len(r.T), len(r.Rate), r.End)
	}
	for i, v := range r.Rate {
		if !(v >= 0) || v > 1e308 || (i > 0 && r.T[i] <= r.T[i-1]) {
			t.Fatalf("sample %d: time %d rate %v", i, r.T[i], v)
		}
	}
	c, err := r.Cut((r.End-r.T[0])/3, 0, true)
	if err != nil || c.T[0] != 0 || c.End <= 0 {
		t.Fatalf("cut: %v %v", c, err)
	}
}

func FuzzParseCSV(f *testing.F) {
	seed(f, "rate.csv")
	f.Add([]byte("time,rate\n0,1\n1,NaN\n"))
	f.Add([]byte("rate,time\n1,2026-12-06T02:00:00Z\n2,2026-12-06T02:00:01Z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseCSV(data, "time", "rate", 0)
		if err != nil {
			return
		}
		checkRates(t, r)
	})
}

func FuzzParsePrometheus(f *testing.F) {
	seed(f, "query_range.json")
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sel := range []string{"", `{instance="a:9"}`} {
			r, err := ParsePrometheus(data, sel, 0)
			if err == nil {
				checkRates(t, r)
			}
		}
	})
}

func FuzzParseTimestamps(f *testing.F) {
	seed(f, "requests.txt")
	f.Add([]byte("1\n0.5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseTimestamps(data)
		if err != nil {
			return
		}
		if len(ts) == 0 || !slices.IsSorted(ts) {
			t.Fatalf("got %v", ts)
		}
		if _, err := CutTimes(ts, 0, 0); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseAccessLog(f *testing.F) {
	seed(f, "access.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseAccessLog(data)
		if err != nil {
			return
		}
		if len(ts) == 0 || !slices.IsSorted(ts) {
			t.Fatalf("got %v", ts)
		}
	})
}

func FuzzParseSelector(f *testing.F) {
	f.Add(`rate{instance="a:9", job=~"api.*"}`)
	f.Add(`{a!="b",}`)
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err == nil {
			sel.Match(map[string]string{"a": "b"})
		}
	})
}
