//go:build !linux

package replay

import (
	"syscall"
	"time"
)

// sysProcAttr puts the plugin in a process group of its own, so that the
// replay can end everything it started.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// endPlugin kills what is left of the plugin's process group. A child that
// left the group (setsid) is out of reach here: it is not reported.
func endPlugin(pid int, _ time.Time) []int {
	syscall.Kill(-pid, syscall.SIGKILL)
	return nil
}
