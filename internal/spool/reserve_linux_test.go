package spool

import (
	"bytes"
	"io"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// TestEndRecordFitsWhenTheDiskIsFull: lines fill the file up to a size
// limit (what a full disk does to a spool); past it, batches of lines fail,
// but the end record still goes in, every time, whatever size the lines
// had: the writer keeps room for it behind the last record.
func TestEndRecordFitsWhenTheDiskIsFull(t *testing.T) {
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	end := bytes.Repeat([]byte("e"), 8<<10) // an end record with a big fingerprint
	for _, size := range []int{100, 1000, 4000, 15 << 10, 40 << 10} {
		lim := old
		lim.Cur = 1 << 20
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Skip(err)
		}
		path := filepath.Join(t.TempDir(), "s.spool")
		w, err := Create(path, []byte(`{"id":"01full"}`))
		if err != nil {
			t.Fatal(err)
		}
		line := append(bytes.Repeat([]byte("x"), size), '\n')
		failed := false
		for i := 0; i < 1<<15 && !failed; i++ {
			w.AddLines(StreamOut, uint64(i+1), int64(i), line)
			if _, err := w.Flush(); err != nil {
				failed = true
			}
		}
		if !failed {
			t.Fatalf("lines of %d bytes: the limit never bit", size)
		}
		if err := w.AppendEnd(end); err != nil {
			t.Fatalf("lines of %d bytes: the end record did not fit: %v", size, err)
		}
		w.Close()
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		f, r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var last byte
		for {
			typ, _, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("lines of %d bytes: %v", size, err)
			}
			last = typ
		}
		f.Close()
		if last != TypeEnd {
			t.Errorf("lines of %d bytes: the spool ends with a %q record, not the end", size, last)
		}
	}
}
