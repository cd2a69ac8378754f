// Package metrics records a run into preallocated per-interval rows, keeps
// latency histograms, computes the run summary (including recovery time)
// and writes timeseries.csv and summary.json.
package metrics
