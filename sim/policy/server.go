package policy

import (
	"errors"
	"fmt"
	"math"
)

// ErrServerQueueSettings is wrapped by NewCoDel's and NewTokenBucket's
// errors.
var ErrServerQueueSettings = errors.New("policy: bad server queue settings")

// CoDel is RFC 8289's controlled-delay queue management (Nichols and
// Jacobson, "Controlling Queue Delay", ACM Queue 2012), applied to a
// request queue: each request taken from the head is dropped or served.
// Once the head's sojourn has stayed at or above Target for a whole
// Interval, it drops one request, then the next ones at Interval/√count
// apart (100, 70.7, 57.7, 50 ms … with the defaults), until a request's
// sojourn falls below Target or at most one request is left queued.
// Re-entering within 16 intervals resumes from the previous drop count
// (count − lastCount when above 1), as RFC 8289 §5 does.
type CoDel struct {
	Target, Interval int64 // ns: 5 ms and 100 ms in the RFC

	firstAbove, dropNext int64
	count, lastCount     uint32
	dropping             bool
}

// NewCoDel is a CoDel with the given target and interval (ns); zero takes
// the RFC's 5 ms and 100 ms.
func NewCoDel(target, interval int64) (*CoDel, error) {
	if target == 0 {
		target = 5e6
	}
	if interval == 0 {
		interval = 100e6
	}
	if target < 0 || interval < 0 {
		return nil, fmt.Errorf("%w: codel needs target and interval > 0, got %d and %d ns", ErrServerQueueSettings, target, interval)
	}
	return &CoDel{Target: target, Interval: interval}, nil
}

// Drop decides for the request just taken from the head of the queue at
// now, which waited sojourn, with left requests still queued behind it.
func (c *CoDel) Drop(now, sojourn int64, left int) bool {
	ok := c.okToDrop(now, sojourn, left)
	if c.dropping {
		if !ok {
			c.dropping = false
			return false
		}
		if now >= c.dropNext {
			c.count++
			c.dropNext += c.gap()
			return true
		}
		return false
	}
	if !ok {
		return false
	}
	c.dropping = true
	delta := c.count - c.lastCount
	if delta > 1 && c.count > c.lastCount && now-c.dropNext < 16*c.Interval {
		c.count = delta
	} else {
		c.count = 1
	}
	c.dropNext = now + c.gap()
	c.lastCount = c.count
	return true
}

func (c *CoDel) okToDrop(now, sojourn int64, left int) bool {
	if sojourn < c.Target || left <= 1 {
		c.firstAbove = 0
		return false
	}
	if c.firstAbove == 0 {
		c.firstAbove = now + c.Interval
		return false
	}
	return now >= c.firstAbove
}

// gap is the control law: Interval / √count.
func (c *CoDel) gap() int64 { return int64(float64(c.Interval) / math.Sqrt(float64(c.count))) }

// TokenBucket is a server-side rate limit (golang.org/x/time/rate's
// semantics): a bucket of Burst tokens, full at first, refilled
// continuously at Rate tokens per second; a request takes one token or is
// refused. Over any interval of length t it admits at most Burst + Rate·t.
type TokenBucket struct {
	Rate   float64 // tokens per second
	Burst  float64
	tokens float64
	last   int64
}

// NewTokenBucket is a full bucket of burst tokens (0: one) refilled at
// rate per second.
func NewTokenBucket(rate float64, burst int) (*TokenBucket, error) {
	if burst == 0 {
		burst = 1
	}
	if !(rate > 0) || burst < 0 {
		return nil, fmt.Errorf("%w: a token bucket needs rate > 0 and burst >= 1, got %g/s and %d", ErrServerQueueSettings, rate, burst)
	}
	return &TokenBucket{Rate: rate, Burst: float64(burst), tokens: float64(burst)}, nil
}

// Allow takes a token at now if there is one.
func (b *TokenBucket) Allow(now int64) bool {
	b.tokens = math.Min(b.Burst, b.tokens+float64(now-b.last)/1e9*b.Rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}
