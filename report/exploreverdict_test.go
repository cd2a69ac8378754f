package report

import (
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/explore"
)

func TestMapVerdict(t *testing.T) {
	load := explore.Range{Path: "clients.arrival.total_rate", Lo: 300, Hi: 700, Unit: "/s"}
	trig := explore.Range{Path: "faults.0.duration", Lo: 5, Hi: 300, Unit: "s"}
	lvl := func(l float64, kind string, thr, lo, hi float64) explore.Level {
		return explore.Level{Load: l, Boundary: explore.Boundary{Kind: kind, Threshold: thr, Lo: lo, Hi: hi}}
	}
	tests := []struct {
		name   string
		levels []explore.Level
		want   []string
	}{
		{"bracketed at two loads, always below, never above", []explore.Level{
			lvl(300, "above", 0, 300, 300), lvl(500, "bracketed", 120.4, 110, 131), lvl(600, "bracketed", 40.2, 38, 43), lvl(700, "below", 0, 5, 5)},
			[]string{"It stops recovering once the faults #0 duration passes 120s [110s, 131s] at 500/s, and 40.2s [38.0s, 43.0s] at 600/s.",
				"At 300/s it recovers from every faults #0 duration up to 300s; at 700/s it does not recover even from 5s."}},
		{"one level", []explore.Level{lvl(500, "bracketed", 61.5, 61, 62)},
			[]string{"At 500/s it stops recovering once the faults #0 duration passes 61.5s [61.0s, 62.0s]."}},
		{"never recovers", []explore.Level{lvl(300, "below", 0, 5, 5), lvl(500, "below", 0, 5, 5), lvl(700, "below", 0, 5, 5)},
			[]string{"At the 3 loads from 300/s to 700/s it does not recover even from 5s."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := &explore.MapDoc{Result: &explore.MapResult{Load: load, Trigger: trig, Levels: tc.levels}}
			if got := MapVerdict(doc); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
