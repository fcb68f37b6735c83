package child

import (
	"os"
	"syscall"
)

// pipe makes the pipe of the child's stream name: its parent end (the
// read end when parentReads) non-blocking and pollable, its child end
// blocking. os.Pipe would make both ends non-blocking and register both
// with the poller, and starting the child would switch its end back to
// blocking: a start costs a dozen system calls less this way.
func pipe(parentReads bool, name string) (parent, child *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	pfd, cfd := p[1], p[0]
	if parentReads {
		pfd, cfd = p[0], p[1]
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(cfd), syscall.F_SETFL, 0); e != 0 {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", e)
	}
	// os.NewFile puts a non-blocking descriptor on the poller and leaves a
	// blocking one a plain file.
	return os.NewFile(uintptr(pfd), "|"+name), os.NewFile(uintptr(cfd), "|"+name), nil
}
