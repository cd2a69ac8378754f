package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Every template is written, validates and runs as written, is short (a
// few simulated minutes), and says what its fields mean: every field has
// a comment on at least one of its lines (a section header such as
// "clients:" needs none).
func TestInitTemplates(t *testing.T) {
	for _, tmpl := range templateNames() {
		t.Run(tmpl, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tmpl+".yaml")
			r := runCLI(t, "init", "--template", tmpl, file)
			if r.code != 0 || !strings.HasSuffix(r.stdout, "next: throttlesim run "+file+"\n") {
				t.Fatalf("init: exit %d, stdout %q, stderr %q; want exit 0 and the next command", r.code, r.stdout, r.stderr)
			}
			text := string(readFile(t, file))
			if !strings.Contains(text, "\nname: "+tmpl+" ") || !strings.Contains(text, "#   throttlesim run "+file+" ") {
				t.Errorf("the scenario does not keep its name or does not name its file in its commands:\n%s", text)
			}
			if r := runCLI(t, "validate", file); r.code != 0 {
				t.Fatalf("validate: exit %d\n%s", r.code, r.stderr)
			}
			sc, err := loadScenario(&env{}, file, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Duration(sc.Duration); d > 5*time.Minute {
				t.Errorf("duration %v: a template should run a few simulated minutes", d)
			}
			// The run (a quarter of a second at most) is left to make test:
			// under -short (make test-race) it would only be slower.
			if !testing.Short() {
				out := filepath.Join(dir, "out")
				if r := runCLI(t, "run", "-q", "--no-charts", file, "--out", out); r.code != 0 {
					t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
				}
				if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
					t.Error(err)
				}
			}
			for key, commented := range fieldComments(text) {
				if !commented {
					t.Errorf("field %q has no comment on any of its lines", key)
				}
			}
		})
	}
}

var fieldLine = regexp.MustCompile(`^\s*(?:- )?([a-z_]+):(.*)$`)

// fieldComments maps each field set in a YAML text (not a section header
// alone on its line) to whether one of its lines has a comment, on the
// line or just above it ("# description: ...").
func fieldComments(text string) map[string]bool {
	seen := map[string]bool{}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		m := fieldLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		value, comment, _ := strings.Cut(m[2], "#")
		if strings.TrimSpace(value) == "" && comment == "" {
			continue // a section header
		}
		above := i > 0 && strings.HasPrefix(lines[i-1], "# "+m[1]+": ")
		seen[m[1]] = seen[m[1]] || strings.Contains(line, "#") || above
	}
	return seen
}

// init refuses what would lose or misplace something, and says why: an
// existing file (kept as it was), a folder, an unknown template (with
// the names, and a guess when it looks like a typo).
func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	mine := writeFile(t, dir, "mine.yaml", "name: mine\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an existing file", []string{"init", mine}, exitError, mine + " exists; not replacing it (--force replaces it, or name another FILE)"},
		{"an existing file, another template", []string{"init", "-t", "chain", mine}, exitError, "exists; not replacing it"},
		{"a folder", []string{"init", dir}, exitError, dir + " is a folder; name the scenario file to write"},
		{"a typo", []string{"init", "-t", "replica", filepath.Join(dir, "new.yaml")}, exitUsage,
			`--template "replica": no such template (did you mean "replicas"?); the templates are backend, chain, replicas, reconnect-storm`},
		{"a prefix", []string{"init", "-t", "reconnect", filepath.Join(dir, "new.yaml")}, exitUsage, `(did you mean "reconnect-storm"?)`},
		{"an unknown name", []string{"init", "-t", "kubernetes", filepath.Join(dir, "new.yaml")}, exitUsage,
			`--template "kubernetes": no such template; the templates are backend, chain, replicas, reconnect-storm (throttlesim init --list)`},
		{"two files", []string{"init", "a.yaml", "b.yaml"}, exitUsage, "expected at most one FILE, got 2 arguments"},
		{"--list with a file", []string{"init", "--list", "a.yaml"}, exitUsage, "--list takes no FILE"},
		{"a folder that does not exist", []string{"init", filepath.Join(dir, "nosuch", "s.yaml")}, exitError, "cannot write " + filepath.Join(dir, "nosuch", "s.yaml") + ": no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(dir)
			r := runCLI(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			if got := string(readFile(t, mine)); got != "name: mine\n" {
				t.Errorf("the existing file was changed: %q", got)
			}
			for _, f := range []string{"new.yaml", "a.yaml", "b.yaml", "backend.yaml"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was written", f)
				}
			}
		})
	}
	// --force replaces it with the template.
	if r := runCLI(t, "init", "--force", "-t", "replicas", mine); r.code != 0 {
		t.Fatalf("--force: exit %d, %s", r.code, r.stderr)
	}
	if got := string(readFile(t, mine)); !strings.Contains(got, "\nname: mine ") || !strings.Contains(got, "replicas: 5") {
		t.Errorf("--force did not write the replicas template named mine:\n%s", got)
	}
}

// The other ways to call it: no FILE writes NAME.yaml here, - writes the
// template to stdout and nothing else, --list prints one line each, and
// a FILE's base name becomes the scenario's name when it is a valid one.
func TestInitForms(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if r := runCLI(t, "init"); r.code != 0 || r.stdout != "wrote backend.yaml (template backend: "+aboutOf("backend")+")\nnext: throttlesim run backend.yaml\n" {
		t.Errorf("init: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat("backend.yaml"); err != nil {
		t.Error(err)
	}
	if r := runCLI(t, "-q", "init", "-t", "chain"); r.code != 0 || r.stdout != "" {
		t.Errorf("init -q: exit %d, stdout %q; want nothing on stdout", r.code, r.stdout)
	}

	r := runCLI(t, "init", "-t", "reconnect-storm", "-")
	want, err := templateFiles.ReadFile("templates/reconnect-storm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.stdout != string(want) || r.stderr != "" {
		t.Errorf("init -: exit %d, stderr %q, stdout not the template (%d bytes, want %d)", r.code, r.stderr, len(r.stdout), len(want))
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`init - wrote a file named "-"`)
	}
	if _, err := scenario.Parse(want, "reconnect-storm.yaml", nil); err != nil {
		t.Errorf("the template as printed: %v", err)
	}

	r = runCLI(t, "init", "--list")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != len(templates) {
		t.Fatalf("--list: exit %d, %d lines; want %d:\n%s", r.code, len(lines), len(templates), r.stdout)
	}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) < 3 || f[0] != templates[i].name {
			t.Errorf("--list line %d: %q, want %q and what it is", i, l, templates[i].name)
		}
	}

	for file, name := range map[string]string{"my-api.yml": "my-api", "with space.yaml": "replicas", "a.b_c.yaml": "a.b_c"} {
		if r := runCLI(t, "init", "-t", "replicas", file); r.code != 0 {
			t.Fatalf("init %s: exit %d, %s", file, r.code, r.stderr)
		}
		sc, err := loadScenario(&env{}, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != name {
			t.Errorf("%s: scenario name %q, want %q", file, sc.Name, name)
		}
		if text := string(readFile(t, file)); !strings.Contains(text, "results/"+name+"/report.html") || !strings.Contains(text, "#   throttlesim run "+shellWord(file)+" ") {
			t.Errorf("%s: the comments do not name results/%s/ or the file", file, name)
		}
	}
	if got := shellWord("with space.yaml"); got != "'with space.yaml'" {
		t.Errorf("shellWord: %s", got)
	}
}
