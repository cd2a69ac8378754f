// Package layers simulates retries at every layer of a chain of services,
// the example of the SRE book's "Addressing Cascading Failures": a request
// enters the top layer; each layer calls the one below and retries a
// failed or timed-out call, up to Attempts attempts per call; the bottom
// layer calls the database. With 3 layers of 4 attempts (3 retries) and a
// database that is down, one request becomes 4³ = 64 database attempts.
//
// Each call's attempt has a timeout (0: none). When it expires the caller
// retries (or gives up); the call below, left without anyone waiting for
// it, goes on with its own retries unless Cancel is set, in which case it
// and everything below it stop (deadline or cancellation propagation). A
// database attempt takes Service and fails with probability FailProb
// (1: the database is down); work already at the database is done either
// way. There is no backoff and no capacity limit: the model counts work,
// it does not queue it.
package layers

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/engine"
	"github.com/throttlesim/throttlesim/sim/rng"
)

// Config is one experiment. Times are in nanoseconds.
type Config struct {
	Layers   int     // services above the database (the book: 3)
	Attempts int     // attempts per call at every layer (the book: 4, i.e. 3 retries)
	Requests int     // top-level requests, one every Gap
	Gap      int64   // time between two top-level requests
	Service  int64   // database time per attempt
	Timeout  int64   // per-attempt timeout at every layer; 0: none
	FailProb float64 // probability that a database attempt fails
	Cancel   bool    // a caller that gives up on an attempt cancels the call below
	Seed     uint64
}

// Result is what one experiment measured.
type Result struct {
	Requests   int64
	Succeeded  int64   // top-level requests that succeeded
	DBAttempts int64   // attempts that reached the database
	PerRequest []int64 // database attempts caused by each top-level request
	PeakDB     int     // most database attempts in progress at once
	Events     uint64
}

const (
	evRequest uint8 = iota + 1 // ID: request number
	evDBDone                   // ID: call, Aux: its attempt
	evTimeout                  // ID: call, Aux: its attempt
)

// call is one call of a layer to the layer below (or, for the bottom
// layer, to the database).
type call struct {
	parent    int32 // the calling call; -1 for the top layer
	parentAtt uint8 // the caller's attempt this call serves
	layer     uint8 // 1 = top
	made      uint8 // attempts made so far
	done      bool  // finished, given up or cancelled
	child     int32 // the call serving the current attempt (-1: the database or none)
	req       int32 // the top-level request it belongs to
}

// Run simulates one experiment.
func Run(c Config) (Result, error) {
	if c.Layers < 1 || c.Layers > 10 || c.Attempts < 1 || c.Attempts > 100 || c.Requests < 1 ||
		c.Gap < 0 || c.Service < 0 || c.Timeout < 0 || c.FailProb < 0 || c.FailProb > 1 {
		return Result{}, fmt.Errorf("layers: need 1..10 layers, 1..100 attempts, at least one request, non-negative times and a failure probability in [0, 1]")
	}
	s := &sim{c: c, q: engine.NewQueue(c.Requests), key: rng.New(c.Seed).Key(rng.Service, 0)}
	s.r.Requests = int64(c.Requests)
	s.r.PerRequest = make([]int64, c.Requests)
	for i := 0; i < c.Requests; i++ {
		s.q.Schedule(engine.Time(int64(i)*c.Gap), evRequest, uint32(i), 0)
	}
	s.r.Events = s.q.Run(s.handle)
	return s.r, nil
}

// handle routes event e to its handler (engine.Queue.Run's loop).
func (s *sim) handle(e engine.Event) bool {
	now := int64(e.At)
	switch e.Kind() {
	case evRequest:
		s.start(now, -1, 0, 1, int32(e.ID))
	case evDBDone:
		s.inDB--
		ok := s.c.FailProb < 1 && rng.Float64(s.key, s.draws) >= s.c.FailProb
		s.draws++
		s.answer(now, int32(e.ID), uint8(e.Aux), ok)
	case evTimeout:
		k := &s.calls[e.ID]
		if !k.done && k.made == uint8(e.Aux) {
			if s.c.Cancel && k.child >= 0 {
				s.cancel(k.child)
			}
			s.failed(now, int32(e.ID))
		}
	}
	return true
}

type sim struct {
	c     Config
	q     *engine.Queue
	key   uint64
	draws uint64
	calls []call
	inDB  int
	r     Result
}

// start opens a call at layer, on behalf of attempt parentAtt of parent,
// and makes its first attempt.
func (s *sim) start(now int64, parent int32, parentAtt uint8, layer uint8, req int32) int32 {
	s.calls = append(s.calls, call{parent: parent, parentAtt: parentAtt, layer: layer, child: -1, req: req})
	id := int32(len(s.calls) - 1)
	s.attempt(now, id)
	return id
}

// attempt makes call id's next attempt.
func (s *sim) attempt(now int64, id int32) {
	k := &s.calls[id]
	k.made++
	att := k.made
	if s.c.Timeout > 0 {
		s.q.Schedule(engine.Time(now+s.c.Timeout), evTimeout, uint32(id), uint32(att))
	}
	if int(k.layer) == s.c.Layers { // the bottom layer calls the database
		k.child = -1
		s.r.DBAttempts++
		s.r.PerRequest[k.req]++
		s.inDB++
		s.r.PeakDB = max(s.r.PeakDB, s.inDB)
		s.q.Schedule(engine.Time(now+s.c.Service), evDBDone, uint32(id), uint32(att))
		return
	}
	layer, req := k.layer+1, k.req
	child := s.start(now, id, att, layer, req) // may grow s.calls: k is stale from here
	s.calls[id].child = child
}

// answer delivers the result of attempt att to call id, if it still waits
// for that attempt.
func (s *sim) answer(now int64, id int32, att uint8, ok bool) {
	k := &s.calls[id]
	if k.done || k.made != att {
		return // the caller gave up on this attempt (timeout) or was cancelled
	}
	if ok {
		s.finish(now, id, true)
		return
	}
	s.failed(now, id)
}

// failed is call id's current attempt failing: retry, or give up.
func (s *sim) failed(now int64, id int32) {
	if int(s.calls[id].made) < s.c.Attempts {
		s.attempt(now, id)
		return
	}
	s.finish(now, id, false)
}

// finish ends call id and answers its caller.
func (s *sim) finish(now int64, id int32, ok bool) {
	k := &s.calls[id]
	k.done = true
	if k.parent < 0 {
		if ok {
			s.r.Succeeded++
		}
		return
	}
	s.answer(now, k.parent, k.parentAtt, ok)
}

// cancel stops call id and every call below it.
func (s *sim) cancel(id int32) {
	for id >= 0 {
		k := &s.calls[id]
		if k.done {
			return
		}
		k.done = true
		id = k.child
	}
}
