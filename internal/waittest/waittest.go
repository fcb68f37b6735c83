// Package waittest owns how many tests run at once in the packages whose
// tests spend their time waiting on processes (plugins, browsers, the
// binary) rather than on the CPU: cli, playground and host run several for
// each CPU. It is for tests only.
package waittest

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
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
