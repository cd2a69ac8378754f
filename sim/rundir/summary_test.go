package rundir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// ReadSummary refuses a summary.json whose figures cannot be a run's,
// naming the file and the field: no summary section (every figure would
// read as 0 and summarize would print a table of zeros), a negative count,
// and a NaN (which JSON cannot carry).
func TestReadSummaryRefusesImpossibleFigures(t *testing.T) {
	for _, tt := range []struct {
		name, summary, want string // summary: the "summary" member, or "" for none; want "": accepted
	}{
		{"good", `,"summary":{"offered":3,"succeeded":2,"success_ratio":0.67}`, ""},
		{"no summary section", ``, "no summary section"},
		{"null summary section", `,"summary":null`, "no summary section"},
		{"negative count", `,"summary":{"offered":3,"backend_rejected":-1}`, "summary.backend_rejected is -1"},
		{"NaN", `,"summary":{"offered":NaN}`, "invalid character"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			doc := `{"schema_version":` + strconv.Itoa(scenario.SchemaVersion) + tt.summary + `}`
			if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadSummary(dir)
			file := filepath.Join(dir, "summary.json")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want it read", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error naming %s: %s", err, file, tt.want)
			}
		})
	}
}
