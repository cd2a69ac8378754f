package rundir

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// timeseries.csv layout is a file format: pinned by a golden file.
func TestCSVGolden(t *testing.T) {
	s := metrics.NewSeries(500e6, 3)
	s.Rows[0] = metrics.Row{Offered: 10, Attempts: 12, Retries: 2, Succeeded: 9, Received: 12, Accepted: 11, Rejected: 1,
		UsefulNS: 400e6, WastedNS: 5e6, QueueAreaNS: 250e6, CapacityNS: 2 * 500e6, LatencyP50: 1.5e6, LatencyP99: 9.25e6}
	s.Rows[1] = metrics.Row{Offered: 3, FailedOutage: 3, LatencyP50: math.NaN(), LatencyP99: math.NaN()}
	s.Rows[2] = metrics.Row{Offered: 1, DropThrottle: 1, LatencyP50: math.NaN(), LatencyP99: math.NaN(), CapacityNS: 500e6}
	var buf bytes.Buffer
	if err := WriteTimeseries(&buf, s, 2); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "timeseries.golden.csv")
	if *update {
		os.WriteFile(path, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("CSV changed:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
}

// ReadCSV gives back what WriteCSV wrote (counts exactly, worker time to
// the nanosecond the fractions can carry).
func TestCSVRoundTrip(t *testing.T) {
	s := metrics.NewSeries(1e9, 2)
	s.Rows[0] = metrics.Row{Offered: 10, Attempts: 12, Retries: 2, Succeeded: 9, DropThrottle: 1, DropNoConn: 2, Received: 12, Accepted: 11,
		Rejected: 1, Unanswered: 3, Connected: 7, ConnectAttempts: 4, ConnectsRcvd: 3, UsefulNS: 4e9, WastedNS: 5e8,
		HandshakeWastedNS: 25e7, QueueAreaNS: 15e8, CapacityNS: 10e9, LatencyP50: 1.5e6, LatencyP99: 9.25e6}
	s.Rows[1] = metrics.Row{Offered: 3, LatencyP50: math.NaN(), LatencyP99: math.NaN()}
	var buf bytes.Buffer
	if err := WriteTimeseries(&buf, s, 10); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTimeseries(&buf, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.Interval != s.Interval || len(got.Rows) != 2 {
		t.Fatalf("interval %d rows %d", got.Interval, len(got.Rows))
	}
	a, b := s.Rows[0], got.Rows[0]
	// p90 and max are not in the file: read back unknown (NaN), not 0.
	if !math.IsNaN(b.LatencyP90) || !math.IsNaN(b.LatencyMax) {
		t.Errorf("row 0 p90, max: got %g, %g, want NaN, NaN (not in timeseries.csv)", b.LatencyP90, b.LatencyMax)
	}
	b.LatencyP90, b.LatencyMax = 0, 0
	if a != b {
		t.Errorf("row 0:\n got %+v\nwant %+v", b, a)
	}
	if !math.IsNaN(got.Rows[1].LatencyP50) || got.Rows[1].Offered != 3 {
		t.Errorf("row 1: %+v", got.Rows[1])
	}
}

// ReadCSV refuses rows a run cannot have written, naming the line and
// the column: a NaN, unreadable or negative count or worker time, and a
// t_s that does not increase. An empty cell still reads as 0.
func TestReadCSVRefusesImpossibleRows(t *testing.T) {
	const head = "t_s,interval_s,offered,util_useful,latency_p50_ms\n"
	for _, tt := range []struct {
		name, rows, want string // want "": accepted
	}{
		{"good", "0,1,5,0.5,10\n1,1,,0.25,\n", ""},
		{"NaN count", "0,1,5,0.5,10\n1,1,NaN,0.5,10\n", `line 3: offered is "NaN"`},
		{"negative count", "0,1,-2,0.5,10\n", `line 2: offered is "-2"`},
		{"unreadable count", "0,1,many,0.5,10\n", `line 2: offered is "many"`},
		{"negative worker time", "0,1,5,-0.5,10\n", `line 2: util_useful is "-0.5"`},
		{"decreasing t_s", "0,1,5,0.5,10\n2,1,5,0.5,10\n1,1,5,0.5,10\n", `line 4: t_s is "1" after 2`},
		{"repeated t_s", "0,1,5,0.5,10\n0,1,5,0.5,10\n", `line 3: t_s is "0" after 0`},
		{"NaN t_s", "NaN,1,5,0.5,10\n", `line 2: t_s is "NaN"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadTimeseries(strings.NewReader(head+tt.rows), 2)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want it read", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), "timeseries.csv "+tt.want)):
				t.Errorf("got %v, want an error with %q", err, "timeseries.csv "+tt.want)
			}
		})
	}
}

// The degraded column is written, and read back, only for a service that
// degrades: every other file keeps the columns it had.
func TestCSVDegradedColumn(t *testing.T) {
	for _, deg := range []bool{false, true} {
		s := metrics.NewSeries(1e9, 1)
		s.Degrading = deg
		s.Rows[0] = metrics.Row{Offered: 4, Accepted: 4, Degraded: 3, LatencyP50: math.NaN(), LatencyP99: math.NaN()}
		var buf bytes.Buffer
		if err := WriteTimeseries(&buf, s, 1); err != nil {
			t.Fatal(err)
		}
		head, _, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
		if got := bytes.HasSuffix(head, []byte(","+DegradedColumn)); got != deg {
			t.Errorf("degrading %v: got a degraded column %v, want %v", deg, got, deg)
		}
		got, err := ReadTimeseries(&buf, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if deg {
			want = 3
		}
		if got.Degrading != deg || got.Rows[0].Degraded != want {
			t.Errorf("degrading %v: read back degrading %v, degraded %d; want %v, %d", deg, got.Degrading, got.Rows[0].Degraded, deg, want)
		}
	}
}
