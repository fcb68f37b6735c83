//go:build race

package present

// raceEnabled: the tests run under the race detector, which multiplies
// memory; the tests that measure it skip.
const raceEnabled = true
