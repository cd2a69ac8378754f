package report

import (
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// The run page's scenario is the fields given, in the resolved units,
// with the defaults folded into a second, folded text.
func TestRunScenario(t *testing.T) {
	text := "name: t\ndescription: a test\nduration: 300s\nclients:\n  count: 5\n  arrival: {total_rate: 10/s}\n  throttle: {}\n" +
		"  retry: {max_attempts: 3, backoff: {base: 100ms}}\nfaults: [{kind: outage, start: 1m, duration: 10s}]\n"
	sets := []string{"clients.retry.max_attempts=4", "backend.workers=7"}
	sc, err := scenario.Parse([]byte(text), "t.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	given, err := scenario.Given([]byte(text), sets)
	if err != nil {
		t.Fatal(err)
	}
	w := &AsWritten{File: "t.yaml", Given: given, Flags: []string{"--set " + sets[0], "--set " + sets[1]}}
	w.Seed(9)
	got, err := RunScenario(sc, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Folded || got[1].Folded || !got[2].Folded {
		t.Fatalf("got %d texts (%+v), want the given fields, the overrides and every field folded", len(got), got)
	}
	for _, c := range []struct {
		what string
		text Text
		want []string
		not  []string
	}{
		{"given", got[0],
			[]string{"duration: 5m\n", "count: 5\n", "arrival: {total_rate: 10/s}\n", "max_attempts: 4\n",
				"backoff: {base: 100ms}\n", "throttle:\n        enabled: true\n        k: 2\n", // given as {}: its defaults
				"backend: {workers: 7}\n", "- {kind: outage, start: 1m, duration: 10s}\n"},
			[]string{"name:", "description:", "metrics:", "queue:", "cap:", "jitter:", "honor_retry_after", "breaker"}},
		{"overrides", got[1], []string{"--set clients.retry.max_attempts=4\n--set backend.workers=7\n--seed 9\n"}, nil},
		{"every field", got[2], []string{"name: t\n", "metrics:\n", "cap: 10s\n", "breaker: null\n"}, nil},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text.Body, w) {
				t.Errorf("%s: got\n%s\nwant it to hold %q", c.what, c.text.Body, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.text.Body, n) {
				t.Errorf("%s: got\n%s\nwant no %q", c.what, c.text.Body, n)
			}
		}
	}
	if !strings.HasPrefix(got[0].Body, "seed: ") { // given by --seed
		t.Errorf("given: got\n%s\nwant the seed first", got[0].Body)
	}

	// Without what was given, every field shows, folded.
	all, err := RunScenario(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !all[0].Folded || all[0].Body != got[2].Body {
		t.Errorf("got %+v, want every field alone, folded", all)
	}
}
