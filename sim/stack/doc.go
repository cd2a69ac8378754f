// Package stack is a client's request-policy stack — the SRE adaptive
// throttle, the circuit breaker, the client rate limiter (the AWS SDKs'
// adaptive mode), retries with backoff and Retry-After, the retry budget
// and hedging — as one value whose methods are the decisions of a
// request's life, pure functions of the policies' state, the time and a
// named random draw. The simulator (package sim, in its event loop) and
// live mode's HTTP client (live/client) call the same methods, so the two
// cannot drift apart; a differential test (sim's
// TestDifferentialSimAndLiveClient) drives both through one script.
//
// The policies themselves are package policy's state machines; Config
// says which the stack has and routes each attempt's outcome to them
// (OutcomeSet). A scenario's policy section becomes a Config through
// scenario.Policies.StackConfig (the one translation); a program without
// a scenario writes one by hand. This package imports neither the
// scenario nor the simulator.
//
// A request's life, and the method that decides each step:
//
//	new request          OnRequest (the budget counts it)
//	each attempt         Admit: throttle, then breaker; Drop says which dropped it
//	                     Pace: the rate limiter's delay before the send
//	its outcome          Result: throttle accept, limiter, budget, breaker
//	                     (BreakerResult alone for an attempt given up or never sent)
//	after a failure      NextRetry: the delay, or give up (and why)
//	first attempt slow   Hedge().Delay: when to send a hedge
//
// The caller keeps each request's Request (attempt number, backoff
// state, budget charge, breaker generation, hedging) and owns the clock:
// timeouts and deadlines are events (the simulator) or contexts (live).
package stack
