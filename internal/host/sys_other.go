//go:build !linux

package host

import (
	"syscall"

	"github.com/tapedeck/tapedeck/internal/child"
)

// sysProcAttr puts the plugin in a process group of its own, so that the
// replay can end everything it started.
func sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	child.NewGroup(attr)
	return attr
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
