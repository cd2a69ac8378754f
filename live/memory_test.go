package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// 10,000 clients, each a goroutine, for a 5 s run against a target that
// answers at once: the heap and the goroutine stacks stay under bounds
// per client and per request in flight, during the run (sampled twice a
// second) and after it (after a GC, with the target closed).
//
// The arrivals are "constant" at 0.25/s per client: each client waits for
// an arrival before the horizon until 1 s into the run, so all 10,000
// goroutines are alive at the first sample (2,500 requests/s in all,
// under the honest limit). The requests in flight are capped at 1,000,
// so that a machine that lags (in flight grows with the lag) cannot push
// the memory past the bounds by chance: the cap makes them hold by
// construction.
//
// The bounds, from the run on the shared 2-core machine (peak HeapAlloc
// 37 MB with 10,600 goroutines and 150 in flight on an idle machine; 140
// MB with 20,500 goroutines and 3,500 in flight on a loaded one, stacks
// 2.5 to 4.3 KB per goroutine), about twice what was measured since the
// HeapAlloc sampled includes the garbage the GC lets grow to the live
// heap again (GOGC 100):
//   - heap during: 8 KB per client (its goroutine's closure, timer,
//     context and policy state, 3.7 KB measured) and 64 KB per request in
//     flight (both ends' connection buffers, 16 KB, the request and the
//     response, the server's goroutine: 31 KB measured);
//   - stacks during: 8 KB per goroutine: at most a client's, a request's,
//     and three per connection (the client transport's read and write
//     loops and the server's), connections being at most one per request
//     in flight (idle ones are reused first);
//   - heap after (two GCs, which empty sync.Pool's victim caches, where
//     net/http keeps its buffers): 1 KB per goroutine that was (the
//     runtime keeps every goroutine's descriptor, some 500 B, for reuse:
//     5 MB after 10,700 goroutines) and 8 MB for the rest (the scenario,
//     the package's parsers). A client's state kept after the run, or the
//     requests', would exceed it.
func TestTenThousandClientsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 client goroutines for 5 s")
	}
	const clients, inFlight = 10_000, 1_000
	const kb, mb = 1 << 10, 1 << 20
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	sc := parse(t, small, "clients.count=10000", "clients.arrival={process: constant, total_rate: 2500/s}",
		"clients.retry=null", "duration=5s")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peakHeap, peakStack uint64
	var peakG int
	_, info, err := Run(context.Background(), sc, Options{Target: ts.URL, MaxInFlight: inFlight, Progress: func(now, end int64) {
		runtime.ReadMemStats(&ms)
		peakHeap, peakStack = max(peakHeap, ms.HeapAlloc), max(peakStack, ms.StackInuse)
		peakG = max(peakG, runtime.NumGoroutine())
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	after := ms.HeapAlloc

	goroutines := uint64(clients + 4*inFlight) // at most: the clients, the requests, 3 per connection
	if lim := base + clients*8*kb + inFlight*64*kb; peakHeap > lim {
		t.Errorf("peak heap %.1f MB, over the bound %.1f MB", float64(peakHeap)/mb, float64(lim)/mb)
	}
	if lim := goroutines * 8 * kb; peakStack > lim {
		t.Errorf("peak stacks %.1f MB, over the bound %.1f MB", float64(peakStack)/mb, float64(lim)/mb)
	}
	if lim := base + goroutines*kb + 8*mb; after > lim {
		t.Errorf("heap after the run %.1f MB, over the bound %.1f MB", float64(after)/mb, float64(lim)/mb)
	}
	t.Logf("TIMING heap %.1f MB before, peak %.1f MB, after %.1f MB; stacks peak %.1f MB; peak %d goroutines, %d in flight, %d dropped, %d arrivals, %.1f s",
		float64(base)/mb, float64(peakHeap)/mb, float64(after)/mb, float64(peakStack)/mb, peakG, info.PeakInFlight, info.GeneratorDropped, info.Arrivals, info.WallS)
}
