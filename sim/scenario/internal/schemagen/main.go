// Command schemagen writes docs/scenario.schema.json, the JSON Schema of
// scenario files, from the scenario decoder's tables (scenario.JSONSchema),
// the descriptions in docs/scenario-reference.md and, for the fields it
// has no row for, the Go doc comments of the package's source
// (scenario.FieldDocs). Run it with `go generate ./sim/scenario` or
// `make schema`.
//
// Usage: schemagen REFERENCE.md SOURCEDIR OUT.json
package main

import (
	"fmt"
	"os"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: schemagen REFERENCE.md SOURCEDIR OUT.json")
	}
	ref, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	docs, err := scenario.FieldDocs(args[1])
	if err != nil {
		return err
	}
	b, err := scenario.JSONSchema(ref, docs)
	if err != nil {
		return err
	}
	return os.WriteFile(args[2], b, 0o644)
}
