//go:build !linux

package replay

import "syscall"

// sysProcAttr puts the plugin in a process group of its own, so that the
// replay can end everything it started.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills what is left of the plugin's process group.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }
