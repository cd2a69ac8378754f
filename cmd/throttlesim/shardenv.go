package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Variables --shard auto reads. Kubernetes sets JOB_COMPLETION_INDEX in every
// pod of an Indexed Job but does not export the completions count, so the
// Job's container must set THROTTLESIM_SHARDS to it. Slurm sets the task id
// and count of a job array; SLURM_ARRAY_TASK_MIN is the first id, so an
// array such as --array=1-4 still gives shards 0..3.
const (
	envK8sIndex   = "JOB_COMPLETION_INDEX"
	envK8sShards  = "THROTTLESIM_SHARDS"
	envSlurmID    = "SLURM_ARRAY_TASK_ID"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"
)

// shardFromEnv resolves --shard auto from the batch engine's variables.
// Every failure is a usage error naming the variables involved.
func shardFromEnv(getenv func(string) string) (int, int, error) {
	num := func(name string) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, true, usageError{fmt.Errorf("--shard auto: %s=%q is not a whole number >= 0", name, v)}
		}
		return n, true, nil
	}
	type found struct {
		ok       bool
		i, n     int
		engine   string
		varNames string
	}
	var k8s, slurm found

	ki, kiSet, err := num(envK8sIndex)
	if err != nil {
		return 0, 0, err
	}
	kn, knSet, err := num(envK8sShards)
	if err != nil {
		return 0, 0, err
	}
	if kiSet || knSet {
		if !kiSet || !knSet {
			return 0, 0, usageError{fmt.Errorf("--shard auto: Kubernetes needs both %s (set by an Indexed Job) and %s (set it to the Job's completions in the container's env); only %s is set",
				envK8sIndex, envK8sShards, map[bool]string{true: envK8sIndex, false: envK8sShards}[kiSet])}
		}
		k8s = found{true, ki, kn, "Kubernetes", envK8sIndex + "/" + envK8sShards}
	}

	si, siSet, err := num(envSlurmID)
	if err != nil {
		return 0, 0, err
	}
	sn, snSet, err := num(envSlurmCount)
	if err != nil {
		return 0, 0, err
	}
	smin, _, err := num(envSlurmMin)
	if err != nil {
		return 0, 0, err
	}
	if siSet || snSet {
		if !siSet || !snSet {
			return 0, 0, usageError{fmt.Errorf("--shard auto: Slurm needs both %s and %s (run as an sbatch --array job)", envSlurmID, envSlurmCount)}
		}
		if si < smin {
			return 0, 0, usageError{fmt.Errorf("--shard auto: %s=%d is below %s=%d", envSlurmID, si, envSlurmMin, smin)}
		}
		slurm = found{true, si - smin, sn, "Slurm", envSlurmID + "-" + envSlurmMin + "/" + envSlurmCount}
	}

	var f found
	switch {
	case k8s.ok && slurm.ok:
		if k8s.i != slurm.i || k8s.n != slurm.n {
			return 0, 0, usageError{fmt.Errorf("--shard auto: Kubernetes says shard %d/%d (%s), Slurm says %d/%d (%s); unset one engine's variables or give --shard i/n",
				k8s.i, k8s.n, k8s.varNames, slurm.i, slurm.n, slurm.varNames)}
		}
		f = k8s
	case k8s.ok:
		f = k8s
	case slurm.ok:
		f = slurm
	default:
		return 0, 0, usageError{fmt.Errorf("--shard auto: no batch engine's shard index found: set %s and %s (Kubernetes Indexed Job) or %s and %s (Slurm job array), or give --shard i/n",
			envK8sIndex, envK8sShards, envSlurmID, envSlurmCount)}
	}
	if f.n < 1 || f.i >= f.n {
		return 0, 0, usageError{fmt.Errorf("--shard auto: %s gives shard %d of %d, out of range (need 0 <= index < count)", f.varNames, f.i, f.n)}
	}
	return f.i, f.n, nil
}

// osGetenv is the environment --shard auto reads; tests pass their own.
var osGetenv = os.Getenv
