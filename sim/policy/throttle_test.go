package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSREProbability(t *testing.T) {
	tests := []struct {
		name                     string
		requests, accepts, k, pd float64
		want                     float64
	}{
		{"empty window", 0, 0, 2, 1, 0},
		{"all accepted", 100, 100, 2, 1, 0},
		{"half accepted, K=2: still nothing dropped", 100, 50, 2, 1, 0},
		{"a sparse client's single reject", 1, 0, 2, 1, 0.5},
		{"book example: 1/3 accepted", 30, 10, 2, 1, 10.0 / 31},
		{"large window tends to 1 - K*acc/req", 3000, 1000, 2, 1, 1000.0 / 3001},
		{"K=1.1: rejects one per ten accepted", 110, 100, 1.1, 1, 0},
		{"K=1.1 overloaded", 200, 100, 1.1, 1, 90.0 / 201},
		{"never reaches 1 with accepts = 0", 1e6, 0, 2, 1, 1e6 / (1e6 + 1)},
		{"grpc RLS padding 8", 10, 0, 2, 8, 10.0 / 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SREProbability(tt.requests, tt.accepts, tt.k, tt.pd)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// Step table at fixed virtual times: 1-second buckets, a 3-bucket window.
// A record at t is in bucket floor(t); at time t the window holds buckets
// b > floor(t) - 3.
func TestWindowStepTable(t *testing.T) {
	const s = int64(1e9)
	w := NewWindow(2, s, 3)
	steps := []struct {
		at       int64
		op       string // "req", "acc", or "" (just look)
		id       int
		req, acc uint32 // throttle id's counts after the step
	}{
		{0, "req", 0, 1, 0},
		{s / 2, "acc", 0, 1, 1},
		{s, "req", 0, 2, 1},
		{s, "req", 1, 1, 0}, // another throttle: independent counts
		{2*s + s/2, "", 0, 2, 1},
		{3 * s, "", 0, 1, 0},      // bucket 0 left the window
		{3*s + 1, "req", 0, 2, 0}, // bucket 3
		{4 * s, "", 0, 1, 0},      // bucket 1 left
		{4 * s, "", 1, 0, 0},      // ... for throttle 1 too
		{6*s - 1, "", 0, 1, 0},    // bucket 3 still in (3 > 5 - 3)
		{6 * s, "", 0, 0, 0},      // gone (3 > 6 - 3 fails)
	}
	for i, st := range steps {
		switch st.op {
		case "req":
			w.RecordRequest(st.at, st.id)
		case "acc":
			w.RecordAccept(st.at, st.id)
		default:
			w.Advance(st.at)
		}
		r, a := w.Counts(st.id)
		if r != st.req || a != st.acc {
			t.Fatalf("step %d (t=%dns %s id %d): got requests=%d accepts=%d, want %d, %d", i, st.at, st.op, st.id, r, a, st.req, st.acc)
		}
	}
}

// The shared FIFO must give exactly what a per-throttle scan of its own
// records gives (the reference implementation of the seed document).
func TestWindowMatchesNaiveScan(t *testing.T) {
	const width, buckets = int64(250e6), int64(8) // 2 s window
	r := rand.New(rand.NewPCG(3, 4))
	const n = 5
	w := NewWindow(n, width, buckets)
	type rec struct {
		bucket int64
		acc    bool
	}
	naive := make([][]rec, n)
	now := int64(0)
	for step := 0; step < 50_000; step++ {
		now += r.Int64N(int64(100e6))
		id := r.IntN(n)
		if r.IntN(2) == 0 {
			w.RecordRequest(now, id)
			naive[id] = append(naive[id], rec{now / width, false})
		} else {
			w.RecordAccept(now, id)
			naive[id] = append(naive[id], rec{now / width, true})
		}
		q := r.IntN(n)
		w.Advance(now)
		var wantR, wantA uint32
		for _, x := range naive[q] {
			if x.bucket > now/width-buckets {
				if x.acc {
					wantA++
				} else {
					wantR++
				}
			}
		}
		gotR, gotA := w.Counts(q)
		if gotR != wantR || gotA != wantA {
			t.Fatalf("step %d: throttle %d got (%d, %d), want (%d, %d)", step, q, gotR, gotA, wantR, wantA)
		}
	}
}

func TestThrottleForms(t *testing.T) {
	sre := ThrottleForm{K: 2, Padding: 1, Aggression: 1, MaxP: 1}
	tests := []struct {
		name     string
		f        ThrottleForm
		req, acc uint32
		want     float64
	}{
		{"SRE book", sre, 30, 10, 10.0 / 31},
		{"gRPC RLS padding 8", ThrottleForm{K: 2, Padding: 8, Aggression: 1, MaxP: 1}, 10, 0, 10.0 / 18},
		// Envoy: (100 − 90/0.95)/(101) = 5.2632/101, then ^(1/2).
		{"Envoy sr 0.95, aggression 2", ThrottleForm{K: 1 / 0.95, Padding: 1, Aggression: 2, MaxP: 0.8}, 100, 90, math.Sqrt((100 - 90/0.95) / 101)},
		{"Envoy cap 0.8", ThrottleForm{K: 1 / 0.95, Padding: 1, Aggression: 1, MaxP: 0.8}, 100, 0, 0.8},
		{"below min_requests", ThrottleForm{K: 2, Padding: 1, Aggression: 1, MaxP: 1, MinRequests: 10}, 5, 0, 0},
		{"at min_requests", ThrottleForm{K: 2, Padding: 1, Aggression: 1, MaxP: 1, MinRequests: 10}, 10, 0, 10.0 / 11},
	}
	for _, tt := range tests {
		if got := tt.f.Probability(tt.req, tt.acc); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func BenchmarkWindowRecordAndProbability(b *testing.B) {
	w := NewWindow(1000, int64(1e9), 120)
	b.ReportAllocs()
	var now int64
	for i := 0; i < b.N; i++ {
		now += 1e6 // 1000 events per simulated second
		id := i % 1000
		_ = w.Probability(now, id, ThrottleForm{K: 2, Padding: 1, Aggression: 1, MaxP: 1})
		w.RecordRequest(now, id)
		if i%3 != 0 {
			w.RecordAccept(now, id)
		}
	}
}

// TestRingFIFO checks the block FIFO against a plain slice through bursts
// that fill several blocks, drain to empty, and refill (block reuse and
// compaction of the block list).
func TestRingFIFO(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	var r ring
	var model []record
	next := uint32(0)
	for step := 0; step < 400; step++ {
		push := rnd.IntN(3 * ringBlock)
		if step%50 == 49 {
			push = 40 * ringBlock // a burst: the block list grows past the compaction threshold
		}
		for i := 0; i < push; i++ {
			x := record{bucket: next, id: next * 3}
			next++
			r.push(x)
			model = append(model, x)
		}
		pop := rnd.IntN(len(model) + 1)
		if step%7 == 0 {
			pop = len(model) // drain completely
		}
		for i := 0; i < pop; i++ {
			if got := r.front(); got != model[0] {
				t.Fatalf("step %d pop %d: front %v, want %v", step, i, got, model[0])
			}
			r.pop()
			model = model[1:]
		}
		if r.n != len(model) {
			t.Fatalf("step %d: n = %d, want %d", step, r.n, len(model))
		}
	}
	if live := len(r.blocks) - r.first + len(r.spare); live > 50 {
		t.Errorf("%d blocks held after the bursts; the largest burst needs about 42", live)
	}
}

// Throttle owns its window, formula and local-reject rule: with every
// request rejected by the backend (no accepts), the first request passes
// (p = 0 with nothing recorded), and then p = requests/(requests+1) grows;
// a draw of 0.6 rejects from the moment p exceeds it. Allow asks Uniform
// only when p > 0, and AllowU decides the same way with the draw given.
func TestThrottleAllow(t *testing.T) {
	calls := 0
	cfg := ThrottleConfig{Window: 120e9, Buckets: 120, Form: ThrottleForm{K: 2, Padding: 1, Aggression: 1, MaxP: 1}, CountLocalRejects: true,
		Uniform: func(stream, n uint64) float64 { calls++; return 0.6 }}
	th, err := NewThrottle(1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Uniform = nil
	tu, _ := NewThrottle(1, cfg)
	// requests recorded before request i: i; p = i/(i+1): 0, 0.5, 0.667, ...
	want := []bool{true, true, false, false, false}
	for i, w := range want {
		now := int64(i) * 1e6
		if got := th.Allow(now, 0, 7, uint64(i)); got != w {
			t.Errorf("request %d: Allow %v, want %v (p %.3f)", i, got, w, float64(i)/float64(i+1))
		}
		if got := tu.AllowU(now, 0, 0.6); got != w {
			t.Errorf("request %d: AllowU %v, want %v", i, got, w)
		}
	}
	if calls != len(want)-1 {
		t.Errorf("Uniform called %d times, want %d (not for the first request, whose p is 0)", calls, len(want)-1)
	}
	if req, acc := th.Counts(0); req != uint32(len(want)) || acc != 0 {
		t.Errorf("counts: %d requests, %d accepts; want %d, 0 (local rejects count)", req, acc, len(want))
	}
	if _, err := NewThrottle(1, ThrottleConfig{Window: 120e9, Buckets: -1, Form: ThrottleForm{K: 2}}); err == nil {
		t.Error("NewThrottle accepted -1 buckets")
	}
}

// Zero settings take the SRE book's values; impossible ones are errors.
func TestNewThrottleDefaultsAndErrors(t *testing.T) {
	a, err := NewThrottle(1, ThrottleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewThrottle(1, ThrottleConfig{Window: 120e9, Buckets: 120, Form: ThrottleForm{K: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 { // 30 requests, 10 accepts, one a second: p = (30 − 20)/30 with padding 0
		now := int64(i) * 1e9
		a.AllowU(now, 0, 1)
		b.AllowU(now, 0, 1)
		if i%3 == 0 {
			a.Accept(now, 0)
			b.Accept(now, 0)
		}
	}
	if pa, pb := a.Probability(30e9, 0), b.Probability(30e9, 0); pa != pb || pa == 0 {
		t.Errorf("zero config: got p %v, want the SRE defaults' %v (> 0)", pa, pb)
	}
	for _, tt := range []struct {
		n int
		c ThrottleConfig
	}{{-1, ThrottleConfig{}}, {1, ThrottleConfig{Buckets: -1}}, {1, ThrottleConfig{Window: 10, Buckets: 20}}, {1, ThrottleConfig{Form: ThrottleForm{K: -1}}}} {
		if _, err := NewThrottle(tt.n, tt.c); err == nil {
			t.Errorf("NewThrottle(%d, %+v): got no error, want one", tt.n, tt.c)
		}
	}
}
