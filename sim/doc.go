// Package sim ties throttlesim's parts into one run: Run(ctx, scenario,
// Options) builds the clients, their policies and the backend from a
// validated scenario, drives the event loop to the horizon and returns the
// per-interval series and the summary.
//
// The event loop is one goroutine over one typed event queue
// (sim/engine). A run depends only on the scenario and its seed: the same
// inputs give the same events in the same order, the same trajectory
// fingerprint and byte-identical outputs on one architecture.
package sim
