package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

func TestParseShardAuto(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    map[string]string
		shard  string
		i, n   int
		errHas []string // every substring must be in the error; nil: no error
	}{
		{name: "kubernetes", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "3", "THROTTLESIM_SHARDS": "8"}, i: 3, n: 8},
		{name: "kubernetes first", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "THROTTLESIM_SHARDS": "1"}, i: 0, n: 1},
		{name: "slurm from 0", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}, i: 2, n: 4},
		{name: "slurm without min", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"}, i: 2, n: 4},
		{name: "slurm from 1", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, i: 3, n: 4},
		{name: "both agree", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "1", "THROTTLESIM_SHARDS": "2", "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"}, i: 1, n: 2},
		{name: "explicit wins over env", shard: "1/3", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "THROTTLESIM_SHARDS": "9"}, i: 1, n: 3},
		{name: "none set", shard: "auto", env: nil,
			errHas: []string{"JOB_COMPLETION_INDEX", "THROTTLESIM_SHARDS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"}},
		{name: "k8s count missing", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "1"}, errHas: []string{"THROTTLESIM_SHARDS", "only JOB_COMPLETION_INDEX"}},
		{name: "k8s index missing", shard: "auto", env: map[string]string{"THROTTLESIM_SHARDS": "4"}, errHas: []string{"JOB_COMPLETION_INDEX", "only THROTTLESIM_SHARDS"}},
		{name: "not a number", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "one", "THROTTLESIM_SHARDS": "4"}, errHas: []string{`JOB_COMPLETION_INDEX="one"`}},
		{name: "negative", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "-1", "SLURM_ARRAY_TASK_COUNT": "4"}, errHas: []string{"SLURM_ARRAY_TASK_ID"}},
		{name: "bad min", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "x"}, errHas: []string{"SLURM_ARRAY_TASK_MIN"}},
		{name: "index out of range", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "4", "THROTTLESIM_SHARDS": "4"}, errHas: []string{"out of range", "JOB_COMPLETION_INDEX"}},
		{name: "zero count", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "THROTTLESIM_SHARDS": "0"}, errHas: []string{"out of range"}},
		{name: "slurm past the end", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, errHas: []string{"out of range", "SLURM_ARRAY_TASK_MIN"}},
		{name: "slurm below min", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, errHas: []string{"below SLURM_ARRAY_TASK_MIN"}},
		{name: "slurm count missing", shard: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "0"}, errHas: []string{"SLURM_ARRAY_TASK_COUNT"}},
		{name: "engines disagree", shard: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "1", "THROTTLESIM_SHARDS": "2", "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2"},
			errHas: []string{"Kubernetes says shard 1/2", "Slurm says 0/2"}},
		{name: "garbage", shard: "automatic", env: nil, errHas: []string{"or auto"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			i, n, err := parseShardEnv(tt.shard, func(k string) string { return tt.env[k] })
			if tt.errHas == nil {
				if err != nil || i != tt.i || n != tt.n {
					t.Fatalf("got %d/%d, %v; want %d/%d", i, n, err, tt.i, tt.n)
				}
				return
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("got %d/%d, %v; want a usage error", i, n, err)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

// --shard auto in a Slurm array that starts at 1 runs the same share as the
// explicit --shard, byte for byte; with no engine variables it is exit 2.
// Not parallel: it sets the process environment.
func TestSweepShardAutoMatchesExplicit(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	args := []string{"sweep", file, "--vary", "clients.throttle.k=1.5,2,3", "--seeds", "2", "-q"}
	explicit := filepath.Join(dir, "explicit")
	if r := runCLI(t, append(args, "--shard", "1/3", "--out", explicit)...); r.code != 0 {
		t.Fatalf("sweep --shard 1/3: exit %d\n%s", r.code, r.stderr)
	}
	for _, k := range []string{envK8sIndex, envK8sShards, envSlurmID, envSlurmCount, envSlurmMin} {
		t.Setenv(k, "")
	}
	if r := runCLI(t, append(args, "--shard", "auto", "--out", filepath.Join(dir, "none"))...); r.code != 2 || !strings.Contains(r.stderr, envSlurmID) {
		t.Errorf("--shard auto without an engine: exit %d, %s", r.code, r.stderr)
	}
	t.Setenv(envSlurmMin, "1")
	t.Setenv(envSlurmID, "2")
	t.Setenv(envSlurmCount, "3")
	auto := filepath.Join(dir, "auto")
	if r := runCLI(t, append(args, "--shard", "auto", "--out", auto)...); r.code != 0 {
		t.Fatalf("sweep --shard auto: exit %d\n%s", r.code, r.stderr)
	}
	sameTree(t, "--shard auto vs 1/3", testfs.Tree(t, explicit), testfs.Tree(t, auto))
}
