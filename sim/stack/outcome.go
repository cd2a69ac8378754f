package stack

import "fmt"

// Outcome is an attempt's outcome as a client sees it, in the order and
// with the names the scenario's outcome lists use (retry_on,
// accept_outcomes, failure_outcomes, throttle_outcomes).
type Outcome uint8

// Attempt outcomes.
const (
	OK          Outcome = iota // "ok": an answer the client takes as success
	Rejected                   // "rejected": the server refused it as overloaded (HTTP 429, 503)
	Unavailable                // "unavailable": the server could not be reached (refused, reset)
	Timeout                    // "timeout": the client gave up waiting
	Error                      // "error": the server answered with an error
	// NumOutcomes is the number of outcomes.
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"ok", "rejected", "unavailable", "timeout", "error"}

// String is the outcome's scenario name.
func (o Outcome) String() string {
	if o < NumOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// OutcomeSet is a set of outcomes.
type OutcomeSet uint8

// Has reports whether o is in the set.
func (s OutcomeSet) Has(o Outcome) bool { return s&(1<<o) != 0 }

// Outcomes is the set of the given outcomes.
func Outcomes(os ...Outcome) OutcomeSet {
	var s OutcomeSet
	for _, o := range os {
		s |= 1 << o
	}
	return s
}

// ParseOutcomes is the set of the outcomes named (a scenario's outcome
// list); an unknown name is an error.
func ParseOutcomes(names []string) (OutcomeSet, error) {
	var s OutcomeSet
next:
	for _, n := range names {
		for i, o := range outcomeNames {
			if o == n {
				s |= 1 << i
				continue next
			}
		}
		return 0, fmt.Errorf("stack: unknown outcome %q", n)
	}
	return s, nil
}
