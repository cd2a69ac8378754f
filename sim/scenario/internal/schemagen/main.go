// Command schemagen writes docs/scenario.schema.json, the JSON Schema of
// scenario files, from the scenario decoder's tables (scenario.JSONSchema)
// and the descriptions in docs/scenario-reference.md. Run it with
// `go generate ./sim/scenario` or `make schema`.
//
// Usage: schemagen REFERENCE.md OUT.json
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
	if len(args) != 2 {
		return fmt.Errorf("usage: schemagen REFERENCE.md OUT.json")
	}
	ref, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	b, err := scenario.JSONSchema(ref)
	if err != nil {
		return err
	}
	return os.WriteFile(args[1], b, 0o644)
}
