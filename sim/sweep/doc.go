// Package sweep plans, executes and merges sweeps: it runs a scenario over
// a set of variants ("points") and seeds ("replications"), in parallel,
// resumably and shardably, reads the finished runs back, and summarises a
// figure over replications as a mean with its Student-t confidence
// interval (Describe).
//
// A sweep's output folder holds runs/<point>-<replication>/ (each a run's
// summary.json, timeseries.csv and key.txt) and sweep.json (the plan).
// Tables, CSV files and chart inputs made from the runs are package
// report's. Every file is a deterministic function of the plan, so a sweep
// run with any --jobs, resumed after an interruption, or run as shards and
// merged gives the same bytes.
package sweep
