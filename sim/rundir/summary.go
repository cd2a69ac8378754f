package rundir

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
	"slices"
	"strings"

	"github.com/throttlesim/throttlesim/sim"
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
	Graph    *sim.GraphSummary  `json:"graph,omitempty"`
	Scenario *scenario.Scenario `json:"scenario"`
	Summary  metrics.Summary    `json:"summary"`
	// Groups is each client group's figures; empty without groups.
	Groups []sim.GroupSummary `json:"groups"`
	// Services is each service's figures in a service graph; absent
	// otherwise.
	Services []sim.ServiceSummary `json:"services,omitempty"`
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
	// NotMeasured names the summary's fields this run could not see: the
	// server's (metrics.ServerFields) when it ran against a remote
	// --target. They are null in summary.json, never a 0 that reads as
	// measured. Absent when every field was measured.
	NotMeasured []string `json:"not_measured,omitempty"`
}

// Build identifies the binary; the CLI fills it from its link-time flags.
type Build struct{ Version, Commit string }

// Run is what a run folder is written from: the result and, for a live
// run, how well it kept its schedule (nil for a simulation).
type Run struct {
	Result *sim.Result
	Live   *LiveSchedule
}

// Doc assembles summary.json's content.
func (r Run) Doc(b Build) SummaryDoc {
	res := r.Result
	status := "complete"
	if !res.Complete {
		status = "incomplete"
	}
	d := SummaryDoc{
		SchemaVersion: scenario.SchemaVersion,
		Manifest: Manifest{
			Tool: "throttlesim", Version: b.Version, Commit: b.Commit,
			GoVersion: runtime.Version(), GOARCH: runtime.GOARCH,
			Seed: res.Scenario.Seed, SeedDerivation: rng.DerivationVersion,
		},
		Run: RunInfo{
			Status: status, StoppedAtS: float64(res.StoppedAt) / 1e9,
			Events: res.Events, Arrivals: res.Arrivals,
			Fingerprint: fmt.Sprintf("%016x", res.Fingerprint),
			CapacityRPS: capacityOf(res.Scenario),
		},
		Graph:    res.Graph(),
		Scenario: res.Scenario,
		Summary:  res.Summary,
		Groups:   groupSummaries(res),
		Services: serviceSummaries(res),
		Live:     r.Live,
	}
	if d.Graph != nil {
		d.Run.EntryService = d.Graph.EntryService
	}
	return d
}

func serviceSummaries(r *sim.Result) []sim.ServiceSummary {
	var out []sim.ServiceSummary
	for _, s := range r.Services {
		out = append(out, s.Summary)
	}
	return out
}

func groupSummaries(r *sim.Result) []sim.GroupSummary {
	out := []sim.GroupSummary{}
	for _, g := range r.Groups {
		out = append(out, g.Summary)
	}
	return out
}

func capacityOf(sc *scenario.Scenario) *float64 {
	if sc.Backend.Kind == scenario.BackendOCC {
		return nil
	}
	c := sc.Capacity()
	return &c
}

// SummaryJSON is summary.json's bytes: indented, with a final newline.
// The fields a live run did not measure (Live.NotMeasured) are null.
func (r Run) SummaryJSON(b Build) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	doc := r.Doc(b)
	var v any = doc
	if doc.Live != nil && len(doc.Live.NotMeasured) > 0 {
		v = docWithNulls{doc}
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("rundir: %s: %w", SummaryFile, err)
	}
	return buf.Bytes(), nil
}

// docWithNulls encodes a SummaryDoc with its summary's not-measured
// fields null, keeping every other key where it was.
type docWithNulls struct{ SummaryDoc }

// MarshalJSON writes the document with the not-measured summary fields
// replaced by null.
func (d docWithNulls) MarshalJSON() ([]byte, error) {
	whole, err := json.Marshal(d.SummaryDoc)
	if err != nil {
		return nil, err
	}
	sum, err := json.Marshal(d.Summary)
	if err != nil {
		return nil, err
	}
	nulled, err := nullKeys(sum, d.Live.NotMeasured)
	if err != nil {
		return nil, err
	}
	// The summary's encoding appears once, after "summary":.
	return bytes.Replace(whole, append([]byte(`"summary":`), sum...), append([]byte(`"summary":`), nulled...), 1), nil
}

// nullKeys rewrites a flat-topped JSON object with the values of keys
// null, in the order it had.
func nullKeys(obj []byte, keys []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if !first {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(tok)
		out.Write(k)
		out.WriteByte(':')
		if slices.Contains(keys, tok.(string)) {
			out.WriteString("null")
		} else {
			out.Write(val)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// ReadSummary reads dir/summary.json, checking its schema version.
func ReadSummary(dir string) (*SummaryDoc, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
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

// notARun says what dir is, when it is not a run's results folder, and
// what to do instead.
func notARun(dir string, err error) error {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	switch {
	case errors.Is(err, fs.ErrNotExist) && !has("."):
		return fmt.Errorf("%s: no such folder", dir)
	case has(SweepFile):
		return fmt.Errorf("%s is a sweep's folder, not one run's: `throttlesim summarize %s` on its own prints its table (its charts are in it); its runs are in %s", dir, dir, filepath.Join(dir, "runs"))
	case has(CompareFile):
		return fmt.Errorf("%s is a comparison's folder, not a run's: compare and summarize the runs it was made from", dir)
	case has(ContentionFile):
		return fmt.Errorf("%s is a contention model's folder (throttlesim contention), not a run's", dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", SummaryFile)); len(m) > 0 {
		return fmt.Errorf("%s holds run folders, it is not one: name them, e.g. %s", dir, filepath.Dir(m[0]))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: not a results folder (no summary.json)", dir)
	}
	return fmt.Errorf("%s: cannot read summary.json: %w", dir, err)
}

// ReadTimeseriesFile reads dir/timeseries.csv, its errors prefixed by
// dir; workers is the nominal
// worker count it was written with (the entry backend's).
func ReadTimeseriesFile(dir string, workers int) (*metrics.Series, error) {
	f, err := os.Open(filepath.Join(dir, TimeseriesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ser, err := ReadTimeseries(f, workers)
	if err != nil {
		return nil, fmt.Errorf("%s/%w", dir, err)
	}
	return ser, nil
}
