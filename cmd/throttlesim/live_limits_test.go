package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/live"
	"github.com/throttlesim/throttlesim/sim/rundir"
)

// --max-in-flight reaches the engine and the results: against a target
// that never answers, at most 2 requests are in flight, the cap and the
// generator's drops are in summary.json's live section and the
// printout, and the one-line warning appears exactly when arrivals were
// dropped. (How many arrivals fire before the horizon is the machine's
// business; the relations checked hold whatever it is. The exact counts
// are TestMaxInFlightDropsAtTheCap's, in live.)
func TestLiveMaxInFlight(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the run's end cancels
	}))
	defer ts.Close()
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "live", file, "--target", ts.URL, "--max-in-flight", "2", "--set", "clients.timeout=0s",
		"--set", "clients.retry=null", "--set", "duration=1s", "--out", out, "--no-charts")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	doc, err := rundir.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	l := doc.Live
	if l == nil || l.MaxInFlight != 2 || l.PeakInFlight > 2 || doc.Summary.Offered > 2 || doc.Summary.Succeeded != 0 {
		t.Fatalf("summary.json live %+v, offered %d, succeeded %d; want the cap 2 kept", l, doc.Summary.Offered, doc.Summary.Succeeded)
	}
	if !strings.Contains(r.stdout, "in flight") || !strings.Contains(r.stdout, "of at most 2") {
		t.Errorf("stdout lacks the in-flight line:\n%s", r.stdout)
	}
	// The backend behind --target is not ours: its line says so, not zeros.
	if !strings.Contains(r.stdout, "backend                not measured: "+ts.URL+" is outside throttlesim") || strings.Contains(r.stdout, "0 received") {
		t.Errorf("stdout shows the target's backend as measured:\n%s", r.stdout)
	}
	warned := strings.Contains(r.stderr, "the load generator could not keep the schedule") && strings.Contains(r.stderr, "dropped at the cap")
	if warned != (l.GeneratorDropped > 0) || l.ScheduleOK != (l.GeneratorDropped == 0 && live.ScheduleKept(l.ScheduleLagP99MS, l.ScheduleLagMaxMS)) {
		t.Errorf("%d dropped, schedule ok %v, stderr %q: want the warning exactly when arrivals were dropped", l.GeneratorDropped, l.ScheduleOK, r.stderr)
	}
	t.Logf("TIMING %d arrivals dropped at the cap (idle machine: about 48, the arrivals of 50/s for 1 s but the 2 sent)", l.GeneratorDropped)

	if r := runCLI(t, "live", file, "--max-in-flight", "-1"); r.code != exitUsage || !strings.Contains(r.stderr, "--max-in-flight") {
		t.Errorf("--max-in-flight -1: exit %d, stderr %q; want a usage error", r.code, r.stderr)
	}
}

func TestScheduleWarning(t *testing.T) {
	for _, tt := range []struct {
		info live.Info
		want string
	}{
		{live.Info{ScheduleLagP99MS: 80, ScheduleLagMaxMS: 1200, MaxInFlight: 10000},
			"throttlesim: warning: the load generator could not keep the schedule (arrival lag p99 80.0 ms, max 1200 ms): the result is this machine's, not the scenario's"},
		{live.Info{ScheduleLagP99MS: 1, ScheduleLagMaxMS: 3, MaxInFlight: 10000, GeneratorDropped: 1234},
			"throttlesim: warning: the load generator could not keep the schedule (1,234 arrivals dropped at the cap of 10,000 in flight (--max-in-flight); arrival lag p99 1.0 ms, max 3 ms): the result is this machine's, not the scenario's"},
	} {
		if got := scheduleWarning(&tt.info); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
