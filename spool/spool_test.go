package spool

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func readAll(t *testing.T, b []byte) (recs [][]byte, torn bool) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	for {
		typ, p, err := r.Next()
		if err == io.EOF {
			return recs, r.Torn()
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs = append(recs, append([]byte{typ}, p...))
	}
}

func TestAppendReadAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, 'M', []byte("meta"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, p := range []string{"one", "", "three\n\x00"} {
		if err := w.Append('F', []byte("x"), []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, torn := readAll(t, full)
	want := []string{"Mmeta", "Fxone", "Fx", "Fxthree\n\x00"}
	if torn || len(recs) != len(want) {
		t.Fatalf("got %q torn=%v, want %q", recs, torn, want)
	}
	for i := range want {
		if string(recs[i]) != want[i] {
			t.Errorf("record %d = %q, want %q", i, recs[i], want[i])
		}
	}
	// Every cut inside the last record drops exactly that record.
	lastLen := headerLen + len("Fxthree\n\x00")
	for cut := 1; cut < lastLen; cut++ {
		recs, torn := readAll(t, full[:len(full)-cut])
		if !torn || len(recs) != 3 {
			t.Fatalf("cut %d: %d records, torn=%v; want 3, torn", cut, len(recs), torn)
		}
	}
	// A flipped byte in the last payload is caught by the checksum.
	bad := bytes.Clone(full)
	bad[len(bad)-2] ^= 0x40
	if recs, torn := readAll(t, bad); !torn || len(recs) != 3 {
		t.Fatalf("corrupt tail: %d records, torn=%v", len(recs), torn)
	}
}

func TestLockHeldUntilClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, 'M', nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock on a live spool: %v, want ErrLocked", err)
	}
	w.Close()
	l, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after Close: %v", err)
	}
	l.Release()
	if m, _ := filepath.Glob(path + ".tmp-*"); len(m) != 0 {
		t.Fatalf("temporary file left behind: %v", m)
	}
}

func TestAppendFailureKeepsSpoolReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, 'M', []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	w.Append('F', []byte("good"))
	w.f.Close() // every later write fails
	if err := w.Append('F', []byte("lost")); err == nil {
		t.Fatal("Append on a closed file succeeded")
	}
	b, _ := os.ReadFile(path)
	recs, torn := readAll(t, b)
	if torn || len(recs) != 2 {
		t.Fatalf("got %q torn=%v", recs, torn)
	}
}

// FuzzReader: whatever the bytes, the reader never panics, never returns a
// record whose checksum did not match, and a valid prefix always reads back.
func FuzzReader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.spool")
	w, err := Create(path, 'M', []byte(`{"id":"x"}`))
	if err != nil {
		f.Fatal(err)
	}
	w.Append('F', []byte("hello"))
	w.Close()
	seed, _ := os.ReadFile(path)
	f.Add(seed, 3)
	f.Add([]byte(Magic+"\xff\xff\xff\x7f\x00\x00\x00\x00"), 0)
	f.Fuzz(func(t *testing.T, tail []byte, cut int) {
		// A valid spool, cut anywhere, followed by garbage.
		if cut < 0 {
			cut = -cut
		}
		cut %= len(seed) + 1
		in := append(bytes.Clone(seed[:cut]), tail...)
		r, err := NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		n := 0
		for {
			_, _, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if cut == len(seed) && n < 2 {
			t.Fatalf("intact prefix gave %d records, want at least 2", n)
		}
	})
}

func TestBatchAndBigRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, 'M', []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	big := bytes.Repeat([]byte("b"), BigRecord+10)
	w.Add('F', []byte("one"))
	w.Add('F', []byte("two"))
	if fi, _ := os.Stat(path); fi.Size() != int64(len(Magic)+headerLen+2) {
		t.Fatalf("Add wrote before Flush: size %d", fi.Size())
	}
	w.Add('F', []byte("x"), big) // flushes the batch, then writes itself
	w.Add('F', []byte("three"))
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	recs, torn := readAll(t, b)
	if torn || len(recs) != 5 || string(recs[1]) != "Fone" || string(recs[2]) != "Ftwo" ||
		!bytes.Equal(recs[3][2:], big) || string(recs[4]) != "Fthree" {
		t.Fatalf("records out of order or damaged: %d records, torn %v", len(recs), torn)
	}
}
