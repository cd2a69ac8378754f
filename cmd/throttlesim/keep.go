package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

// A map or a tune keeps every finished run in <out>.incomplete/runs, one
// file per run, written atomically (a temporary file renamed into place),
// so that an interrupted search can be resumed: a search is a
// deterministic function of its inputs and of its runs' figures, so
// replaying it with the kept figures makes the same decisions and writes
// the same bytes. resume.json records the inputs (the scenarios' content,
// every flag but --jobs, --out and --resume, the throttlesim version);
// --resume refuses kept runs of other inputs. Two copies of the same
// search in the same folder at once (a batch engine's speculative retry)
// write the same bytes to the same names, and each rename is atomic.

const keepPlanFile = "resume.json"

// keepInput is one input of a search as resume.json records it.
type keepInput struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// keepPlan is resume.json.
type keepPlan struct {
	Command string      `json:"command"`
	Version string      `json:"version"`
	Commit  string      `json:"commit"`
	Inputs  []keepInput `json:"inputs"`
}

// keptRun is one kept run: the variant (checked on reading) and its
// figures, each written exactly (strconv 'g' -1, NaN and ±Inf included).
type keptRun struct {
	Scenario int               `json:"scenario"`
	Sets     []string          `json:"sets"`
	Seed     uint64            `json:"seed"`
	Figures  map[string]string `json:"figures"`
}

// testKeptRun, when set (by tests), is called after every run is kept:
// an interruption after the N-th finished run, without a clock.
var testKeptRun func()

// flagInputs is every flag of cmd that can change a search's result (all
// but --jobs, --out, --resume and --help), as given or by default.
func flagInputs(cmd *cobra.Command) []keepInput {
	var in []keepInput
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "jobs", "out", "resume", "force", "help":
			return
		}
		if _, ok := emitFlags[f.Name]; ok || roundFlags[f.Name] {
			return // how the search is run, not what it computes
		}
		in = append(in, keepInput{"--" + f.Name, f.Value.String()})
	})
	return in
}

// newKeepPlan is the plan of a search: the command, the scenario files
// with a hash of their content, and the inputs (flagInputs, and what the
// command resolved from them).
func newKeepPlan(command string, srcs []explore.Source, inputs ...keepInput) keepPlan {
	p := keepPlan{Command: command, Version: version, Commit: commit}
	for i, src := range srcs {
		sum := sha256.Sum256(src.Data)
		n := "scenario " + strconv.Itoa(i+1)
		p.Inputs = append(p.Inputs, keepInput{n, src.File}, keepInput{n + " sha256", hex.EncodeToString(sum[:])})
	}
	p.Inputs = append(p.Inputs, inputs...)
	return p
}

// keeper keeps a search's runs in dir.
type keeper struct {
	dir     string // <out>.incomplete
	command string // "map" or "tune", for messages
	plan    []byte // resume.json
}

// openKeep checks work (<out>.incomplete) for a search with plan p; the
// folder is made when the first run finishes (so that a search refused
// before it runs leaves nothing). Without resume, an existing work folder
// is an error (an interrupted search is there). With resume, the kept runs
// must be of the same plan; with nothing kept the search starts from the
// beginning (fresh says so), so that one command serves a batch engine's
// first try and its retries, as sweep's --resume does.
func openKeep(work string, resume bool, p keepPlan) (k *keeper, fresh bool, err error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, false, err
	}
	b = append(b, '\n')
	k = &keeper{dir: work, command: p.Command, plan: b}
	planPath := filepath.Join(work, keepPlanFile)
	_, werr := os.Stat(work)
	switch {
	case werr == nil && !resume:
		return nil, false, fmt.Errorf("%s exists: an earlier %s was interrupted there (%d finished runs kept); continue it with the same command and --resume, or delete the folder to start over", work, p.Command, k.count())
	case werr != nil && !errors.Is(werr, fs.ErrNotExist):
		return nil, false, werr
	}
	old, rerr := os.ReadFile(planPath)
	switch {
	case rerr == nil:
		if string(old) != string(b) {
			return nil, false, planDiffers(work, old, p)
		}
		return k, false, nil
	case !errors.Is(rerr, fs.ErrNotExist):
		return nil, false, rerr
	case werr == nil && k.count() > 0:
		return nil, false, fmt.Errorf("%s: holds runs but no %s, so what they are runs of is unknown; delete the folder to start over, or use another --out", work, keepPlanFile)
	}
	return k, true, nil
}

// planDiffers names what changed between the kept runs' plan (old) and
// this one.
func planDiffers(work string, old []byte, now keepPlan) error {
	var was keepPlan
	var diffs []string
	if err := json.Unmarshal(old, &was); err != nil {
		diffs = append(diffs, fmt.Sprintf("%s is unreadable (%v)", keepPlanFile, err))
	} else {
		if was.Command != now.Command {
			diffs = append(diffs, fmt.Sprintf("they are runs of a %s, not of a %s", was.Command, now.Command))
		}
		if was.Version != now.Version || was.Commit != now.Commit {
			diffs = append(diffs, fmt.Sprintf("throttlesim version %s (%s) then, %s (%s) now", was.Version, was.Commit, now.Version, now.Commit))
		}
		then := map[string]string{}
		for _, in := range was.Inputs {
			then[in.Name] = in.Value
		}
		for _, in := range now.Inputs {
			if v, ok := then[in.Name]; !ok {
				diffs = append(diffs, in.Name+" is new")
			} else if v != in.Value {
				diffs = append(diffs, fmt.Sprintf("%s %q then, %q now", in.Name, v, in.Value))
			}
			delete(then, in.Name)
		}
		for _, in := range was.Inputs {
			if _, gone := then[in.Name]; gone {
				diffs = append(diffs, in.Name+" is gone")
			}
		}
		if len(diffs) == 0 {
			diffs = append(diffs, keepPlanFile+" differs")
		}
	}
	return fmt.Errorf("%s: the kept runs are of a different %s (%s); resume with the same scenario and flags, or delete the folder (or use another --out) to start over",
		work, now.Command, strings.Join(diffs, "; "))
}

// count is the number of runs kept in the folder.
func (k *keeper) count() int {
	es, err := os.ReadDir(filepath.Join(k.dir, "runs"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

func runKey(v explore.Variant) (string, []byte) {
	r := keptRun{Scenario: v.Scenario, Sets: v.Sets, Seed: v.Seed}
	if r.Sets == nil {
		r.Sets = []string{}
	}
	b, _ := json.Marshal(r) // strings and numbers: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), b
}

// wrap is eval with every run kept: a run kept before is read back, not
// run; a new one is kept as soon as it finishes. Once ctx ends no new run
// starts.
func (k *keeper) wrap(eval explore.Eval) explore.Eval {
	return func(ctx context.Context, v explore.Variant) (explore.Figures, error) {
		key, _ := runKey(v)
		path := filepath.Join(k.dir, "runs", key+".json")
		if f, ok, err := readKept(path, v); err != nil || ok {
			return f, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := eval(ctx, v)
		if err != nil {
			return nil, err
		}
		if err := k.keep(path, v, f); err != nil {
			return nil, err
		}
		if testKeptRun != nil {
			testKeptRun()
		}
		return f, nil
	}
}

func readKept(path string, v explore.Variant) (explore.Figures, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var r keptRun
	if err := json.Unmarshal(b, &r); err != nil {
		// Not synced (see keep): after a crash of the machine a kept run
		// may be cut short. It is run again.
		return nil, false, nil
	}
	if r.Scenario != v.Scenario || r.Seed != v.Seed || !slices.Equal(r.Sets, v.Sets) {
		return nil, false, fmt.Errorf("%s: holds the run of scenario %d %v seed %d, not of scenario %d %v seed %d; delete it to run it again",
			path, r.Scenario, r.Sets, r.Seed, v.Scenario, v.Sets, v.Seed)
	}
	f := make(explore.Figures, len(r.Figures))
	for name, s := range r.Figures {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%s: figure %s is %q, not a number; delete the file to run it again", path, name, s)
		}
		f[name] = x
	}
	return f, true, nil
}

// keep writes one run's file atomically: a temporary file renamed into
// place, so that a killed process (or another copy writing the same run)
// never leaves a part of one. It is not synced: that cost a few ms a run,
// as much as a small run itself, and all a crash of the machine can do is
// cut a file short, which readKept then runs again. If the folder is not there (the
// first run, or another copy of the same search finished and removed it),
// it is made, with resume.json first, so that a folder with runs always
// says what they are runs of.
func (k *keeper) keep(path string, v explore.Variant, f explore.Figures) error {
	r := keptRun{Scenario: v.Scenario, Sets: v.Sets, Seed: v.Seed, Figures: make(map[string]string, len(f))}
	if r.Sets == nil {
		r.Sets = []string{}
	}
	for name, x := range f {
		r.Figures[name] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(r) // map keys sorted: the same run, the same bytes
	if err != nil {
		return err
	}
	b = append(b, '\n')
	for try := 0; ; try++ {
		if err = writeRenamed(path, b); err == nil {
			return nil
		}
		if try == 3 {
			return fmt.Errorf("keeping a finished run: %w", err)
		}
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("keeping a finished run: %w", err)
		}
		if err = resultdir.WriteFile(filepath.Join(k.dir, keepPlanFile), k.plan); err != nil {
			return fmt.Errorf("keeping a finished run: %w", err)
		}
	}
}

// done removes the folder once the search's results are written. Another
// copy of the search still running may be adding a run to it meanwhile
// (RemoveAll then fails: the folder is not empty), so it tries again; if
// the folder stays, the results are still whole and it only warns.
func (k *keeper) done(e *env) {
	var err error
	for try := 0; try < 3; try++ {
		if err = os.RemoveAll(k.dir); err == nil {
			return
		}
	}
	fmt.Fprintf(e.stderr, "throttlesim: warning: the results are written, but the kept runs in %s could not be removed: %v\n", k.dir, err)
}

// failed is called when the search fails other than by an interruption
// (a scenario without a recovery rule, a budget too small): the runs are
// no use to a search that cannot succeed, so the folder is removed if this
// search made it, and a failed resume leaves what it found.
func (k *keeper) failed(fresh bool) {
	if fresh {
		os.RemoveAll(k.dir)
	}
}

// interrupted says how many runs are kept and the command that resumes,
// and returns the exit code's error.
func (k *keeper) interrupted(e *env) error {
	n := k.count()
	if n == 0 {
		fmt.Fprintf(e.stderr, "throttlesim: interrupted before any run finished: nothing is kept\n")
		return reportedError{exitInterrupted}
	}
	fmt.Fprintf(e.stderr, "throttlesim: interrupted; %d finished runs are kept in %s; continue with:\n  %s\n", n, k.dir, resumeCommand(e.args))
	return reportedError{exitInterrupted}
}

// resumeCommand is the command line args with --resume (added unless
// it is there), quoted for a POSIX shell.
func resumeCommand(args []string) string {
	q := []string{"throttlesim"}
	has := false
	for _, a := range args {
		// A job of a chain of rounds continues as it is: it always
		// continues from the kept runs, and refuses --resume.
		has = has || a == "--resume" || a == "--resume=true" || a == "--next-round" || a == "--round-shard" || strings.HasPrefix(a, "--round-shard=")
		q = append(q, shellQuote(a))
	}
	if !has {
		q = append(q, "--resume")
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./,:@%+", r))
	}
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !plain(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeRenamed writes name atomically (a temporary file in the same
// folder renamed over it), without syncing.
func writeRenamed(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
