package rundir

import (
	"github.com/throttlesim/throttlesim/sim/resultdir"
)

// Files is a run folder's files in the order they are written: the
// tables (timeseries.csv, groups.csv and services.csv where the run has
// groups or services), the charts, report.html, the extra files (a live
// run's live.json) and summary.json last, the manifest of the folder.
func (r Run) Files(b Build, charts []resultdir.File, html []byte, extra ...resultdir.File) ([]resultdir.File, error) {
	ts, err := TimeseriesCSV(r.Result)
	if err != nil {
		return nil, err
	}
	js, err := r.SummaryJSON(b)
	if err != nil {
		return nil, err
	}
	files := []resultdir.File{{Name: TimeseriesFile, Data: ts}}
	for _, t := range []struct {
		name string
		csv  func() ([]byte, error)
	}{
		{GroupsFile, func() ([]byte, error) { return GroupsCSV(r.Result) }},
		{ServicesFile, func() ([]byte, error) { return ServicesCSV(r.Result) }},
	} {
		data, err := t.csv()
		if err != nil {
			return nil, err
		}
		if data != nil {
			files = append(files, resultdir.File{Name: t.name, Data: data})
		}
	}
	files = append(files, charts...)
	files = append(files, resultdir.File{Name: ReportFile, Data: html})
	files = append(files, extra...)
	return append(files, resultdir.File{Name: SummaryFile, Data: js}), nil
}
