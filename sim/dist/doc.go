// Package dist holds the service-time distributions that are more than a
// formula: weighted mixtures of simple distributions, and empirical
// distributions given as samples or as a quantile table. Sampling is a pure
// function of the draws the caller hands in (a uniform u in [0, 1), a
// standard exponential e, a standard normal z), as everywhere in the
// simulator, so the same draws give the same value on every platform.
package dist
