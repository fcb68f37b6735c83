// Package race says whether the build has the race detector (Enabled), for
// the tests that measure memory or time, or repeat a run many times: the
// detector multiplies memory and CPU several times, so such a test skips
// or runs fewer rounds under it, and says why. One constant for every
// package's tests, as the standard library's internal/race has.
package race
