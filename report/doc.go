// Package report turns finished runs into what people read: the tables of
// `throttlesim summarize` and of the sweep printout (human, or raw numbers
// as a Grid for csv and json), the CSV files of a sweep or comparison
// (sweep.csv, runs.csv, paired.csv, written with encoding/csv), the inputs
// of the charts (plots.Input, plots.CompareInput), threshold verdicts and
// differences from a baseline in words, and report.html (HTML renders a
// plain Page, to which other commands can add Sections).
//
// It does no simulation (package sim), no planning or execution (package
// sweep), and no drawing: package plots draws, and Comparison.Files takes
// the drawing function as an argument. Every output is a deterministic
// function of its input, so a sweep gives the same bytes whatever --jobs,
// resumed or merged from shards.
package report
