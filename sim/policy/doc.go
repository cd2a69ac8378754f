// Package policy holds the client policies as pure state machines and pure
// functions of explicit time and explicit random draws: the SRE adaptive
// throttle (formula and windowed counters) and exponential backoff with
// jitter. Nothing here reads a clock or a global random source.
//
// Besides the client policies it holds the balancer's: Envoy's outlier
// detection (Outlier) and active health checks (Health), which take
// replicas out of a service's rotation; and the server's: CoDel and the
// token bucket (server.go), the concurrency limit's algorithms
// (LimitAlgorithm: AIMD, Vegas, Gradient2, Envoy; conclimit.go), DAGOR's
// priority shedding (dagor.go) and the autoscaler. A server combines them
// through sim/admission.
package policy
