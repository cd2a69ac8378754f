// Package rundir owns one run's results folder: the names of its files,
// their layout (summary.json, timeseries.csv, groups.csv, services.csv,
// all CSV through encoding/csv), writing them from a sim.Result and reading
// them back. The folder is put in place atomically by sim/resultdir; the
// charts and report.html are drawn elsewhere (plots, report) and handed in
// by name.
package rundir

// The files of a run folder.
const (
	SummaryFile    = "summary.json"
	TimeseriesFile = "timeseries.csv"
	GroupsFile     = "groups.csv"
	ServicesFile   = "services.csv"
	ReportFile     = "report.html"
	// LiveFile is a live run's extra record (goroutines, heap, lag).
	LiveFile = "live.json"
)

// The charts of a service-graph run that are not plots.All's.
const (
	ServicesOverloadChart = "services_overload.png"
	ServicesLoadChart     = "services_load.png"
	AmplificationChart    = "amplification.png"
)

// Markers of the other folders throttlesim writes: a folder holding one of
// them (or summary.json) is throttlesim's to replace.
const (
	SweepFile      = "sweep.json"
	ShardFile      = "shard.json"
	CompareFile    = "compare.json"
	ContentionFile = "contention.json"
	MapFile        = "map.json"
	TuneFile       = "tune.json"
)

// Markers are the files whose presence says a folder is throttlesim's
// results folder (isResultsFolder in the CLI), summary.json first.
var Markers = []string{SummaryFile, SweepFile, ShardFile, CompareFile, ContentionFile, MapFile, TuneFile}
