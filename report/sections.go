package report

import (
	"bytes"
	"encoding/csv"
	"html/template"
	"strconv"
	"strings"
)

// CSVSection is a section showing a CSV file as a table (at most maxRows
// data rows; the rest are counted, and the file holds them all).
func CSVSection(id, title, file string, data []byte, maxRows int) (Section, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return Section{}, err
	}
	var b strings.Builder
	b.WriteString("<p>From <code>" + template.HTMLEscapeString(file) + "</code>.</p>\n<table>\n")
	for i, rec := range recs {
		if i > maxRows {
			b.WriteString("</table>\n<p>" + strconv.Itoa(len(recs)-1-maxRows) + " more rows in <code>" + template.HTMLEscapeString(file) + "</code>.</p>\n")
			return Section{ID: id, Title: title, HTML: template.HTML(b.String())}, nil
		}
		cell, open := "td", "<tr>"
		if i == 0 {
			cell, open = "th", "<thead><tr>"
		}
		b.WriteString(open)
		for _, c := range rec {
			text := template.HTMLEscapeString(c)
			if i == 0 {
				text = headerHTML(c)
			}
			b.WriteString("<" + cell + ">" + text + "</" + cell + ">")
		}
		b.WriteString("</tr>")
		if i == 0 {
			b.WriteString("</thead>")
		}
		b.WriteString("\n")
	}
	b.WriteString("</table>\n")
	return Section{ID: id, Title: title, HTML: template.HTML(b.String())}, nil
}

// TextSection is a section of preformatted text (a command's printed
// summary).
func TextSection(id, title, text string) Section {
	return Section{ID: id, Title: title, HTML: template.HTML("<pre>" + template.HTMLEscapeString(text) + "</pre>")}
}

// headerHTML is a CSV column's name for people, with the file's own
// name under it in small type: a metric ("success_ratio (worst scenario
// mean)") by its label, a scenario field (clients.retry.max_attempts) by
// ParamLabel; other columns as they are.
func headerHTML(h string) string {
	base, note, _ := strings.Cut(h, " (")
	if note != "" {
		note = " (" + note
	}
	var label string
	switch _, known := metricLabels[base]; {
	case known:
		label = MetricLabel(base)
	case strings.Contains(base, "."):
		label = ParamLabel(base)
	default:
		return template.HTMLEscapeString(h)
	}
	return template.HTMLEscapeString(label+note) + `<span class="ci"><code>` + template.HTMLEscapeString(base) + `</code></span>`
}
