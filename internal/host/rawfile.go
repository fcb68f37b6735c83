package host

import (
	"io"
	"os"
	"syscall"
)

// rawFile reads a non-blocking file (a pipe) through the runtime's poller,
// each read itself a rawRead; deadlines hold as for os.File.Read.
type rawFile struct{ conn syscall.RawConn }

// rawOr is f read raw, or f itself when it cannot be: a file that is not
// non-blocking would block the thread in a raw read, unseen by the runtime.
func rawOr(f *os.File) io.Reader {
	conn, err := f.SyscallConn()
	if err != nil {
		return f
	}
	if !nonblocking(conn) {
		return f
	}
	return &rawFile{conn}
}

// nonblocking reports whether the file of conn is in non-blocking mode.
func nonblocking(conn syscall.RawConn) bool {
	yes := false
	return conn.Control(func(fd uintptr) { yes = isNonblock(fd) }) == nil && yes
}

func (r *rawFile) Read(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := r.conn.Read(func(fd uintptr) bool {
		n, errno = rawRead(fd, p)
		return errno != syscall.EAGAIN // else wait until it is readable
	})
	switch {
	case err != nil:
		return 0, err // a deadline, or the file closed
	case errno != 0:
		return 0, errno
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}
