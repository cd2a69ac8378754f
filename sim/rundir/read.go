package rundir

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

// ReadTimeseries reads a timeseries.csv written by WriteTimeseries back
// into a Series.
// Counts come back exactly; worker-time columns come back from their
// fractions (workers is the nominal worker count the file was written with).
// Columns the file lacks stay zero, so older files still read.
func ReadTimeseries(r io.Reader, workers int) (*metrics.Series, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("timeseries.csv: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"t_s", "interval_s"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("timeseries.csv: no %q column", need)
		}
	}
	s := &metrics.Series{}
	line := 1
	var bad error // the first value a run cannot have written
	prevT := math.Inf(-1)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("timeseries.csv: %w", err)
		}
		num := func(name string) float64 {
			i, ok := col[name]
			if !ok || rec[i] == "" {
				return math.NaN()
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return math.NaN()
			}
			return v
		}
		// A count or a worker-time column may be empty (0) but not NaN,
		// unreadable or negative: a reader would take such a row for a
		// run's and compute with it.
		check := func(name string) {
			i, ok := col[name]
			if !ok || rec[i] == "" || bad != nil {
				return
			}
			if v, err := strconv.ParseFloat(rec[i], 64); err != nil || math.IsNaN(v) || v < 0 {
				bad = fmt.Errorf("timeseries.csv line %d: %s is %q: want a number >= 0", line, name, rec[i])
			}
		}
		cnt := func(name string) int64 {
			check(name)
			v := num(name)
			if math.IsNaN(v) {
				return 0
			}
			return int64(v)
		}
		t := num("t_s")
		if math.IsNaN(t) || t <= prevT {
			return nil, fmt.Errorf("timeseries.csv line %d: t_s is %q after %g: times must increase", line, rec[col["t_s"]], prevT)
		}
		prevT = t
		if s.Interval == 0 {
			s.Interval = int64(math.Round(num("interval_s") * 1e9))
		}
		capNS := float64(s.Interval) * float64(workers)
		ns := func(name string, scale float64) int64 { // a fraction or seconds column back to ns
			check(name)
			v := num(name)
			if math.IsNaN(v) {
				return 0
			}
			return int64(math.Round(v * scale))
		}
		s.Rows = append(s.Rows, metrics.Row{
			Offered: cnt("offered"), Attempts: cnt("attempts"), Retries: cnt("retries"), Succeeded: cnt("succeeded"),
			Failed: cnt("failed"), DeadlineExceeded: cnt("deadline_exceeded"), BudgetRefused: cnt("budget_refused"), Paced: cnt("paced"), PacedWaitNS: ns("paced_wait_s", 1e9), DropThrottle: cnt("drop_throttle"), DropNoConn: cnt("drop_no_connection"), DropBreaker: cnt("drop_breaker"),
			Received: cnt("received"), Accepted: cnt("accepted"), Rejected: cnt("rejected"), Unanswered: cnt("unanswered"),
			QueueTimeouts: cnt("queue_timeouts"), FailedOutage: cnt("failed_outage"), LostOutage: cnt("lost_outage"),
			TimedOut: cnt("timed_out"), Served: cnt("served"), Errors: cnt("errors"), Cancelled: cnt("cancelled"),
			Connected: cnt("connected"), Disconnects: cnt("disconnects"), ConnectAttempts: cnt("connect_attempts"),
			ConnectsRcvd: cnt("connects_received"), ConnectsOK: cnt("connects_ok"), ConnectsFailed: cnt("connects_failed"),
			ConnectsUnanswered: cnt("connects_unanswered"), ConnectTimeouts: cnt("connect_timeouts"),
			CapacityNS:        ns("capacity_workers", float64(s.Interval)),
			UsefulNS:          ns("util_useful", capNS),
			WastedNS:          ns("util_wasted", capNS),
			HandshakeUsefulNS: ns("util_handshake_useful", capNS),
			HandshakeWastedNS: ns("util_handshake_wasted", capNS),
			QueueAreaNS:       ns("queue_len", float64(s.Interval)),
			LatencyP50:        num("latency_p50_ms") * 1e6,
			LatencyP99:        num("latency_p99_ms") * 1e6,
			// Not in timeseries.csv: unknown, not 0.
			LatencyP90: math.NaN(), LatencyMax: math.NaN(),
			OutNS:        ns("replicas_out", float64(s.Interval)),
			LimitNS:      ns("concurrency_limit", float64(s.Interval)),
			ReplicasNS:   ns("replicas_ready", float64(s.Interval)),
			DesiredNS:    ns("replicas_desired", float64(s.Interval)),
			ReplicasPeak: cnt("replicas_peak"),
			Degraded:     cnt(DegradedColumn),
		})
		if _, ok := col["replicas_ready"]; ok && rec[col["replicas_ready"]] != "" {
			s.Autoscaled = true
		}
		if bad != nil {
			return nil, bad
		}
	}
	_, s.Degrading = col[DegradedColumn]
	if s.Interval <= 0 {
		return nil, fmt.Errorf("timeseries.csv: no rows")
	}
	return s, nil
}
