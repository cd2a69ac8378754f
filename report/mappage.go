package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/explore"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/scenario"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// WriteRare prints the rare-event estimates, if any.
func WriteRare(w io.Writer, doc *explore.MapDoc) {
	r := doc.Result
	if len(r.Rare) == 0 {
		return
	}
	runs := 0
	for _, p := range r.Rare {
		if p.Tilt != nil {
			runs += p.Tilt.Paths + p.Tilt.PilotPaths
		} else {
			runs += p.Result.Paths + p.Result.PilotPaths
		}
	}
	fmt.Fprintf(w, "rare collapses below the boundary (%d runs, pilots and replays included):\n", runs)
	trigName := "trigger"
	if doc.TriggerOrigin != 0 {
		trigName = "length" // measured from its origin, as in the boundary table
	}
	fmt.Fprintf(w, "%-14s %-12s %-9s %-6s %-28s %s\n", "load", trigName, "map", "method", "P(no recovery) [95%]", "how")
	for _, p := range r.Rare {
		est := p.Err
		if est == "" {
			est = fmt.Sprintf("%.2g [%.2g, %.2g]", p.P, p.Lo, p.Hi)
		}
		how := ""
		if t := p.Tilt; t != nil && p.Err != "" {
			how = fmt.Sprintf("%d pilot rounds, %d runs", len(t.Pilot), t.PilotPaths+t.Paths)
		} else if t != nil {
			how = fmt.Sprintf("factors %s, %d of %d runs collapsed, ESS %.0f", explore.FactorRange(t.Factors), t.Collapsed, t.Paths, t.ESS)
		} else {
			var lv []string
			for _, x := range p.Result.Levels {
				lv = append(lv, strconv.FormatFloat(x, 'g', 4, 64))
			}
			how = "levels " + strings.Join(lv, " ")
		}
		method := p.Method
		if method == "" {
			method = "split"
		}
		fmt.Fprintf(w, "%-14s %-12s %-9s %-6s %-28s %s\n", r.Load.Short(p.Load), r.Trigger.Short(p.Trigger-doc.TriggerOrigin), fmt.Sprintf("%d/%d", p.K, p.N), method, est, how)
		if p.Warning != "" {
			fmt.Fprintf(w, "%-14s %-12s   ^ %s\n", "", "", p.Warning)
		}
	}
}

func WriteBoundary(w io.Writer, doc *explore.MapDoc) {
	r := doc.Result
	tr := shifted(r.Trigger, doc.TriggerOrigin)
	fmt.Fprintf(w, "threshold: where P(no recovery) crosses ½, in %s\n", triggerName(doc))
	fmt.Fprintf(w, "%-14s %-36s %s\n", "load", "threshold [bracket]", "runs")
	for _, l := range r.Levels {
		b := l.Boundary
		b.Threshold, b.Lo, b.Hi = b.Threshold-doc.TriggerOrigin, b.Lo-doc.TriggerOrigin, b.Hi-doc.TriggerOrigin
		var s string
		switch b.Kind {
		case "below":
			s = "below " + tr.Short(b.Hi)
		case "above":
			s = "above " + tr.Short(b.Lo)
		default:
			s = bracketed(b.Threshold, b.Lo, b.Hi, tr.Unit)
		}
		if l.NonMonotone != "" {
			s += "  NON-MONOTONE: " + l.NonMonotone
		}
		fmt.Fprintf(w, "%-14s %-36s %d\n", r.Load.Short(l.Load), s, l.Runs)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// bracketed writes a threshold and its bracket to the bracket's
// resolution: two significant digits of its width (5.20089 in
// [5.02679, 5.375] is "5.20s [5.02s, 5.38s]"). The printed bracket is
// rounded outwards, so it still contains the one found.
func bracketed(x, lo, hi float64, unit string) string {
	d := 0
	if w := hi - lo; w > 0 && !math.IsInf(w, 0) {
		d = max(0, 1-int(math.Floor(math.Log10(w))))
	}
	d = min(d, 9)
	p := math.Pow(10, float64(d))
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', d, 64) + unit }
	return fmt.Sprintf("%s [%s, %s]", f(x), f(math.Floor(lo*p+1e-9)/p), f(math.Ceil(hi*p-1e-9)/p))
}

func horizonFact(s float64) string {
	if s <= 0 {
		return "the end of the run"
	}
	return strconv.FormatFloat(s, 'g', -1, 64) + " s after the trigger"
}

func horizonText(s float64) string {
	if s <= 0 {
		return ""
	}
	return " within " + (time.Duration(s * float64(time.Second))).String()
}

// MapCharts draws map.png with draw (plots.Map), zoomed to the boundary when it lies in a
// small part of the trigger range (then map-full.png is the whole range),
// with the axes named and the trigger measured from its origin.
func MapCharts(doc *explore.MapDoc, draw func(plots.MapInput) ([]byte, error)) (zoomed, full []byte, err error) {
	r, o := doc.Result, doc.TriggerOrigin
	in := plots.MapInput{
		Title:        fmt.Sprintf("%s: where it stops recovering%s (%d runs)", doc.Name, horizonText(doc.HorizonS), r.Runs()),
		LoadLabel:    cmp.Or(doc.LoadLabel, axisLabel(r.Load)),
		TriggerLabel: cmp.Or(doc.TriggerLabel, axisLabel(r.Trigger)),
		TriggerLo:    r.Trigger.Lo - o, TriggerHi: r.Trigger.Hi - o,
	}
	for _, l := range r.Levels {
		for _, p := range l.Probes {
			in.Cells = append(in.Cells, plots.MapCell{Load: l.Load, Trigger: p.Trigger - o, P: p.P(), Grid: p.Phase == "grid"})
		}
		b := l.Boundary
		in.Boundary = append(in.Boundary, plots.MapBoundary{Load: l.Load, Threshold: b.Threshold - o, Lo: b.Lo - o, Hi: b.Hi - o, Kind: b.Kind})
	}
	lo, hi, zoom := plots.MapView(in)
	if !zoom {
		png, err := draw(in)
		return png, nil, err
	}
	if full, err = draw(in); err != nil {
		return nil, nil, err
	}
	in.ViewLo, in.ViewHi = lo, hi
	in.Title += fmt.Sprintf("\nzoomed to the boundary: %s of %s (map-full.png: all of it)",
		shortRange(r.Trigger, lo, hi), shortRange(r.Trigger, in.TriggerLo, in.TriggerHi))
	zoomed, err = draw(in)
	return zoomed, full, err
}

func shortRange(r explore.Range, lo, hi float64) string {
	return strconv.FormatFloat(lo, 'g', 4, 64) + "–" + strconv.FormatFloat(hi, 'g', 4, 64) + r.Unit
}

func axisLabel(r explore.Range) string {
	if r.Unit == "" {
		return r.Path
	}
	return fmt.Sprintf("%s (%s)", r.Path, r.Unit)
}

// shifted is r measured from origin (its unit kept).
func shifted(r explore.Range, origin float64) explore.Range {
	r.Lo, r.Hi = r.Lo-origin, r.Hi-origin
	return r
}

// triggerName is the printout's name for the trigger: the chart's label,
// or the field.
func triggerName(doc *explore.MapDoc) string {
	if doc.TriggerLabel != "" {
		return doc.TriggerLabel
	}
	return doc.Result.Trigger.Path
}

var profileAt = regexp.MustCompile(`^clients\.arrival\.profile\.(\d+)\.at$`)

var faultField = regexp.MustCompile(`^faults\.(\d+)\.(duration|start|fraction|factor)$`)

// MapAxes names the chart's axes. A name given (--load-label,
// --trigger-label) is used as it is. Otherwise: a trigger that is the time
// a load step ends (clients.arrival.profile.N.at, N >= 1) is measured
// from that step's start (profile N−1's at in the scenario as run), and is
// "spike length (s)" when the step raised the load, "length of load step
// N−1 (s)" otherwise; a fault's field is named in words ("fault 0
// duration (s)"); the load's total_rate is "offered load (/s)"; anything
// else is its path and unit.
func MapAxes(sc *scenario.Scenario, load, trig explore.Range, loadLabel, trigLabel string) (string, string, float64) {
	var origin float64
	if m := profileAt.FindStringSubmatch(trig.Path); m != nil && trig.Unit == "s" {
		n, _ := strconv.Atoi(m[1])
		prof := sc.Clients.Arrival.Profile
		if n >= 1 && n < len(prof) {
			origin = time.Duration(prof[n-1].At).Seconds()
			if trigLabel == "" {
				trigLabel = fmt.Sprintf("length of load step %d (s), from its start at %s s", n-1, strconv.FormatFloat(origin, 'g', -1, 64))
				if prof[n-1].Multiplier > 1 && (n-1 == 0 || prof[n-2].Multiplier <= prof[n-1].Multiplier) {
					trigLabel = fmt.Sprintf("spike length (s), from its start at %s s (×%g load)", strconv.FormatFloat(origin, 'g', -1, 64), prof[n-1].Multiplier)
				}
			}
		}
	}
	if m := faultField.FindStringSubmatch(trig.Path); m != nil && trigLabel == "" {
		trigLabel = "fault " + m[1] + " " + m[2]
		if trig.Unit != "" {
			trigLabel += " (" + trig.Unit + ")"
		}
	}
	if loadLabel == "" && (load.Path == "clients.arrival.total_rate" || strings.HasSuffix(load.Path, ".arrival.total_rate")) {
		loadLabel = "offered load"
		if load.Unit != "" {
			loadLabel += " (" + load.Unit + ")"
		}
	}
	return loadLabel, trigLabel, origin
}

// MapFiles is a map's folder: map.csv, boundary.csv, map.json, rare.csv
// (with rare-event estimates), the charts drawn with draw (plots.Map) and
// report.html. chartErr is why there are no charts (the rest is written
// anyway); err, why there is no folder.
func MapFiles(doc *explore.MapDoc, draw func(plots.MapInput) ([]byte, error)) (files []resultdir.File, chartErr, err error) {
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	files = []resultdir.File{
		{Name: "map.csv", Data: doc.Result.MapCSV()},
		{Name: "boundary.csv", Data: doc.Result.BoundaryCSV()},
		{Name: sweep.MapFile, Data: append(js, '\n')},
	}
	if len(doc.Result.Rare) > 0 {
		files = append(files, resultdir.File{Name: "rare.csv", Data: doc.Result.RareCSV()})
	}
	var charts []Chart
	if png, full, err := MapCharts(doc, draw); err != nil {
		chartErr = err
	} else {
		files = append(files, resultdir.File{Name: "map.png", Data: png})
		charts = append(charts, Chart{Title: "P(no recovery) over load × trigger, with the boundary", File: "map.png", PNG: png})
		if full != nil {
			files = append(files, resultdir.File{Name: "map-full.png", Data: full})
			charts = append(charts, Chart{Title: "the whole trigger range", File: "map-full.png", PNG: full})
		}
	}
	html, err := MapReport(doc, files[0].Data, files[1].Data, charts)
	if err != nil {
		return nil, nil, err
	}
	return append(files, resultdir.File{Name: "report.html", Data: html}), chartErr, nil
}

// MapReport is the map's report.html: the boundary as printed, the
// boundary and probe tables, the chart, and how it was made.
func MapReport(doc *explore.MapDoc, mapCSV, boundaryCSV []byte, charts []Chart) ([]byte, error) {
	var txt bytes.Buffer
	WriteBoundary(&txt, doc)
	WriteRare(&txt, doc)
	title := "Boundary by load"
	if o := doc.TriggerOrigin; o != 0 { // the CSV keeps the field's own values
		title += fmt.Sprintf(" (as %s; the charts and the printout subtract %s s)", doc.Result.Trigger.Path, strconv.FormatFloat(o, 'g', -1, 64))
	}
	bnd, err := CSVSection("boundary-table", title, "boundary.csv", boundaryCSV, 200)
	if err != nil {
		return nil, err
	}
	probes, err := CSVSection("probes", "Every probe", "map.csv", mapCSV, 400)
	if err != nil {
		return nil, err
	}
	how := fmt.Sprintf("throttlesim map %s --load %s --trigger %s", doc.Scenario, doc.Load, doc.Trigger)
	for _, s := range doc.Sets {
		how += " --set " + s
	}
	r, o := doc.Result, doc.TriggerOrigin
	lname, _, _ := strings.Cut(cmp.Or(doc.LoadLabel, ParamLabel(r.Load.Path)), " (")
	tname, _, _ := strings.Cut(cmp.Or(doc.TriggerLabel, ParamLabel(r.Trigger.Path)), " (")
	return HTML(Page{
		Title: doc.Name + ": metastability map", Kind: "map", Verdict: MapVerdict(doc),
		Facts: []Fact{{Name: lname, Value: fmt.Sprintf("%s–%s (%d levels)", r.Load.Short(r.Load.Lo), r.Load.Short(r.Load.Hi), len(r.Levels))},
			{Name: tname, Value: r.Trigger.Short(r.Trigger.Lo-o) + "–" + r.Trigger.Short(r.Trigger.Hi-o)},
			{Name: "horizon", Value: horizonFact(doc.HorizonS)}, {Name: "runs", Value: strconv.Itoa(r.Runs())}},
		Charts:   charts,
		Sections: []Section{TextSection("boundary", "Where it stops recovering", txt.String()), bnd, probes},
		Scenario: []Text{{Label: "command", Body: how}},
	})
}
