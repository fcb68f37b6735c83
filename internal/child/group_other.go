//go:build !linux

package child

import (
	"syscall"
	"time"
)

// NewGroup sets attr so that the child starts in a process group of its
// own, which EndGroup ends.
func NewGroup(attr *syscall.SysProcAttr) { attr.Setpgid = true }

// EndGroup kills what is left of the process group of pid. A process that
// left the group (setsid) is out of reach here: it is not reported.
func EndGroup(pid int, _ time.Time) []int {
	syscall.Kill(-pid, syscall.SIGKILL)
	return nil
}
