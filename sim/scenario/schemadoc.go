package scenario

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FieldDocs reads the Go doc comments of the scenario types' fields from
// the package's source in dir, keyed "Type.Field": the descriptions of the
// schema's fields that docs/scenario-reference.md has no row for. A field
// without a comment of its own takes the comment of the group of fields
// it is written in (consecutive lines) if that comment names it
// ("Initial, Min and Max bound the limit"). The Go names of the struct's
// fields in the text are replaced by their YAML names, in backquotes.
func FieldDocs(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	fset := token.NewFileSet()
	docs := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				structDocs(fset, ts.Name.Name, st, docs)
			}
			return false
		})
	}
	return docs, nil
}

func structDocs(fset *token.FileSet, typ string, st *ast.StructType, docs map[string]string) {
	yamlName := map[string]string{}
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err != nil {
			continue
		}
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("yaml"), ",")
		for _, id := range f.Names {
			if name != "" && name != "-" {
				yamlName[id.Name] = name
			}
		}
	}
	var group string
	prevLine := -2
	for _, f := range st.Fields.List {
		line := fset.Position(f.Pos()).Line
		text := f.Doc.Text()
		if text == "" {
			text = f.Comment.Text()
		}
		switch {
		case f.Doc != nil:
			group = text
		case line != prevLine+1:
			group = ""
		}
		if text == "" && len(f.Names) > 0 && mentions(group, f.Names[0].Name, yamlName[f.Names[0].Name]) {
			text = group
		}
		prevLine = fset.Position(f.End()).Line
		if text == "" {
			continue
		}
		for _, id := range f.Names {
			docs[typ+"."+id.Name] = yamlWords(strings.Join(strings.Fields(text), " "), yamlName)
		}
	}
}

// mentions: text names the field by its Go or its YAML name.
func mentions(text, goName, yamlName string) bool {
	for _, n := range []string{goName, yamlName} {
		if n != "" && regexp.MustCompile(`\b`+regexp.QuoteMeta(n)+`\b`).MatchString(text) {
			return true
		}
	}
	return false
}

// yamlWords replaces the Go field names in s by their YAML names.
func yamlWords(s string, yamlName map[string]string) string {
	names := make([]string, 0, len(yamlName))
	for n := range yamlName {
		names = append(names, regexp.QuoteMeta(n))
	}
	if len(names) == 0 {
		return s
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	re := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	return re.ReplaceAllStringFunc(s, func(w string) string { return "`" + yamlName[w] + "`" })
}
