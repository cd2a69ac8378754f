package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The overhead of the policy stack per request: the same loopback GET
// through a bare http.Transport and through a Transport running the
// outage scenario's stack (throttle, retry with backoff, budget, breaker,
// timeout). Compare ns/op and allocs/op of the two.
//
//	go test ./live/client -run XXX -bench . -benchmem
func BenchmarkRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	stack := "  timeout: 1s\n  throttle: {k: 2, window: 2m, buckets: 120, count_local_rejects: true}\n" +
		"  breaker: {}\n" + fastRetry + "    budget: {kind: sre}\n"
	for _, bc := range []struct {
		name string
		wrap func(http.RoundTripper) http.RoundTripper
	}{
		{"bare", func(rt http.RoundTripper) http.RoundTripper { return rt }},
		{"policies", func(rt http.RoundTripper) http.RoundTripper {
			tr, err := New(Config{Stack: policies(b, stack), Base: rt})
			if err != nil {
				b.Fatal(err)
			}
			return tr
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			base := &http.Transport{MaxIdleConnsPerHost: 64}
			defer base.CloseIdleConnections()
			hc := &http.Client{Transport: bc.wrap(base)}
			// Warm up: connections open, and the throttle's window holds
			// accepts (a cold window with requests in flight and no
			// answers yet drops, as the SRE throttle should).
			for range 200 {
				resp, err := hc.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := hc.Get(srv.URL)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}

// The policy stack alone, without the network: a Base that answers at
// once, so the time is the stack's (locks, window, draws, wrapping).
func BenchmarkStackOnly(b *testing.B) {
	stack := "  timeout: 1s\n  throttle: {k: 2, window: 2m, buckets: 120, count_local_rejects: true}\n" +
		"  breaker: {}\n" + fastRetry + "    budget: {kind: sre}\n"
	for _, bc := range []struct {
		name string
		p    string
	}{{"bare", "-"}, {"no-policies", ""}, {"outage-stack", stack}} {
		b.Run(bc.name, func(b *testing.B) {
			var tr http.RoundTripper = instant{}
			if bc.p != "-" {
				t, err := New(Config{Stack: policies(b, bc.p), Base: instant{}})
				if err != nil {
					b.Fatal(err)
				}
				tr = t
			}
			req, _ := http.NewRequest("GET", "http://x/", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}

type instant struct{}

func (instant) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}}, nil
}
