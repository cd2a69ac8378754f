package policy

// When a retry is charged: at the decision (AllowRetry, the default) or
// when it is sent after its backoff (CanRetry at the decision, ChargeRetry
// at the send; BudgetConfig.ChargeAtSend). With the second, a retry
// waiting out its backoff is not yet in the budget's counts, so a burst of
// failures that all decide within one backoff all see the budget as it was
// before any of them, and all go: Envoy users met this with its retry
// budget (retries in backoff are not "active"), which then overshoots.

// CanRetry is AllowRetry's decision without its charge: whether instance
// i may retry at now an attempt that failed for cause, and what the retry
// will cost (the AWS quota cost of cause, 1 for the other kinds). Nothing
// changes; the caller charges the retry with ChargeRetry when it sends it.
// gRPC and the retry breaker charge nothing when they grant a retry, so
// for them CanRetry is AllowRetry.
func (b *BudgetSet) CanRetry(now int64, i int, cause RetryCause) (charge int32, ok bool) {
	switch b.c.Kind {
	case BudgetSRE:
		b.win.Advance(now)
		req, ret := b.win.Counts(i)
		if req == 0 || float64(ret)/float64(req) >= b.c.Ratio {
			return 0, false
		}
		return 1, true
	case BudgetFinagle:
		if b.finagleCount(i, now) < b.withdraw {
			return 0, false
		}
		return 1, true
	case BudgetAWS:
		cost := b.awsCost(cause)
		if cost > b.tok[i] {
			return 0, false
		}
		return cost, true
	case BudgetTokenBucket:
		if b.tok[i] <= b.thrMilli {
			return 0, false
		}
		return 1, true
	}
	return b.AllowRetry(now, i, cause)
}

// ChargeRetry charges instance i, at now, for a retry CanRetry granted
// with charge: what AllowRetry would have charged at the grant. It does
// not look at the budget again: the retry was granted, and a balance may
// go below zero (AWS, the token bucket, Finagle) or a ratio above its
// bound (SRE) when several granted retries are charged together.
func (b *BudgetSet) ChargeRetry(now int64, i int, charge int32) {
	switch b.c.Kind {
	case BudgetSRE:
		b.win.Advance(now)
		if !b.c.FirstAttemptsOnly {
			b.win.RecordRequest(now, i)
		}
		b.win.RecordAccept(now, i)
	case BudgetFinagle:
		if b.win != nil {
			b.win.RecordAccept(now, i)
		} else {
			b.finagleAdd(i, now, -b.withdraw)
		}
	case BudgetAWS:
		b.tok[i] -= charge
	case BudgetTokenBucket:
		b.tok[i] -= b.costMilli
	}
}
