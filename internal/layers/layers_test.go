package layers

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
)

const ms = int64(1e6)

func book(requests int) Config {
	return Config{Layers: 3, Attempts: 4, Requests: requests, Gap: 10 * ms, Service: 10 * ms, FailProb: 1, Seed: 1}
}

// The book's 4³: with the database down and no timeouts every call makes
// all its attempts, so every request makes exactly 64 database attempts.
func TestDatabaseDownMakes64(t *testing.T) {
	r, err := Run(book(1000))
	if err != nil {
		t.Fatal(err)
	}
	if r.DBAttempts != 64*1000 || r.Succeeded != 0 {
		t.Errorf("database attempts %d, succeeded %d; want 64,000 and 0", r.DBAttempts, r.Succeeded)
	}
	for i, n := range r.PerRequest {
		if n != 64 {
			t.Fatalf("request %d made %d database attempts, want 64", i, n)
		}
	}
}

// With independent failures x at the database, a bottom call fails with
// x⁴, a middle one with x¹⁶: the expected database attempts per request
// are A(x)·A(x⁴)·A(x¹⁶), A(p) = 1 + p + p² + p³, and the success ratio is
// 1 − x⁶⁴. 20,000 requests; the mean within 4 standard errors.
func TestIndependentFailuresMultiply(t *testing.T) {
	a := func(p float64) float64 { return 1 + p + p*p + p*p*p }
	for _, x := range []float64{0.3, 0.5, 0.8} {
		c := book(20_000)
		c.FailProb = x
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, len(r.PerRequest))
		for i, n := range r.PerRequest {
			xs[i] = float64(n)
		}
		mean, sd := stat.MeanStdDev(xs, nil)
		se := sd / math.Sqrt(float64(len(xs)))
		want := a(x) * a(math.Pow(x, 4)) * a(math.Pow(x, 16))
		t.Logf("x=%.1f: %.4f ± %.4f database attempts per request, theory %.4f; success %.4f", x, mean, se, want, float64(r.Succeeded)/float64(r.Requests))
		if math.Abs(mean-want) > 4*se {
			t.Errorf("x=%.1f: %.4f attempts per request, want %.4f (4 SE = %.4f)", x, mean, want, 4*se)
		}
		if succ, want := float64(r.Succeeded)/float64(r.Requests), 1-math.Pow(x, 64); math.Abs(succ-want) > 4*math.Sqrt(want*(1-want)/float64(r.Requests))+1e-9 {
			t.Errorf("x=%.1f: success %.4f, want 1 − x⁶⁴ = %.4f", x, succ, want)
		}
	}
}

// Timeouts shorter than the calls below them do not reduce the 64: a
// caller that gives up retries, and the call it abandoned goes on with its
// own retries. Cancelling the abandoned call (deadline propagation) does:
// with a 10 ms database failure and a 25 ms timeout at every layer, each
// top-level attempt lives 25 ms and gets 3 database attempts through
// before the whole chain under it is cancelled, so 4 × 3 = 12.
func TestTimeoutsAndCancellation(t *testing.T) {
	for _, tc := range []struct {
		cancel bool
		want   int64
	}{{false, 64}, {true, 12}} {
		c := book(200)
		c.Gap = 1000 * ms // one request at a time
		c.Timeout = 25 * ms
		c.Cancel = tc.cancel
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range r.PerRequest {
			if n != tc.want {
				t.Fatalf("cancel %v: request %d made %d database attempts, want %d", tc.cancel, i, n, tc.want)
			}
		}
		t.Logf("cancel %v: %d database attempts per request, at most %d at once", tc.cancel, r.PerRequest[0], r.PeakDB)
	}
}

// Without cancellation the 64 attempts of a request also arrive closer
// together: abandoned calls keep working while their callers retry, so
// the database sees more attempts at once than without timeouts.
func TestTimeoutsConcentrateTheLoad(t *testing.T) {
	plain := book(1)
	withTimeouts := book(1)
	withTimeouts.Timeout = 25 * ms
	a, _ := Run(plain)
	b, _ := Run(withTimeouts)
	if a.DBAttempts != 64 || b.DBAttempts != 64 {
		t.Fatalf("database attempts %d and %d, want 64 each", a.DBAttempts, b.DBAttempts)
	}
	if a.PeakDB != 1 || b.PeakDB <= 2 {
		t.Errorf("peak database attempts at once: %d without timeouts (want 1), %d with (want several)", a.PeakDB, b.PeakDB)
	}
	t.Logf("peak at the database: %d without timeouts, %d with 25 ms timeouts", a.PeakDB, b.PeakDB)
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{{}, {Layers: 3, Attempts: 0, Requests: 1}, {Layers: 3, Attempts: 4, Requests: 1, FailProb: 2}} {
		if _, err := Run(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
