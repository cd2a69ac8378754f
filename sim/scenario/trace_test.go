package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const traceBase = `name: t
duration: 4s
clients:
  count: 10
  arrival:
    process: poisson
    trace: {file: rate.csv, format: csv}
backend:
  workers: 10
  service: {dist: constant, mean: 10ms}
`

// Every bad trace, cycle or ramp is an error naming its field (or the data
// file's line) and what was expected.
func TestTraceValidation(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"rate.csv":      "time,rate\n0,10\n1,20\n2,30\n3,40\n",
		"bad.csv":       "time,rate\n0,10\n1,20\n0.5,30\n",
		"zero.csv":      "time,rate\n0,0\n1,0\n",
		"req.txt":       "1\n2\n3\n",
		"access.log":    "h - - [10/Oct/2000:13:55:36 -0700] \"GET /\" 200 1\n",
		"prom.json":     `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[0,"1"],[1,"1"],[2,"1"],[3,"1"],[4,"1"]]},{"metric":{"a":"2"},"values":[[0,"1"],[1,"1"]]}]}}`,
		"scenario.yaml": traceBase,
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "scenario.yaml")
	for _, tc := range []struct {
		name string
		sets []string
		want string // "" : valid
	}{
		{"valid csv", nil, ""},
		{"valid prometheus with selector", []string{`clients.arrival.trace={file: prom.json, format: prometheus, selector: '{a="1"}'}`}, ""},
		{"valid replay", []string{"clients.arrival.process=replay", "clients.arrival.trace={file: req.txt, format: timestamps}"}, ""},
		{"valid access log", []string{"clients.arrival.process=replay", "clients.arrival.trace={file: access.log, format: access_log}"}, ""},
		{"valid cycle", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=100/s", "clients.arrival.cycle={points: [{at: 0h, multiplier: 0.3}, {at: 14h, multiplier: 1.5}]}"}, ""},
		{"valid ramp", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=100/s", "clients.arrival.profile=[{at: 2s, multiplier: 3, ramp: true}]"}, ""},
		{"rate and trace", []string{"clients.arrival.total_rate=100/s"}, "clients.arrival.rate: the trace sets the rate over time"},
		{"replay without trace", []string{"clients.arrival.process=replay", "clients.arrival.trace=null"}, "clients.arrival.trace: process replay replays recorded requests"},
		{"replay of a rate series", []string{"clients.arrival.process=replay"}, `clients.arrival.trace.format: process replay reads request times: timestamps or access_log, got "csv"`},
		{"poisson of timestamps", []string{"clients.arrival.trace={file: req.txt, format: timestamps}"}, "clients.arrival.trace.format: process poisson reads a rate series"},
		{"once with a trace", []string{"clients.arrival.process=once"}, "clients.arrival.trace: does not apply to process once"},
		{"unknown format", []string{"clients.arrival.trace.format=tsv"}, `clients.arrival.trace.format: "tsv" is not one of csv, prometheus, timestamps, access_log`},
		{"no file", []string{"clients.arrival.trace.file=nope.csv"}, "clients.arrival.trace.file: no such file"},
		{"bad data", []string{"clients.arrival.trace.file=bad.csv"}, "bad.csv:4:1: clients.arrival.trace.file: time 0.5s is not after the previous sample's (1s)"},
		{"all zero", []string{"clients.arrival.trace.file=zero.csv", "duration=1s"}, "every rate in the replayed part is 0"},
		{"missing column", []string{"clients.arrival.trace.rate_column=qps"}, `rate.csv:1:1: clients.arrival.trace.file: no column "qps" (rate_column)`},
		{"two series", []string{"clients.arrival.trace={file: prom.json, format: prometheus}"}, "series; set selector to pick one"},
		{"selector on csv", []string{`clients.arrival.trace.selector='{a="1"}'`}, "clients.arrival.trace.selector: applies to format prometheus only"},
		{"scale 0", []string{"clients.arrival.trace.scale=0"}, "clients.arrival.trace.scale: must be > 0"},
		{"scale with replay", []string{"clients.arrival.process=replay", "clients.arrival.trace={file: req.txt, format: timestamps, scale: 2}"}, "clients.arrival.trace.scale: applies to a rate series"},
		{"duration past the recording", []string{"duration=5s"}, "duration: 5s is longer than the replayed recording (4s of rate.csv from shift 0s)"},
		{"shift past the end", []string{"clients.arrival.trace.shift=4s"}, "clients.arrival.trace.shift: " + filepath.Join(dir, "rate.csv") + ": shift 4s is not before the recording's end"},
		{"window past the end", []string{"clients.arrival.trace.shift=1s", "clients.arrival.trace.window=4s"}, "clients.arrival.trace.window: "},
		{"shift then duration", []string{"clients.arrival.trace.shift=1s"}, "duration: 4s is longer than the replayed recording (3s"},
		{"sha mismatch", []string{"clients.arrival.trace.file_sha256=00"}, "clients.arrival.trace.file_sha256: "},
		{"cycle with trace", []string{"clients.arrival.cycle={points: [{at: 0h, multiplier: 1}]}"}, "clients.arrival.cycle: does not apply with a trace"},
		{"cycle points out of order", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=1/s", "clients.arrival.cycle={points: [{at: 2h, multiplier: 1}, {at: 1h, multiplier: 1}]}"}, "clients.arrival.cycle.points.1.at: points must be in increasing time order"},
		{"cycle point past the period", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=1/s", "clients.arrival.cycle={period: 1h, points: [{at: 2h, multiplier: 1}]}"}, "clients.arrival.cycle.points.0.at: must be in [0, period=1h)"},
		{"cycle without points", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=1/s", "clients.arrival.cycle={period: 1h}"}, "clients.arrival.cycle.points: give at least one point"},
		{"ramp at 0", []string{"clients.arrival.trace=null", "clients.arrival.total_rate=1/s", "clients.arrival.profile=[{at: 0s, multiplier: 3, ramp: true}]"}, "clients.arrival.profile.0.ramp: a ramp ends at its step's time"},
		{"no 'not read' after a decode error", []string{"clients.count=many"}, "clients.count"},
		{"ramp on a trace", []string{"clients.arrival.profile=[{at: 2s, multiplier: 3, ramp: true}]"}, "clients.arrival.profile.0.ramp: applies without trace and cycle only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(file, tc.sets)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "was not read") && !strings.Contains(tc.want, "was not read"):
				t.Errorf("got %v, want no complaint that the trace was not read", err)
			}
		})
	}
}
