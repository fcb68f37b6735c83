//go:build race

package playground

// raceEnabled: the tests run under the race detector, which slows
// everything by several times: a latency is measured by the plain run.
const raceEnabled = true
