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
		varNames string
	}
	// pair reads an engine's index and count, both or neither.
	pair := func(engine, index, count, hint string) (found, error) {
		i, iSet, err := num(index)
		if err != nil {
			return found{}, err
		}
		n, nSet, err := num(count)
		if err != nil {
			return found{}, err
		}
		if iSet != nSet {
			only := map[bool]string{true: index, false: count}[iSet]
			return found{}, usageError{fmt.Errorf("--shard auto: %s needs both %s and %s (%s); only %s is set", engine, index, count, hint, only)}
		}
		return found{ok: iSet, i: i, n: n, varNames: index + "/" + count}, nil
	}
	k8s, err := pair("Kubernetes", envK8sIndex, envK8sShards, "the first set by an Indexed Job, the second set to the Job's completions in the container's env")
	if err != nil {
		return 0, 0, err
	}
	slurm, err := pair("Slurm", envSlurmID, envSlurmCount, "run as an sbatch --array job")
	if err != nil {
		return 0, 0, err
	}
	smin, _, err := num(envSlurmMin)
	if err != nil {
		return 0, 0, err
	}
	if slurm.ok {
		if slurm.i < smin {
			return 0, 0, usageError{fmt.Errorf("--shard auto: %s=%d is below %s=%d", envSlurmID, slurm.i, envSlurmMin, smin)}
		}
		slurm.i -= smin
		slurm.varNames = envSlurmID + "-" + envSlurmMin + "/" + envSlurmCount
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
