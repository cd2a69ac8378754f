package policy

import "testing"

// CanRetry then ChargeRetry at the same instant is AllowRetry, for every
// kind, on one script of requests, results and retries: the split changes
// when a retry is charged, nothing else.
func TestCanRetryThenChargeIsAllowRetry(t *testing.T) {
	fin := FinagleDefaults()
	fin.MinRetriesPerSec = 1
	for _, c := range []BudgetConfig{SREDefaults(), GRPCDefaults(), fin, AWSStandardDefaults(), TokenBucketDefaults(), RetryBreakerDefaults()} {
		a, err := NewBudgetSet(1, c)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewBudgetSet(1, c)
		x := uint64(7)
		next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
		grants := 0
		for k := range 5000 {
			now := int64(k) * 7e6
			switch next() % 4 {
			case 0:
				a.OnRequest(now, 0)
				b.OnRequest(now, 0)
			case 1:
				ok := next()%3 == 0
				a.OnResult(now, 0, ok, 5)
				b.OnResult(now, 0, ok, 5)
			default:
				cause := RetryCause(next() % 3)
				ca, oka := a.AllowRetry(now, 0, cause)
				cb, okb := b.CanRetry(now, 0, cause)
				if okb {
					b.ChargeRetry(now, 0, cb)
				}
				if ca != cb || oka != okb {
					t.Fatalf("kind %d, step %d: AllowRetry %d, %v; CanRetry %d, %v", c.Kind, k, ca, oka, cb, okb)
				}
				if oka {
					grants++
				}
			}
			if la, lb := a.Level(now, 0), b.Level(now, 0); la != lb {
				t.Fatalf("kind %d, step %d: level %v against %v", c.Kind, k, la, lb)
			}
		}
		if grants == 0 {
			t.Errorf("kind %d: the script never granted a retry", c.Kind)
		}
	}
}

func TestChargeAtSendRefusedWhereNothingIsCharged(t *testing.T) {
	for _, c := range []BudgetConfig{GRPCDefaults(), RetryBreakerDefaults()} {
		c.ChargeAtSend = true
		if err := c.Validate(); err == nil {
			t.Errorf("kind %d with ChargeAtSend: got no error, want one", c.Kind)
		}
	}
	for _, c := range []BudgetConfig{SREDefaults(), FinagleDefaults(), AWSStandardDefaults(), TokenBucketDefaults()} {
		c.ChargeAtSend = true
		if err := c.Validate(); err != nil {
			t.Errorf("kind %d with ChargeAtSend: got %v, want no error", c.Kind, err)
		}
	}
}
