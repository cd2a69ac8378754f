package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Manifest says what made a result: enough to reproduce it.
type Manifest struct {
	Tool           string `json:"tool"`
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	GoVersion      string `json:"go_version"`
	GOARCH         string `json:"goarch"`
	Seed           uint64 `json:"seed"`
	SeedDerivation string `json:"seed_derivation"`
}

// RunInfo describes the run itself.
type RunInfo struct {
	Status      string  `json:"status"` // "complete" or "incomplete"
	StoppedAtS  float64 `json:"stopped_at_s"`
	Events      uint64  `json:"events"`
	Arrivals    uint64  `json:"arrivals"`
	Fingerprint string  `json:"fingerprint"`
	// CapacityRPS is the pool backend's nominal throughput (workers /
	// mean service time); null for the occ backend, which has none. In a
	// service graph it is the entry service's, named by EntryService.
	CapacityRPS *float64 `json:"capacity_rps"`
	// EntryService is the service capacity_rps describes: set for a
	// service graph only.
	EntryService string `json:"entry_service,omitempty"`
}

// SummaryDoc is the layout of summary.json (schema_version 1; the JSON
// Schema is docs/summary.schema.json).
type SummaryDoc struct {
	SchemaVersion int      `json:"schema_version"`
	Manifest      Manifest `json:"manifest"`
	Run           RunInfo  `json:"run"`
	// Graph leads a service-graph run: the services by load ÷ capacity,
	// the most overloaded first; absent otherwise.
	Graph    *GraphSummary      `json:"graph,omitempty"`
	Scenario *scenario.Scenario `json:"scenario"`
	Summary  metrics.Summary    `json:"summary"`
	// Groups is each client group's figures; empty without groups.
	Groups []GroupSummary `json:"groups"`
	// Services is each service's figures in a service graph; absent
	// otherwise.
	Services []ServiceSummary `json:"services,omitempty"`
	// Live is how well a live run (throttlesim live) kept its schedule;
	// absent for simulated runs.
	Live *LiveSchedule `json:"live,omitempty"`
}

// LiveSchedule is how late a live run's arrivals started against the
// times the simulation draws (live.json has more: goroutines, heap).
type LiveSchedule struct {
	ScheduleLagP50MS float64 `json:"schedule_lag_p50_ms"`
	ScheduleLagP99MS float64 `json:"schedule_lag_p99_ms"`
	ScheduleLagMaxMS float64 `json:"schedule_lag_max_ms"`
	// ScheduleOK false: the machine, not the policies, shaped the run
	// (the lag, or arrivals dropped at the in-flight cap).
	ScheduleOK bool `json:"schedule_ok"`
	// MaxInFlight is the cap on requests in flight, PeakInFlight the most
	// that were, GeneratorDropped the arrivals the load generator did not
	// send because the cap was reached (as k6's dropped_iterations; they
	// are not in summary.offered).
	MaxInFlight      int   `json:"max_in_flight"`
	PeakInFlight     int   `json:"peak_in_flight"`
	GeneratorDropped int64 `json:"generator_dropped"`
}

// Build identifies the binary; the CLI fills it from its link-time flags.
type Build struct{ Version, Commit string }

// Doc assembles summary.json's content.
func (r *Result) Doc(b Build) SummaryDoc {
	status := "complete"
	if !r.Complete {
		status = "incomplete"
	}
	d := SummaryDoc{
		SchemaVersion: scenario.SchemaVersion,
		Manifest: Manifest{
			Tool: "throttlesim", Version: b.Version, Commit: b.Commit,
			GoVersion: runtime.Version(), GOARCH: runtime.GOARCH,
			Seed: r.Scenario.Seed, SeedDerivation: rng.DerivationVersion,
		},
		Run: RunInfo{
			Status: status, StoppedAtS: float64(r.StoppedAt) / 1e9,
			Events: r.Events, Arrivals: r.Arrivals,
			Fingerprint: fmt.Sprintf("%016x", r.Fingerprint),
			CapacityRPS: capacityOf(r.Scenario),
		},
		Graph:    r.Graph(),
		Scenario: r.Scenario,
		Summary:  r.Summary,
		Groups:   r.groupSummaries(),
		Services: r.serviceSummaries(),
		Live:     r.Live,
	}
	if d.Graph != nil {
		d.Run.EntryService = d.Graph.EntryService
	}
	return d
}

func (r *Result) serviceSummaries() []ServiceSummary {
	var out []ServiceSummary
	for _, s := range r.Services {
		out = append(out, s.Summary)
	}
	return out
}

func (r *Result) groupSummaries() []GroupSummary {
	out := []GroupSummary{}
	for _, g := range r.Groups {
		out = append(out, g.Summary)
	}
	return out
}

// GroupsCSV is groups.csv: per interval and group (long format), the
// client-side counts and the backend's counts of the group's attempts and
// the worker time spent serving them; nil without groups.
func (r *Result) GroupsCSV() []byte {
	if len(r.Groups) == 0 {
		return nil
	}
	var b bytes.Buffer
	iv := r.Series.Interval
	b.WriteString("t_s,group,offered,attempts,retries,succeeded,failed,deadline_exceeded,budget_refused,paced,drop_throttle,drop_breaker,drop_no_connection," +
		"received,accepted,rejected,unanswered,queue_timeouts,failed_outage,lost_outage,timed_out,served,errors,cancelled,util_useful,util_wasted\n")
	capNS := float64(iv) * float64(r.Scenario.EntryBackend().TotalWorkers())
	for i := range r.Series.Rows {
		for _, g := range r.Groups {
			if i >= len(g.Series.Rows) {
				continue
			}
			w := g.Series.Rows[i]
			fmt.Fprintf(&b, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s\n", metrics.FormatFloat(float64(int64(i)*iv)/1e9), g.Name,
				w.Offered, w.Attempts, w.Retries, w.Succeeded, w.Failed, w.DeadlineExceeded, w.BudgetRefused, w.Paced,
				w.DropThrottle, w.DropBreaker, w.DropNoConn,
				w.Received, w.Accepted, w.Rejected, w.Unanswered, w.QueueTimeouts, w.FailedOutage, w.LostOutage, w.TimedOut, w.Served, w.Errors, w.Cancelled,
				metrics.FormatFloat(float64(w.UsefulNS)/capNS), metrics.FormatFloat(float64(w.WastedNS)/capNS))
		}
	}
	return b.Bytes()
}

// SummaryJSON is summary.json's bytes: indented, with a final newline.
func (r *Result) SummaryJSON(b Build) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Doc(b)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TimeseriesCSV is timeseries.csv's bytes.
func (r *Result) TimeseriesCSV() ([]byte, error) {
	var buf bytes.Buffer
	err := metrics.WriteCSV(&buf, r.Series, r.Scenario.EntryBackend().TotalWorkers())
	return buf.Bytes(), err
}

// ServicesCSV is services.csv's bytes for a service-graph run (nil
// otherwise): every service's rows in long format, a service column
// followed by timeseries.csv's columns (utilisation against the service's
// own workers) and deadline_dropped.
func (r *Result) ServicesCSV() ([]byte, error) {
	if len(r.Services) == 0 {
		return nil, nil
	}
	nodes := r.Scenario.Nodes()
	var out bytes.Buffer
	for i, sv := range r.Services {
		var buf bytes.Buffer
		if err := metrics.WriteCSV(&buf, sv.Series, nodes[i].TotalWorkers()); err != nil {
			return nil, err
		}
		lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
		for j, ln := range lines {
			if j == 0 {
				if i == 0 {
					out.WriteString("service,")
					out.Write(ln)
					out.WriteString(",deadline_dropped\n")
				}
				continue
			}
			out.WriteString(sv.Name)
			out.WriteByte(',')
			out.Write(ln)
			fmt.Fprintf(&out, ",%d\n", sv.Series.Rows[j-1].DeadlineDropped)
		}
	}
	return out.Bytes(), nil
}

// ReadSummary reads dir/summary.json, checking its schema version.
func ReadSummary(dir string) (*SummaryDoc, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, notARun(dir, err)
	}
	var d SummaryDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	if d.SchemaVersion != scenario.SchemaVersion {
		return nil, fmt.Errorf("%s/summary.json: schema_version %d, this throttlesim reads %d", dir, d.SchemaVersion, scenario.SchemaVersion)
	}
	if err := checkSummary(b, &d.Summary); err != nil {
		return nil, fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	return &d, nil
}

// checkSummary refuses a summary.json whose figures cannot be a run's: no
// summary section (every figure would read as 0), or a negative count.
// (JSON has no NaN: a NaN fails to decode before this.)
func checkSummary(b []byte, s *metrics.Summary) error {
	var raw struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw.Summary) == 0 || string(raw.Summary) == "null" {
		return errors.New("no summary section")
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Int64 && f.Int() < 0 {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Errorf("summary.%s is %d: a count cannot be negative", name, f.Int())
		}
	}
	return nil
}

func capacityOf(sc *scenario.Scenario) *float64 {
	if sc.Backend.Kind == scenario.BackendOCC {
		return nil
	}
	c := sc.Capacity()
	return &c
}

// notARun says what dir is, when it is not a run's results folder, and
// what to do instead.
func notARun(dir string, err error) error {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	switch {
	case errors.Is(err, fs.ErrNotExist) && !has("."):
		return fmt.Errorf("%s: no such folder", dir)
	case has("sweep.json"):
		return fmt.Errorf("%s is a sweep's folder, not one run's: `throttlesim summarize %s` on its own prints its table (its charts are in it); its runs are in %s", dir, dir, filepath.Join(dir, "runs"))
	case has("compare.json"):
		return fmt.Errorf("%s is a comparison's folder, not a run's: compare and summarize the runs it was made from", dir)
	case has("contention.json"):
		return fmt.Errorf("%s is a contention model's folder (throttlesim contention), not a run's", dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "summary.json")); len(m) > 0 {
		return fmt.Errorf("%s holds run folders, it is not one: name them, e.g. %s", dir, filepath.Dir(m[0]))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: not a results folder (no summary.json)", dir)
	}
	return fmt.Errorf("%s: cannot read summary.json: %w", dir, err)
}
