package replay

import (
	"os"
	"syscall"
	"unsafe"
)

// sysProcAttr kills the plugin if tapedeck dies mid-replay.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// unread is how many bytes sit in the pipe behind w, not yet read by the
// plugin (FIONREAD works on either end of a Linux pipe); 0 when unknown.
func unread(w *os.File) int {
	var n int32
	rc, err := w.SyscallConn()
	if err != nil {
		return 0
	}
	rc.Control(func(fd uintptr) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
			n = 0
		}
	})
	return int(n)
}
