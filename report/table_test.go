package report

import (
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// A sweep whose points differ in having connections (a point that sets
// clients.connection): every row has every column, "–" where a point has
// no connection figures. It used to append the columns to the header at
// the first point with connections only, leaving the other rows short,
// and --columns then indexed past their end.
func TestSweepTableMixedConnections(t *testing.T) {
	run := func(conn bool) sweep.RunData {
		doc := &rundir.SummaryDoc{Scenario: scenario.Default()}
		if conn {
			doc.Summary.Connections = &metrics.ConnSummary{ConnectAttempts: 7}
		}
		return sweep.RunData{Doc: doc}
	}
	pts := []sweep.PointData{{Label: "plain", Runs: []sweep.RunData{run(false)}}, {Label: "conn", Runs: []sweep.RunData{run(true)}}}
	for _, cols := range [][]string{nil, {"point", "connect attempts"}} {
		tb, err := SweepTable(pts, cols)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range tb.Rows {
			if len(r) != len(tb.Header) {
				t.Fatalf("columns %v: row %d has %d cells, header %d", cols, i, len(r), len(tb.Header))
			}
		}
		if cols != nil {
			if got := tb.Rows[0][1] + " " + tb.Rows[1][1]; got != "– 7" {
				t.Errorf("connect attempts: got %q, want %q", got, "– 7")
			}
		}
	}
}
