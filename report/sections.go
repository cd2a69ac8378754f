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
			b.WriteString("<" + cell + ">" + template.HTMLEscapeString(c) + "</" + cell + ">")
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
