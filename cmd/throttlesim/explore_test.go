package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

var mapArgs = []string{"testdata/map-small.yaml", "--load", "clients.arrival.total_rate=30/s..60/s/2",
	"--trigger", "clients.arrival.profile.1.at=61s..80s", "--grid", "4", "--resolution", "2", "-q"}

func TestMapWritesAndShardsMergeToTheSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("byte identity of map shards: make test runs it; the -short race pass (CI) keeps to the tests of concurrency")
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	// A little importance sampling below each boundary (a fixed factor,
	// no pilot), to check it is written and merged like the rest (its
	// statistics are tested in sim/explore).
	rare := []string{"--rare", "in_system", "--rare-paths", "6", "--rare-points", "1", "--rare-from", "60s", "--rare-until", "64s", "--rare-factor", "1.5"}
	if r := runCLI(t, append(append([]string{"map", "--out", whole, "-j", "2"}, rare...), mapArgs...)...); r.code != 0 {
		t.Fatalf("map: exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"map.csv", "boundary.csv", "map.json", "map.png", "report.html", "rare.csv"} {
		if _, err := os.Stat(filepath.Join(whole, f)); err != nil {
			t.Errorf("map wrote no %s", f)
		}
	}
	// report.html shows the boundary as printed and the boundary table,
	// with the chart embedded.
	if h := string(readFile(t, filepath.Join(whole, "report.html"))); !strings.Contains(h, "<td>60/s</td><td>bracketed</td>") ||
		!strings.Contains(h, `id="boundary"`) || !strings.Contains(h, "data:image/png;base64,") {
		t.Errorf("report.html lacks the boundary table, its text or the map chart")
	}
	img, err := png.Decode(bytes.NewReader(readFile(t, filepath.Join(whole, "map.png"))))
	if err != nil || img.Bounds().Dx() < 800 {
		t.Errorf("map.png: %v, %v", err, img)
	}
	// The small system's threshold: at 30/s a 2x spike (60/s) stays under
	// the ~100/s the server completes, so it always recovers; at 60/s the
	// spike (120/s) overloads it at once.
	b := string(readFile(t, filepath.Join(whole, "boundary.csv")))
	if !strings.Contains(b, "\n30/s,above,") || !strings.Contains(b, "\n60/s,bracketed,") {
		t.Errorf("boundary.csv: got\n%s\nwant 30/s above the range and 60/s bracketed", b)
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		out := filepath.Join(dir, "shard"+s[:1])
		if r := runCLI(t, append(append([]string{"map", "--out", out, "--shard", s, "-j", "1"}, rare...), mapArgs...)...); r.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", s, r.code, r.stderr)
		}
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	if r := runCLI(t, append([]string{"map", "merge", "--out", merged}, shards...)...); r.code != 0 {
		t.Fatalf("map merge: exit %d\n%s", r.code, r.stderr)
	}
	sameTree(t, "merged map vs unsharded", testfs.Tree(t, whole), testfs.Tree(t, merged))
	if c := string(readFile(t, filepath.Join(whole, "rare.csv"))); !strings.Contains(c, ",tilt,1.5 1.5 ") {
		t.Errorf("rare.csv has no tilt row at factor 1.5:\n%s", c)
	}
	// The same with splitting.
	split := filepath.Join(dir, "split")
	if r := runCLI(t, append([]string{"map", "--out", split, "-j", "2", "--rare", "in_system", "--rare-method", "split", "--rare-paths", "6", "--rare-points", "1", "--rare-from", "60s"}, mapArgs...)...); r.code != 0 {
		t.Fatalf("map --rare-method split: exit %d\n%s", r.code, r.stderr)
	}
	if c := string(readFile(t, filepath.Join(split, "rare.csv"))); !strings.Contains(c, ",split,") {
		t.Errorf("rare.csv has no split row:\n%s", c)
	}
	if r := runCLI(t, "map", "merge", "--out", filepath.Join(dir, "m2"), shards[0]); r.code != 1 || !strings.Contains(r.stderr, "shard 1 of 2 is missing") {
		t.Errorf("merge without a shard: exit %d, %s", r.code, r.stderr)
	}
}

func TestTuneWritesAndFindsTheRetryOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("40 simulations of 300 s; TestTuneInfeasible covers the command under -short")
	}
	out := filepath.Join(t.TempDir(), "tune")
	r := runCLI(t, "tune", "../../scenarios/tune-retries.yaml", "--param", "clients.retry.max_attempts=1..6",
		"--minimize", "amplification", "--subject-to", "success_ratio>=99.9%", "--budget", "100", "--final-seeds", "5", "--sensitivity", "6", "--out", out)
	if r.code != 0 {
		t.Fatalf("tune: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "chosen: clients.retry.max_attempts=3:") || !strings.Contains(r.stdout, "runner-up: clients.retry.max_attempts=4:") {
		t.Errorf("stdout:\n%s\nwant 3 attempts chosen, 4 the runner-up", r.stdout)
	}
	if h := string(readFile(t, filepath.Join(out, "report.html"))); !strings.Contains(h, "chosen: clients.retry.max_attempts=3:") ||
		!strings.Contains(h, `id="candidates"`) || !strings.Contains(h, "max_attempts: 3") {
		t.Errorf("report.html lacks the choice, the candidates or best.yaml")
	}
	for _, f := range []string{"tune.csv", "best.yaml", "tune.json", "pareto.png", "sensitivity.png"} {
		b := readFile(t, filepath.Join(out, f))
		if strings.HasSuffix(f, ".png") {
			if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dy() < 400 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if b := string(readFile(t, filepath.Join(out, "best.yaml"))); !strings.Contains(b, "max_attempts: 3") {
		t.Errorf("best.yaml does not set 3 attempts:\n%s", b)
	}
	// best.yaml is a scenario that runs.
	if r := runCLI(t, "validate", filepath.Join(out, "best.yaml")); r.code != 0 {
		t.Errorf("validate best.yaml: exit %d\n%s", r.code, r.stderr)
	}
}

func TestTuneAndMapBadInput(t *testing.T) {
	small := "testdata/map-small.yaml"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown metric", []string{"tune", small, "--param", "clients.timeout=1s..2s", "--minimize", "amplificaton"}, 2, `did you mean "amplification"`},
		{"unknown constraint metric", []string{"tune", small, "--param", "clients.timeout=1s..2s", "--minimize", "amplification", "--subject-to", "succes_ratio>=0.9"}, 2, `did you mean "success_ratio"`},
		{"empty range", []string{"tune", small, "--param", "clients.timeout=2s..2s", "--minimize", "amplification"}, 2, "empty range"},
		{"no param", []string{"tune", small, "--minimize", "amplification"}, 2, "--param PATH=a..b is required"},
		{"bad path", []string{"tune", small, "--param", "clients.retry.max_atempts=1..3", "--minimize", "amplification"}, 1, "max_atempts"},
		{"no objective", []string{"tune", small, "--param", "clients.timeout=1s..2s"}, 2, "--minimize METRIC"},
		{"bad objective mode", []string{"tune", small, "--param", "clients.timeout=1s..2s", "--minimize", "amplification", "--objective", "median"}, 2, "expected mean or worst"},
		{"budget too small", []string{"tune", small, "--param", "clients.timeout=1s..2s", "--minimize", "amplification", "--budget", "10"}, 2, "budget of 10 runs is too small"},
		{"zero step", []string{"tune", small, "--param", "clients.timeout=1s..2s:0s", "--minimize", "amplification"}, 2, "the step must be above 0"},
		{"step wider than range", []string{"tune", small, "--param", "clients.timeout=1s..2s:2s", "--minimize", "amplification"}, 2, "wider than the range"},
		{"step and steps", []string{"tune", small, "--param", "clients.timeout=1s..2s/4:0.1s", "--minimize", "amplification"}, 2, "not both"},
		{"fractional step of an integer", []string{"tune", small, "--param", "clients.retry.max_attempts=1..6:1.5", "--minimize", "amplification"}, 2, "integer field; give a whole step"},
		{"map step", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s:10/s", "--trigger", "clients.arrival.profile.1.at=61s..80s"}, 2, "a step (:step) is for tune"},
		{"map empty load", []string{"map", small, "--load", "clients.arrival.total_rate=50/s..50/s", "--trigger", "clients.arrival.profile.1.at=61s..80s"}, 2, "empty range"},
		{"map no trigger", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s"}, 2, "--trigger PATH=a..b are required"},
		{"map units", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80000ms"}, 2, "different units"},
		{"map rare measure", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_sytem"}, 2, `did you mean "in_system"`},
		{"map rare levels", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system=300,200"}, 2, "levels must increase"},
		{"map rare level", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system=3x"}, 2, `level "3x" is not a number`},
		{"map rare-until missing", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system", "--rare-from", "60s"}, 2, "needs --rare-until after --rare-from"},
		{"map rare-until late", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system", "--rare-from", "60s", "--rare-until", "999s"}, 2, "after the scenario's end"},
		{"map rare method", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system", "--rare-method", "splitting"}, 2, `--rare-method "splitting": want tilt or split`},
		{"map rare tilt levels", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system=200,300", "--rare-until", "70s"}, 2, "levels are for --rare-method split"},
		{"map rare-until alone", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare-until", "70s"}, 2, "--rare-until needs --rare MEASURE"},
		{"map rare-at alone", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare-at", "65s"}, 2, "--rare-at needs --rare MEASURE"},
		{"map rare-at unit", []string{"map", small, "--load", "clients.arrival.total_rate=30/s..60/s", "--trigger", "clients.arrival.profile.1.at=61s..80s", "--rare", "in_system", "--rare-method", "split", "--rare-at", "65"}, 2, `expected a value in the range's unit "s"`},
		{"map no recovery rule", []string{"map", small, "--set", "clients.arrival.profile=[]", "--load", "clients.arrival.total_rate=30/s..60/s/2", "--trigger", "clients.timeout=1s..2s", "--out", filepath.Join(t.TempDir(), "m")}, 1, "recovery rule does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			// A search that cannot succeed keeps no runs to resume.
			if i := slices.Index(tc.args, "--out"); i >= 0 {
				if _, err := os.Stat(tc.args[i+1] + ".incomplete"); err == nil {
					t.Errorf("a failed search left %s.incomplete", tc.args[i+1])
				}
			}
		})
	}
}

func TestTuneInfeasible(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tune")
	r := runCLI(t, "tune", "../../scenarios/tune-retries.yaml", "--set", "duration=30s", "--set", "clients.arrival.profile=[]", "--param", "clients.retry.max_attempts=1..2",
		"--minimize", "amplification", "--subject-to", "success_ratio>=0.999", "--budget", "60", "--final-seeds", "3", "--final", "2", "--sensitivity", "0", "--out", out)
	// Two attempts succeed with 1 − 0.1² = 99%: below 99.9% whatever the seeds.
	if r.code != 1 || !strings.Contains(r.stderr, "infeasible: no candidate meets success_ratio>=0.999") || !strings.Contains(r.stdout, "INFEASIBLE") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 and an infeasible report", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "tune.csv")); err != nil {
		t.Errorf("an infeasible tuning still writes tune.csv: %v", err)
	}
}

// map merge names the shards it was not given.
func TestMapMergeNamesMissingShards(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"map"}, mapArgs...)
	args[3] = "clients.arrival.total_rate=30/s..60/s/3" // 3 load levels
	var shards []string
	for _, s := range []string{"0/3", "2/3"} {
		out := filepath.Join(dir, "shard"+s[:1])
		if r := runCLI(t, append(args, "--shard", s, "--out", out)...); r.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", s, r.code, r.stderr)
		}
		shards = append(shards, out)
	}
	r := runCLI(t, append([]string{"map", "merge", "--out", filepath.Join(dir, "m")}, shards...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "shard 1 of 3 is missing: give every shard's folder (2 given)") {
		t.Errorf("merge without shard 1: exit %d, %q", r.code, r.stderr)
	}
}
