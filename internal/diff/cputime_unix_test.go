//go:build unix

package diff

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time this process has used (user and system): a
// measure of work that a loaded machine's waiting does not inflate, as it
// does wall time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
