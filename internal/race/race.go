//go:build race

package race

// Enabled: the build has the race detector.
const Enabled = true
