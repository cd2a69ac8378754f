package rundir

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// Columns of timeseries.csv, in order. Counts are per interval; rates can
// be had by dividing by interval_s. Documented in docs/reading-results.md.
var Columns = []string{
	"t_s", "interval_s",
	"offered", "attempts", "retries", "succeeded", "failed", "deadline_exceeded", "budget_refused", "paced", "paced_wait_s", "drop_throttle", "drop_breaker", "drop_no_connection",
	"received", "accepted", "rejected", "unanswered", "queue_timeouts", "failed_outage", "lost_outage", "timed_out", "served", "errors", "cancelled",
	"capacity_workers", "util_useful", "util_wasted", "queue_len",
	"connected", "disconnects", "connect_attempts", "connects_received", "connects_ok", "connects_failed", "connects_unanswered", "connect_timeouts",
	"util_handshake_useful", "util_handshake_wasted",
	"latency_p50_ms", "latency_p99_ms",
	"replicas_out",
	"concurrency_limit",
	"replicas_ready", "replicas_desired", "replicas_peak",
}

// DegradedColumn is timeseries.csv's last column when the service
// degrades under load (metrics.Series.Degrading); absent otherwise, so
// that every other run's file is as before.
const DegradedColumn = "degraded"

// columns is timeseries.csv's header for s.
func columns(deg bool) []string {
	if deg {
		return append(Columns[:len(Columns):len(Columns)], DegradedColumn)
	}
	return Columns
}

// WriteTimeseries writes the series as timeseries.csv, with a header row.
// workers is the nominal worker count: utilisation is worker time over
// nominal capacity.
func WriteTimeseries(w io.Writer, s *metrics.Series, workers int) error {
	cw := csv.NewWriter(w)
	head := columns(s.Degrading)
	if err := cw.Write(head); err != nil {
		return err
	}
	cells := make([]string, 0, len(head))
	for i := range s.Rows {
		cells = appendRow(cells[:0], s, i, workers, s.Degrading)
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// appendRow appends row i of s as timeseries.csv's cells, with the
// degraded column when deg.
func appendRow(cells []string, s *metrics.Series, i, workers int, deg bool) []string {
	r := &s.Rows[i]
	iv := float64(s.Interval)
	cap := iv * float64(workers)
	ff := metrics.FormatFloat
	cells = append(cells,
		ff(float64(int64(i)*s.Interval)/1e9), ff(iv/1e9),
		itoa(r.Offered), itoa(r.Attempts), itoa(r.Retries), itoa(r.Succeeded), itoa(r.Failed), itoa(r.DeadlineExceeded), itoa(r.BudgetRefused), itoa(r.Paced), ff(float64(r.PacedWaitNS)/1e9), itoa(r.DropThrottle), itoa(r.DropBreaker), itoa(r.DropNoConn),
		itoa(r.Received), itoa(r.Accepted), itoa(r.Rejected), itoa(r.Unanswered), itoa(r.QueueTimeouts), itoa(r.FailedOutage), itoa(r.LostOutage), itoa(r.TimedOut), itoa(r.Served), itoa(r.Errors), itoa(r.Cancelled),
		ff(float64(r.CapacityNS)/iv),
		ff(float64(r.UsefulNS)/cap), ff(float64(r.WastedNS)/cap),
		ff(float64(r.QueueAreaNS)/iv),
		itoa(r.Connected), itoa(r.Disconnects), itoa(r.ConnectAttempts), itoa(r.ConnectsRcvd), itoa(r.ConnectsOK), itoa(r.ConnectsFailed), itoa(r.ConnectsUnanswered), itoa(r.ConnectTimeouts),
		ff(float64(r.HandshakeUsefulNS)/cap), ff(float64(r.HandshakeWastedNS)/cap),
		ff(r.LatencyP50/1e6), ff(r.LatencyP99/1e6),
		ff(float64(r.OutNS)/iv),
		ff(float64(r.LimitNS)/iv),
	)
	if s.Autoscaled {
		cells = append(cells, ff(float64(r.ReplicasNS)/iv), ff(float64(r.DesiredNS)/iv), itoa(r.ReplicasPeak))
	} else {
		cells = append(cells, "", "", "")
	}
	if deg {
		cells = append(cells, itoa(r.Degraded))
	}
	return cells
}

func itoa(x int64) string { return strconv.FormatInt(x, 10) }
