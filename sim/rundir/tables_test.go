package rundir

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

// groups.csv and services.csv are CSV that encoding/csv reads back: a
// header, then one row per interval and group (service), every row as
// wide as the header, and each name quoted where it needs to be.
func TestGroupsAndServicesCSV(t *testing.T) {
	groups := runScenario(t, "mixed-fleet.yaml", "clients.groups.0.name=a, \"quoted\" group")
	graph := runScenario(t, "cascade.yaml")
	for _, tt := range []struct {
		name      string
		csv       func() ([]byte, error)
		head      string // the second column's name
		names     []string
		intervals int
	}{
		{"groups.csv", func() ([]byte, error) { return GroupsCSV(groups) }, "group", groupNames(groups), len(groups.Series.Rows)},
		{"services.csv", func() ([]byte, error) { return ServicesCSV(graph) }, "t_s", serviceNames(graph), len(graph.Series.Rows)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.csv()
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatalf("got %v reading it back, want CSV", err)
			}
			if got, want := len(recs), 1+len(tt.names)*tt.intervals; got != want {
				t.Fatalf("got %d records, want %d (a header and one per interval and name)", got, want)
			}
			if recs[0][1] != tt.head {
				t.Errorf("got second column %q, want %q", recs[0][1], tt.head)
			}
			col := 1 // groups.csv: t_s, group
			if tt.name == "services.csv" {
				col = 0
			}
			for _, r := range recs[1:] {
				if !slices.Contains(tt.names, r[col]) {
					t.Fatalf("got name %q, want one of %q", r[col], tt.names)
				}
			}
		})
	}
	if b, err := GroupsCSV(graph); b != nil || err != nil {
		t.Errorf("groups.csv without groups: got %d bytes, %v; want none", len(b), err)
	}
}
