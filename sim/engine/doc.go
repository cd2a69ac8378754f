// Package engine holds throttlesim's discrete-event core: a virtual clock
// (Time, int64 nanoseconds) and a typed event queue with its loop: Schedule
// adds an event, Step takes the next one before a horizon, and RunUntil and
// Run hand the events in order to a handler (the small models, sim/occ and
// internal/layers, use these; sim's hot loop calls Step and switches on
// Kind itself, to spare an indirect call per event).
//
// The queue is a 4-ary min-heap over value structs ordered by (At, Seq),
// with a two-level calendar of later events in front of it once it holds
// more than a few hundred events (see Queue). Seq is the insertion order,
// so events scheduled for the same instant run in the order they were
// scheduled: the order is total and deterministic, and the calendar does
// not change it. There are no goroutines, no interfaces and no allocations
// per event once the queue has grown to its working size; the caller
// dispatches on Kind.
package engine
