package relay

import "syscall"

// sysProcAttr makes the kernel kill the child when the thread that started it
// ends: if the shim is SIGKILLed, the plugin does not live on as an orphan.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// dup2 points newfd at oldfd's file (closing what newfd was).
func dup2(oldfd, newfd int) error { return syscall.Dup3(oldfd, newfd, 0) }
