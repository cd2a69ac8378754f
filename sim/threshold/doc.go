// Package threshold checks a run's summary against pass/fail criteria such
// as "recovery_s<=120", in the manner of k6's thresholds, so that a
// simulation can gate a CI pipeline.
//
// A threshold is METRIC OP VALUE: METRIC one of Names (figures of
// summary.json), OP one of < <= > >= ==, and VALUE a number, or a
// percentage ("99%" is 0.99). A run without a value for the metric fails
// the threshold: a run that does not recover has no recovery_s, so
// "recovery_s<=120" fails it.
package threshold
