//go:build !unix

package diff

import "time"

// cpuNow falls back to the wall clock where the process's CPU time is
// not at hand.
func cpuNow() time.Duration { return time.Duration(time.Now().UnixNano()) }
