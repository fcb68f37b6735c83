//go:build !linux

package host

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

// rawRead and rawWrite are read(2) and write(2) on a non-blocking file.
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return 0
}

// isNonblock is false: a file is read through os.File here.
func isNonblock(uintptr) bool { return false }
