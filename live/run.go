// Package live runs a scenario for real: its clients are goroutines that
// send HTTP requests through the live client (live/client, the
// simulator's policy stacks on the wall clock) at the arrival times a
// simulation with the same seed would draw, against the scenario's
// backend served in process on loopback (live/server) or against any URL.
// It measures what `throttlesim run` measures, into the same metrics rows,
// so the results folder of a live run reads like a simulated one; and it
// measures itself: how late each arrival started (the schedule lag), the
// goroutines and the heap.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/throttlesim/throttlesim/live/client"
	"github.com/throttlesim/throttlesim/live/internal/decide"
	"github.com/throttlesim/throttlesim/live/server"
	"github.com/throttlesim/throttlesim/sim"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// What one machine drives honestly by default (Options.Force lifts them):
// beyond them the schedule lag, not the policies, shapes the results. On
// the 2-core machine of docs/experiments/sim-vs-live.md, 2,100 attempts/s
// ran with a p99 lag of a few ms.
const (
	MaxClients     = 20_000
	MaxAttemptRate = 3_000 // peak offered rate × max attempts, per second
)

// Options tune a live run.
type Options struct {
	// Target is the URL requests go to; empty: the scenario's backend,
	// served in process on a loopback port.
	Target string
	// Seed overrides the scenario's seed.
	Seed *uint64
	// Force runs loads above MaxClients and MaxAttemptRate.
	Force bool
	// Progress, when set, is called about twice a second with the time
	// elapsed and the duration, in ns.
	Progress func(now, end int64)
	// MaxInFlight caps the application requests in flight (each one a
	// goroutine, and while an attempt is out a connection); 0:
	// DefaultInFlight. An arrival that finds the cap reached is not sent:
	// it is the load generator's own drop (Info.GeneratorDropped), as k6
	// counts dropped_iterations, and the run no longer stands for the
	// scenario (Info.ScheduleOK false).
	MaxInFlight int

	// arrived, when set (tests), is called after each arrival is sent
	// (true) or dropped at the cap (false).
	arrived func(sent bool)
	// events, when set (tests), is called with each client event the
	// rows counted.
	events func(client.Event)
}

// MaxInFlightCap is the default cap on requests in flight. A machine
// that keeps the load limits (MaxAttemptRate attempts/s with the usual
// 1 s timeouts) has about 3,000 in flight; 10,000 leaves room for a
// backend that holds requests (a blackhole, a full backlog) for up to 3
// timeouts, and bounds what a dead or hanging target can cost: 10,000
// goroutines and connections, some 100 MB, instead of one per arrival
// until the run ends.
const MaxInFlightCap = 10_000

// fdReserve is the open files kept out of the in-flight cap: the
// listener, the results files, the runtime's own.
const fdReserve = 256

// DefaultInFlight is the cap a run takes when Options.MaxInFlight is 0:
// MaxInFlightCap, lowered to what the open-file limit allows, since each
// request in flight may hold a connection (one file descriptor, two when
// the backend is in process: both ends are this process's). Past the fd
// limit dials fail with "too many open files", which would be counted as
// the target's failures; a drop at the cap is counted as the generator's.
func DefaultInFlight(inProcess bool) int {
	n := MaxInFlightCap
	if lim := openFileLimit(); lim > 0 {
		per := uint64(1)
		if inProcess {
			per = 2
		}
		avail := uint64(0)
		if lim > fdReserve {
			avail = (lim - fdReserve) / per
		}
		n = int(min(uint64(n), max(avail, 1)))
	}
	return n
}

// Info is what a live run measured about itself (live.json).
type Info struct {
	Target    string `json:"target"`
	InProcess bool   `json:"in_process"`
	// Arrivals is the application requests started; the schedule lag is
	// how late each started after its scheduled time.
	Arrivals         int64   `json:"arrivals"`
	ScheduleLagP50MS float64 `json:"schedule_lag_p50_ms"`
	ScheduleLagP99MS float64 `json:"schedule_lag_p99_ms"`
	ScheduleLagMaxMS float64 `json:"schedule_lag_max_ms"`
	// LateArrivals started more than 10 ms late.
	LateArrivals int64 `json:"late_arrivals"`
	// MaxInFlight is the cap on application requests in flight;
	// PeakInFlight the most that were; GeneratorDropped the arrivals not
	// sent because the cap was reached (they are not in the offered
	// count: the load generator, not the client's policies, dropped them).
	MaxInFlight      int   `json:"max_in_flight"`
	PeakInFlight     int   `json:"peak_in_flight"`
	GeneratorDropped int64 `json:"generator_dropped"`
	// ScheduleOK is ScheduleKept(p99, max) and no arrival dropped at the
	// cap: false means the machine, not the policies, shaped the run.
	ScheduleOK    bool    `json:"schedule_ok"`
	PeakGoroutine int     `json:"peak_goroutines"`
	PeakHeapMB    float64 `json:"peak_heap_mb"`
	CPUs          int     `json:"cpus"`
	WallS         float64 `json:"wall_s"`
	// NotMeasured names the summary fields this run could not see: the
	// server's (metrics.ServerFields) when the target is not in process.
	NotMeasured []string `json:"not_measured,omitempty"`
}

// Schedule is the live section of the run's summary.json: how well the
// run kept its schedule (live.json, Info itself, has more).
func (i *Info) Schedule() *rundir.LiveSchedule {
	return &rundir.LiveSchedule{ScheduleLagP50MS: i.ScheduleLagP50MS, ScheduleLagP99MS: i.ScheduleLagP99MS,
		ScheduleLagMaxMS: i.ScheduleLagMaxMS, ScheduleOK: i.ScheduleOK,
		MaxInFlight: i.MaxInFlight, PeakInFlight: i.PeakInFlight, GeneratorDropped: i.GeneratorDropped,
		NotMeasured: i.NotMeasured}
}

// ScheduleKept reports whether a live run kept its schedule well enough
// to stand for the scenario: a p99 lag of at most 50 ms (5% of the usual
// 1 s attempt timeout) and no stall of a second or more (a stall as long
// as a timeout turns every request in flight into a timeout, which no
// policy caused).
func ScheduleKept(p99MS, maxMS float64) bool { return p99MS <= 50 && maxMS < 1000 }

// What live mode does with each field of the clients section and of a
// group, by YAML name (every field: TestEveryClientFieldIsDecided). The
// policies are the simulator's own stack (package stack), configured by
// the same translation (scenario.Policies.StackConfig).
var clientFields = decide.Table{
	"count": decide.Live, "arrival": decide.Live, "timeout": decide.Live, "deadline": decide.Live,
	"throttle": decide.Live, "retry": decide.Live, "breaker": decide.Live, "rate_limiter": decide.Live,
	"startup": decide.Live, "groups": decide.Live, "adaptive_breaker": decide.Live,
	"hedge":      decide.Refused, // the live client does not hedge
	"connection": decide.Refused, // persistent connections are the simulator's only
	// No effect without a service graph or priority shedding, both refused.
	"target": decide.Inert, "propagate_deadline": decide.Inert, "priority": decide.Inert,
}

var groupFields = decide.Table{
	"name": decide.Live, "share": decide.Live, "timeout": decide.Live, "deadline": decide.Live,
	"throttle": decide.Live, "retry": decide.Live, "breaker": decide.Live, "rate_limiter": decide.Live,
	"priority": decide.Inert, "hedge": decide.Refused, "adaptive_breaker": decide.Live,
}

// refusedClientFields names the set fields of the clients section and of
// its groups that live mode refuses or has no decision for.
func refusedClientFields(sc *scenario.Scenario) []string {
	why := clientFields.Refused("clients", sc.Clients)
	for i, g := range sc.Clients.Groups {
		why = append(why, groupFields.Refused(fmt.Sprintf("clients.groups[%d]", i), g)...)
	}
	return why
}

// Check refuses a scenario live mode cannot run, and loads above the
// limits unless force.
func Check(sc *scenario.Scenario, force bool) error {
	switch {
	case sc.IsGraph():
		return errors.New("live: services: service graphs are not supported live")
	case sc.Clients.Connection != nil:
		return errors.New("live: clients.connection is not supported live")
	case sc.Backend.Kind == scenario.BackendOCC:
		return errors.New("live: backend.kind occ is not supported live")
	}
	if why := refusedClientFields(sc); len(why) > 0 {
		return fmt.Errorf("live: %s: not supported live", strings.Join(why, ", "))
	}
	if force {
		return nil
	}
	if n := sc.Clients.Count; n > MaxClients {
		return fmt.Errorf("live: %d clients is more than this machine drives honestly (%d); use --force to try anyway", n, MaxClients)
	}
	att := 1
	for _, g := range sc.Clients.ResolvedGroups() {
		if r := g.Policies.Retry; r != nil {
			att = max(att, r.MaxAttempts)
		}
	}
	rate := sc.PeakRate() // a trace's, a replay's or a cycle's too
	if rate*float64(att) > MaxAttemptRate {
		return fmt.Errorf("live: %.0f requests/s (peak) × up to %d attempts is up to %.0f attempts/s, more than this machine drives honestly (%d/s); lower clients.arrival or use --force to try anyway",
			rate, att, rate*float64(att), MaxAttemptRate)
	}
	return nil
}

// recorder turns the live client's events into metrics rows.
type recorder struct {
	mu      sync.Mutex
	start   time.Time
	end     int64
	ser     *metrics.Series
	hist    []metrics.Histogram // per row: latencies of the requests that succeeded in it
	all     metrics.Histogram
	lag     metrics.Histogram
	lagMax  int64
	late    int64
	latSum  float64
	latN    int64
	arr     int64
	stopped bool
	events  func(client.Event) // Options.events
	// the cap on requests in flight
	cap, inFlight, peak int
	dropped             int64
}

func (r *recorder) observe(e client.Event) {
	now := int64(time.Since(r.start))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || now >= r.end {
		return // after the horizon, as a simulation stops counting
	}
	i := r.ser.Index(now)
	row := &r.ser.Rows[i]
	switch e.Kind {
	case client.Offered:
		row.Offered++
	case client.Attempt:
		row.Attempts++
	case client.Retry:
		row.Retries++
	case client.Paced:
		row.Paced++
		row.PacedWaitNS += int64(e.Wait)
	case client.Succeeded:
		row.Succeeded++
		lat := int64(e.Latency)
		r.hist[i].Add(lat)
		r.all.Add(lat)
		r.latSum += float64(lat)
		r.latN++
	case client.Failed:
		row.Failed++
	case client.DeadlineExceeded:
		row.DeadlineExceeded++
	case client.BudgetRefused:
		row.BudgetRefused++
	case client.DroppedThrottle:
		row.DropThrottle++
	case client.DroppedBreaker:
		row.DropBreaker++
	case client.TimedOut:
		row.TimedOut++
	}
	if r.events != nil {
		r.events(e)
	}
}

// arrival counts an arrival that started lag ns late and takes a place
// in flight for it; send false: the cap is reached and it counts as
// dropped. stopped: the run has stopped; the arrival is not counted, and
// its client is to return.
func (r *recorder) arrival(lag int64) (send, stopped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false, true
	}
	r.arr++
	r.lag.Add(max(lag, 0))
	r.lagMax = max(r.lagMax, lag)
	if lag > 10e6 {
		r.late++
	}
	if r.inFlight >= r.cap {
		r.dropped++
		return false, false
	}
	r.inFlight++
	r.peak = max(r.peak, r.inFlight)
	return true, false
}

// done gives back the place in flight of a request that ended.
func (r *recorder) done() {
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
}

// Run runs sc live until its duration has passed or ctx ends. An ended
// context gives the partial result (Complete false) and an error wrapping
// sim.ErrInterrupted, as sim.Run does.
func Run(ctx context.Context, sc *scenario.Scenario, opt Options) (*sim.Result, *Info, error) {
	if err := sc.Validate(); err != nil {
		return nil, nil, err
	}
	if err := Check(sc, opt.Force); err != nil {
		return nil, nil, err
	}
	if opt.MaxInFlight < 0 {
		return nil, nil, fmt.Errorf("live: MaxInFlight must be >= 0 (0: the default), got %d", opt.MaxInFlight)
	}
	rs := *sc
	if opt.Seed != nil {
		rs.Seed = *opt.Seed
	}
	end := int64(rs.Duration)
	interval := int64(rs.Metrics.Interval)
	rows := int((end + interval - 1) / interval)
	rec := &recorder{end: end, ser: metrics.NewSeries(interval, rows), hist: make([]metrics.Histogram, rows)}
	info := &Info{Target: opt.Target, CPUs: runtime.GOMAXPROCS(0)}
	rec.events = opt.events
	rec.cap = opt.MaxInFlight
	if rec.cap == 0 {
		rec.cap = DefaultInFlight(opt.Target == "")
	}
	info.MaxInFlight = rec.cap

	arr, err := sim.NewArrivals(&rs, rs.Seed)
	if err != nil {
		return nil, nil, err
	}
	base := &http.Transport{
		Proxy: nil, MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	defer base.CloseIdleConnections()
	type grp struct {
		tr    *client.Transport
		start int
	}
	var groups []grp
	owner := make([]uint16, rs.Clients.Count)
	for gi, g := range rs.Clients.ResolvedGroups() {
		cfg, err := g.Policies.StackConfig()
		if err != nil {
			return nil, nil, fmt.Errorf("live: group %q: %w", g.Name, err)
		}
		tr, err := client.New(client.Config{Stack: cfg, Clients: g.Count, First: g.Start, Base: base, Seed: rs.Seed, Observe: rec.observe})
		if err != nil {
			return nil, nil, fmt.Errorf("live: group %q: %w", g.Name, err)
		}
		groups = append(groups, grp{tr, g.Start})
		for c := g.Start; c < g.Start+g.Count; c++ {
			owner[c] = uint16(gi)
		}
	}

	var srv *server.Server
	var srvSer *metrics.Series
	var hs *http.Server
	target := opt.Target
	if target == "" {
		srvSer = metrics.NewSeries(interval, rows)
		seed := rs.Seed
		if srv, err = server.New(&rs, server.Options{Seed: &seed, Series: srvSer, End: end}); err != nil {
			return nil, nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("live: %w", err)
		}
		hs = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		target = "http://" + ln.Addr().String() + "/"
		info.Target, info.InProcess = target, true
	}

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reqs, clients sync.WaitGroup
	stop := make(chan struct{})
	if srv != nil {
		srv.Start()
	}
	rec.start = time.Now()
	start := rec.start
	for c := range rs.Clients.Count {
		g := groups[owner[c]]
		local := c - g.start
		clients.Go(func() {
			t, n := arr.First(c)
			tm := time.NewTimer(time.Hour)
			defer tm.Stop()
			cctx := client.WithClient(runCtx, local)
			for t < end {
				tm.Reset(time.Until(start.Add(time.Duration(t))))
				select {
				case <-tm.C:
				case <-stop:
					return
				}
				sent, stopped := rec.arrival(int64(time.Since(start)) - t)
				if stopped {
					return
				}
				if opt.arrived != nil {
					opt.arrived(sent)
				}
				ord := n // the simulation's ordinal: the request draws what the simulation draws for it
				t = arr.Next(c, n, t)
				n++
				if !sent {
					continue
				}
				reqs.Go(func() {
					defer rec.done()
					req, err := http.NewRequestWithContext(client.WithOrdinal(cctx, ord), http.MethodGet, target, nil)
					if err != nil {
						return
					}
					resp, err := g.tr.RoundTrip(req)
					if err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
		})
	}

	// Wait for the horizon or the context, reporting progress and
	// sampling goroutines and heap.
	horizon := time.NewTimer(time.Duration(end))
	defer horizon.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var ms runtime.MemStats
	interrupted := false
wait:
	for {
		select {
		case <-horizon.C:
			break wait
		case <-ctx.Done():
			interrupted = true
			break wait
		case <-tick.C:
			info.PeakGoroutine = max(info.PeakGoroutine, runtime.NumGoroutine())
			runtime.ReadMemStats(&ms)
			info.PeakHeapMB = max(info.PeakHeapMB, float64(ms.HeapAlloc)/(1<<20))
			if opt.Progress != nil {
				opt.Progress(int64(time.Since(start)), end)
			}
		}
	}
	stoppedAt := min(int64(time.Since(start)), end)
	rec.mu.Lock()
	rec.stopped = true
	rec.mu.Unlock()
	close(stop)
	if srv != nil {
		srv.Close() // releases held requests; its series ends here
	}
	cancel() // requests still in flight are abandoned, uncounted
	clients.Wait()
	reqs.Wait()
	if hs != nil {
		shutdown(hs, base)
	}
	info.WallS = time.Since(start).Seconds()

	ser := rec.ser
	if interrupted {
		ser.Rows = ser.Rows[:ser.Index(max(stoppedAt-1, 0))+1]
	}
	for i := range ser.Rows {
		r := &ser.Rows[i]
		r.SetLatency(&rec.hist[i])
		if srvSer != nil {
			mergeServer(r, &srvSer.Rows[i])
		}
	}
	var waitSum float64
	var waitN int64
	if srv != nil {
		waitSum, waitN = srv.QueueWait()
	}
	ser.Degrading = srvSer != nil && rs.EntryBackend().Degrade != nil
	res := &sim.Result{
		Scenario: &rs, Series: ser, Arrivals: uint64(rec.arr),
		Complete: !interrupted, StoppedAt: stoppedAt, MeanLatencyS: math.NaN(),
	}
	res.Summary = metrics.Summarise(ser, params(&rs), &rec.all, waitSum, waitN)
	if !info.InProcess {
		// A remote target's server is not ours to count: its figures are
		// not measured, not zero.
		res.Summary.ForgetServer()
		info.NotMeasured = metrics.ServerFields()
	}
	if rec.latN > 0 {
		res.MeanLatencyS = rec.latSum / float64(rec.latN) / 1e9
	}
	info.Arrivals = ser.Totals().Offered // counted as the rows count them (an arrival at the horizon may start and not be counted)
	info.ScheduleLagP50MS, info.ScheduleLagP99MS, info.ScheduleLagMaxMS = lagFigures(&rec.lag, rec.lagMax)
	info.LateArrivals = rec.late
	info.PeakInFlight, info.GeneratorDropped = rec.peak, rec.dropped
	info.ScheduleOK = ScheduleKept(info.ScheduleLagP99MS, info.ScheduleLagMaxMS) && rec.dropped == 0
	if interrupted {
		return res, info, &sim.InterruptedError{At: stoppedAt, End: end}
	}
	return res, info, nil
}

// shutdown stops the in-process server once the clients are done. The
// client transport's idle connections are closed while it waits: a dial
// that a cancelled request started still completes and parks its
// connection in the idle pool, and http.Server.Shutdown counts such a
// connection (no request read yet) as active for 5 s; closing it from
// the client side lets Shutdown return at once.
func shutdown(hs *http.Server, base *http.Transport) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		_ = hs.Shutdown(ctx)
		close(done)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		base.CloseIdleConnections()
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// mergeServer copies the backend's counts and worker-time integrals of a
// row into the client-side row.
func mergeServer(r, s *metrics.Row) {
	r.Received, r.Accepted, r.Rejected, r.Unanswered = s.Received, s.Accepted, s.Rejected, s.Unanswered
	r.QueueTimeouts, r.FailedOutage, r.LostOutage = s.QueueTimeouts, s.FailedOutage, s.LostOutage
	r.Served, r.Errors, r.Cancelled = s.Served, s.Errors, s.Cancelled
	r.UsefulNS, r.WastedNS, r.QueueAreaNS, r.CapacityNS = s.UsefulNS, s.WastedNS, s.QueueAreaNS, s.CapacityNS
	r.Degraded = s.Degraded
}

// params are the summary's parameters, as a simulation of sc sets them
// (sim's model.params for a one-backend scenario without connections).
func params(sc *scenario.Scenario) metrics.Params {
	p := metrics.Params{
		Workers:         int64(sc.EntryBackend().TotalWorkers()),
		CapacityRPS:     sc.Capacity(),
		RecoveryWindow:  int64(sc.Metrics.RecoveryWindow),
		Baseline:        int64(sc.Metrics.Baseline),
		RecoverFraction: sc.Metrics.RecoverFraction,
		StayFraction:    sc.Metrics.StayFraction,
	}
	if start, end, ok := sim.SpikeWindow(sc); ok && len(sc.Faults) == 0 {
		p.Faults = append(p.Faults, metrics.Window{Start: start, End: end})
	}
	for _, f := range sc.Faults {
		w := metrics.Window{Start: int64(f.Start), End: int64(f.End())}
		p.Faults = append(p.Faults, w)
		if f.Kind == scenario.FaultOutage {
			p.Outages = append(p.Outages, w)
		}
	}
	return p
}

// lagFigures is the schedule lag's p50, p99 and max in ms. The quantiles
// come from a histogram (a bucket's representative value, within its
// relative error) and the max is exact: a quantile read above the max is
// clamped to it, since no lag exceeded the max (unclamped, a p99 of
// 3.047 ms beside a max of 3.036 ms failed TestLiveCommand by chance).
func lagFigures(h *metrics.Histogram, maxNS int64) (p50, p99, maxMS float64) {
	maxMS = float64(maxNS) / 1e6
	if v, ok := h.Quantile(0.5); ok {
		p50 = min(v/1e6, maxMS)
	}
	if v, ok := h.Quantile(0.99); ok {
		p99 = min(v/1e6, maxMS)
	}
	return p50, p99, maxMS
}
