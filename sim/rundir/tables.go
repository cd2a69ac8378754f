package rundir

import (
	"bytes"
	"encoding/csv"
	"strconv"

	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
)

// groupColumns are groups.csv's columns.
var groupColumns = []string{"t_s", "group", "offered", "attempts", "retries", "succeeded", "failed", "deadline_exceeded", "budget_refused", "paced",
	"drop_throttle", "drop_breaker", "drop_no_connection",
	"received", "accepted", "rejected", "unanswered", "queue_timeouts", "failed_outage", "lost_outage", "timed_out", "served", "errors", "cancelled",
	"util_useful", "util_wasted"}

// TimeseriesCSV is timeseries.csv's bytes.
func TimeseriesCSV(r *sim.Result) ([]byte, error) {
	var buf bytes.Buffer
	err := WriteTimeseries(&buf, r.Series, r.Scenario.EntryBackend().TotalWorkers())
	return buf.Bytes(), err
}

// GroupsCSV is groups.csv: per interval and group (long format), the
// client-side counts and the backend's counts of the group's attempts and
// the worker time spent serving them; nil without groups.
func GroupsCSV(r *sim.Result) ([]byte, error) {
	if len(r.Groups) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	if err := cw.Write(groupColumns); err != nil {
		return nil, err
	}
	iv := r.Series.Interval
	capNS := float64(iv) * float64(r.Scenario.EntryBackend().TotalWorkers())
	ff := metrics.FormatFloat
	rec := make([]string, 0, len(groupColumns))
	for i := range r.Series.Rows {
		for _, g := range r.Groups {
			if i >= len(g.Series.Rows) {
				continue
			}
			w := &g.Series.Rows[i]
			rec = append(rec[:0], ff(float64(int64(i)*iv)/1e9), g.Name,
				itoa(w.Offered), itoa(w.Attempts), itoa(w.Retries), itoa(w.Succeeded), itoa(w.Failed), itoa(w.DeadlineExceeded), itoa(w.BudgetRefused), itoa(w.Paced),
				itoa(w.DropThrottle), itoa(w.DropBreaker), itoa(w.DropNoConn),
				itoa(w.Received), itoa(w.Accepted), itoa(w.Rejected), itoa(w.Unanswered), itoa(w.QueueTimeouts), itoa(w.FailedOutage), itoa(w.LostOutage), itoa(w.TimedOut), itoa(w.Served), itoa(w.Errors), itoa(w.Cancelled),
				ff(float64(w.UsefulNS)/capNS), ff(float64(w.WastedNS)/capNS))
			if err := cw.Write(rec); err != nil {
				return nil, err
			}
		}
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

// ServicesCSV is services.csv's bytes for a service-graph run (nil
// otherwise): every service's rows in long format, a service column
// followed by timeseries.csv's columns (utilisation against the service's
// own workers) and deadline_dropped.
func ServicesCSV(r *sim.Result) ([]byte, error) {
	if len(r.Services) == 0 {
		return nil, nil
	}
	nodes := r.Scenario.Nodes()
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	deg := false
	for _, sv := range r.Services {
		deg = deg || sv.Series.Degrading
	}
	head := append(append([]string{"service"}, columns(deg)...), "deadline_dropped")
	if err := cw.Write(head); err != nil {
		return nil, err
	}
	rec := make([]string, 0, len(head))
	for i, sv := range r.Services {
		for j := range sv.Series.Rows {
			rec = appendRow(append(rec[:0], sv.Name), sv.Series, j, nodes[i].TotalWorkers(), deg)
			rec = append(rec, strconv.FormatInt(sv.Series.Rows[j].DeadlineDropped, 10))
			if err := cw.Write(rec); err != nil {
				return nil, err
			}
		}
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}
