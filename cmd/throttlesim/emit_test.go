package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/throttlesim/throttlesim/internal/testfs"
)

var updateEmit = flag.Bool("update-emit", false, "rewrite testdata/emit/ from the current job files")

// emitArgs is a small sharded sweep with every kind of flag forwarded: an
// array flag twice, a number, a bool, and a threshold for the merge.
func emitArgs(file string) []string {
	return []string{"sweep", file, "--vary", "clients.throttle.k=1.5,2,3", "--set", "clients.count=40", "--seeds", "2",
		"--independent-seeds", "--threshold", "success_ratio>=0.5", "-q"}
}

// localSweep runs emitArgs here and returns its results' files.
func localSweep(t *testing.T, dir, file string) map[string]string {
	t.Helper()
	out := filepath.Join(dir, "local")
	if r := runCLI(t, append(emitArgs(file), "--out", out)...); r.code != 0 {
		t.Fatalf("local sweep: exit %d\n%s", r.code, r.stderr)
	}
	return testfs.Tree(t, out)
}

// splitYAML splits a multi-document YAML file.
func splitYAML(b []byte) [][]byte {
	docs := bytes.Split(b, []byte("\n---\n"))
	for i := range docs[:len(docs)-1] {
		docs[i] = append(docs[i], '\n') // the newline before "---" ends the document
	}
	return docs
}

func strictDecode(t *testing.T, what string, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s is not a valid object of its kind (strict decode into k8s.io/api): %v\n%s", what, err, doc)
	}
}

// The manifests decode strictly into the Kubernetes API's own types (an
// unknown or misspelt field, or a wrong type, fails), and say what an
// Indexed Job with per-index retries needs.
func TestEmitKubernetesIsValidBatchV1(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/tiny.yaml", tinyScenario)
	args := append(emitArgs("scenarios/tiny.yaml"), "--emit", "kubernetes", "--shards", "3", "--image", "registry.example/throttlesim:v1",
		"--cpus", "2", "--memory", "1536M", "--parallelism", "2", "--retries", "4", "--out", "results/tiny-k")
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("emit: exit %d\n%s", r.code, r.stderr)
	}
	jobs := filepath.Join(dir, "jobs", "tiny-k-kubernetes")
	b, err := os.ReadFile(filepath.Join(jobs, "shards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := splitYAML(b)
	if len(docs) != 2 {
		t.Fatalf("shards.yaml: %d documents, want a ConfigMap and a Job", len(docs))
	}
	var cm corev1.ConfigMap
	strictDecode(t, "shards.yaml's ConfigMap", docs[0], &cm)
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Data["tiny.yaml"] != tinyScenario {
		t.Errorf("ConfigMap: kind %q, version %q, data %q: want the scenario's bytes under tiny.yaml", cm.Kind, cm.APIVersion, cm.Data)
	}
	var job batchv1.Job
	strictDecode(t, "shards.yaml's Job", docs[1], &job)
	s := job.Spec
	c := s.Template.Spec.Containers[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"apiVersion/kind", job.APIVersion + "/" + job.Kind, "batch/v1/Job"},
		{"completionMode", string(*s.CompletionMode), "Indexed"},
		{"completions", *s.Completions, int32(3)},
		{"parallelism", *s.Parallelism, int32(2)},
		{"backoffLimitPerIndex", *s.BackoffLimitPerIndex, int32(4)},
		// backoffLimitPerIndex needs restartPolicy Never.
		{"restartPolicy", string(s.Template.Spec.RestartPolicy), "Never"},
		{"image", c.Image, "registry.example/throttlesim:v1"},
		{"cpu request", c.Resources.Requests.Cpu().String(), "2"},
		{"memory limit", c.Resources.Limits.Memory().String(), "1536Mi"},
		{"command", strings.Join(c.Command, " "), "throttlesim sweep"},
		{"args", strings.Join(c.Args, " "), "scenarios/tiny.yaml --independent-seeds=true --seeds=2 --set=clients.count=40 --vary=clients.throttle.k=1.5,2,3 --shard=auto --resume --jobs=2 --out=/results/tiny-k-shards/shard-$(JOB_COMPLETION_INDEX)"},
		{"env", len(c.Env), 2},
		{"index env", c.Env[0].Name + " " + c.Env[0].ValueFrom.FieldRef.FieldPath, "JOB_COMPLETION_INDEX metadata.annotations['batch.kubernetes.io/job-completion-index']"},
		{"shards env", c.Env[1].Name + "=" + c.Env[1].Value, "THROTTLESIM_SHARDS=3"},
		{"scenario mount", c.VolumeMounts[0].MountPath, "/work/scenarios"},
		{"working dir", c.WorkingDir, "/work"},
		{"results claim", s.Template.Spec.Volumes[1].PersistentVolumeClaim.ClaimName, "throttlesim-results"},
		{"no privilege escalation", *c.SecurityContext.AllowPrivilegeEscalation, false},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: %v, want %v", ck.what, ck.got, ck.want)
		}
	}
	mb, err := os.ReadFile(filepath.Join(jobs, "merge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var merge batchv1.Job
	strictDecode(t, "merge.yaml", mb, &merge)
	if got, want := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " "),
		"--threshold=success_ratio>=0.5 --out=/results/tiny-k /results/tiny-k-shards/shard-0 /results/tiny-k-shards/shard-1 /results/tiny-k-shards/shard-2"; got != want {
		t.Errorf("merge args:\n %s\nwant\n %s", got, want)
	}
	if out, err := exec.Command("sh", "-n", filepath.Join(jobs, "submit.sh")).CombinedOutput(); err != nil {
		t.Errorf("submit.sh is not valid sh: %v\n%s", err, out)
	}
	golden(t, "kubernetes", testfs.Tree(t, jobs), nil)
}

// golden compares the job files with testdata/emit/<name>/, with the
// machine-specific strings replaced by placeholders.
func golden(t *testing.T, name string, files map[string]string, repl *strings.Replacer) {
	t.Helper()
	want := filepath.Join(testdataRoot, "emit", name)
	for f, body := range files {
		if body == "<dir>" {
			continue
		}
		if repl != nil {
			body = repl.Replace(body)
		}
		p := filepath.Join(want, f)
		if *updateEmit {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v (run go test ./cmd/throttlesim -run Emit -update-emit)", p, err)
			continue
		}
		if string(w) != body {
			t.Errorf("%s differs from the job file written now (go test ./cmd/throttlesim -run Emit -update-emit, then read the diff):\n%s", p, body)
		}
	}
}

// testdataRoot is testdata/ as an absolute path: the tests change folder.
var testdataRoot = func() string { wd, _ := os.Getwd(); return filepath.Join(wd, "testdata") }()

// The Kubernetes job files do what the engine would do with them: each
// index's container command, with the variables Kubernetes sets and its
// $(VAR) expansion, run in a working folder holding the ConfigMap at its
// mount path, then the merge Job's command. The merged results are the
// bytes of the same sweep run here in one go.
func TestEmitKubernetesRunsLikeALocalSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("byte identity of emitted shards: make test runs it; the -short race pass (CI) keeps to the tests of concurrency")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/tiny.yaml", tinyScenario)
	local := localSweep(t, dir, "scenarios/tiny.yaml")
	args := append(emitArgs("scenarios/tiny.yaml"), "--emit", "kubernetes", "--shards", "4", "--image", "x", "--out", "results/tiny")
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("emit: exit %d\n%s", r.code, r.stderr)
	}
	pod := runAsKubernetes(t, filepath.Join(dir, "jobs", "tiny-kubernetes"), filepath.Join(dir, "pod"))
	sameTree(t, "Kubernetes jobs vs a local sweep", local, testfs.Tree(t, filepath.Join(pod, "results", "tiny")))
}

// runAsKubernetes does with the job files in jobs what Kubernetes would,
// in a pod file system under pod (its /work and /results): every index of
// the Indexed Job, then the merge Job. It returns pod.
func runAsKubernetes(t *testing.T, jobs, pod string) string {
	t.Helper()
	docs := splitYAML(readFile(t, filepath.Join(jobs, "shards.yaml")))
	var cm corev1.ConfigMap
	var job, merge batchv1.Job
	strictDecode(t, "ConfigMap", docs[0], &cm)
	strictDecode(t, "Job", docs[1], &job)
	strictDecode(t, "merge Job", readFile(t, filepath.Join(jobs, "merge.yaml")), &merge)
	p := newPod(t, pod, &cm, job.Spec.Template.Spec.Containers[0])
	for i := range int(*job.Spec.Completions) {
		if code, stderr := p.run(job, i); code != 0 {
			t.Fatalf("index %d: exit %d\n%s", i, code, stderr)
		}
	}
	if code, stderr := p.run(merge, -1); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	return pod
}

// pod is a folder laid out as a pod's file system: /work with the
// ConfigMap at its mount path, and /results.
type pod struct {
	t    *testing.T
	root string
}

func newPod(t *testing.T, root string, cm *corev1.ConfigMap, c corev1.Container) *pod {
	t.Helper()
	p := &pod{t, root}
	for k, v := range cm.Data {
		writeFile(t, p.path(c.VolumeMounts[0].MountPath), k, v)
	}
	t.Chdir(p.path(c.WorkingDir))
	return p
}

func (p *pod) path(s string) string {
	if strings.HasPrefix(s, "/") {
		return filepath.Join(p.root, s)
	}
	return s
}

var k8sVar = regexp.MustCompile(`\$\(([A-Z_]+)\)`)

// run runs job's container as Kubernetes would for completion index i
// (-1: not an Indexed Job): its env, and $(VAR) expanded in args.
func (p *pod) run(job batchv1.Job, i int) (int, string) {
	p.t.Helper()
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	if i >= 0 {
		env[envK8sIndex] = strconv.Itoa(i) // as the fieldRef reads it
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	for k, v := range env {
		p.t.Setenv(k, v)
	}
	var argv []string
	for _, a := range c.Args {
		a = k8sVar.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
		if name, val, ok := strings.Cut(a, "="); ok && name == "--out" {
			a = name + "=" + p.path(val)
		} else if strings.HasPrefix(a, "/") {
			a = p.path(a)
		}
		argv = append(argv, a)
	}
	r := runCLI(p.t, append(c.Command[1:], argv...)...)
	return r.code, fmt.Sprintf("%q: %s", argv, r.stderr)
}

// A tuning's job files run it in rounds: Kubernetes' loop (submit.sh:
// the next Job, then the round's Indexed Job while next exits 10) and
// Slurm's chain (next.sbatch queueing round.sbatch and itself, here with
// an sbatch that only writes down what it was asked) both end with the
// bytes of the tuning run here in one go.
func TestEmitTuneInRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tuning three times")
	}
	dir := t.TempDir()
	tune := resumeCases[1].args
	small := readFile(t, tune[1])
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/tune-retries.yaml", string(small))
	args := append([]string{"tune", "scenarios/tune-retries.yaml"}, tune[2:]...)
	if r := runCLI(t, append(args, "--out", "local")...); r.code != 0 {
		t.Fatalf("local tune: exit %d\n%s", r.code, r.stderr)
	}
	local := testfs.Tree(t, filepath.Join(dir, "local"))
	if r := runCLI(t, append(args, "--emit", "kubernetes", "--shards", "3", "--image", "x", "--out", "results/t")...); r.code != 0 {
		t.Fatalf("emit kubernetes: exit %d\n%s", r.code, r.stderr)
	}
	bin := testBinaryScript(t, dir)
	if r := runCLI(t, append(args, "--emit", "slurm", "--shards", "2", "--binary", bin, "--out", "results/t")...); r.code != 0 {
		t.Fatalf("emit slurm: exit %d\n%s", r.code, r.stderr)
	}

	jobs := filepath.Join(dir, "jobs", "t-kubernetes")
	docs := splitYAML(readFile(t, filepath.Join(jobs, "next.yaml")))
	var cm corev1.ConfigMap
	var next, round batchv1.Job
	strictDecode(t, "next.yaml's ConfigMap", docs[0], &cm)
	strictDecode(t, "next.yaml's Job", docs[1], &next)
	strictDecode(t, "round.yaml", readFile(t, filepath.Join(jobs, "round.yaml")), &round)
	rule := next.Spec.PodFailurePolicy.Rules[0]
	if rule.Action != batchv1.PodFailurePolicyActionFailJob || rule.OnExitCodes.Values[0] != exitMoreRounds || next.Spec.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("next Job: exit %d must fail it at once, not be retried: %+v", exitMoreRounds, next.Spec.PodFailurePolicy)
	}
	if *round.Spec.CompletionMode != batchv1.IndexedCompletion || *round.Spec.Completions != 3 {
		t.Errorf("round Job: %v completions %d, want an Indexed Job of 3", *round.Spec.CompletionMode, *round.Spec.Completions)
	}
	if out, err := exec.Command("sh", "-n", filepath.Join(jobs, "submit.sh")).CombinedOutput(); err != nil {
		t.Errorf("submit.sh is not valid sh: %v\n%s", err, out)
	}
	p := newPod(t, filepath.Join(dir, "pod"), &cm, next.Spec.Template.Spec.Containers[0])
	rounds := 0
	for ; ; rounds++ {
		code, stderr := p.run(next, -1)
		if code == 0 {
			break
		}
		if code != exitMoreRounds || rounds > 100 {
			t.Fatalf("next, round %d: exit %d\n%s", rounds, code, stderr)
		}
		for i := range 3 {
			if code, stderr := p.run(round, i); code != 0 {
				t.Fatalf("round %d index %d: exit %d\n%s", rounds+1, i, code, stderr)
			}
		}
	}
	sameTree(t, "Kubernetes rounds vs a local tune", local, testfs.Tree(t, filepath.Join(dir, "pod", "results", "t")))

	// Slurm: sbatch writes its arguments down and answers a job id.
	t.Chdir(dir)
	sjobs := filepath.Join(dir, "jobs", "t-slurm")
	for _, f := range []string{"next.sbatch", "round.sbatch", "submit.sh"} {
		if out, err := exec.Command("bash", "-n", filepath.Join(sjobs, f)).CombinedOutput(); err != nil {
			t.Errorf("%s is not valid bash: %v\n%s", f, err, out)
		}
	}
	calls := filepath.Join(dir, "sbatch-calls")
	fake := writeFile(t, dir, "fakebin/sbatch", "#!/bin/sh\necho \"$*\" >> "+shellQuote(calls)+"\necho 4242\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(fake) + ":" + os.Getenv("PATH")
	for r := 0; ; r++ {
		os.Remove(calls)
		runScript(t, dir, filepath.Join(sjobs, "next.sbatch"), path, "SLURM_CPUS_PER_TASK=1")
		b, _ := os.ReadFile(calls)
		if len(b) == 0 {
			break // complete: nothing queued
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if r > 100 || len(lines) != 2 || !strings.HasSuffix(lines[0], "round.sbatch") ||
			!strings.Contains(lines[1], "--dependency=afterok:4242") || !strings.HasSuffix(lines[1], "next.sbatch") {
			t.Fatalf("round %d: next.sbatch queued %q, want round.sbatch then next.sbatch after it", r+1, lines)
		}
		for id := range 2 {
			runScript(t, dir, filepath.Join(sjobs, "round.sbatch"), "SLURM_ARRAY_TASK_ID="+strconv.Itoa(id), "SLURM_CPUS_PER_TASK=1")
		}
	}
	sameTree(t, "Slurm rounds vs a local tune", local, testfs.Tree(t, filepath.Join(dir, "results", "t")))
	t.Logf("%d rounds", rounds)
}

// A map's job files shard its load levels; run by either engine, the
// merged map is the bytes of the same map run here in one go.
func TestEmitMapRunsLikeALocalMap(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	small := readFile(t, "testdata/map-small.yaml")
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/map-small.yaml", string(small))
	args := append([]string{"map", "scenarios/map-small.yaml"}, mapArgs[1:]...)
	if r := runCLI(t, append(args, "--out", "local")...); r.code != 0 {
		t.Fatalf("local map: exit %d\n%s", r.code, r.stderr)
	}
	local := testfs.Tree(t, filepath.Join(dir, "local"))
	if r := runCLI(t, append(args, "--emit", "kubernetes", "--shards", "2", "--image", "x", "--out", "results/m")...); r.code != 0 {
		t.Fatalf("emit kubernetes: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, append(args, "--emit", "slurm", "--shards", "3")...); r.code != 2 || !strings.Contains(r.stderr, "more shards than the 2 load levels") {
		t.Errorf("3 shards of 2 load levels: exit %d, %s", r.code, r.stderr)
	}
	bin := testBinaryScript(t, dir)
	if r := runCLI(t, append(args, "--emit", "slurm", "--shards", "2", "--binary", bin, "--out", "results/m")...); r.code != 0 {
		t.Fatalf("emit slurm: exit %d\n%s", r.code, r.stderr)
	}
	k8s := readFile(t, filepath.Join(dir, "jobs", "m-kubernetes", "merge.yaml"))
	if !strings.Contains(string(k8s), "- throttlesim\n            - map\n") || !strings.Contains(string(k8s), "- merge\n") {
		t.Errorf("the map's merge Job does not run 'throttlesim map merge':\n%s", k8s)
	}
	pod := runAsKubernetes(t, filepath.Join(dir, "jobs", "m-kubernetes"), filepath.Join(dir, "pod"))
	sameTree(t, "Kubernetes map vs a local map", local, testfs.Tree(t, filepath.Join(pod, "results", "m")))

	t.Chdir(dir)
	jobs := filepath.Join(dir, "jobs", "m-slurm")
	for id := range 2 {
		runScript(t, dir, filepath.Join(jobs, "shards.sbatch"), "SLURM_ARRAY_TASK_ID="+strconv.Itoa(id), "SLURM_CPUS_PER_TASK=1")
	}
	runScript(t, dir, filepath.Join(jobs, "merge.sbatch"))
	sameTree(t, "Slurm map vs a local map", local, testfs.Tree(t, filepath.Join(dir, "results", "m")))
}

// testBinaryScript writes dir/bin/throttlesim: the test binary, which is
// throttlesim when THROTTLESIM_MAIN=1 (TestMain).
func testBinaryScript(t *testing.T, dir string) string {
	t.Helper()
	bin := writeFile(t, dir, "bin/throttlesim", "#!/bin/sh\nTHROTTLESIM_MAIN=1 exec "+shellQuote(os.Args[0])+" \"$@\"\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runScript runs a job script with bash in dir (sbatch --chdir), with env
// added to ours, as Slurm would on the node.
func runScript(t *testing.T, dir, script string, env ...string) {
	t.Helper()
	cmd := exec.Command("bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(script), env, err, out)
	}
}

// The Slurm scripts do what Slurm would do with them: bash runs the array
// script once per task id with the variables Slurm sets (a task run twice,
// as a requeue does, resumes), then the merge script. The merged results
// are the bytes of the same sweep run here in one go.
func TestEmitSlurmRunsLikeALocalSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/tiny.yaml", tinyScenario)
	local := localSweep(t, dir, "scenarios/tiny.yaml")
	bin := testBinaryScript(t, dir)
	args := append(emitArgs("scenarios/tiny.yaml"), "--emit", "slurm", "--shards", "3", "--binary", bin, "--cpus", "2", "--out", "results/tiny",
		"--partition", "short", "--time-limit", "1:00:00")
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("emit: exit %d\n%s", r.code, r.stderr)
	}
	jobs := filepath.Join(dir, "jobs", "tiny-slurm")
	for _, f := range []string{"shards.sbatch", "merge.sbatch", "submit.sh"} {
		if out, err := exec.Command(bash, "-n", filepath.Join(jobs, f)).CombinedOutput(); err != nil {
			t.Errorf("%s is not valid bash: %v\n%s", f, err, out)
		}
	}
	sbatch := func(script string, env ...string) {
		t.Helper()
		runScript(t, dir, filepath.Join(jobs, script), env...)
	}
	for _, id := range []int{0, 2, 1, 2} { // task 2 twice: a requeued task resumes
		sbatch("shards.sbatch", "SLURM_ARRAY_TASK_ID="+strconv.Itoa(id), "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_CPUS_PER_TASK=2")
	}
	sbatch("merge.sbatch")
	sameTree(t, "Slurm scripts vs a local sweep", local, testfs.Tree(t, filepath.Join(dir, "results", "tiny")))

	// A task resubmitted alone is an array of one: still its own shard.
	if err := os.RemoveAll(filepath.Join(dir, "results", "tiny-shards", "shard-1")); err != nil {
		t.Fatal(err)
	}
	sbatch("shards.sbatch", "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=1")
	sbatch("merge.sbatch")
	sameTree(t, "after task 1 resubmitted alone", local, testfs.Tree(t, filepath.Join(dir, "results", "tiny")))

	// An edited scenario is refused, not run.
	writeFile(t, dir, "scenarios/tiny.yaml", tinyScenario+"# edited\n")
	cmd := exec.Command(bash, filepath.Join(jobs, "shards.sbatch"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "differs from") {
		t.Errorf("sweep.sbatch after the scenario changed: %v\n%s", err, out)
	}
	repl := strings.NewReplacer(dir, "/DIR", shellQuote(os.Args[0]), "TESTBINARY")
	tree := testfs.Tree(t, jobs)
	delete(tree, "scenario.yaml")
	golden(t, "slurm", tree, repl)
}

// shellQuote makes one shell word of anything: the shell gives back the bytes.
func TestShellQuoting(t *testing.T) {
	hostile := []string{"", "plain", "a b", "it's", `"double"`, "$(touch /tmp/pwned)", "`id`", "a\nb", "tab\there", "*", "~", "semi;colon", "back\\slash", "'", "''", "-n", "ünïcode", "$HOME", "!bang", "{a,b}", "a=b c"}
	var script strings.Builder
	script.WriteString("printf '%s\\0'")
	for _, h := range hostile {
		script.WriteString(" " + shellQuote(h))
	}
	for _, sh := range []string{"sh", "bash"} {
		out, err := exec.Command(sh, "-c", script.String()).Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if len(got) != len(hostile) {
			t.Fatalf("%s: %d words back, want %d: %q", sh, len(got), len(hostile), got)
		}
		for i := range hostile {
			if got[i] != hostile[i] {
				t.Errorf("%s: %q came back as %q", sh, hostile[i], got[i])
			}
		}
	}
}

func TestEmitRefusals(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", tinyScenario)
	existing := filepath.Join(dir, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"sweep", file, "--vary", "clients.throttle.k=2,3", "--seeds", "2", "--out", filepath.Join(dir, "r")}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an emit flag alone", []string{"--image", "x"}, exitUsage, "--image is a flag of --emit"},
		{"an unknown engine", []string{"--emit", "nomad", "--shards", "2"}, exitUsage, `--emit "nomad": expected kubernetes or slurm`},
		{"no shard count", []string{"--emit", "slurm"}, exitUsage, "needs --shards N"},
		{"kubernetes without an image", []string{"--emit", "kubernetes", "--shards", "2"}, exitUsage, "needs --image"},
		{"the other engine's flag", []string{"--emit", "kubernetes", "--shards", "2", "--image", "x", "--partition", "p"}, exitUsage, "--partition is for --emit slurm"},
		{"--jobs is set from --cpus", []string{"--emit", "slurm", "--shards", "2", "--jobs", "3"}, exitUsage, "--jobs with --emit"},
		{"--shard is the engine's", []string{"--emit", "slurm", "--shards", "2", "--shard", "0/2"}, exitUsage, "--shard with --emit"},
		{"a bad memory", []string{"--emit", "slurm", "--shards", "2", "--memory", "2X"}, exitUsage, `--memory "2X": expected a whole number of mebibytes or gibibytes`},
		{"a bad claim name", []string{"--emit", "kubernetes", "--shards", "2", "--image", "x", "--pvc", "Bad_Name"}, exitUsage, `--pvc "Bad_Name"`},
		{"more shards than runs", []string{"--emit", "slurm", "--shards", "50"}, exitUsage, "more shards than the 4 runs"},
		{"a job folder already there", []string{"--emit", "slurm", "--shards", "2", "--emit-dir", existing}, exitError, "exists; job files are never replaced"},
		{"a partition with a space", []string{"--emit", "slurm", "--shards", "2", "--partition", "a b"}, exitUsage, `--partition "a b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, append(base, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q, want it to contain %q", r.code, tc.code, r.stderr, tc.want)
			}
		})
	}
	if ents, _ := os.ReadDir(existing); len(ents) != 0 {
		t.Errorf("the existing --emit-dir was written to: %v", ents)
	}
}

// On a real Slurm (make test-slurm starts one on loopback): submit.sh
// queues the array and the merge, Slurm runs them, and the merged results
// are the bytes of the same sweep run here in one go.
func TestEmitSlurmOnARealCluster(t *testing.T) {
	if os.Getenv("THROTTLESIM_SLURM") != "1" {
		t.Skip("needs a Slurm cluster: make test-slurm starts one on loopback and sets THROTTLESIM_SLURM=1")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "scenarios/tiny.yaml", tinyScenario)
	local := localSweep(t, dir, "scenarios/tiny.yaml")
	bin := testBinaryScript(t, dir)
	args := append(emitArgs("scenarios/tiny.yaml"), "--emit", "slurm", "--shards", "4", "--binary", bin, "--memory", "256M", "--out", "results/tiny")
	if r := runCLI(t, args...); r.code != 0 {
		t.Fatalf("emit: exit %d\n%s", r.code, r.stderr)
	}
	jobs := filepath.Join(dir, "jobs", "tiny-slurm")
	out, err := exec.Command("sh", filepath.Join(jobs, "submit.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`shards: job (\d+); merge: job (\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("submit.sh said %q: no job ids", out)
	}
	// Wait for the merge to leave the queue: Slurm's own clock, not ours,
	// decides when; the bound only stops a stuck cluster hanging the test.
	state := ""
	for range 1200 {
		q, _ := exec.Command("squeue", "-h", "-j", m[1]+","+m[2], "-o", "%i %T").Output()
		if strings.TrimSpace(string(q)) == "" {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	sc, _ := exec.Command("scontrol", "show", "job", m[2]).Output()
	if s := regexp.MustCompile(`JobState=(\S+)`).FindSubmatch(sc); s != nil {
		state = string(s[1])
	}
	if state != "COMPLETED" {
		logs, _ := exec.Command("sh", "-c", "tail -n 20 "+shellQuote(jobs)+"/logs/*").CombinedOutput()
		t.Fatalf("merge job %s: state %q, want COMPLETED\n%s\nlogs:\n%s", m[2], state, sc, logs)
	}
	sameTree(t, "a real Slurm vs a local sweep", local, testfs.Tree(t, filepath.Join(dir, "results", "tiny")))
}

// On a real Slurm: a tuning and a map in rounds, each a chain of jobs
// that next.sbatch extends until the search is complete; the results are
// the bytes of the same search run here in one go.
func TestEmitSlurmRoundsOnARealCluster(t *testing.T) {
	if os.Getenv("THROTTLESIM_SLURM") != "1" {
		t.Skip("needs a Slurm cluster: make test-slurm starts one on loopback and sets THROTTLESIM_SLURM=1")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	tune := resumeCases[1].args
	writeFile(t, dir, "scenarios/tune-retries.yaml", string(readFile(t, filepath.Join(testdataRoot, "..", tune[1]))))
	writeFile(t, dir, "scenarios/map-small.yaml", string(readFile(t, filepath.Join(testdataRoot, "map-small.yaml"))))
	bin := testBinaryScript(t, dir)
	searches := []struct {
		name string
		args []string
	}{
		{"t", append([]string{"tune", "scenarios/tune-retries.yaml"}, tune[2:]...)},
		{"m", append([]string{"map", "scenarios/map-small.yaml", "--rounds"}, mapArgs[1:]...)},
	}
	for _, s := range searches {
		local := s.args
		if s.name == "m" {
			local = append([]string{"map", "scenarios/map-small.yaml"}, mapArgs[1:]...)
		}
		if r := runCLI(t, append(local, "--out", "local-"+s.name)...); r.code != 0 {
			t.Fatalf("%s here: exit %d\n%s", s.name, r.code, r.stderr)
		}
		if r := runCLI(t, append(s.args, "--emit", "slurm", "--shards", "2", "--binary", bin, "--memory", "256M", "--out", "results/"+s.name)...); r.code != 0 {
			t.Fatalf("emit %s: exit %d\n%s", s.name, r.code, r.stderr)
		}
		if out, err := exec.Command("sh", filepath.Join(dir, "jobs", s.name+"-slurm", "submit.sh")).CombinedOutput(); err != nil {
			t.Fatalf("submit.sh: %v\n%s", err, out)
		}
	}
	// Slurm's scheduler decides when; the bound only stops a stuck cluster.
	for _, s := range searches {
		results := filepath.Join(dir, "results", s.name)
		for i := 0; ; i++ {
			q, _ := exec.Command("squeue", "-h", "-n", s.name+"-next,"+s.name+"-round", "-o", "%i").Output()
			_, err := os.Stat(filepath.Join(results, "report.html"))
			if err == nil && strings.TrimSpace(string(q)) == "" {
				break
			}
			if i == 2400 || (err != nil && strings.TrimSpace(string(q)) == "") {
				logs, _ := exec.Command("sh", "-c", "tail -n 5 "+shellQuote(filepath.Join(dir, "jobs", s.name+"-slurm"))+"/logs/*").CombinedOutput()
				t.Fatalf("%s: the chain ended without results (or took over 10 min); logs:\n%s", s.name, logs)
			}
			time.Sleep(250 * time.Millisecond)
		}
		rounds, _ := filepath.Glob(filepath.Join(dir, "jobs", s.name+"-slurm", "logs", "next-*.out"))
		sameTree(t, s.name+" on a real Slurm in rounds vs here", testfs.Tree(t, filepath.Join(dir, "local-"+s.name)), testfs.Tree(t, results))
		t.Logf("%s: %d next jobs", s.name, len(rounds))
	}
}
