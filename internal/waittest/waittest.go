// Package waittest owns how many tests run at once in the packages whose
// tests spend their time waiting on processes (plugins, browsers, the
// binary) rather than on the CPU: cli, playground and host run several for
// each CPU. It is for tests only.
package waittest

import (
	"flag"
	"runtime"
	"strconv"
)

// PerCPU has the tests run n at a time for each CPU, unless the command
// line set -test.parallel itself. A TestMain calls it after flag.Parse.
func PerCPU(n int) error {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return nil
	}
	return flag.Set("test.parallel", strconv.Itoa(n*runtime.GOMAXPROCS(0)))
}
