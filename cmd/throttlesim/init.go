package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/internal/suggest"
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

// The starting scenarios of `throttlesim init`, one file each, every one
// a valid scenario as it stands (TestInitTemplates runs them).
//
//go:embed templates/*.yaml
var templateFiles embed.FS

// template is one starting scenario of `throttlesim init`.
type template struct {
	name, about string
}

// templates are in the order --list prints them; the first is the default.
var templates = []template{
	{"backend", "one capacity-limited backend, a 30 s outage, retries behind the SRE adaptive throttle"},
	{"chain", "a chain of services (frontend -> backend -> database), every hop retrying"},
	{"replicas", "five replicas behind a load balancer, one of them 10x slower for 2 minutes"},
	{"reconnect-storm", "clients holding connections reconnect at once after an outage"},
}

func templateNames() []string {
	var names []string
	for _, t := range templates {
		names = append(names, t.name)
	}
	return names
}

// templateText is the scenario of the template name, for FILE: its name
// is FILE's base name when that is a valid scenario name (my-api.yaml:
// name: my-api, results in results/my-api/), and its comments say FILE.
func templateText(name, file string) ([]byte, error) {
	b, err := templateFiles.ReadFile("templates/" + name + ".yaml")
	if err != nil {
		return nil, err
	}
	text := string(b)
	if file == "-" {
		return b, nil
	}
	if n := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".yaml"), ".yml"); n != name && validName.MatchString(n) && len(n) <= 100 {
		// name: NAME, its comment kept in its column when there is room
		text = nameLine.ReplaceAllStringFunc(text, func(l string) string {
			comment := l[strings.Index(l, "#"):]
			return fmt.Sprintf("%-*s%s", max(len(l)-len(comment), len("name: "+n+" ")), "name: "+n, comment)
		})
		text = strings.ReplaceAll(text, "results/"+name+"/", "results/"+n+"/")
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			lines[i] = strings.ReplaceAll(l, " FILE", " "+shellWord(file))
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}

var nameLine = regexp.MustCompile(`(?m)^name: \S+ +#.*$`)

// validName is the rule of a scenario's name (docs/scenario-reference.md).
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

var plainWord = regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`)

// shellWord quotes s for a shell command line when it needs it.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// initOptions are init's argument and flags.
type initOptions struct {
	file        string // "" without FILE: NAME.yaml
	tmpl        string
	force, list bool
}

// newInitCmd builds `throttlesim init`; runF replaces the run function in
// tests (nil: the real one).
func newInitCmd(e *env, runF func(context.Context, *env, *initOptions) error) *cobra.Command {
	o := &initOptions{}
	if runF == nil {
		runF = initRun
	}
	cmd := &cobra.Command{
		Use:   "init [--template NAME] [FILE]",
		Short: "Write a commented starting scenario to edit and run",
		Long: `Init writes a starting scenario, commented field by field (what it means,
its unit), from one of a few templates; each validates and runs as
written, in well under a second. FILE defaults to NAME.yaml; - writes to
stdout. An existing file is never replaced without --force.
--list lists the templates.`,
		Example: `  throttlesim init                                   # backend.yaml: one backend, an outage, SRE throttling
  throttlesim init --template chain my-chain.yaml    # then: throttlesim run my-chain.yaml
  throttlesim init --list`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("expected at most one FILE, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.list {
				if len(args) > 0 || cmd.Flags().Changed("template") || o.force {
					return usageError{errors.New("--list takes no FILE, --template or --force")}
				}
				return runF(cmd.Context(), e, o)
			}
			if !slices.Contains(templateNames(), o.tmpl) {
				msg := fmt.Sprintf("--template %q: no such template", o.tmpl)
				if s := closestTemplate(o.tmpl); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return usageError{fmt.Errorf("%s; the templates are %s (throttlesim init --list)", msg, strings.Join(templateNames(), ", "))}
			}
			o.file = o.tmpl + ".yaml"
			if len(args) == 1 {
				o.file = args[0]
			}
			return runF(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVarP(&o.tmpl, "template", "t", templates[0].name, "the starting scenario: "+strings.Join(templateNames(), ", "))
	cmd.Flags().BoolVar(&o.force, "force", false, "replace FILE if it exists")
	cmd.Flags().BoolVar(&o.list, "list", false, "list the templates, one line each")
	cmd.RegisterFlagCompletionFunc("template", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return templateNames(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// initRun lists the templates (--list) or writes template o.tmpl to o.file.
func initRun(_ context.Context, e *env, o *initOptions) error {
	if o.list {
		for _, t := range templates {
			fmt.Fprintf(e.stdout, "%-16s %s\n", t.name, t.about)
		}
		return nil
	}
	file, tmpl := o.file, o.tmpl
	text, err := templateText(tmpl, file)
	if err != nil {
		return err
	}
	if file == "-" {
		_, err := e.stdout.Write(text)
		return err
	}
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a folder; name the scenario file to write, e.g. %s", file, filepath.Join(file, tmpl+".yaml"))
	}
	if err := writeNew(file, text, o.force); err != nil {
		return err
	}
	if !e.quiet {
		fmt.Fprintf(e.stdout, "wrote %s (template %s: %s)\nnext: throttlesim run %s\n", file, tmpl, aboutOf(tmpl), shellWord(file))
	}
	return nil
}

// writeNew writes a new file; an existing one only with force, and then
// atomically. Without force the file is created exclusively, so a file
// that appears meanwhile is not replaced either.
func writeNew(file string, data []byte, force bool) error {
	if force {
		if err := resultdir.WriteFile(file, data); err != nil {
			return fmt.Errorf("cannot write %s: %w", file, pathErr(err))
		}
		return nil
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; not replacing it (--force replaces it, or name another FILE)", file)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", file, pathErr(err))
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file) // ours, and incomplete
		return fmt.Errorf("cannot write %s: %w", file, pathErr(err))
	}
	return nil
}

// pathErr is the reason of a file error without the path (the caller
// names the file the user gave, not a temporary one).
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// closestTemplate is the template a mistyped name probably means: one
// within a typo of it, or the one it begins ("reconnect").
func closestTemplate(s string) string {
	if c := suggest.Closest(s, templateNames()); c != "" {
		return c
	}
	var prefixed []string
	for _, n := range templateNames() {
		if s != "" && strings.HasPrefix(n, s) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

func aboutOf(name string) string {
	for _, t := range templates {
		if t.name == name {
			return t.about
		}
	}
	return ""
}
