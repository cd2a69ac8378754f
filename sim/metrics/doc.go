// Package metrics records a run into preallocated per-interval rows, keeps
// latency histograms and computes the run summary (including recovery
// time). It writes no file: sim/rundir owns the run folder's files.
package metrics
