package spool

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// readAll reads every record of a spool held in b.
func readAll(t testing.TB, b []byte) (recs [][]byte, r *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	for {
		typ, p, err := r.Next()
		if err == io.EOF {
			return recs, r
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs = append(recs, append([]byte{typ}, p...))
	}
}

// fileOf returns the bytes of the spool at path as they are now, zeros
// allocated ahead included.
func fileOf(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newSpool(t testing.TB) (*Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, []byte("meta"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, path
}

func TestAppendReadAndTornTail(t *testing.T) {
	w, path := newSpool(t)
	for _, p := range []string{"one", "", "three\n\x00"} {
		if err := w.appendRecord(TypeFrame, []byte("x"), []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	full := fileOf(t, path)
	recs, r := readAll(t, full)
	want := []string{"Smeta", "Fxone", "Fx", "Fxthree\n\x00"}
	if r.Torn() || r.Damaged() != 0 || len(recs) != len(want) {
		t.Fatalf("got %q torn=%v damaged=%d, want %q", recs, r.Torn(), r.Damaged(), want)
	}
	for i := range want {
		if string(recs[i]) != want[i] {
			t.Errorf("record %d = %q, want %q", i, recs[i], want[i])
		}
	}
	// Every cut inside the last record drops exactly that record, silently.
	lastLen := headerLen + len("Fxthree\n\x00")
	for cut := 1; cut < lastLen; cut++ {
		recs, r := readAll(t, full[:len(full)-cut])
		if !r.Torn() || r.Damaged() != 0 || len(recs) != 3 {
			t.Fatalf("cut %d: %d records, torn=%v damaged=%d; want 3, torn", cut, len(recs), r.Torn(), r.Damaged())
		}
	}
	// A flipped byte in the last payload is caught by the checksum.
	bad := bytes.Clone(full)
	bad[len(bad)-2] ^= 0x40
	if recs, r := readAll(t, bad); !r.Torn() || len(recs) != 3 {
		t.Fatalf("corrupt tail: %d records, torn=%v", len(recs), r.Torn())
	}
}

// TestDamageBeforeTheTail: a flipped byte in a record with valid records
// after it is damage, not a torn tail: the reader skips exactly that record,
// reads on, and counts the bytes it skipped. Every byte of the record is
// tried, length and checksum included.
func TestDamageBeforeTheTail(t *testing.T) {
	w, path := newSpool(t)
	var want []string
	for i := range 20 {
		p := fmt.Sprintf("frame %d %s", i, bytes.Repeat([]byte{'a' + byte(i)}, i*7))
		want = append(want, "F"+p)
		if err := w.appendRecord(TypeFrame, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	full := fileOf(t, path)
	_, r := readAll(t, full)
	// The offsets of records 0 (the session record) … 20.
	var offs []int64
	rd, _ := NewReader(bytes.NewReader(full), int64(len(full)))
	for {
		offs = append(offs, rd.Offset())
		if _, _, err := rd.Next(); err != nil {
			break
		}
	}
	victim := 7 // the 7th frame record
	start, end := offs[victim+1], offs[victim+2]
	for i := start; i < end; i++ {
		bad := bytes.Clone(full)
		bad[i] ^= 0x10
		recs, r := readAll(t, bad)
		if r.Torn() {
			t.Fatalf("byte %d: damage before the tail taken for a torn tail", i)
		}
		if r.Damaged() != end-start {
			t.Errorf("byte %d: %d bytes counted unreadable, want %d", i, r.Damaged(), end-start)
		}
		got := recs[1:]
		if len(got) != len(want)-1 {
			t.Fatalf("byte %d: %d frame records, want %d", i, len(got), len(want)-1)
		}
		for j, g := range got {
			k := j
			if j >= victim {
				k++
			}
			if string(g) != want[k] {
				t.Fatalf("byte %d: record %d = %.30q, want %.30q", i, j, g, want[k])
			}
		}
	}
	if r.Damaged() != 0 {
		t.Errorf("intact spool: %d damaged bytes", r.Damaged())
	}
}

// TestZerosAfterTheLastRecord: what a killed writer leaves (records, then
// the zeros it allocated ahead) reads cleanly; in live mode the zeros and a
// record being written end the read for now, and Resume picks up what was
// written since.
func TestZerosAfterTheLastRecord(t *testing.T) {
	w, path := newSpool(t)
	for i := range 100 {
		if err := w.appendRecord(TypeFrame, fmt.Appendf(nil, "line %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The writer is alive: the file is as a SIGKILL would leave it.
	live := fileOf(t, path)
	if canMap && int64(len(live)) <= w.Size() {
		t.Errorf("file is %d bytes for %d of records: nothing was allocated ahead", len(live), w.Size())
	}
	recs, r := readAll(t, live)
	if len(recs) != 101 || r.Torn() || r.Damaged() != 0 {
		t.Fatalf("%d records, torn %v, damaged %d; want 101 clean", len(recs), r.Torn(), r.Damaged())
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := func() int64 { fi, _ := f.Stat(); return fi.Size() }
	fr, err := NewReader(f, size())
	if err != nil {
		t.Fatal(err)
	}
	fr.SetLive(true)
	count := func() int {
		n := 0
		for {
			if _, _, err := fr.Next(); err != nil {
				return n
			}
			n++
		}
	}
	if n := count(); n != 101 {
		t.Fatalf("live read: %d records, want 101", n)
	}
	w.appendRecord(TypeFrame, []byte("later"))
	w.appendRecord(TypeFrame, bytes.Repeat([]byte("big"), BigRecord))
	fr.Resume(size())
	if n := count(); n != 2 {
		t.Fatalf("after Resume: %d records, want 2", n)
	}
	w.Close()
	if got := fileOf(t, path); int64(len(got)) != w.Size() {
		t.Errorf("closed spool is %d bytes, its records %d: Close leaves no zeros", len(got), w.Size())
	}
}

func TestLockHeldUntilClose(t *testing.T) {
	w, path := newSpool(t)
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
	w, path := newSpool(t)
	w.appendRecord(TypeFrame, []byte("good"))
	w.unmap()
	w.f.Close() // every later write fails
	w.noMap = true
	err := w.appendRecord(TypeFrame, []byte("lost"))
	if err == nil {
		t.Fatal("Append on a closed file succeeded")
	}
	recs, r := readAll(t, fileOf(t, path))
	if r.Torn() || len(recs) != 2 {
		t.Fatalf("got %q torn=%v", recs, r.Torn())
	}
}

func TestCreateErrorNamesTheSpool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "s.spool")
	_, err := Create(path, nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(path+":")) || bytes.Contains([]byte(err.Error()), []byte(".tmp-")) {
		t.Fatalf("Create error %q: want it to name %s and no temporary file", err, path)
	}
}

func TestBatchAndBigRecords(t *testing.T) {
	w, path := newSpool(t)
	big := bytes.Repeat([]byte("b"), BigRecord+10)
	w.add(TypeFrame, []byte("one"))
	w.add(TypeFrame, []byte("two"))
	if recs, _ := readAll(t, fileOf(t, path)); len(recs) != 1 {
		t.Fatalf("Add wrote before Flush: %d records", len(recs))
	}
	w.add(TypeFrame, []byte("x"), big) // written from big, by Flush
	w.add(TypeFrame, []byte("three"))
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, r := readAll(t, fileOf(t, path))
	if r.Torn() || len(recs) != 5 || string(recs[1]) != "Fone" || string(recs[2]) != "Ftwo" ||
		!bytes.Equal(recs[3][2:], big) || string(recs[4]) != "Fthree" {
		t.Fatalf("records out of order or damaged: %d records, torn %v", len(recs), r.Torn())
	}
}

// TestSpanningWindows writes small batches across several mapping windows
// and big ones between them: every record reads back in order.
func TestSpanningWindows(t *testing.T) {
	w, path := newSpool(t)
	var want [][]byte
	for i := range 30000 {
		p := fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte{'z'}, i%300))
		if i%1000 == 999 {
			p = bytes.Repeat([]byte{byte(i)}, 3*BigRecord)
		}
		want = append(want, p)
		if err := w.appendRecord(TypePiece, p); err != nil {
			t.Fatal(err)
		}
	}
	recs, r := readAll(t, fileOf(t, path))
	if r.Torn() || r.Damaged() != 0 || len(recs) != len(want)+1 {
		t.Fatalf("%d records, torn %v, damaged %d", len(recs), r.Torn(), r.Damaged())
	}
	for i, p := range want {
		if !bytes.Equal(recs[i+1][1:], p) {
			t.Fatalf("record %d differs", i)
		}
	}
}

func TestNotASpool(t *testing.T) {
	for _, b := range []string{"", "TDSPOOL", "NOTSPOOL and more", Magic + "\x01"} {
		if _, err := NewReader(bytes.NewReader([]byte(b)), int64(len(b))); !errors.Is(err, ErrNotSpool) {
			t.Errorf("NewReader(%q) = %v, want ErrNotSpool", b, err)
		}
	}
}

// seedSpool is a spool with one record of every kind.
func seedSpool(t testing.TB) (file []byte, recs [][]byte) {
	path := filepath.Join(t.TempDir(), "seed.spool")
	w, err := Create(path, []byte(`{"id":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	w.AddFrame([]byte("\x00\x01\x02\x00"), []byte("hello"))
	w.AddPiece(StreamOut, 0, 0, []byte("first bytes of a long line "))
	w.AddPiece(StreamOut, 27, 0, []byte("more of it "))
	w.AddTail(38, []byte("\x00\x02\x03\x00"), []byte("end"))
	w.AddLines(StreamIn, 5, 0, []byte("one\ntwo\n\nfour\n"))
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.AppendNotes([]byte(`{}`))
	w.AppendEnd([]byte(`{"status":"complete"}`))
	w.Close()
	file = fileOf(t, path)
	recs, _ = readAll(t, file)
	return file, recs
}

// FuzzReader: whatever the bytes, the reader never panics, and every record
// it returns is one that was written, in the order written: a cut, a flipped
// byte or garbage after the end never makes it misread. An intact spool
// reads back whole, and one damaged only after its end reads back whole too.
func FuzzReader(f *testing.F) {
	seed, want := seedSpool(f)
	f.Add([]byte{}, 0, 0, byte(0))
	f.Add([]byte("garbage"), len(seed), 40, byte(0x10))
	f.Add([]byte(Magic+"\xff\xff\xff\x7f\x00\x00\x00\x00"), 0, 0, byte(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, len(seed), 0, byte(0))
	f.Fuzz(func(t *testing.T, tail []byte, cut, flip int, mask byte) {
		// A valid spool, cut anywhere, one byte flipped, garbage after.
		if cut < 0 {
			cut = -cut
		}
		cut %= len(seed) + 1
		in := append(bytes.Clone(seed[:cut]), tail...)
		if flip < 0 {
			flip = -flip
		}
		if len(in) > 0 {
			in[flip%len(in)] ^= mask
		}
		r, err := NewReader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		var got [][]byte
		for {
			typ, p, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, append([]byte{typ}, p...))
		}
		// got must be a subsequence of want.
		k := 0
		for _, g := range got {
			for k < len(want) && !bytes.Equal(want[k], g) {
				k++
			}
			if k == len(want) {
				t.Fatalf("read a record that was never written: %q", g)
			}
			k++
		}
		intact := cut == len(seed) && (mask == 0 || flip%len(in) >= len(seed))
		if intact && len(got) != len(want) {
			t.Fatalf("intact spool gave %d records, want %d", len(got), len(want))
		}
	})
}

func TestCRCByte(t *testing.T) {
	for _, seed := range []uint32{0, 1, 0xdeadbeef} {
		for b := range 256 {
			if got, want := crcByte(seed, byte(b)), crc32.Update(seed, castagnoli, []byte{byte(b)}); got != want {
				t.Fatalf("crcByte(%#x, %d) = %#x, want %#x", seed, b, got, want)
			}
		}
	}
}

// TestSpoolThatShrinksWhileRead: a reader takes the file's size while the
// writer still holds room ahead; the writer closes and cuts that room; the
// reader then reads every record and ends cleanly, in live mode and not,
// where it failed with "unexpected EOF" (CI, stop 41: TestFollowALiveSpool).
func TestSpoolThatShrinksWhileRead(t *testing.T) {
	if !canMap {
		t.Skip("this platform allocates no room ahead")
	}
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			w, path := newSpool(t)
			for i := range 10 {
				if err := w.appendRecord(TypeFrame, fmt.Appendf(nil, "line %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			f, r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if r.size <= w.Size() {
				t.Fatalf("reader's size %d, records %d: no room ahead to cut", r.size, w.Size())
			}
			r.SetLive(live)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				_, _, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("after %d records: %v", n, err)
				}
				n++
			}
			if n != 11 || r.Torn() || r.Damaged() != 0 {
				t.Errorf("%d records, torn %v, damaged %d; want 11 clean", n, r.Torn(), r.Damaged())
			}
		})
	}
}

// TestLockIsDroppedWithACopyOfItsDescriptorAlive: a released lock, and a
// closed writer's, is free at once even while a copy of the descriptor
// lives on, as it does in a child another goroutine forked until the
// child execs (a dup stands for it here). Closing alone left the lock
// held: the next TryLock took the spool for a live one.
func TestLockIsDroppedWithACopyOfItsDescriptorAlive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, []byte(`{"id":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	copyOf := func(f *os.File) int {
		fd, err := syscall.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(fd) })
		return fd
	}
	copyOf(w.f)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after the writer closed, a copy of its descriptor open: %v", err)
	}
	copyOf(l.f)
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after a Release, a copy of its descriptor open: %v", err)
	}
	l.Release()
}

// TestSaltFor: the salt worked out from a payload and its checksum is the
// one it was made with, for payloads of every length up to 64.
func TestSaltFor(t *testing.T) {
	t.Parallel()
	p := make([]byte, 64)
	for n := range len(p) + 1 {
		for i := range p {
			p[i] = byte(i*31 + n*7)
		}
		for _, salt := range []uint32{0, 1, 0xdeadbeef, 0xffffffff, uint32(n) << 20} {
			if got := saltFor(crc32.Update(salt, castagnoli, p[:n]), p[:n]); got != salt {
				t.Fatalf("saltFor(a %d-byte payload made with salt %#x) = %#x", n, salt, got)
			}
		}
	}
}

// TestADamagedSaltIsMended: a spool whose salt has a byte flipped reads
// back whole, each of its bytes in turn, and one whose session record (its
// first) is damaged reads the rest as before, the salt left as stored.
// Before, a flipped salt failed every record, and with a torn tail after a
// record of the right bytes (FuzzReader's crasher, in testdata) a record
// was read that was never written.
func TestADamagedSaltIsMended(t *testing.T) {
	t.Parallel()
	seed, want := seedSpool(t)
	for i := len(Magic); i < len(Magic)+saltLen; i++ {
		in := bytes.Clone(seed)
		in[i] ^= 0x4d
		got, r := readAll(t, in)
		if len(got) != len(want) || r.Damaged() != 0 || r.Torn() {
			t.Errorf("salt byte %d flipped: %d records (damaged %d, torn %v), want all %d", i-len(Magic), len(got), r.Damaged(), r.Torn(), len(want))
		}
	}
	in := bytes.Clone(seed)
	in[len(Magic)+saltLen+headerLen+2] ^= 0x4d // in the session record's payload
	got, r := readAll(t, in)
	if len(got) != len(want)-1 || !bytes.Equal(got[0], want[1]) || r.Damaged() == 0 {
		t.Errorf("session record damaged: %d records (damaged %d), want the %d after it", len(got), r.Damaged(), len(want)-1)
	}
}
