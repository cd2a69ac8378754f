package sim

// limiterEntity names a replica's concurrency-limit draws in the Route
// stream, apart from every client's and call's entity (the admission
// value draws them: sim/admission).
const limiterEntity = 1 << 40
