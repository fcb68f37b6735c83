//go:build !race

package present

const raceEnabled = false
