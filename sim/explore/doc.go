// Package explore answers two questions by searching over simulations
// instead of sweeping a fixed grid: where a system stops recovering from a
// trigger (Map: the metastability boundary over load × trigger size) and
// which policy parameters to ship (Tune: a constrained, noise-aware
// parameter search across one or several scenarios).
//
// The search logic does no I/O: it calls an Eval for every simulation it
// needs (SimEval runs sim.Run on scenario bytes with --set overrides), so
// the algorithms are tested on synthetic models whose answer is known.
// Every random choice comes from the seeds: replication r of every probe
// or candidate uses seed base+r (common random numbers), so a map or a
// tuning is the same whatever the number of parallel jobs.
//
// It does not use sim/sweep's executor: a search chooses its next probe
// from the outcomes so far, while a sweep is a fixed plan whose runs are
// written to disk. It keeps sweep's conventions: common random numbers as
// seed base+r, shards as index % n (load levels, for a map), and
// scenario.Parse with --set overrides for every variant.
package explore
