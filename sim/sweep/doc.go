// Package sweep runs a scenario over a set of variants ("points") and seeds
// ("replications"), in parallel, resumably and shardably, and aggregates
// the runs into per-point statistics with Student-t confidence intervals
// and, under common random numbers, paired differences from a baseline.
//
// A sweep's output folder holds runs/<point>-<replication>/ (each a run's
// summary.json and timeseries.csv), sweep.json (the plan), sweep.csv (one
// row per point), runs.csv (one row per run), paired.csv (differences from
// the baseline) and the comparison charts. Every file is a deterministic
// function of the plan, so a sweep run with any --jobs, resumed after an
// interruption, or run as shards and merged gives the same bytes.
package sweep
