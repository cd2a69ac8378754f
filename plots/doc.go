// Package plots renders a run's charts with gonum/plot: server load, local
// drop rate and recovery. Every chart has a title, axis units, a legend
// outside the data and the fault windows shaded. PNG bytes are returned to
// the caller, which writes them (atomically) where it wants.
package plots
