package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/threshold"
)

// Page is the input of HTML: plain data, so that any command can make a
// report and add its own sections.
type Page struct {
	Title string
	// Description is the scenario's description, shown under the title.
	Description string
	Kind        string // "run", "sweep", "compare", "map" or "tune": what the folder holds
	Facts       []Fact // short facts under the title: seed, duration, runs
	// Verdict is what the page found, in a sentence or two a person can
	// act on (RunVerdict, SweepVerdict, CompareVerdict): shown first.
	Verdict []string
	// Diff is the fields in which compared scenarios differ from the
	// baseline's (or the first run's), every run's value in a column:
	// shown after the verdict.
	Diff ScenarioDiffTable
	// Summary is the summary table: one column per point (or run), one
	// row per metric, each a mean with its 95% interval over the runs;
	// left out when it has no rows (map, tune).
	Summary Grid
	// Lead are sections shown before the summary (a service graph's
	// services).
	Lead []Section
	// Verdicts are the threshold verdicts, per point.
	Verdicts []PointVerdicts
	// Paired are the differences from the baseline point (Paired); empty
	// without a baseline.
	Paired []PairedRow
	// Matrix is Paired as one table, metric by point.
	Matrix   *Matrix
	Charts   []Chart
	Scenario []Text    // the scenario(s) as run, as YAML
	Sections []Section // more sections, after the charts
}

// ScenarioDiffTable is how compared scenarios differ: a row per field,
// a column per run (Runs[Ref] the one the others are read against).
type ScenarioDiffTable struct {
	Runs []string
	Ref  int
	Rows []DiffRow
}

// Fact is a name and a value shown under the title.
type Fact struct{ Name, Value string }

// PointVerdicts are the threshold verdicts of one point or run.
type PointVerdicts struct {
	Label    string
	Verdicts []threshold.Verdict
}

// Chart is one chart, embedded in the page: a PNG (base64) or an SVG
// document (inline); an SVG's named series (its groups ser-N, as
// plots.RenderSVG writes them) get a switch each that hides them.
type Chart struct {
	Title  string
	File   string // the file it also is in the results folder
	PNG    []byte
	SVG    []byte
	Series []string
}

// Text is a labelled block of preformatted text; a folded one is shown
// by its label until opened (the defaults of a scenario).
type Text struct {
	Label, Body string
	Folded      bool
}

// Section is a section added by a command: its HTML is trusted.
type Section struct {
	ID, Title string
	HTML      template.HTML
}

type numView struct {
	Text, Raw string
}

func view(p *float64) *numView {
	if p == nil {
		return nil
	}
	return &numView{Text: Num(*p), Raw: strconv.FormatFloat(*p, 'g', -1, 64)}
}

// shown is a metric's value as the page shows it (Show), and raw.
func shown(m string, p *float64) *numView {
	if p == nil {
		return nil
	}
	return &numView{Text: Show(m, *p), Raw: strconv.FormatFloat(*p, 'g', -1, 64)}
}

var funcs = template.FuncMap{
	"label":   MetricLabel,
	"num":     view,
	"shown":   shown,
	"mark":    Mark,
	"ok":      func(v threshold.Verdict) bool { return v.OK() },
	"outcome": PageOutcome,
	"param":   ParamLabel,
	"img": func(c Chart) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(c.PNG))
	},
	"svg": svgFigure,
	"est": func(r GridRow, m string) Estimate { return r.Metrics[m] },
	"missing": func(m string) string {
		if mt, ok := MetricByName(m); ok && mt.Missing != "" {
			return mt.Missing
		}
		return "—"
	},
	"failed": func(pvs []PointVerdicts) int {
		n := 0
		for _, pv := range pvs {
			n += Failed(pv.Verdicts)
		}
		return n
	},
	"total": func(pvs []PointVerdicts) int {
		n := 0
		for _, pv := range pvs {
			n += len(pv.Verdicts)
		}
		return n
	},
	"anchor": func(i int) string { return "chart-" + strconv.Itoa(i) },
	"inc":    func(i int) int { return i + 1 },
}

var page = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.Title}} — throttlesim {{.Kind}} report</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 76rem; padding: 0 1.5rem 4rem; color: #1d1d1f; }
nav { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd; padding: .5rem 0; }
nav a { margin-right: 1.2rem; }
h1 { margin: 1.2rem 0 .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #eee; }
.desc { margin: .1rem 0 .4rem; color: #333; font-size: 16px; }
details { margin: .6rem 0; } summary { cursor: pointer; color: #3b6fb6; }
.facts { color: #555; margin: 0; } .facts span { margin-right: 1.4rem; }
table { border-collapse: collapse; margin: .6rem 0; }
th, td { border: 1px solid #ddd; padding: .25rem .55rem; vertical-align: top; }
th { background: #f6f6f6; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { display: block; color: #666; font-size: 85%; }
.pass { color: #17803d; font-weight: 600; } .fail { color: #c62828; font-weight: 600; }
.better { color: #17803d; } .worse { color: #c62828; }
figure svg text { font-family: "Liberation Serif", Tinos, "Times New Roman", Times, "Nimbus Roman", "DejaVu Serif Condensed", serif !important; font-stretch: condensed; }
.hover rect { fill: #000; fill-opacity: 0; } .hover rect:hover { fill-opacity: .07; }
.switches { font-size: 13px; margin: .2rem 0; } .switches label { margin-right: .9rem; cursor: pointer; user-select: none; }
.switches label::before { content: "☑ "; } figure > input { display: none; }
figure { margin: 1rem 0 2rem; } figure img, figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: .8rem; overflow-x: auto; font-size: 13px; }
.top { font-size: 80%; font-weight: normal; margin-left: .6rem; }
.verdict { font-size: 17px; background: #f3f6fb; border-left: 4px solid #3b6fb6; padding: .5rem 1rem; margin: .8rem 0; }
.verdict p { margin: .3rem 0; }
#matrix-table td.better { background: #e3f4e8; } #matrix-table td.worse { background: #fbe4e4; } #matrix-table td.same { background: #f1f1f1; color: #555; }
#matrix-table td { white-space: nowrap; } .diff-table td.same { color: #888; } .ci.inline { display: inline; margin-left: .3rem; }
.legend span { padding: 0 .4rem; margin-right: .6rem; } .legend .better { background: #e3f4e8; } .legend .worse { background: #fbe4e4; } .legend .same { background: #f1f1f1; color: #555; }
</style>
</head>
<body>
<nav id="top">{{if .Diff.Runs}}<a href="#diff">What differs</a>{{end}}{{range .Lead}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}{{if .Summary.Rows}}<a href="#summary">Summary</a>{{end}}{{if .Verdicts}}<a href="#thresholds">Thresholds</a>{{end}}{{if .Matrix}}<a href="#baseline">Against the baseline</a>{{end}}{{if .Charts}}<a href="#charts">Charts</a>{{end}}{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}<a href="#scenario">Scenario</a></nav>
<h1>{{.Title}}</h1>
{{with .Description}}<p class="desc">{{.}}</p>
{{end}}<p class="facts">{{range .Facts}}<span>{{.Name}}: <b>{{.Value}}</b></span>{{end}}</p>
{{if .Verdict}}<div id="verdict" class="verdict">{{range .Verdict}}<p>{{.}}</p>{{end}}</div>
{{end}}{{if .Verdicts}}{{$f := failed .Verdicts}}<p>{{if $f}}<span class="fail">✗ {{$f}} of {{total .Verdicts}} thresholds failed</span>{{else}}<span class="pass">✓ all {{total .Verdicts}} thresholds passed</span>{{end}} — <a href="#thresholds">details</a></p>{{end}}

{{with .Diff}}{{if .Runs}}<h2 id="diff">What differs<a class="top" href="#top">↑ top</a></h2>
{{$ref := .Ref}}<table class="diff-table">
<thead><tr><th>field</th>{{range $i, $r := .Runs}}<th>{{$r}}{{if and (eq $i $ref) (gt (len $.Diff.Runs) 2)}} <span class="ci inline">(the others against it)</span>{{end}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td>{{param .Path}} <span class="ci inline"><code>{{.Path}}</code></span></td>{{$vs := .Values}}{{range $i, $v := .Values}}<td{{if and (ne $i $ref) (eq $v (index $vs $ref))}} class="same"{{end}}>{{if $v}}{{$v}}{{else}}—{{end}}</td>{{end}}</tr>
{{else}}<tr><td colspan="{{inc (len .Runs)}}">no field differs (other than the name)</td></tr>
{{end}}</tbody>
</table>
{{end}}{{end}}
{{range .Lead}}<h2 id="{{.ID}}">{{.Title}}<a class="top" href="#top">↑ top</a></h2>
{{.HTML}}
{{end}}{{if .Summary.Rows}}<h2 id="summary">Summary<a class="top" href="#top">↑ top</a></h2>
<p>{{if eq .Summary.Kind "sweep"}}Each figure is the mean over the point's runs, with its 95% confidence interval (Student's t) below it.{{else}}One run per column.{{end}} Shares are percentages, as the command prints them.{{if .Matrix}} Differences from the baseline: <a href="#baseline">Against the baseline</a>.{{end}}</p>
<table id="summary-table">
<thead><tr><th>metric</th>{{range .Summary.Rows}}<th data-point="{{.Label}}"{{if .Shown}} title="{{.Label}}"{{end}}>{{or .Shown .Label}}</th>{{end}}</tr></thead>
<tbody>
<tr><th>runs</th>{{range .Summary.Rows}}<td class="num">{{.Runs}}</td>{{end}}</tr>
<tr><th>recovered</th>{{range .Summary.Rows}}<td class="num">{{if .Applicable}}{{.Recovered}} of {{.Applicable}}{{else}}n/a (no fault){{end}}</td>{{end}}</tr>
{{range $m := .Summary.Columns}}<tr><th data-metric="{{$m}}">{{label $m}}{{with index $.Summary.Scope $m}}<span class="ci">{{.}}</span>{{end}}</th>{{range $r := $.Summary.Rows}}{{$e := est $r $m}}<td class="num">{{if index $.Summary.NotMeasured $m}}<span class="ci">not measured</span>{{else}}{{with shown $m $e.Mean}}<span class="v" data-point="{{$r.Label}}" data-metric="{{$m}}" data-stat="mean" data-value="{{.Raw}}">{{.Text}}</span>{{else}}{{missing $m}}{{end}}{{end}}{{if and $e.Lo $e.Hi}}<span class="ci">[<span data-point="{{$r.Label}}" data-metric="{{$m}}" data-stat="lo" data-value="{{(shown $m $e.Lo).Raw}}">{{(shown $m $e.Lo).Text}}</span>, <span data-point="{{$r.Label}}" data-metric="{{$m}}" data-stat="hi" data-value="{{(shown $m $e.Hi).Raw}}">{{(shown $m $e.Hi).Text}}</span>]</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}

{{if .Verdicts}}<h2 id="thresholds">Thresholds<a class="top" href="#top">↑ top</a></h2>
<p>A run without a value fails (a run that did not recover has no recovery time). A point passes when every one of its runs does. Exit code 99 says a threshold failed.</p>
<table id="threshold-table">
<thead><tr>{{if gt (len .Verdicts) 1}}<th>point</th>{{end}}<th></th><th>threshold</th><th>outcome</th></tr></thead>
<tbody>{{range $pv := .Verdicts}}{{range .Verdicts}}<tr class="{{if ok .}}pass{{else}}fail{{end}}">{{if gt (len $.Verdicts) 1}}<td>{{$pv.Label}}</td>{{end}}<td>{{mark .}}</td><td><code>{{.Threshold}}</code></td><td>{{outcome .}}</td></tr>
{{end}}{{end}}</tbody>
</table>{{end}}

{{with .Matrix}}<h2 id="baseline">Against the baseline<a class="top" href="#top">↑ top</a></h2>
<p>{{if eq $.Kind "compare"}}Each run{{else}}Each point{{end}} against the {{if .First}}first run{{else}}baseline{{end}} <b>{{.Baseline}}</b>{{if .First}} (no <code>--baseline</code> given){{end}}: {{if eq $.Kind "compare"}}the ratio of the two values (× 1.5 is half as much again), or for a share the difference in percentage points{{else}}the mean of the differences run by run (paired by seed under common random numbers; a share's in percentage points), with its 95% interval in small type{{end}}. Hover a cell for both values{{if ne $.Kind "compare"}} and their ratio{{end}}.
<span class="legend"><span class="better">better</span><span class="worse">worse</span><span class="same">same, or within noise</span></span></p>
<table id="matrix-table">
<thead><tr><th>metric</th>{{$shown := .Shown}}{{range $i, $pt := .Points}}<th{{if $shown}} title="{{$pt}}"{{end}}>{{if $shown}}{{index $shown $i}}{{else}}{{$pt}}{{end}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><th data-metric="{{.Metric}}">{{label .Metric}}</th>{{range .Cells}}<td class="num {{.Class}}" title="{{.Title}}">{{if .Text}}{{.Text}}{{if .CI}}<span class="ci">{{.CI}}</span>{{end}}{{else}}—{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}

{{if .Charts}}<h2 id="charts">Charts<a class="top" href="#top">↑ top</a></h2>
<p>{{range $i, $c := .Charts}}{{if $i}} · {{end}}<a href="#{{anchor $i}}">{{$c.Title}}</a>{{end}}</p>
{{range $i, $c := .Charts}}<figure id="{{anchor $i}}">{{if $c.SVG}}{{svg $i $c}}{{else}}<img src="{{img $c}}" alt="{{$c.Title}}">{{end}}<figcaption>{{$c.Title}} ({{$c.File}}) <a href="#charts">↑ charts</a></figcaption></figure>
{{end}}{{end}}

{{range .Sections}}<h2 id="{{.ID}}">{{.Title}}<a class="top" href="#top">↑ top</a></h2>
{{.HTML}}
{{end}}
<h2 id="scenario">Scenario as run<a class="top" href="#top">↑ top</a></h2>
{{range .Scenario}}{{if .Folded}}<details><summary>{{.Label}}</summary><pre>{{.Body}}</pre></details>
{{else}}{{if .Label}}<h3>{{.Label}}</h3>{{end}}<pre>{{.Body}}</pre>
{{end}}{{end}}
</body>
</html>
`))

// HTML renders the page as one self-contained HTML file: styles inline,
// charts embedded (PNG, or inline SVG with values on hover and series
// switched by CSS), no scripts, nothing fetched.
func HTML(p Page) ([]byte, error) {
	var b bytes.Buffer
	if err := page.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// svgFigure is an inline SVG chart with a switch per named series: a
// hidden checkbox before the drawing, which a rule of the figure's own
// hides the series' group by when unchecked (no script), and its label
// under the drawing.
func svgFigure(i int, c Chart) template.HTML {
	var b strings.Builder
	id := func(k int) string { return "chart-" + strconv.Itoa(i) + "-s" + strconv.Itoa(k) }
	if len(c.Series) > 0 {
		b.WriteString("<style>")
		for k := range c.Series {
			fmt.Fprintf(&b, "#%[1]s:not(:checked) ~ div .ser-%[2]d { display: none; } #%[1]s:not(:checked) ~ .switches label[for=%[1]s] { opacity: .45; text-decoration: line-through; } ", id(k), k)
			fmt.Fprintf(&b, "#%[1]s:not(:checked) ~ .switches label[for=%[1]s]::before { content: \"☐ \"; } ", id(k))
		}
		b.WriteString("</style>")
		for k := range c.Series {
			fmt.Fprintf(&b, `<input type="checkbox" id="%s" checked>`, id(k))
		}
	}
	b.WriteString("<div>" + string(c.SVG) + "</div>")
	if len(c.Series) > 0 {
		b.WriteString(`<p class="switches">Show: `)
		for k, name := range c.Series {
			fmt.Fprintf(&b, `<label for="%s">%s</label>`, id(k), template.HTMLEscapeString(name))
		}
		b.WriteString(` <span class="ci inline">(hover the chart for its values)</span></p>`)
	}
	return template.HTML(b.String())
}
