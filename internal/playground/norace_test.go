//go:build !race

package playground

// raceEnabled: the tests run under the race detector (see race_test.go).
const raceEnabled = false
