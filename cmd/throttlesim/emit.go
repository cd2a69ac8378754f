package main

// --emit kubernetes|slurm: instead of running, write the files a batch
// engine needs to run the same command as shards and merge them. The shard
// command is the user's own command line (every flag they gave, forwarded,
// so a flag added later is forwarded too) with --shard auto, --resume, --jobs
// and --out added; the merge is the command's merge. Nothing here schedules
// anything: the engine does (Kubernetes Indexed Jobs, Slurm job arrays).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/throttlesim/throttlesim/sim/resultdir"
)

type emitOptions struct {
	engine    string
	dir       string
	shards    int
	parallel  int
	binary    string
	image     string
	cpus      int
	memory    string
	pvc       string
	retries   int
	partition string
	timeLimit string
	rounds    bool
	resumable bool // the command has --resume: a retried shard keeps its finished runs
}

// emitFlags are the flags that only --emit reads: never forwarded to the shards.
var emitFlags = map[string]string{
	"emit": "", "emit-dir": "", "shards": "", "parallelism": "", "binary": "", "image": "kubernetes",
	"cpus": "", "memory": "", "rounds": "", "pvc": "kubernetes", "retries": "kubernetes", "partition": "slurm", "time-limit": "slurm",
}

func addEmitFlags(f *pflag.FlagSet, o *emitOptions) {
	f.StringVar(&o.engine, "emit", "", "do not run: write job files for a batch engine, kubernetes (an Indexed Job and a merge Job) or slurm (an sbatch array and a merge job queued after it); see docs/sweeps.md")
	f.StringVar(&o.dir, "emit-dir", "", "with --emit: the folder for the job files (default jobs/<results folder name>-<engine>); it must not exist")
	f.IntVar(&o.shards, "shards", 0, "with --emit: how many shards (the Job's completions, the array's tasks)")
	f.IntVar(&o.parallel, "parallelism", 0, "with --emit: at most this many shards at once (default: all)")
	f.StringVar(&o.binary, "binary", "", "with --emit: the throttlesim the jobs run (default: slurm, this executable's absolute path; kubernetes, throttlesim on the image's PATH)")
	f.StringVar(&o.image, "image", "", "with --emit kubernetes: the container image holding throttlesim (required)")
	f.IntVar(&o.cpus, "cpus", 1, "with --emit: CPUs per shard; a shard runs that many runs at once (its --jobs)")
	f.StringVar(&o.memory, "memory", "1G", "with --emit: memory per shard, a whole number of mebibytes or gibibytes: 512M, 2G")
	f.StringVar(&o.pvc, "pvc", "throttlesim-results", "with --emit kubernetes: the PersistentVolumeClaim (ReadWriteMany) mounted at /results, where shards and the merge write")
	f.IntVar(&o.retries, "retries", 2, "with --emit kubernetes: retries of each shard (backoffLimitPerIndex); a retry resumes the shard's finished runs")
	f.StringVar(&o.partition, "partition", "", "with --emit slurm: the partition (sbatch --partition)")
	f.StringVar(&o.timeLimit, "time-limit", "", "with --emit slurm: each task's time limit (sbatch --time), e.g. 2:00:00")
}

// addEmitRoundsFlag is map's choice between its two ways of sharding.
func addEmitRoundsFlag(f *pflag.FlagSet, o *emitOptions) {
	f.BoolVar(&o.rounds, "rounds", false, "with --emit: run the map as a chain of rounds (--next-round, --round-shard) sharing every round's runs, instead of sharding its load levels")
}

// emitJob is what an engine needs to know about the command it runs.
type emitJob struct {
	verb      []string // "sweep" or "map"
	mergeVerb []string // "merge" or "map merge"
	file      string   // the scenario path as the user gave it
	data      []byte   // the scenario's bytes, as read
	forward   []string // the user's other flags, as --name=value
	mergeArgs []string // flags for the merge (e.g. --threshold)
	out       string   // the merged results folder as the user named it (or its default)
	rounds    bool     // a search in rounds (--next-round, --round-shard), not shards and a merge
	units     int      // what is shared out: runs of a sweep, load levels of a map
	unit      string   // "runs", "load levels"
}

// checkEmitFlags refuses flags of --emit given without it, flags of the
// other engine, and flags --emit writes itself.
func checkEmitFlags(cmd *cobra.Command, o *emitOptions) error {
	f := cmd.Flags()
	o.resumable = f.Lookup("resume") != nil
	if o.engine == "" {
		for name := range emitFlags {
			if f.Changed(name) {
				return usageError{fmt.Errorf("--%s is a flag of --emit: give --emit kubernetes or --emit slurm too", name)}
			}
		}
		return nil
	}
	if o.engine != "kubernetes" && o.engine != "slurm" {
		return usageError{fmt.Errorf("--emit %q: expected kubernetes or slurm", o.engine)}
	}
	for name, engine := range emitFlags {
		if engine != "" && engine != o.engine && f.Changed(name) {
			return usageError{fmt.Errorf("--%s is for --emit %s, not --emit %s", name, engine, o.engine)}
		}
	}
	for _, name := range []string{"shard", "resume", "jobs", "next-round", "round-shard"} {
		if f.Changed(name) {
			return usageError{fmt.Errorf("--%s with --emit: the job files set it for every shard (--jobs from --cpus)", name)}
		}
	}
	if o.shards < 1 {
		return usageError{fmt.Errorf("--emit %s needs --shards N, N >= 1: how many shards to run", o.engine)}
	}
	if o.parallel < 0 {
		return usageError{fmt.Errorf("--parallelism %d: must be at least 1", o.parallel)}
	}
	if o.cpus < 1 {
		return usageError{fmt.Errorf("--cpus %d: must be at least 1", o.cpus)}
	}
	if o.retries < 0 {
		return usageError{fmt.Errorf("--retries %d: must be at least 0", o.retries)}
	}
	if _, err := parseMemory(o.memory); err != nil {
		return usageError{err}
	}
	if o.engine == "kubernetes" {
		if o.image == "" {
			return usageError{errors.New("--emit kubernetes needs --image: the container image holding throttlesim, e.g. --image registry.example.com/throttlesim:v1")}
		}
		if !dnsLabel.MatchString(o.pvc) {
			return usageError{fmt.Errorf("--pvc %q: expected a Kubernetes name (lower-case letters, digits and '-', at most 63)", o.pvc)}
		}
	}
	return nil
}

// forwardedFlags is every flag the user set on cmd, as --name=value, except
// those --emit reads or sets, and skip. pflag visits in name order, so the
// job files are the same bytes whatever order the flags were typed in.
func forwardedFlags(cmd *cobra.Command, skip ...string) []string {
	var out []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if _, ok := emitFlags[fl.Name]; ok || fl.Name == "out" || fl.Name == "quiet" {
			return
		}
		for _, s := range skip {
			if fl.Name == s {
				return
			}
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

// parseMemory reads --memory: a whole number of mebibytes (M) or gibibytes (G).
func parseMemory(s string) (mib int64, err error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "i")
	mult := int64(0)
	switch {
	case strings.HasSuffix(t, "M"):
		mult = 1
	case strings.HasSuffix(t, "G"):
		mult = 1024
	}
	n, perr := strconv.ParseInt(strings.TrimRight(t, "MG"), 10, 64)
	if mult == 0 || perr != nil || n < 1 || n > 1<<30 {
		return 0, fmt.Errorf("--memory %q: expected a whole number of mebibytes or gibibytes, e.g. 512M or 2G", s)
	}
	return n * mult, nil
}

var configMapKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// k8sName makes a Kubernetes object name (a DNS-1123 label) from a results
// folder's name, leaving room for the "-shards"/"-merge"/"-scenario" suffixes.
func k8sName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 50 {
		n = strings.TrimRight(n[:50], "-")
	}
	if n == "" {
		n = "throttlesim"
	}
	return n
}

func shJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// emitRun writes the job files of j for o.engine and says how to submit them.
func emitRun(e *env, o *emitOptions, j emitJob) error {
	mib, _ := parseMemory(o.memory)
	dir := o.dir
	if dir == "" {
		dir = filepath.Join("jobs", filepath.Base(j.out)+"-"+o.engine)
	}
	dir = filepath.Clean(dir)
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("--emit-dir %s: exists; job files are never replaced: remove it or name another --emit-dir", dir)
	}
	if !j.rounds && o.shards > j.units {
		return usageError{fmt.Errorf("--shards %d: more shards than the %d %s; at most %d", o.shards, j.units, j.unit, j.units)}
	}
	var files []resultdir.File
	var err error
	var next string
	switch o.engine {
	case "kubernetes":
		files, err = emitKubernetes(o, j, mib)
		next = fmt.Sprintf("then, with kubectl pointed at the cluster and the PersistentVolumeClaim %s in place:\n  sh %s\n", o.pvc, shellQuote(filepath.Join(dir, "submit.sh")))
	case "slurm":
		files, next, err = emitSlurm(o, j, mib, dir)
	}
	if err != nil {
		return err
	}
	if err := resultdir.Write(dir, files); err != nil {
		return writeError(dir, err)
	}
	if !e.quiet {
		if j.rounds {
			fmt.Fprintf(e.stdout, "wrote %s job files for the %s in rounds of %d shards (%d CPUs, %d MiB each) to %s%c\n", o.engine, j.verb[0], o.shards, o.cpus, mib, dir, filepath.Separator)
		} else {
			fmt.Fprintf(e.stdout, "wrote %s job files for %d %s in %d shards (%d CPUs, %d MiB each) to %s%c\n", o.engine, j.units, j.unit, o.shards, o.cpus, mib, dir, filepath.Separator)
		}
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name
		}
		fmt.Fprintf(e.stdout, "  %s\n%s", strings.Join(names, ", "), next)
	}
	return nil
}

// ---- Kubernetes ----

// Kubernetes objects, only the fields we write, in the order a person reads
// them. The test decodes them strictly into k8s.io/api's types.
type k8sMeta struct {
	Name   string            `yaml:"name,omitempty"`
	Labels map[string]string `yaml:"labels,omitempty"`
}

type k8sConfigMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   k8sMeta           `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type k8sJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   k8sMeta    `yaml:"metadata"`
	Spec       k8sJobSpec `yaml:"spec"`
}

type k8sJobSpec struct {
	CompletionMode       string      `yaml:"completionMode,omitempty"`
	Completions          int         `yaml:"completions"`
	Parallelism          int         `yaml:"parallelism"`
	BackoffLimit         *int        `yaml:"backoffLimit,omitempty"`
	BackoffLimitPerIndex *int        `yaml:"backoffLimitPerIndex,omitempty"`
	PodFailurePolicy     *k8sFailure `yaml:"podFailurePolicy,omitempty"`
	Template             k8sTemplate `yaml:"template"`
}

// k8sFailure is a podFailurePolicy failing the Job at once on one exit
// code (--next-round's "another round"), so that it is not retried.
type k8sFailure struct {
	Rules []k8sFailureRule `yaml:"rules"`
}

type k8sFailureRule struct {
	Action      string         `yaml:"action"`
	OnExitCodes k8sOnExitCodes `yaml:"onExitCodes"`
}

type k8sOnExitCodes struct {
	ContainerName string `yaml:"containerName"`
	Operator      string `yaml:"operator"`
	Values        []int  `yaml:"values"`
}

type k8sTemplate struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     k8sPod  `yaml:"spec"`
}

type k8sPod struct {
	RestartPolicy string         `yaml:"restartPolicy"`
	Containers    []k8sContainer `yaml:"containers"`
	Volumes       []k8sVolume    `yaml:"volumes"`
}

type k8sContainer struct {
	Name            string         `yaml:"name"`
	Image           string         `yaml:"image"`
	Command         []string       `yaml:"command"`
	Args            []string       `yaml:"args"`
	WorkingDir      string         `yaml:"workingDir"`
	Env             []k8sEnv       `yaml:"env,omitempty"`
	Resources       k8sResources   `yaml:"resources"`
	VolumeMounts    []k8sMount     `yaml:"volumeMounts"`
	SecurityContext map[string]any `yaml:"securityContext"`
}

type k8sEnv struct {
	Name      string        `yaml:"name"`
	Value     string        `yaml:"value,omitempty"`
	ValueFrom *k8sEnvSource `yaml:"valueFrom,omitempty"`
}

type k8sEnvSource struct {
	FieldRef k8sFieldRef `yaml:"fieldRef"`
}

type k8sFieldRef struct {
	FieldPath string `yaml:"fieldPath"`
}

type k8sResources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type k8sMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type k8sVolume struct {
	Name                  string            `yaml:"name"`
	ConfigMap             map[string]string `yaml:"configMap,omitempty"`
	PersistentVolumeClaim map[string]string `yaml:"persistentVolumeClaim,omitempty"`
}

// k8sWork is the container's working folder. The scenario is mounted at its
// path as the user gave it, under k8sWork, so the shards record the same
// file name a local run does and the merged results are the same bytes.
const k8sWork = "/work"

// k8sScenarioPath is where the scenario is mounted: the user's relative
// path under k8sWork when it is one (no ".."), else scenario/<base>.
func k8sScenarioPath(file string) string {
	p := filepath.ToSlash(filepath.Clean(file))
	if filepath.IsAbs(file) || p == ".." || strings.HasPrefix(p, "../") {
		p = "scenario/" + path.Base(p)
	}
	return p
}

func emitKubernetes(o *emitOptions, j emitJob, mib int64) ([]resultdir.File, error) {
	if len(j.data) > 900<<10 {
		return nil, fmt.Errorf("%s: %d bytes; a Kubernetes ConfigMap holds at most 1 MiB", j.file, len(j.data))
	}
	name := k8sName(filepath.Base(j.out))
	bin := o.binary
	if bin == "" {
		bin = "throttlesim"
	}
	scen := k8sScenarioPath(j.file)
	results := "/results/" + path.Base(filepath.ToSlash(j.out))
	shardDir := results + "-shards/shard-"
	labels := map[string]string{"app.kubernetes.io/name": "throttlesim", "app.kubernetes.io/instance": name}
	mem := fmt.Sprintf("%dMi", mib)
	if mib%1024 == 0 {
		mem = fmt.Sprintf("%dGi", mib/1024)
	}
	res := func(cpus int) k8sResources {
		r := map[string]string{"cpu": strconv.Itoa(cpus), "memory": mem}
		return k8sResources{Requests: r, Limits: r}
	}
	secure := map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": map[string]any{"drop": []string{"ALL"}}}
	if !configMapKey.MatchString(path.Base(scen)) {
		return nil, fmt.Errorf("%s: a Kubernetes ConfigMap key is letters, digits, '-', '_' and '.'; rename the file", j.file)
	}
	mounts := []k8sMount{{Name: "scenario", MountPath: path.Join(k8sWork, path.Dir(scen)), ReadOnly: true}, {Name: "results", MountPath: "/results"}}
	volumes := []k8sVolume{{Name: "scenario", ConfigMap: map[string]string{"name": name + "-scenario"}},
		{Name: "results", PersistentVolumeClaim: map[string]string{"claimName": o.pvc}}}

	retries := o.retries
	parallel := o.parallel
	if parallel == 0 || parallel > o.shards {
		parallel = o.shards
	}
	cm := k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: k8sMeta{Name: name + "-scenario", Labels: labels},
		Data: map[string]string{path.Base(scen): string(j.data)}}
	indexEnv := []k8sEnv{
		// Set explicitly (Kubernetes also sets it) so that
		// $(JOB_COMPLETION_INDEX) in args is expanded from it.
		{Name: envK8sIndex, ValueFrom: &k8sEnvSource{FieldRef: k8sFieldRef{"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
		{Name: envK8sShards, Value: strconv.Itoa(o.shards)}}
	// job is a Job of one container, never restarted in place (a retry is
	// a new pod: backoffLimitPerIndex and podFailurePolicy need that).
	job := func(suffix, container string, spec k8sJobSpec, command, args []string, env []k8sEnv, cpus int) k8sJob {
		spec.Template = k8sTemplate{Metadata: k8sMeta{Labels: labels}, Spec: k8sPod{RestartPolicy: "Never",
			Containers: []k8sContainer{{Name: container, Image: o.image, Command: command, Args: args, WorkingDir: k8sWork,
				Env: env, Resources: res(cpus), VolumeMounts: mounts, SecurityContext: secure}},
			Volumes: volumes}}
		return k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: name + suffix, Labels: labels}, Spec: spec}
	}
	indexed := k8sJobSpec{CompletionMode: "Indexed", Completions: o.shards, Parallelism: parallel, BackoffLimitPerIndex: &retries}
	single := k8sJobSpec{Completions: 1, Parallelism: 1, BackoffLimit: &retries}
	if j.rounds {
		base := append(append(j.verb[1:len(j.verb):len(j.verb)], scen), j.forward...)
		out := "--out=" + results
		round := job("-round", "shard", indexed, []string{bin, j.verb[0]},
			append(slices.Clone(base), "--round-shard=auto", "--jobs="+strconv.Itoa(o.cpus), out), indexEnv, o.cpus)
		nextSpec := single
		nextSpec.PodFailurePolicy = &k8sFailure{Rules: []k8sFailureRule{{Action: "FailJob", OnExitCodes: k8sOnExitCodes{ContainerName: "next", Operator: "In", Values: []int{exitMoreRounds}}}}}
		next := job("-next", "next", nextSpec, []string{bin, j.verb[0]},
			append(slices.Clone(base), "--next-round", "--jobs="+strconv.Itoa(o.cpus), out), nil, o.cpus)
		nextYAML, err := yamlDocs(fmt.Sprintf("# Written by throttlesim %s --emit kubernetes: the %s of %s in rounds.\n# next: replays the search on the runs kept; exit 0, the results are written; exit 10, round.yaml runs the next round. submit.sh alternates them.\n",
			strings.Join(j.verb, " "), j.verb[0], j.file), cm, next)
		if err != nil {
			return nil, err
		}
		roundYAML, err := yamlMarshal(round)
		if err != nil {
			return nil, err
		}
		submit := fmt.Sprintf(`#!/bin/sh
# Runs the search as a chain of Jobs: next (replays the search on the runs
# kept; exit 0 when it has written the results, exit 10 when it needs
# another round), then the round's Indexed Job (%[4]d shards of the runs
# next asked for), then next again. The PersistentVolumeClaim %[1]s
# (ReadWriteMany) must exist in the namespace; the results are in %[2]s on it.
set -eu
cd "$(dirname "$0")"
`+k8sWaitJob+`round=0
while :; do
	kubectl delete job/%[3]s-next --ignore-not-found --wait=true >/dev/null
	kubectl apply -f next.yaml
	if wait_job %[3]s-next 2>/dev/null; then
		echo "the search is complete after $round rounds: results in %[2]s on the claim %[1]s"
		exit 0
	fi
	code=$(kubectl get pods -l job-name=%[3]s-next -o 'jsonpath={.items[-1:].status.containerStatuses[0].state.terminated.exitCode}')
	if [ "$code" != %[5]d ]; then
		echo "job/%[3]s-next failed (exit code '$code'): kubectl logs job/%[3]s-next" >&2
		exit 1
	fi
	round=$((round + 1))
	echo "round $round"
	kubectl delete job/%[3]s-round --ignore-not-found --wait=true >/dev/null
	kubectl apply -f round.yaml
	if ! wait_job %[3]s-round; then
		echo "job/%[3]s-round failed: kubectl describe job/%[3]s-round" >&2
		exit 1
	fi
done
`, o.pvc, results, name, o.shards, exitMoreRounds)
		return []resultdir.File{
			{Name: "next.yaml", Data: nextYAML},
			{Name: "round.yaml", Data: append([]byte("# One round of the search: share $(JOB_COMPLETION_INDEX) of the runs the last next Job asked for; submit.sh applies it.\n"), roundYAML...)},
			{Name: "submit.sh", Data: []byte(submit)},
		}, nil
	}
	shardArgs := append(append(append(j.verb[1:len(j.verb):len(j.verb)], scen), j.forward...),
		"--shard=auto")
	if o.resumable {
		shardArgs = append(shardArgs, "--resume")
	}
	shardArgs = append(shardArgs, "--jobs="+strconv.Itoa(o.cpus), "--out="+shardDir+"$(JOB_COMPLETION_INDEX)")
	shards := job("-shards", "shard", indexed, []string{bin, j.verb[0]}, shardArgs, indexEnv, o.cpus)
	mergeArgs := append(append(j.mergeVerb[1:len(j.mergeVerb):len(j.mergeVerb)], j.mergeArgs...), "--out="+results)
	for i := range o.shards {
		mergeArgs = append(mergeArgs, shardDir+strconv.Itoa(i))
	}
	merge := job("-merge", "merge", single, []string{bin, j.mergeVerb[0]}, mergeArgs, nil, 1)
	head := fmt.Sprintf("# Written by throttlesim %s --emit kubernetes: %d shards of %s.\n# Submit with submit.sh (it applies merge.yaml once every shard has succeeded).\n",
		strings.Join(j.verb, " "), o.shards, j.file)
	sweepYAML, err := yamlDocs(head, cm, shards)
	if err != nil {
		return nil, err
	}
	mergeYAML, err := yamlMarshal(merge)
	if err != nil {
		return nil, err
	}
	submit := fmt.Sprintf(`#!/bin/sh
# Runs the shards as an Indexed Job, waits until every index has succeeded,
# then runs the merge Job. The PersistentVolumeClaim %[1]s (ReadWriteMany)
# must exist in the namespace; the merged results are in %[2]s on it.
set -eu
cd "$(dirname "$0")"
`+k8sWaitJob+`kubectl apply -f shards.yaml
wait_job %[3]s-shards
kubectl apply -f merge.yaml
wait_job %[3]s-merge
echo "merged results: %[2]s on the claim %[1]s"
`, o.pvc, results, name)
	return []resultdir.File{
		{Name: "shards.yaml", Data: sweepYAML},
		{Name: "merge.yaml", Data: append([]byte("# The merge of "+name+"-shards: submit.sh applies it once every shard has succeeded.\n"), mergeYAML...)},
		{Name: "submit.sh", Data: []byte(submit)},
	}, nil
}

// k8sWaitJob is submit.sh's wait for a Job: 0 when it is Complete, 1
// when it Failed (said on stderr), polling every 10 s.
const k8sWaitJob = `wait_job() {
	while :; do
		state=$(kubectl get "job/$1" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}')
		case "$state" in
		*Complete*) return 0 ;;
		*Failed*) echo "job/$1 failed: kubectl describe job/$1" >&2; return 1 ;;
		esac
		sleep 10
	done
}
`

// yamlDocs is a YAML stream: head (comments), then the documents.
func yamlDocs(head string, docs ...any) ([]byte, error) {
	b := []byte(head)
	for i, doc := range docs {
		if i > 0 {
			b = append(b, "---\n"...)
		}
		y, err := yamlMarshal(doc)
		if err != nil {
			return nil, err
		}
		b = append(b, y...)
	}
	return b, nil
}

func yamlMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ---- Slurm ----

func emitSlurm(o *emitOptions, j emitJob, mib int64, dir string) ([]resultdir.File, string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	bin := o.binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, "", fmt.Errorf("--binary: cannot find this executable (%v); give --binary PATH", err)
		}
	}
	if !filepath.IsAbs(bin) && strings.ContainsRune(bin, filepath.Separator) {
		bin = filepath.Join(cwd, bin)
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	out := abs(j.out)
	absDir := abs(dir)
	shardDir := out + "-shards/shard-"
	snapshot := filepath.Join(absDir, "scenario.yaml")

	opts, err := slurmOptions(o)
	if err != nil {
		return nil, "", err
	}
	check := fmt.Sprintf("# The scenario must still be the one the job files were written from.\ncmp -s %s %s || { echo \"throttlesim: %s differs from %s, the copy taken when the job files were written: write them again\" >&2; exit 2; }\n",
		shellQuote(j.file), shellQuote(snapshot), strings.ReplaceAll(j.file, `"`, `'`), strings.ReplaceAll(snapshot, `"`, `'`))
	if j.rounds {
		return slurmRounds(o, j, mib, dir, bin, cwd, out, absDir, opts, check)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "#!/bin/bash\n# One shard of throttlesim %s %s per task of a Slurm job array (%d shards).\n", strings.Join(j.verb, " "), j.file, o.shards)
	s.WriteString("# Written by --emit slurm; submit.sh submits it and queues merge.sbatch after it.\n")
	s.WriteString(slurmArray(o, mib, k8sName(filepath.Base(j.out))+"-shards") + opts + "set -euo pipefail\n" + check)
	shardArgs := append(append(append([]string{bin}, j.verb...), j.file), j.forward...)
	if o.resumable {
		shardArgs = append(shardArgs, "--resume")
	}
	// The shard is the task id of n, not --shard auto: a task resubmitted
	// alone (sbatch --array=3 ...) is an array of one, whose auto index
	// would be 0 of 1.
	fmt.Fprintf(&s, "exec %s --shard=\"${SLURM_ARRAY_TASK_ID}/%d\" --jobs=\"${SLURM_CPUS_PER_TASK:-1}\" --out=%s\"${SLURM_ARRAY_TASK_ID}\"\n", shJoin(shardArgs), o.shards, shellQuote(shardDir))

	var m strings.Builder
	fmt.Fprintf(&m, "#!/bin/bash\n# Merges the %d shards of %s-shards; submit.sh queues it with --dependency=afterok.\n", o.shards, k8sName(filepath.Base(j.out)))
	fmt.Fprintf(&m, "#SBATCH --job-name=%s-merge\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=%dM\n", k8sName(filepath.Base(j.out)), mib)
	m.WriteString(opts + "set -euo pipefail\n")
	mergeArgs := append(append(append([]string{bin}, j.mergeVerb...), j.mergeArgs...), "--out="+out)
	for i := range o.shards {
		mergeArgs = append(mergeArgs, shardDir+strconv.Itoa(i))
	}
	fmt.Fprintf(&m, "exec %s\n", shJoin(mergeArgs))

	logs := filepath.Join(absDir, "logs")
	submit := fmt.Sprintf(`#!/bin/sh
# Submits the shards as a job array and the merge to run after all of them
# succeed. Logs: %[1]s/. Merged results: %[2]s/.
set -eu
mkdir -p %[3]s
jid=$(sbatch --parsable --chdir=%[4]s --output=%[5]s %[6]s)
jid=${jid%%%%;*}
mid=$(sbatch --parsable --dependency=afterok:"$jid" --kill-on-invalid-dep=yes --chdir=%[4]s --output=%[7]s %[8]s)
echo "shards: job $jid; merge: job ${mid%%%%;*} (runs after every shard succeeds)"
`, logs, out, shellQuote(logs), shellQuote(cwd), shellQuote(filepath.Join(logs, "shard-%a.out")), shellQuote(filepath.Join(absDir, "shards.sbatch")),
		shellQuote(filepath.Join(logs, "merge.out")), shellQuote(filepath.Join(absDir, "merge.sbatch")))
	files := []resultdir.File{
		{Name: "merge.sbatch", Data: []byte(m.String())},
		{Name: "scenario.yaml", Data: j.data},
		{Name: "submit.sh", Data: []byte(submit)},
		{Name: "shards.sbatch", Data: []byte(s.String())},
	}
	next := fmt.Sprintf("then, on the cluster's login node (this folder and %s on its shared filesystem):\n  sh %s\n", filepath.Dir(out), shellQuote(filepath.Join(dir, "submit.sh")))
	return files, next, nil
}

// slurmRounds writes the job files of a search in rounds: next.sbatch
// replays the search (exit 0: the results are written; exit 10: it queues
// round.sbatch, the array of the round's shards, and itself after it, with
// --dependency=afterok), so the whole search is a chain of Slurm jobs.
func slurmRounds(o *emitOptions, j emitJob, mib int64, dir, bin, cwd, out, absDir, opts, check string) ([]resultdir.File, string, error) {
	name := k8sName(filepath.Base(j.out))
	logs := filepath.Join(absDir, "logs")
	nextPath, roundPath := filepath.Join(absDir, "next.sbatch"), filepath.Join(absDir, "round.sbatch")
	base := append(append(append([]string{bin}, j.verb...), j.file), j.forward...)

	var r strings.Builder
	fmt.Fprintf(&r, "#!/bin/bash\n# One round of throttlesim %s %s in rounds: task i runs share i of %d of the runs\n# the last next.sbatch asked for. Written by --emit slurm; next.sbatch submits it.\n", strings.Join(j.verb, " "), j.file, o.shards)
	r.WriteString(slurmArray(o, mib, name+"-round") + opts + "set -euo pipefail\n" + check)
	fmt.Fprintf(&r, "exec %s --round-shard=\"${SLURM_ARRAY_TASK_ID}/%d\" --jobs=\"${SLURM_CPUS_PER_TASK:-1}\" --out=%s\n", shJoin(base), o.shards, shellQuote(out))

	var n strings.Builder
	fmt.Fprintf(&n, "#!/bin/bash\n# throttlesim %s %s in rounds: replays the search on the runs kept. Complete, it\n# writes the results to %s; otherwise it queues round.sbatch and, after it,\n# itself again. Written by --emit slurm; submit.sh submits it once.\n", strings.Join(j.verb, " "), j.file, out)
	fmt.Fprintf(&n, "#SBATCH --job-name=%s-next\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dM\n", name, o.cpus, mib)
	n.WriteString(opts + "set -uo pipefail\n" + check)
	fmt.Fprintf(&n, "%s --next-round --jobs=\"${SLURM_CPUS_PER_TASK:-1}\" --out=%s\n", shJoin(base), shellQuote(out))
	fmt.Fprintf(&n, `rc=$?
case $rc in
0) exit 0 ;;
%d)
	jid=$(sbatch --parsable --chdir=%s --output=%s %s) || exit 1
	sbatch --parsable --dependency=afterok:"${jid%%%%;*}" --kill-on-invalid-dep=yes --chdir=%s --output=%s %s >/dev/null || exit 1
	;;
*) exit "$rc" ;;
esac
`, exitMoreRounds, shellQuote(cwd), shellQuote(filepath.Join(logs, "round-%A_%a.out")), shellQuote(roundPath), shellQuote(cwd), shellQuote(filepath.Join(logs, "next-%j.out")), shellQuote(nextPath))

	submit := fmt.Sprintf(`#!/bin/sh
# Starts the chain: next.sbatch, which runs a round of shards and queues
# itself after it until the search is complete. Logs: %[1]s/.
# Results: %[2]s/ when the chain ends (squeue shows it running).
set -eu
mkdir -p %[3]s
jid=$(sbatch --parsable --chdir=%[4]s --output=%[5]s %[6]s)
echo "search: first job ${jid%%%%;*}; the results appear in %[2]s/"
`, logs, out, shellQuote(logs), shellQuote(cwd), shellQuote(filepath.Join(logs, "next-%j.out")), shellQuote(nextPath))
	files := []resultdir.File{
		{Name: "next.sbatch", Data: []byte(n.String())},
		{Name: "round.sbatch", Data: []byte(r.String())},
		{Name: "scenario.yaml", Data: j.data},
		{Name: "submit.sh", Data: []byte(submit)},
	}
	msg := fmt.Sprintf("then, on the cluster's login node (this folder and %s on its shared filesystem):\n  sh %s\n", filepath.Dir(out), shellQuote(filepath.Join(dir, "submit.sh")))
	return files, msg, nil
}

// slurmArray is the #SBATCH header of a job array of o.shards tasks.
func slurmArray(o *emitOptions, mib int64, jobName string) string {
	array := fmt.Sprintf("0-%d", o.shards-1)
	if o.parallel > 0 && o.parallel < o.shards {
		array += fmt.Sprintf("%%%d", o.parallel)
	}
	return fmt.Sprintf("#SBATCH --job-name=%s\n#SBATCH --array=%s\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dM\n#SBATCH --requeue\n", jobName, array, o.cpus, mib)
}

// slurmOptions is the #SBATCH lines of --partition and --time-limit.
func slurmOptions(o *emitOptions) (string, error) {
	var b strings.Builder
	for _, kv := range [][3]string{{"partition", "partition", o.partition}, {"time", "time-limit", o.timeLimit}} {
		if kv[2] == "" {
			continue
		}
		if strings.ContainsAny(kv[2], " \t\n'\"\\#") {
			return "", usageError{fmt.Errorf("--%s %q: expected a Slurm value without spaces or quotes", kv[1], kv[2])}
		}
		fmt.Fprintf(&b, "#SBATCH --%s=%s\n", kv[0], kv[2])
	}
	return b.String(), nil
}
