package fit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/throttlesim/throttlesim/sim/dist"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Estimate is one number fit derived, how, and whether the scenario uses
// it.
type Estimate struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	From  string  `json:"from"` // the queries it comes from
	Used  bool    `json:"used"`
	Why   string  `json:"why"`
}

// Fault is a fault fit saw, and the rule that saw it.
type Fault struct {
	scenario.Fault
	Rule string `json:"rule"`
}

// Result is a fit: the scenario's numbers and where each comes from.
type Result struct {
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Step     time.Duration `json:"step_ns"`
	Queries  []Query       `json:"queries"`
	Missing  []string      `json:"missing,omitempty"` // optional queries that answered nothing
	Arrivals []float64     `json:"arrivals"`          // req/s over step k, from Start + k·Step
	Gaps     int           `json:"gaps"`              // steps the arrivals query did not answer (filled with the previous rate)
	// Filled counts the outage steps whose arrival rate was taken from the
	// step before the outage: when arrivals are counted from answers, an
	// outage that answers nothing hides them.
	Filled int `json:"filled_outage_steps,omitempty"`
	// answersOnly: the arrivals are the answered requests (Names.Arrivals
	// unset).
	answersOnly bool
	// Per step, answered requests by class (req/s).
	Success, Errors, Rejected []float64 `json:"-"`
	InFlight, Workers, Down   []float64 `json:"-"`
	// Per step, the recorded latency of the successful requests (ms; NaN
	// where none completed): from the latency_bucket answers, else the
	// duration_bucket ones.
	LatencyP50, LatencyP99 []float64 `json:"-"`
	// Simulated is the recorded window against the fitted scenario's runs
	// (Simulate; nil until then).
	Simulated *Comparison `json:"simulated,omitempty"`
	// Extra are more files Write puts in the folder (the chart, the
	// page), by name.
	Extra map[string][]byte `json:"-"`

	Buckets     []scenario.Bucket `json:"buckets"`
	InfCap      float64           `json:"inf_cap_s,omitempty"`
	LogUniform  bool              `json:"log_uniform,omitempty"` // within: log_uniform
	Estimates   []Estimate        `json:"estimates"`
	WorkersFit  int               `json:"workers"`
	QueueFit    int               `json:"queue_limit"`
	ErrorRate   float64           `json:"error_rate"`
	RejectRate  float64           `json:"rejection_rate"`
	MeanService float64           `json:"mean_service_s"`
	Faults      []Fault           `json:"faults"`
	Raw         map[string][]byte `json:"-"` // the answers, by query name
}

// Fit runs the queries of names over w on src and derives a scenario's
// numbers. For a recording (a Files source), w may be zero: the window is
// the arrival series' own (its first point one step after the start, its
// step the distance between its first two points).
func Fit(ctx context.Context, src Source, n Names, selector string, w Window) (*Result, error) {
	if w.Step <= 0 { // a recording: its window is the arrival series'
		s, _, err := src.QueryRange(ctx, Query{Name: "arrivals"}, w)
		if err != nil {
			return nil, err
		}
		if len(s) != 1 || len(s[0].Points) < 2 {
			return nil, fmt.Errorf("fit: the arrivals answer holds %d series, want 1 with at least 2 points (to know the window and its step)", len(s))
		}
		pts := s[0].Points
		w.Step = time.Duration(math.Round((pts[1].T - pts[0].T) * 1e9))
		w.Start = time.Unix(0, int64(math.Round(pts[0].T*1e9))).Add(-w.Step)
		w.End = time.Unix(0, int64(math.Round(pts[len(pts)-1].T*1e9)))
	}
	qs := Queries(n, selector, w)
	ans := map[string][]scenario.PromSeries{}
	r := &Result{Queries: qs, Raw: map[string][]byte{}, answersOnly: n.Arrivals == ""}
	for _, q := range qs {
		s, raw, err := src.QueryRange(ctx, q, w)
		if err != nil {
			return nil, err
		}
		if len(s) == 0 {
			if !q.Optional {
				return nil, fmt.Errorf("fit: query %s (%s) answered no series over the window: check the metric names (--convention, --requests, …) and --selector", q.Name, q.Expr)
			}
			r.Missing = append(r.Missing, q.Name)
			continue
		}
		ans[q.Name] = s
		if raw != nil {
			r.Raw[q.Name] = raw
		}
	}
	if len(ans["arrivals"]) != 1 {
		return nil, fmt.Errorf("fit: query arrivals answered %d series, want 1 (a sum)", len(ans["arrivals"]))
	}
	if w.Step <= 0 || !w.End.After(w.Start) {
		return nil, fmt.Errorf("fit: the window %s to %s with step %s is empty", w.Start, w.End, w.Step)
	}
	r.Start, r.End, r.Step = w.Start, w.End, w.Step
	steps := int(w.End.Sub(w.Start) / w.Step)
	if steps < 1 || steps > 1_000_000 {
		return nil, fmt.Errorf("fit: the window holds %d steps of %s; want 1 to 1000000", steps, w.Step)
	}
	grid := func(s scenario.PromSeries) ([]float64, int) {
		return onGrid(s, w, steps)
	}
	r.Arrivals, r.Gaps = grid(ans["arrivals"][0])
	for k, v := range r.Arrivals {
		if v < 0 || math.IsNaN(v) {
			return nil, fmt.Errorf("fit: the arrival rate at step %d (%s) is %v: a rate must be a number >= 0", k, w.Start.Add(time.Duration(k)*w.Step).UTC().Format(time.RFC3339), v)
		}
	}
	r.Success, r.Errors, r.Rejected = make([]float64, steps), make([]float64, steps), make([]float64, steps)
	if err := codeLabel(ans["codes"], n.CodeLabel); err != nil {
		return nil, err
	}
	for _, s := range ans["codes"] {
		v, _ := grid(s)
		c := s.Metric[n.CodeLabel]
		dst := r.Success
		switch {
		case c == "429" || c == "503":
			dst = r.Rejected
		case strings.HasPrefix(c, "5"):
			dst = r.Errors
		case !strings.HasPrefix(c, "2"):
			continue // 1xx, 3xx, 4xx other than 429: neither served nor rejected by overload
		}
		for k := range dst {
			dst[k] += v[k]
		}
	}
	for name, dst := range map[string]*[]float64{"in_flight": &r.InFlight, "workers": &r.Workers, "down": &r.Down} {
		if s := ans[name]; len(s) == 1 {
			*dst, _ = grid(s[0])
		}
	}
	if err := r.histogram(ans, n.ServiceTimes); err != nil {
		return nil, err
	}
	lat := ans["latency_bucket"]
	if lat == nil {
		lat = ans["duration_bucket"]
	}
	var err error
	if r.LatencyP50, err = quantiles(lat, w, steps, 0.5); err != nil {
		return nil, err
	}
	if r.LatencyP99, err = quantiles(lat, w, steps, 0.99); err != nil {
		return nil, err
	}
	r.rates()
	r.capacity()
	r.faults()
	return r, nil
}

// onGrid places a series' points on the window's steps: step k is the
// point at Start + (k+1)·Step (a rate over the step before it). A missing
// point takes the previous step's value (0 before the first); gaps counts
// them.
func onGrid(s scenario.PromSeries, w Window, steps int) ([]float64, int) {
	out := make([]float64, steps)
	have := make([]bool, steps)
	t0 := float64(w.Start.UnixNano()) / 1e9
	st := w.Step.Seconds()
	for _, p := range s.Points {
		k := int(math.Round((p.T-t0)/st)) - 1
		if k >= 0 && k < steps {
			out[k], have[k] = p.V, true
		}
	}
	gaps := 0
	for k := range out {
		if !have[k] {
			gaps++
			if k > 0 {
				out[k] = out[k-1]
			}
		}
	}
	return out, gaps
}

// histogram takes the service-time buckets' increase over the window: each
// bucket's last value minus its first.
//
// A histogram of request durations (arrival to answer) counts the wait in
// the queue as well; where requests were rejected the queue was full and
// the wait long. So unless the histogram measures service times alone
// (Names.ServiceTimes), only the calm steps count: those outside outages
// where rejections were at most 1% of the answers (a step's increase is
// its counter's value minus the step before's). If no step was calm, the
// whole window counts, and the estimate says so.
func (r *Result) histogram(ans map[string][]scenario.PromSeries, serviceTimes bool) error {
	var calm []bool
	how := "the whole window"
	if !serviceTimes {
		calm = make([]bool, len(r.Success))
		n := 0
		for k := 1; k < len(calm); k++ {
			calm[k] = r.up(k) && r.Rejected[k] <= 0.01*(r.Success[k]+r.Errors[k]+r.Rejected[k]) && r.Success[k]+r.Errors[k] > 0
			if calm[k] {
				n++
			}
		}
		how = fmt.Sprintf("the %d calm steps (no outage, rejections <= 1%%: short queues), as the histogram counts waits too", n)
		if n == 0 {
			calm, how = nil, "the whole window: no step was calm (every one rejected or was down), so these durations include waits"
		}
	}
	inc := func(s scenario.PromSeries) float64 {
		if calm == nil {
			c := s.Points[len(s.Points)-1].V
			if len(s.Points) > 1 {
				c -= s.Points[0].V
			}
			return c
		}
		v, _ := onGrid(s, Window{Start: r.Start, End: r.End, Step: r.Step}, len(calm))
		var c float64
		for k := 1; k < len(v); k++ {
			if calm[k] {
				c += math.Max(v[k]-v[k-1], 0)
			}
		}
		return c
	}
	type b struct{ le, c float64 }
	var bs []b
	for _, s := range ans["duration_bucket"] {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil || len(s.Points) == 0 {
			return fmt.Errorf("fit: duration_bucket: a series without a numeric le label or points: %v", s.Metric)
		}
		bs = append(bs, b{le, math.Max(inc(s), 0)})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	for i := range bs { // cumulative counts must not decrease: a reset in one bucket only
		if i > 0 && bs[i].c < bs[i-1].c {
			bs[i].c = bs[i-1].c
		}
	}
	les, cnt := make([]float64, len(bs)), make([]float64, len(bs))
	for i, x := range bs {
		les[i], cnt[i] = x.le*1e9, x.c
		r.Buckets = append(r.Buckets, scenario.Bucket{Le: scenario.Bound(x.le), Count: x.c})
	}
	capNS := 0.0
	if n := len(bs); n >= 2 && math.IsInf(bs[n-1].le, 1) && bs[n-1].c > bs[n-2].c {
		r.InfCap = 2 * bs[n-2].le
		capNS = r.InfCap * 1e9
	}
	h, err := dist.NewHistogram(les, cnt, dist.Uniform, capNS)
	if err != nil {
		return fmt.Errorf("fit: the service-time histogram over the window: %w (did any request complete?)", err)
	}
	hl, _ := dist.NewHistogram(les, cnt, dist.LogUniform, capNS) // valid when h is
	exact := 0.0
	if s, c := ans["duration_sum"], ans["duration_count"]; len(s) == 1 && len(c) == 1 && len(s[0].Points) > 1 && len(c[0].Points) > 1 {
		if ds, dc := inc(s[0]), inc(c[0]); dc > 0 && ds >= 0 {
			exact = ds / dc
		}
	}
	// Within a bucket: uniform, unless _sum/_count says log-uniform's mean
	// is closer to the truth (latencies are denser near a bucket's lower
	// bound, and Prometheus's default buckets are wide).
	rule := "uniform within each bucket"
	r.MeanService = h.Mean() / 1e9
	if exact > 0 && math.Abs(hl.Mean()/1e9-exact) < math.Abs(r.MeanService-exact) {
		r.LogUniform, r.MeanService = true, hl.Mean()/1e9
		rule = fmt.Sprintf("log-uniform within each bucket, as its mean is closer to _sum/_count than uniform's (%.4g s)", h.Mean()/1e9)
	} else if exact > 0 {
		rule = fmt.Sprintf("uniform within each bucket, as its mean is closer to _sum/_count than log-uniform's (%.4g s)", hl.Mean()/1e9)
	}
	e := Estimate{Name: "mean service time, histogram", Value: r.MeanService, Unit: "s", From: "duration_bucket", Used: true,
		Why: "the mean of the fitted buckets over " + how + ", " + rule + "; it is the scenario's mean service time"}
	if r.InfCap > 0 {
		e.Why += fmt.Sprintf("; the +Inf bucket is capped at %g s (twice the last finite bound), a guess: set inf_cap", r.InfCap)
	}
	r.Estimates = append(r.Estimates, e)
	if exact > 0 {
		r.Estimates = append(r.Estimates, Estimate{Name: "mean service time, _sum/_count", Value: exact, Unit: "s", From: "duration_sum, duration_count",
			Why: "exact over the same steps; it chooses the rule within buckets, and the histogram's mean differs from it by the spread within buckets"})
	}
	return nil
}

func total(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// up reports whether step k is outside an outage the down gauge shows.
func (r *Result) up(k int) bool { return r.Down == nil || r.Down[k] < 0.5 }

// rates are the error rate (5xx other than 503 over successes and errors)
// and the rejection rate (429 and 503 over every answer), outside outages.
func (r *Result) rates() {
	var ok, er, rej float64
	for k := range r.Success {
		if r.up(k) {
			ok, er, rej = ok+r.Success[k], er+r.Errors[k], rej+r.Rejected[k]
		}
	}
	if ok+er > 0 {
		r.ErrorRate = er / (ok + er)
	}
	if ok+er+rej > 0 {
		r.RejectRate = rej / (ok + er + rej)
	}
	r.Estimates = append(r.Estimates,
		Estimate{Name: "error rate", Value: r.ErrorRate, From: "codes", Used: true,
			Why: "5xx answers other than 503 over the served (2xx and those 5xx), outside outages: backend.error_rate"},
		Estimate{Name: "rejection rate", Value: r.RejectRate, From: "codes",
			Why: "429 and 503 answers over every answer, outside outages; the scenario does not set it: rejections follow from workers and queue, so compare it with the simulated one"})
}

// capacity estimates the workers and the queue: from the workers gauge if
// the server exposes one; else from the throughput at saturation (steps
// with rejections) by Little's law on the workers, busy = throughput ×
// mean service time; else from the most requests in flight.
func (r *Result) capacity() {
	s := r.MeanService
	var gauge, sat, inflight float64
	if r.Workers != nil {
		gauge = slices.Max(r.Workers)
	}
	var tput []float64
	for k := range r.Success {
		if r.up(k) && r.Rejected[k] > 0.01*(r.Success[k]+r.Errors[k]+r.Rejected[k]) {
			tput = append(tput, r.Success[k]+r.Errors[k])
		}
	}
	if len(tput) > 0 {
		sort.Float64s(tput)
		sat = tput[len(tput)/2] * s
	}
	if r.InFlight != nil {
		inflight = slices.Max(r.InFlight)
	}
	var used string
	switch {
	case gauge >= 1:
		used = "workers gauge"
		r.WorkersFit = int(math.Round(gauge))
	case sat > 0:
		used = "saturation"
		r.WorkersFit = max(1, int(math.Round(sat)))
	case inflight >= 1:
		used = "in flight"
		r.WorkersFit = int(math.Ceil(inflight))
	default:
		used = "none"
		r.WorkersFit = max(1, int(math.Ceil(slices.Max(r.Arrivals)*s*2)))
	}
	add := func(name string, v float64, from, why string) {
		r.Estimates = append(r.Estimates, Estimate{Name: name, Value: v, From: from, Used: strings.HasPrefix(name, "workers, "+used), Why: why})
	}
	if r.Workers != nil {
		add("workers, workers gauge", gauge, "workers", "the server reports its workers: the largest value over the window (lower values are capacity faults); used whenever present")
	}
	if sat > 0 {
		add("workers, saturation", sat, "codes, duration_bucket", fmt.Sprintf("median throughput over the %d steps with rejections × mean service time (Little's law on the workers: all busy at saturation)", len(tput)))
	} else {
		add("workers, saturation", 0, "codes", "no step with rejections: the server never saturated, so its throughput does not bound its workers")
	}
	if r.InFlight != nil {
		add("workers, in flight", inflight, "in_flight", "the most requests in the server at once: a lower bound on workers when nothing queued, workers + queue when it saturated; used only without the two above")
	}
	if used == "none" {
		add("workers, none", float64(r.WorkersFit), "arrivals", "no gauge, no saturation, no in-flight gauge: twice the peak offered load (peak rate × mean service time), a placeholder to replace")
	}
	r.QueueFit = 1000
	why := "no saturation seen: the queue limit cannot be identified; the default 1000"
	if len(tput) > 0 && r.InFlight != nil {
		var peak float64
		for k := range r.InFlight {
			if r.up(k) && r.Rejected[k] > 0.01*(r.Success[k]+r.Errors[k]+r.Rejected[k]) {
				peak = math.Max(peak, r.InFlight[k])
			}
		}
		r.QueueFit = max(0, int(math.Round(peak))-r.WorkersFit)
		why = "the most requests in flight at a saturated step minus the workers (a full queue is what rejects)"
	}
	r.Estimates = append(r.Estimates, Estimate{Name: "queue limit", Value: float64(r.QueueFit), From: "in_flight, codes", Used: true, Why: why})
}

// faults: an outage is a run of steps where the down gauge is 1, or,
// without that gauge, where the requests answered fall below 10% of the
// window's median answered rate while requests arrive; a capacity fault
// is a run of steps where the workers gauge is below its largest value
// (fraction: its value over the largest).
func (r *Result) faults() {
	steps := len(r.Arrivals)
	out := make([]bool, steps)
	rule := "the down gauge is 1"
	if r.Down != nil {
		for k := range out {
			out[k] = r.Down[k] >= 0.5
		}
	} else {
		rule = "requests answered below 10% of the window's median answered rate while requests arrive (no down gauge)"
		if r.answersOnly {
			rule = "requests answered below 10% of the window's median answered rate (no down gauge; the arrivals are the answers, so an idle step looks the same)"
		}
		ans := make([]float64, steps)
		for k := range ans {
			ans[k] = r.Success[k] + r.Errors[k] + r.Rejected[k]
		}
		med := slices.Clone(ans)
		sort.Float64s(med)
		m := med[len(med)/2]
		for k := range out {
			out[k] = m > 0 && ans[k] < 0.1*m && (r.answersOnly || r.Arrivals[k] > 0.1*m)
		}
	}
	if r.answersOnly { // the load an outage hid: the rate of the step before it
		for k := range out {
			if out[k] {
				prev := 0.0
				if k > 0 {
					prev = r.Arrivals[k-1]
				}
				if r.Arrivals[k] < prev {
					r.Arrivals[k] = prev
					r.Filled++
				}
			}
		}
	}
	st := scenario.Duration(r.Step)
	for k := 0; k < steps; {
		if !out[k] {
			k++
			continue
		}
		j := k
		for j < steps && out[j] {
			j++
		}
		r.Faults = append(r.Faults, Fault{Fault: scenario.Fault{Kind: scenario.FaultOutage, Start: scenario.Duration(k) * st, Duration: scenario.Duration(j-k) * st}, Rule: rule})
		k = j
	}
	if r.Workers == nil {
		return
	}
	top := slices.Max(r.Workers)
	for k := 0; k < steps; {
		if !(r.Workers[k] < top) || !r.up(k) || top <= 0 {
			k++
			continue
		}
		j := k
		for j < steps && r.Workers[j] == r.Workers[k] && r.up(j) {
			j++
		}
		r.Faults = append(r.Faults, Fault{Fault: scenario.Fault{Kind: scenario.FaultCapacity, Start: scenario.Duration(k) * st, Duration: scenario.Duration(j-k) * st, Fraction: r.Workers[k] / top},
			Rule: "the workers gauge below its largest value over the window"})
		k = j
	}
	sort.SliceStable(r.Faults, func(i, j int) bool { return r.Faults[i].Start < r.Faults[j].Start })
}

// codeLabel refuses a codes answer none of whose series has the status
// code's label: every answer would be dropped as "not a status code" and
// the fit would read a server that answered nothing (the otel
// convention's http_response_status_code against a server labelled by
// promhttp's code, as throttlesim serve is).
func codeLabel(ss []scenario.PromSeries, label string) error {
	seen := map[string]bool{}
	for _, s := range ss {
		if _, ok := s.Metric[label]; ok {
			return nil
		}
		for k := range s.Metric {
			seen[k] = true
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return fmt.Errorf("fit: query codes: no series has the status code's label %q (labels seen: %s): give --code-label, or the --convention whose names the server uses (throttlesim serve: throttlesim or prometheus)", label, have)
}
