//go:build race

package tape

// raceEnabled: the race detector allocates beside what is measured.
const raceEnabled = true
