package metrics

import (
	"bufio"
	"io"
	"math"
	"strconv"
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

// FormatFloat is the one float format of every output file: the shortest
// representation that reads back to the same float64; NaN and infinities
// (which no output should hold) are written empty.
func FormatFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// WriteCSV writes the series with a header row. workers is the nominal
// worker count: utilisation is worker time over nominal capacity.
func WriteCSV(w io.Writer, s *Series, workers int) error {
	bw := bufio.NewWriter(w)
	for i, c := range Columns {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(c)
	}
	bw.WriteByte('\n')
	iv := float64(s.Interval)
	cells := make([]string, 0, len(Columns))
	for i, r := range s.Rows {
		cap := iv * float64(workers)
		cells = append(cells[:0],
			FormatFloat(float64(int64(i)*s.Interval)/1e9), FormatFloat(iv/1e9),
			itoa(r.Offered), itoa(r.Attempts), itoa(r.Retries), itoa(r.Succeeded), itoa(r.Failed), itoa(r.DeadlineExceeded), itoa(r.BudgetRefused), itoa(r.Paced), FormatFloat(float64(r.PacedWaitNS)/1e9), itoa(r.DropThrottle), itoa(r.DropBreaker), itoa(r.DropNoConn),
			itoa(r.Received), itoa(r.Accepted), itoa(r.Rejected), itoa(r.Unanswered), itoa(r.QueueTimeouts), itoa(r.FailedOutage), itoa(r.LostOutage), itoa(r.TimedOut), itoa(r.Served), itoa(r.Errors), itoa(r.Cancelled),
			FormatFloat(float64(r.CapacityNS)/iv),
			FormatFloat(float64(r.UsefulNS)/cap), FormatFloat(float64(r.WastedNS)/cap),
			FormatFloat(float64(r.QueueAreaNS)/iv),
			itoa(r.Connected), itoa(r.Disconnects), itoa(r.ConnectAttempts), itoa(r.ConnectsRcvd), itoa(r.ConnectsOK), itoa(r.ConnectsFailed), itoa(r.ConnectsUnanswered), itoa(r.ConnectTimeouts),
			FormatFloat(float64(r.HandshakeUsefulNS)/cap), FormatFloat(float64(r.HandshakeWastedNS)/cap),
			FormatFloat(r.LatencyP50/1e6), FormatFloat(r.LatencyP99/1e6),
			FormatFloat(float64(r.OutNS)/iv),
			FormatFloat(float64(r.LimitNS)/iv),
		)
		if s.Autoscaled {
			cells = append(cells, FormatFloat(float64(r.ReplicasNS)/iv), FormatFloat(float64(r.DesiredNS)/iv), itoa(r.ReplicasPeak))
		} else {
			cells = append(cells, "", "", "")
		}
		for j, c := range cells {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString(c)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func itoa(x int64) string { return strconv.FormatInt(x, 10) }
