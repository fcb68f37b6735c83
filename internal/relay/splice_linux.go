package relay

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// The zero-copy path (Linux). While a stream comes in chunks of at least
// spliceMin bytes, the pump moves each chunk out of its source into a
// pipe of its own (held) with splice(2), tees held into a second pipe and
// reads that copy into the read buffer for the sink, and once the sink has
// stored the chunk splices held on to the destination. The relay thus
// copies a chunk once (the copy the sink needs), not twice, and a chunk is
// still recorded before a byte of it is passed on. What is forwarded is
// what was taken from the source, and what the sink gets is a copy of
// those same bytes: no other reader of the source can come between.
//
// It is used only between pipes and sockets (regular files and terminals
// are read and written as before), and only while chunks are large:
// splice and tee cost two system calls more per chunk, which a short line
// of an interactive plugin would feel.

// spliceMin is the chunk size from which the pump moves a stream with
// splice: a read that brings this much switches the next chunks to the
// zero-copy path, a chunk that brings less switches back.
const spliceMin = 16 << 10

// zeroCopy moves one stream with splice(2) and tee(2).
type zeroCopy struct {
	src, dst syscall.RawConn
	dstW     io.Writer
	// held holds the chunk taken from the source until it is forwarded;
	// copied is its tee, read into the buffer. Both are empty between
	// chunks, so that no operation on them ever blocks.
	held, copied [2]int
	n            int  // bytes in held
	inBuf        bool // held's chunk could not be teed whole: it was read into the buffer, forward writes that

	// The splice calls run inside the RawConns' Read and Write, which wait
	// on the poller; made once, so that a chunk costs no allocation.
	in, out func(fd uintptr) bool
	want    int   // in: at most this many bytes
	moved   int64 // what the last call moved
	callErr error // and its error
}

// spliceable reports whether f is a pipe or a socket.
func spliceable(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// newZeroCopy returns the zero-copy path from src to dst, or nil when one
// of them is not a pipe or socket or the pipes cannot be had.
func newZeroCopy(src io.Reader, dst io.Writer) *zeroCopy {
	sf, ok := src.(*os.File)
	if !ok || !spliceable(sf) {
		return nil
	}
	df, ok := dst.(*os.File)
	if !ok || !spliceable(df) {
		return nil
	}
	sr, err := sf.SyscallConn()
	if err != nil {
		return nil
	}
	dr, err := df.SyscallConn()
	if err != nil {
		return nil
	}
	z := &zeroCopy{src: sr, dst: dr, dstW: dst, held: [2]int{-1, -1}, copied: [2]int{-1, -1}}
	z.in, z.out = z.spliceIn, z.spliceOut
	if syscall.Pipe2(z.held[:], syscall.O_CLOEXEC) != nil || syscall.Pipe2(z.copied[:], syscall.O_CLOEXEC) != nil {
		z.close()
		return nil
	}
	// A chunk is a read's worth: held and its copy take one whole.
	setPipeSize(z.held[0], bufSize)
	setPipeSize(z.copied[0], bufSize)
	return z
}

// fSetPipeSz is F_SETPIPE_SZ (Linux 2.6.35).
const fSetPipeSz = 1031

// setPipeSize asks for the pipe fd to hold size bytes. It is a wish: a
// pipe stays as it was when the system's limits (pipe-max-size, a user's
// share of pipe memory) refuse it, and the relay works the same with
// smaller chunks.
func setPipeSize(fd, size int) {
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fSetPipeSz, uintptr(size))
}

// growPipe is setPipeSize for one of the relay's own pipes to the child.
func growPipe(f *os.File, size int) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { setPipeSize(int(fd), size) })
	}
}

func (z *zeroCopy) close() {
	if z == nil {
		return
	}
	for _, fd := range append(z.held[:], z.copied[:]...) {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// errNoSplice: the source cannot be spliced after all (nothing was taken).
var errNoSplice = errors.New("source cannot be spliced")

// take moves the next chunk (at most len(buf) bytes) from the source into
// held and a copy of it into buf. It returns io.EOF at the source's end,
// errNoSplice when the source refuses splice before anything was taken.
func (z *zeroCopy) take(buf []byte) (int, error) {
	z.want = len(buf)
	err := z.src.Read(z.in)
	n64, serr := z.moved, z.callErr
	switch {
	case err != nil:
		return 0, err
	case serr == syscall.EINVAL:
		return 0, errNoSplice
	case serr != nil:
		return 0, &os.PathError{Op: "splice", Path: "source", Err: serr}
	case n64 == 0:
		return 0, io.EOF
	}
	n := int(n64)
	z.n = n
	m, terr := teeAll(z.held[0], z.copied[1], n)
	if m == n && terr == nil {
		err = readFull(z.copied[0], buf[:n])
	} else {
		// The copy pipe took only part of the chunk (or none): drop the
		// part, read the chunk itself into buf and have forward write it.
		if m > 0 {
			err = readFull(z.copied[0], buf[:m])
		}
		if err == nil {
			z.n, z.inBuf = 0, true
			err = readFull(z.held[0], buf[:n])
		}
	}
	if err != nil {
		// Our own pipes failed: the chunk is lost to both sides alike.
		return 0, err
	}
	return n, nil
}

// forward passes the chunk taken last on to the destination: buf is that
// chunk (as take left it). On failure held is emptied: the chunk is
// dropped, as a failed write drops it.
func (z *zeroCopy) forward(buf []byte) error {
	if z.inBuf {
		z.inBuf = false
		_, err := z.dstW.Write(buf)
		return err
	}
	for z.n > 0 {
		err := z.dst.Write(z.out)
		k, serr := z.moved, z.callErr
		if err == nil && serr != nil {
			err = &os.PathError{Op: "splice", Path: "destination", Err: serr}
		}
		if err == nil && k == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			readFull(z.held[0], buf[:z.n])
			z.n = 0
			return err
		}
		z.n -= int(k)
	}
	return nil
}

// spliceIn moves up to want bytes from the source (fd) into held; false:
// the source is empty, wait.
func (z *zeroCopy) spliceIn(fd uintptr) bool {
	for {
		z.moved, z.callErr = syscall.Splice(int(fd), nil, z.held[1], nil, z.want, 0)
		if z.callErr != syscall.EINTR {
			return z.callErr != syscall.EAGAIN
		}
	}
}

// spliceOut moves what held holds on to the destination (fd); false: the
// destination is full, wait.
func (z *zeroCopy) spliceOut(fd uintptr) bool {
	for {
		z.moved, z.callErr = syscall.Splice(z.held[0], nil, int(fd), nil, z.n, 0)
		if z.callErr != syscall.EINTR {
			return z.callErr != syscall.EAGAIN
		}
	}
}

// teeAll duplicates n bytes of the pipe r into the empty pipe w.
func teeAll(r, w, n int) (int, error) {
	for {
		m, err := syscall.Tee(r, w, n, 0)
		if err == syscall.EINTR {
			continue
		}
		return int(m), err
	}
}

// readFull reads len(b) bytes from the pipe fd, which holds at least that
// many.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Read(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "read", Path: "pipe", Err: err}
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}
