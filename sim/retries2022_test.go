package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// Brooker 2022 ("Fixing retries with token buckets and circuit breakers";
// docs/experiments/retries-2022.md): scenarios/retries-2022.yaml, one seed
// per point, checked against what can be derived exactly.
//
// Every run drains (arrivals stop at 10 s, the run ends at 11 s), so every
// request finishes: in_flight_at_end must be 0 and success is
// succeeded/offered.
func TestRetries2022ClosedForms(t *testing.T) {
	load := func(x float64, sets ...string) *Result {
		t.Helper()
		sc, err := scenario.Load("../scenarios/retries-2022.yaml", append([]string{fmt.Sprintf("backend.error_rate=%g", x), "sweep=null"}, sets...))
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, sc)
		if s := res.Summary; s.InFlight != 0 {
			t.Fatalf("x=%g %v: %d requests in flight at the end; the drain is too short", x, sets, s.InFlight)
		}
		return res
	}
	for _, x := range []float64{0.05, 0.1, 0.2, 0.5} {
		// No retries: one attempt per request, success a Binomial(n, 1−x)
		// proportion.
		res := load(x, "clients.retry.max_attempts=1")
		s := res.Summary
		n := float64(s.Offered)
		if s.Attempts != s.Offered {
			t.Errorf("x=%g no retries: %d attempts for %d requests", x, s.Attempts, s.Offered)
		}
		// Tolerance: 5 standard errors of a proportion, sqrt(p(1−p)/n).
		got, want, tol := *s.SuccessRatio, 1-x, 5*math.Sqrt(x*(1-x)/n)
		ok := math.Abs(got-want) <= tol
		record(fmt.Sprintf("Brooker 2022 model, no retries, x=%.2f: success", x), fmt.Sprintf("%.4f (1−x)", want), fmt.Sprintf("%.4f", got), fmt.Sprintf("5 SE (%.4f)", tol), ok)
		if !ok {
			t.Errorf("x=%g no retries: success %.4f, want %.4f ± %.4f", x, got, want, tol)
		}

		// 3 retries: a request makes k attempts with probability
		// x^(k−1)(1−x) for k < 4 and x³ for k = 4, so the mean is
		// 1 + x + x² + x³ (the amplification) and it succeeds with
		// probability 1 − x⁴. Tolerance: 5 standard errors of the mean of
		// n independent requests, from the exact variance.
		res = load(x)
		s = res.Summary
		n = float64(s.Offered)
		pk := []float64{1 - x, x * (1 - x), x * x * (1 - x), x * x * x}
		var mean, sq float64
		for k, p := range pk {
			mean += float64(k+1) * p
			sq += float64((k+1)*(k+1)) * p
		}
		if closed := 1 + x + x*x + x*x*x; math.Abs(mean-closed) > 1e-12 {
			t.Fatalf("x=%g: distribution mean %v, closed form %v", x, mean, closed)
		}
		tol = 5 * math.Sqrt((sq-mean*mean)/n)
		got = *s.Amplification
		ok = math.Abs(got-mean) <= tol
		record(fmt.Sprintf("Brooker 2022 model, 3 retries, x=%.2f: amplification", x), fmt.Sprintf("%.4f (1+x+x²+x³)", mean), fmt.Sprintf("%.4f", got), fmt.Sprintf("5 SE (%.4f)", tol), ok)
		if !ok {
			t.Errorf("x=%g 3 retries: amplification %.4f, want 1+x+x²+x³ = %.4f ± %.4f", x, got, mean, tol)
		}
		p4 := x * x * x * x
		got, want, tol = *s.SuccessRatio, 1-p4, 5*math.Sqrt(p4*(1-p4)/n)+1e-12
		ok = math.Abs(got-want) <= tol
		record(fmt.Sprintf("Brooker 2022 model, 3 retries, x=%.2f: success", x), fmt.Sprintf("%.5f (1−x⁴)", want), fmt.Sprintf("%.5f", got), fmt.Sprintf("5 SE (%.5f)", tol), ok)
		if !ok {
			t.Errorf("x=%g 3 retries: success %.5f, want 1−x⁴ = %.5f", x, got, want)
		}
		threeRetries := *s.Amplification

		// Token bucket: a client's bucket starts at 5, gains at most 0.1
		// per first try and must stay above 0 after a retry (it is > 1
		// before, the cost is 1), so its retries are fewer than
		// 5 + 0.1·(its first tries): over the fleet, retries < 5·clients +
		// 0.1·requests. A hard bound, whatever the seed.
		res = load(x, "clients.retry.budget={kind: token-bucket}")
		s = res.Summary
		bound := 5*100 + 0.1*float64(s.Offered)
		record(fmt.Sprintf("Brooker 2022 token bucket, 100 clients, x=%.2f: retries per request", x), fmt.Sprintf("< %.4f (0.1 + 5·clients/requests)", bound/float64(s.Offered)), fmt.Sprintf("%.4f", float64(s.Retries)/float64(s.Offered)), "hard bound", float64(s.Retries) < bound)
		if float64(s.Retries) >= bound {
			t.Errorf("x=%g token bucket: %d retries, the bucket allows fewer than %.0f", x, s.Retries, bound)
		}
		if x >= 0.2 {
			// When 1 + x + x² + x³ − 1 > 0.1 the bucket is the limit: every
			// client spends all but its final level, which is at most 1 plus
			// 0.1 per first try since its last failure (a geometric run of
			// mean (1−x)/x ≤ 4 first tries); so retries > 3·clients +
			// 0.1·requests with a margin of more than 1 token per client
			// (derived).
			low := 3*100 + 0.1*float64(s.Offered)
			record(fmt.Sprintf("Brooker 2022 token bucket, 100 clients, x=%.2f: retries per request (bucket spent)", x), fmt.Sprintf("> %.4f (0.1 + 3·clients/requests)", low/float64(s.Offered)), fmt.Sprintf("%.4f", float64(s.Retries)/float64(s.Offered)), "derived margin", float64(s.Retries) > low)
			if float64(s.Retries) <= low {
				t.Errorf("x=%g token bucket: %d retries, want more than %.0f (the bucket spent)", x, s.Retries, low)
			}
		}

		// Wald's identity: each attempt succeeds with probability 1 − x
		// whatever the policy decided from the past, and a request stops
		// at its first success, so E[successes] = (1 − x)·E[attempts]:
		// success = (1 − x)·amplification for every policy. Tolerance: 5
		// SD of the martingale Σ(success_i − (1 − x)) over the attempts,
		// sqrt(attempts·x(1−x)), divided by the requests.
		wald(t, "token bucket", x, res.Summary)

		// Retry breaker: it only removes retries. The error draw of an
		// attempt is keyed by (request ordinal, attempt), so under the same
		// seed each request's attempts are a prefix of its attempts with 3
		// retries: never more attempts in all.
		res = load(x, "clients.retry.budget={kind: retry-breaker}")
		wald(t, "retry breaker", x, res.Summary)
		if got := *res.Summary.Amplification; got > threeRetries {
			t.Errorf("x=%g retry breaker: amplification %.4f above 3 retries' %.4f", x, got, threeRetries)
		}
	}
}

func wald(t *testing.T, policy string, x float64, s metrics.Summary) {
	t.Helper()
	n, a := float64(s.Offered), float64(s.Attempts)
	got, want := *s.SuccessRatio, (1-x)*(*s.Amplification)
	tol := 5 * math.Sqrt(a*x*(1-x)) / n
	ok := math.Abs(got-want) <= tol
	record(fmt.Sprintf("Brooker 2022 %s, 100 clients, x=%.2f: success", policy, x), fmt.Sprintf("%.4f ((1−x)·amplification, Wald)", want), fmt.Sprintf("%.4f", got), fmt.Sprintf("5 SD (%.4f)", tol), ok)
	if !ok {
		t.Errorf("x=%g %s: success %.4f, want (1−x)·amplification = %.4f ± %.4f", x, policy, got, want, tol)
	}
}
