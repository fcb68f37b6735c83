//go:build !linux

package relay

import "syscall"

// sysProcAttr: outside Linux there is no parent-death signal. On macOS a
// plugin whose shim is SIGKILLed sees its stdin close (the shim held the only
// write end) and is expected to exit on EOF, as the protocol asks.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func dup2(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }
