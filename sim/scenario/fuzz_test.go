package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: any bytes, with any overrides (the set string, split at
// newlines), give either a valid scenario or an error naming the file; never
// a panic.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	if len(files) == 0 {
		f.Fatal("found no scenarios/*.yaml files to seed the corpus with")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
		f.Add(data, "clients.throttle.k=3\nfaults.0.duration=60s")
		f.Add(data, "clients.throttle=null")
	}
	f.Add([]byte(validBase), "faults.1={kind: capacity, start: 3m, duration: 10s}")
	f.Add([]byte(validBase), "backend.replicas=4\nbackend.outlier_detection={consecutive_errors: 2}\nbackend.health_check={interval: 1s}\nbackend.subset=2")
	f.Add([]byte(validBase), "backend.concurrency_limit={kind: envoy, jitter: -1, window: true}")
	f.Add([]byte(validBase), "backend.concurrency_limit={kind: gradient2, min: 0, initial: 500}\nclients.priority={levels: [1, 2]}")
	f.Add([]byte(validBase), "backend.concurrency_limit={kind: failsafe, initial_rejection_factor: 2, max_rejection_factor: 1, rejection_threshold: -1s}")
	f.Add([]byte(validBase), "backend.priority_shedding={user_levels: 0}\nclients.groups=[{name: a, share: 1, priority: {level: 8}}]")
	f.Add([]byte(validBase), "backend.pid_shedding={kp: 0, ki: 0, kd: 0, user_levels: 2000}")
	f.Add([]byte(validBase), "backend.degrade={when_queue_above: -1, when_utilization_above: 2, service_fraction: 0}")
	f.Add([]byte(validBase), "clients.groups=[{name: a, share: 1, timeout: null, deadline: 0s}, {name: b, share: 2, timeout:, retry: {max_attempts: 0}}]")
	f.Add([]byte(graphBase), "services.0.calls.0.timeout=~\nservices.0.calls.0.hedge={delay: -1s}")
	f.Add([]byte(minimal), "clients.retry.backoff.jitter=ful")
	f.Add([]byte(""), "")
	f.Add([]byte(""), "name=x\nclients.arrival.rate=1/s")
	f.Add([]byte("name: [unclosed\n"), "")
	f.Add([]byte("- a\n- b\n"), "name=x")
	f.Add([]byte("~\n"), "name=x")
	f.Add([]byte("\xef\xbb\xbfname: t\nclients: {arrival: {total_rate: 10/s}}\n"), "faults.0.start=1m")
	f.Add([]byte("name: t\nname: t\nclients: &c {arrival: {total_rate: 1/s}, throttle: *c}\n"), "")
	f.Add([]byte("name: t\nclients: {count: many, arrival: {rate: -1/s}}\nduration: 30\n"), "nothing")
	f.Add([]byte("name: t\nclients: {arrival: {total_rate: 10/s}}\nfaults: [{kind: outage, start: 1s, duration: 1s}]\n"), "faults.1.kind=outage\nfaults.9.start=1s")
	f.Add([]byte("? [a]\n: 1\n"), "a.b.c=[1, {d: e}]")
	f.Add([]byte("name: t\nclients: {arrival: {total_rate: 10/s}}\nnetwork: {delay: {dist: exponential, mean: 5ms}}\n"), "backend.kind=occ\nclients.arrival={process: once}")

	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\n")
		}
		const name = "fuzz.yaml"
		sc, err := Parse(data, name, sets)
		if err != nil {
			if sc != nil {
				t.Errorf("Parse: got a scenario and the error %q, want nil with an error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, name) {
				t.Errorf("error: got %q, want it to start with the file name %q", msg, name)
			}
			var errs Errors
			if errors.As(err, &errs) {
				if len(errs) == 0 {
					t.Error("Parse: got an empty Errors, want at least one problem")
				}
				for i, e := range errs {
					if e.File != name || e.Msg == "" {
						t.Errorf("problem %d: got file %q message %q, want file %q and a message", i, e.File, e.Msg, name)
					}
					if i > 0 && !posLess(errs[i-1].Pos, e.Pos) && errs[i-1].Pos != e.Pos {
						t.Errorf("problems %d and %d out of order: %+v then %+v", i-1, i, errs[i-1].Pos, e.Pos)
					}
				}
			}
			return
		}
		if sc == nil {
			t.Fatal("Parse: got a nil scenario and no error")
		}
		if err := sc.Validate(); err != nil {
			t.Errorf("Parse accepted a scenario that Validate rejects:\n%v", err)
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Errorf("json.Marshal of a valid scenario (as summary.json does): got %v, want nil", err)
		}
		// summary.json read back (ReadSummary) writes the same JSON: the
		// same run key.
		var read Scenario
		if err := json.Unmarshal(b, &read); err != nil {
			t.Errorf("json.Unmarshal of a scenario's JSON: got %v, want nil", err)
		} else if b2, _ := json.Marshal(&read); string(b2) != string(b) {
			t.Errorf("JSON read back and written again: got\n%s\nwant\n%s", b2, b)
		}
		// What validated must also be runnable (regressions of
		// TestRejects* in validate_test.go).
		if err := runnable(sc); err != nil {
			t.Errorf("Parse accepted a scenario that cannot run: %v", err)
		}
		again, err := Parse(data, name, sets)
		if err != nil || !reflect.DeepEqual(sc, again) {
			t.Errorf("Parse is not deterministic: second parse got %+v, %v", again, err)
		}
	})
}

// posLess is the order of sortErrors: file lines, then --set overrides,
// then problems without a position.
func posLess(a, b Pos) bool {
	rank := func(p Pos) [3]int {
		switch {
		case p.Line > 0:
			return [3]int{0, p.Line, p.Col}
		case p.Set > 0:
			return [3]int{1, p.Set, 0}
		}
		return [3]int{2, 0, 0}
	}
	ra, rb := rank(a), rank(b)
	for i := range ra {
		if ra[i] != rb[i] {
			return ra[i] < rb[i]
		}
	}
	return false
}

// runnable checks, without overflow, what a run needs of a valid scenario:
// a finite arrival rate, the right number of metrics rows, and every fault
// inside the run.
func runnable(sc *Scenario) error {
	if r := sc.PerClientRate(); math.IsInf(r, 0) || math.IsNaN(r) || r <= 0 {
		return fmt.Errorf("per-client rate %v/s", r)
	}
	d, iv := big.NewInt(int64(sc.Duration)), big.NewInt(int64(sc.Metrics.Interval))
	rows := new(big.Int).Add(d, iv)
	rows.Sub(rows, big.NewInt(1)).Quo(rows, iv)
	if !rows.IsInt64() || rows.Int64() != int64(sc.Intervals()) {
		return fmt.Errorf("Intervals() = %d, want %s", sc.Intervals(), rows)
	}
	for i, f := range sc.Faults {
		end := new(big.Int).Add(big.NewInt(int64(f.Start)), big.NewInt(int64(f.Duration)))
		if f.Start < 0 || end.Cmp(d) > 0 {
			return fmt.Errorf("faults.%d runs from %d ns to %s ns, outside the run (%d ns)", i, int64(f.Start), end, int64(sc.Duration))
		}
	}
	return nil
}
