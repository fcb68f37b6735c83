package host

import (
	"syscall"
	"unsafe"

	"github.com/tapedeck/tapedeck/internal/child"
)

// sysProcAttr puts the plugin in a process group of its own, so that the
// replay can end everything it started (child.EndGroup finds what left the
// group too), and kills it if tapedeck dies mid-replay.
func sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	child.NewGroup(attr)
	return attr
}

// rawRead and rawWrite are read(2) and write(2) on a non-blocking file
// without telling the runtime: such a call never blocks, and one the
// runtime is told of wakes its monitor thread when that sleeps, which then
// polls every 20 µs for a while. In a replay, that polling was most of
// what scheduling cost.
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) { return rawIO(syscall.SYS_READ, fd, p) }

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) { return rawIO(syscall.SYS_WRITE, fd, p) }

// rawIO is system call trap (read or write) of p on fd, retried when a
// signal interrupts it.
func rawIO(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	for {
		n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e == 0 {
			return int(n), 0
		}
		if e != syscall.EINTR {
			return 0, e
		}
	}
}

// isNonblock reports whether fd is in non-blocking mode.
func isNonblock(fd uintptr) bool {
	flags, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return e == 0 && flags&syscall.O_NONBLOCK != 0
}
