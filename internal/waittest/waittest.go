// Package waittest owns how many tests run at once in the packages whose
// tests spend their time waiting on processes (plugins, browsers, the
// binary) rather than on the CPU: cli, playground and host run several for
// each CPU; and how many replays a proof of stability runs at once
// (AtOnce). It is for tests only.
package waittest

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/tapedeck/tapedeck/internal/race"
)

// PerCPU parses the test flags and has the tests run n at a time for
// each CPU, unless the command line set -test.parallel itself. A TestMain
// calls it first, and exits 1 when it returns false (it said why on
// stderr).
func PerCPU(n int) bool {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return true
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n*runtime.GOMAXPROCS(0))); err != nil {
		fmt.Fprintf(os.Stderr, "waittest: set -test.parallel: %v\n", err)
		return false
	}
	return true
}

// AtOnce is how many replays a proof of stability runs at once: n, or
// under the race detector a fifth of it, at least 2. The race detector
// looks for races in each run's goroutines, which a few runs at once show
// as well as twenty; how often a run is stable is the plain run's proof
// (20 pinned replays of node took 15 s of CPU under the race detector, 20
// kept goldens 18 s).
func AtOnce(n int) int {
	if race.Enabled {
		return max(2, n/5)
	}
	return n
}
