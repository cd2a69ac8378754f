// Package report turns finished runs into what people read: the tables of
// `throttlesim summarize` and of the sweep printout, the CSV files of a
// sweep or comparison (sweep.csv, runs.csv, paired.csv, written with
// encoding/csv), and the inputs of the charts (plots.Input,
// plots.CompareInput).
//
// It does no simulation (package sim), no planning or execution (package
// sweep), and no drawing: package plots draws, and Comparison.Files takes
// the drawing function as an argument. Every output is a deterministic
// function of its input, so a sweep gives the same bytes whatever --jobs,
// resumed or merged from shards.
package report
