package replay

import "syscall"

// sysProcAttr kills the plugin if tapedeck dies mid-replay.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
