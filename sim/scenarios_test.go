package sim

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/fingerprints.json from the current trajectories")

func loadScenario(t testing.TB, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "scenarios", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

type golden struct {
	Fingerprint string `json:"fingerprint"`
	Events      uint64 `json:"events"`
}

// Trajectory fingerprints: a hash over every event of every shipped
// scenario. An unintended change of behaviour changes a fingerprint and
// fails here; an intended one is recorded with `go test ./sim -run
// Fingerprint -update` in a commit that says why the trajectory changed.
func TestScenarioFingerprints(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "scenarios", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no scenarios found")
	}
	path := filepath.Join("testdata", "fingerprints.json")
	want := map[string]golden{}
	if !*update {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]golden{}
	for _, f := range files {
		name := filepath.Base(f)
		res := mustRun(t, loadScenario(t, name))
		got[name] = golden{Fingerprint: fmt.Sprintf("%016x", res.Fingerprint), Events: res.Events}
		if !*update {
			w, ok := want[name]
			switch {
			case !ok:
				t.Errorf("%s: no golden fingerprint (run with -update)", name)
			case w != got[name]:
				t.Errorf("%s: trajectory changed: got %+v, want %+v", name, got[name], w)
			}
		}
	}
	if *update {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d scenarios)", path, len(names))
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("golden fingerprint for %s, which no longer exists", n)
		}
	}
}

func TestOutageScenarioRecovers(t *testing.T) {
	res := mustRun(t, loadScenario(t, "outage.yaml"))
	r := res.Summary.Recovery
	if !r.Applicable || !r.Recovered || r.RecoveryTimeS == nil {
		t.Fatalf("outage.yaml did not recover: %+v", r)
	}
	// The run has 540 s after the fault; a recovery must be inside it and
	// take at least one recovery window (10 s).
	if *r.RecoveryTimeS < 10 || *r.RecoveryTimeS > 540 {
		t.Errorf("recovery time %.0f s, want 10..540 s", *r.RecoveryTimeS)
	}
	t.Logf("outage.yaml recovers %.0f s after the fault", *r.RecoveryTimeS)
}

// The lesson of the default scenario: without the throttle, retries,
// answers nobody waits for and rejections keep the backend over its
// capacity for the rest of the run, long after the workers are back.
func TestOutageScenarioNeedsTheThrottle(t *testing.T) {
	sc, err := scenario.Load(filepath.Join("..", "scenarios", "outage.yaml"), []string{"clients.throttle=null"})
	if err != nil {
		t.Fatal(err)
	}
	s := mustRun(t, sc).Summary
	if s.Recovery.Recovered {
		t.Errorf("recovered without the throttle at %.0f s: the scenario no longer shows the trade-off", *s.Recovery.RecoveredAtS)
	}
	// Above capacity from the fault (120 s) to the end (720 s), less
	// the intervals noise brings below it.
	if s.TimeAboveCapacityS == nil || *s.TimeAboveCapacityS < 500 {
		t.Errorf("time above capacity %v s without the throttle, want >= 500 s", s.TimeAboveCapacityS)
	}
}

func TestNoPolicyWastesMoreThanThrottled(t *testing.T) {
	throttled := mustRun(t, loadScenario(t, "overload.yaml")).Summary
	none := mustRun(t, loadScenario(t, "overload-no-policy.yaml")).Summary
	t.Logf("wasted work: throttled %.4f, no policy %.4f; received: %d vs %d",
		*throttled.WastedWorkFraction, *none.WastedWorkFraction, throttled.Received, none.Received)
	if *none.WastedWorkFraction <= *throttled.WastedWorkFraction {
		t.Errorf("no-policy clients waste %.4f of worker time, throttled %.4f: want more without a policy",
			*none.WastedWorkFraction, *throttled.WastedWorkFraction)
	}
	if none.Received <= throttled.Received {
		t.Errorf("the backend received %d attempts without a policy and %d with the throttle", none.Received, throttled.Received)
	}
}

// The resolved scenario in summary.json loads back as a scenario file (JSON
// is YAML) and resolves to the same thing: it states every effective value.
func TestResolvedScenarioLoadsBack(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "scenarios", "*.yaml"))
	for _, f := range files {
		sc := loadScenario(t, filepath.Base(f))
		sc.Sweep = nil
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		// Named as if beside the scenario: a data file it names (a trace) is
		// relative to the scenario's folder.
		again, err := scenario.Parse(b, f+" (resolved)", nil)
		if err != nil {
			t.Errorf("%s: the resolved scenario does not load: %v", filepath.Base(f), err)
			continue
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Errorf("%s: resolving twice changes it:\n%s\n%s", filepath.Base(f), b, b2)
		}
	}
}

// The occ backend is one row with no workers: none of the figures that
// compare the load with a capacity apply, and they are null, not 0.
func TestOCCHasNoCapacityFigures(t *testing.T) {
	s := mustRun(t, loadScenario(t, "contention.yaml")).Summary
	for name, v := range map[string]*float64{
		"peak_received_over_capacity":        s.PeakReceivedOverCapacity,
		"fault_load_over_effective_capacity": s.FaultLoadOverCapacity,
		"time_above_capacity_s":              s.TimeAboveCapacityS,
		"recovery_wasted_fraction":           s.RecoveryWastedFraction,
	} {
		if v != nil {
			t.Errorf("%s: got %g, want null", name, *v)
		}
	}
}
