package proxy

import (
	"io"
	"os"
	"syscall"
)

// pollable returns a file reading the same input as f that supports read
// deadlines, so the stdin pump can be stopped when the child exits while the
// host keeps stdin open. For a pipe, socket or terminal it duplicates the
// descriptor and makes it non-blocking; restore puts the blocking mode back
// (the mode belongs to the open file, which the host's terminal may share).
// Other files (regular files, /dev/null) reach EOF by themselves and are
// returned as they are.
func pollable(f *os.File) (*os.File, func()) {
	noop := func() {}
	if f == nil {
		null := devNull()
		return null, func() { null.Close() }
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return f, noop
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFCHR:
	default:
		return f, noop
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f, noop
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f, noop
	}
	dup := os.NewFile(uintptr(fd), f.Name())
	return dup, func() {
		syscall.SetNonblock(fd, false)
		dup.Close()
	}
}

func devNull() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		r, w, _ := os.Pipe()
		w.Close()
		return r
	}
	return f
}

// hangUp passes on the child's closing of its stdout: when the host's side
// is a file, its descriptor is pointed at /dev/null, which closes the pipe
// (the host reads EOF, as it would from the plugin itself) while keeping the
// descriptor number taken, so no file opened later can land on it.
func hangUp(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		if c, ok := w.(io.Closer); ok {
			c.Close()
		}
		return
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer null.Close()
	dup2(int(null.Fd()), int(f.Fd()))
}
