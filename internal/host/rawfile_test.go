package host

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// TestRawFileReadsAsOSFileDoes: a pipe read raw gives what was written,
// its read deadline holds, and the end is io.EOF; a file that is not
// non-blocking is read as it is.
func TestRawFileReadsAsOSFileDoes(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src := rawOr(r)
	if _, raw := src.(*rawFile); !raw && isNonblock(fdOf(t, r)) {
		t.Fatal("a non-blocking pipe is not read raw")
	}
	if _, err := w.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := src.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	r.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := src.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v", err)
	}
	r.SetReadDeadline(time.Time{})
	w.Close()
	if n, err := src.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("at the end: %d, %v", n, err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if src := rawOr(f); src != io.Reader(f) {
		t.Errorf("a blocking file is read raw: %T", src)
	}
}

func fdOf(t *testing.T, f *os.File) uintptr {
	conn, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	conn.Control(func(d uintptr) { fd = d })
	return fd
}
