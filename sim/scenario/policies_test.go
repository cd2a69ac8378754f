package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A policy section validates the same wherever it sits: in the fleet
// (clients.X), in a group (clients.groups.0.X) or in a service's call
// (services.0.calls.0.X), the same bad section gets the same messages, in
// the same order, under its own path.
func TestPolicySectionValidatesTheSameEverywhere(t *testing.T) {
	places := []struct {
		name   string
		prefix string
		set    func(key, val string) string
	}{
		{"fleet", "clients", func(k, v string) string { return "clients." + k + "=" + v }},
		{"group", "clients.groups.0", func(k, v string) string {
			return "clients.groups=[{name: a, share: 1, " + k + ": " + v + "}]"
		}},
		{"call", "services.0.calls.0", func(k, v string) string { return "services.0.calls.0." + k + "=" + v }},
	}
	tests := []struct {
		key, val string
		want     []string // "path below the section: message", in order
	}{
		{"throttle", "{k: 0}", []string{"k: must be > 0, got 0"}},
		{"throttle", "{window: 7ns, buckets: 2}", []string{
			"buckets: window 7ns does not split into 2 equal buckets",
			"buckets: buckets of 3ns over a 10m run are more than 2^32 buckets; use fewer buckets"}}, // the run's duration counts
		{"throttle", "{group_size: 4, padding: 0, max_probability: 2}", []string{
			`group_size: is 4 but scope is "client": set scope: group to share a throttle`,
			"padding: must be > 0 (the SRE book: 1, gRPC's RLS throttler: 8), got 0",
			"max_probability: must be in (0, 1], got 2"}},
		{"throttle", "{accept_outcomes: []}", []string{"accept_outcomes: must name at least one outcome (usually [ok])"}},
		{"retry", "{max_attempts: 0}", []string{"max_attempts: must be in 1..255, got 0"}},
		{"retry", "{backoff: {base: 2s, cap: 1s, multiplier: 0.5}}", []string{
			"backoff.cap: must be >= base (2s), got 1s",
			"backoff.multiplier: must be >= 1, got 0.5"}},
		{"retry", "{backoff: {jitter: decorrelated, base: 0s, throttle_base: 1s}}", []string{
			"backoff.base: decorrelated jitter needs base > 0",
			"backoff.throttle_base: does not apply to decorrelated jitter"}},
		{"retry", "{budget: {group_size: 0}}", []string{"budget.group_size: must be >= 1, got 0"}},
		{"retry", "{budget: {kind: token-bucket, bucket_capacity: 1, bucket_initial: 2}}", []string{
			"budget.bucket_initial: must not exceed bucket_capacity (1), got 2"}},
		{"retry", "{budget: {kind: retry-breaker, window: 1us}}", []string{"budget.window: must be 0 or at least 1ms, got 1us"}},
		{"retry", "{budget: {kind: sre, ratio: 2}}", []string{"budget: policy: SRE budget Ratio must be in (0, 1]"}},
		{"retry", "{budget: {kind: grpc, charge: send}}", []string{
			"budget.charge: send does not apply to kind grpc: it charges nothing when it grants a retry (it counts the retry's result)"}},
		{"breaker", "{group_size: 0, failure_outcomes: []}", []string{
			"group_size: must be >= 1, got 0",
			"failure_outcomes: must name at least one outcome"}},
		{"breaker", "{open_jitter: 1}", []string{": open_jitter must be in [0, 1), got 1"}},
		{"rate_limiter", "{beta: 1, c: 0, min_rate: 0/s, throttle_outcomes: []}", []string{
			"beta: must be in (0, 1), got 1",
			"c: must be > 0, got 0",
			"min_rate: must be > 0, got 0/s",
			"throttle_outcomes: must name at least one outcome (usually [rejected])"}},
		{"hedge", "{delay: -1s, quantile: 1, min_samples: 0}", []string{
			"delay: must be >= 0, got -1s",
			"quantile: must be in [0, 1) (0: use delay; e.g. 0.95), got 1",
			"min_samples: must be >= 1, got 0"}},
		{"adaptive_breaker", "{defensiveness: 0, window: 1500ms, cap: 0, initial_error_rate: 2, group_size: 0, failure_outcomes: []}", []string{
			"defensiveness: must be a finite number > 0 (Semian: 5), got 0",
			"window: must be a multiple of interval (1s), at most 65536 of them, got 1500ms",
			"initial_error_rate: must be in [0, 1], got 2",
			"cap: must be in (0, 1], got 0",
			"failure_outcomes: must name at least one outcome",
			"group_size: must be >= 1, got 0"}},
	}
	// Every section of a policy stack has a case, so a section added to
	// Policies is checked in all three places.
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.key] = true
	}
	pt := reflect.TypeFor[Policies]()
	fields, names := yamlFields(pt)
	for _, name := range names {
		if pt.FieldByIndex(fields[name]).Type.Kind() == reflect.Pointer && !covered[name] {
			t.Errorf("section %s has no bad case here: add one", name)
		}
	}
	for _, tc := range tests {
		for _, pl := range places {
			t.Run(pl.name+"/"+tc.key+"="+tc.val, func(t *testing.T) {
				_, errs := loadErrs(t, graphBase, pl.set(tc.key, tc.val))
				section := pl.prefix + "." + tc.key
				var got []string
				for _, e := range errs {
					rest, ok := strings.CutPrefix(e.Path, section)
					if !ok {
						t.Errorf("got a problem outside %s: %v", section, e)
						continue
					}
					got = append(got, strings.TrimPrefix(rest, ".")+": "+e.Msg)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
				}
			})
		}
	}
}

// A group's timeout and deadline are the fleet's unless the group gives
// them: left out or null, they are inherited; given, even as 0 or as an
// empty value (the zero duration), they are the group's.
func TestGroupInheritsTimeoutAndDeadline(t *testing.T) {
	const base = `name: g
clients:
  count: 10
  arrival: {total_rate: 10/s}
  timeout: 3s
  deadline: 20s
  groups:
    - name: a
      share: 1
`
	for _, tc := range []struct {
		name, group   string
		sets          []string
		timeout, dead time.Duration
	}{
		{"left out", "", nil, 3 * time.Second, 20 * time.Second},
		{"null", "      timeout: null\n      deadline: ~\n", nil, 3 * time.Second, 20 * time.Second},
		{"zero", "      timeout: 0s\n      deadline: 0\n", nil, 0, 0},
		{"empty: the zero value", "      timeout:\n", nil, 0, 20 * time.Second},
		{"given", "      timeout: 500ms\n      deadline: 5s\n", nil, 500 * time.Millisecond, 5 * time.Second},
		{"given, then --set null", "      timeout: 500ms\n", []string{"clients.groups.0.timeout=null"}, 3 * time.Second, 20 * time.Second},
		{"--set 0", "", []string{"clients.groups.a.deadline=0s"}, 3 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := loadOK(t, base+tc.group, tc.sets...)
			check := func(how string, sc *Scenario) {
				t.Helper()
				p := sc.Clients.ResolvedGroups()[0].Policies
				if time.Duration(p.Timeout) != tc.timeout || time.Duration(p.Deadline) != tc.dead {
					t.Errorf("%s: got timeout %s, deadline %s; want %s, %s", how, p.Timeout, p.Deadline, tc.timeout, tc.dead)
				}
			}
			check("loaded", sc)
			// As written in summary.json and read back: by the decoder
			// (sweep's checks parse it with overrides) and by encoding/json
			// (ReadSummary); both keep what the group gives, and write it
			// back the same.
			b, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(b, "summary.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			check("parsed back", again)
			var read Scenario
			if err := json.Unmarshal(b, &read); err != nil {
				t.Fatal(err)
			}
			check("unmarshalled", &read)
			for how, s := range map[string]*Scenario{"parsed back": again, "unmarshalled": &read} {
				if b2, _ := json.Marshal(s); string(b2) != string(b) {
					t.Errorf("%s and written again: got\n%s\nwant\n%s", how, b2, b)
				}
			}
		})
	}
}

// The resolved scenario written into summary.json (and from it into the
// report's scenario.yaml, and into every sweep run's key) is pinned for a
// scenario with policies in the fleet, in groups and in calls.
func TestPoliciesJSONPinned(t *testing.T) {
	sc, err := Load(filepath.Join("testdata", "policies.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "policies.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("json of testdata/policies.yaml: got\n%s\nwant testdata/policies.json\n%s", got, want)
	}
}

// A scenario built in code has no positions to sort its problems by: they
// come in the order validation finds them, fleet sections around the
// groups as before sections validated themselves.
func TestValidateOrderOfPolicyProblems(t *testing.T) {
	sc := Default()
	sc.Name = "x"
	sc.Clients.Arrival.Rate = 0.1
	sc.Clients.Throttle = &Throttle{}
	sc.Clients.Throttle.setDefaults()
	sc.Clients.Throttle.K = 0
	sc.Clients.Retry = &Retry{}
	sc.Clients.Retry.setDefaults()
	sc.Clients.Retry.MaxAttempts = 0
	sc.Clients.Breaker = &Breaker{}
	sc.Clients.Breaker.setDefaults()
	sc.Clients.Breaker.GroupSize = 0
	sc.Clients.Hedge = &Hedge{}
	sc.Clients.Hedge.setDefaults()
	sc.Clients.Hedge.MinSamples = 0
	sc.Clients.RateLimiter = &RateLimiter{}
	sc.Clients.RateLimiter.setDefaults()
	sc.Clients.RateLimiter.C = 0
	var g Group
	if err := json.Unmarshal([]byte(`{"name": "a", "share": 1, "timeout": "-1s", "deadline": null,
		"retry": {"max_attempts": 0, "backoff": {"multiplier": 1}}, "hedge": {"min_samples": 0}}`), &g); err != nil {
		t.Fatal(err)
	}
	sc.Clients.Groups = []Group{g, g}
	sc.Clients.Groups[1].Name = "b"
	var errs Errors
	if err := sc.Validate(); !errors.As(err, &errs) {
		t.Fatalf("Validate: got %v, want Errors", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Path+": "+e.Msg)
	}
	want := []string{
		"clients.throttle.k: must be > 0, got 0",
		"clients.retry.max_attempts: must be in 1..255, got 0",
		"clients.groups.0.timeout: must be >= 0, got -1s",
		"clients.groups.0.retry.max_attempts: must be in 1..255, got 0",
		"clients.groups.0.hedge.min_samples: must be >= 1, got 0",
		"clients.groups.1.timeout: must be >= 0, got -1s",
		"clients.groups.1.retry.max_attempts: must be in 1..255, got 0",
		"clients.groups.1.hedge.min_samples: must be >= 1, got 0",
		"clients.breaker.group_size: must be >= 1, got 0",
		"clients.hedge.min_samples: must be >= 1, got 0",
		"clients.rate_limiter.c: must be > 0, got 0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if p := sc.Clients.Groups[0]; fmt.Sprint(sc.Clients.ResolvedGroups()[0].Policies.Deadline) != fmt.Sprint(sc.Clients.Deadline) {
		t.Errorf("group %q read with deadline null: got deadline %s, want the fleet's %s", p.Name, sc.Clients.ResolvedGroups()[0].Policies.Deadline, sc.Clients.Deadline)
	}
}
