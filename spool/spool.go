// Package spool owns the per-session append-only spool file: records with a
// length and a CRC-32C, each appended with a single write(2), the file held
// under an exclusive flock while its writer lives. A reader drops a torn or
// corrupt tail instead of misreading it. The spool knows nothing of what its
// records mean; the recorder writes them and the store ingests them.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"syscall"
)

// Magic starts every spool file.
const Magic = "TDSPOOL\x01"

// MaxRecord is the largest payload a record may carry; a header claiming more
// is treated as corruption.
const MaxRecord = 1 << 31

const headerLen = 8 // uint32 length + uint32 CRC-32C of the payload

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sentinel errors.
var (
	ErrLocked   = errors.New("spool is locked by a live writer")
	ErrNotSpool = errors.New("not a spool file")
)

// Writer appends records to one spool file. Records are added to a pending
// batch and written by Flush with a single write, so that many short lines
// read together cost one system call; a large record is written on its own,
// straight from the caller's buffers. It is not safe for concurrent use; the
// recorder serialises its calls.
type Writer struct {
	f       *os.File
	path    string
	off     int64  // the end of the last record known to be written
	pending []byte // records added but not yet written
	count   int    // records in pending
}

// BigRecord is the payload size (type byte included) from which Add writes
// a record at once, from the caller's buffers, instead of copying it into
// the batch.
const BigRecord = 256 << 10

// Create makes the spool at path: it writes Magic and first (the first record,
// of type typ) under a temporary name while holding an exclusive lock, then
// renames it into place, so a spool never appears without its lock or its
// first record. The lock is held until Close.
func Create(path string, typ byte, first []byte) (*Writer, error) {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("lock spool %s: %w", tmp, err)
	}
	w := &Writer{f: f, path: path}
	if _, err := f.Write([]byte(Magic)); err != nil {
		w.abandon(tmp)
		return nil, fmt.Errorf("write spool %s: %w", tmp, err)
	}
	w.off = int64(len(Magic))
	if err := w.Append(typ, first); err != nil {
		w.abandon(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		w.abandon(tmp)
		return nil, fmt.Errorf("publish spool %s: %w", path, err)
	}
	return w, nil
}

func (w *Writer) abandon(tmp string) {
	w.f.Close()
	os.Remove(tmp)
}

// Size is the length of the spool's written records, in bytes.
func (w *Writer) Size() int64 { return w.off }

// Path is where the spool lives.
func (w *Writer) Path() string { return w.path }

// Append writes one record at once: Add then Flush.
func (w *Writer) Append(typ byte, parts ...[]byte) error {
	if _, err := w.Add(typ, parts...); err != nil {
		return err
	}
	_, err := w.Flush()
	return err
}

// Add adds one record of type typ whose payload is the concatenation of
// parts to the pending batch. A large record is written at once instead
// (after the batch), without copying its payload; lost then counts the
// records that failed, as Flush does.
func (w *Writer) Add(typ byte, parts ...[]byte) (lost int, err error) {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxRecord {
		return 1, fmt.Errorf("append spool record: %d bytes is over the %d limit", n, MaxRecord)
	}
	crc := crc32.Update(0, castagnoli, []byte{typ})
	for _, p := range parts {
		crc = crc32.Update(crc, castagnoli, p)
	}
	var h [headerLen + 1]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(n))
	binary.LittleEndian.PutUint32(h[4:8], crc)
	h[8] = typ
	if n < BigRecord {
		w.pending = append(w.pending, h[:]...)
		for _, p := range parts {
			w.pending = append(w.pending, p...)
		}
		w.count++
		return 0, nil
	}
	if lost, err := w.Flush(); err != nil {
		return lost + 1, err
	}
	bufs := append([][]byte{h[:]}, parts...)
	if err := writeAll(w.f, bufs); err != nil {
		w.cutBack()
		return 1, fmt.Errorf("append to spool %s: %w", w.path, err)
	}
	w.off += int64(headerLen + n)
	return 0, nil
}

// Flush writes the pending batch with one write. On failure it cuts the
// file back to its last good record, so a later write can still succeed
// (for example once a full disk has room again); lost is the number of
// records of the batch that are not in the spool.
func (w *Writer) Flush() (lost int, err error) {
	if len(w.pending) == 0 {
		return 0, nil
	}
	_, err = w.f.Write(w.pending)
	n, count := len(w.pending), w.count
	if cap(w.pending) > 4<<20 {
		w.pending = nil // a burst is over: give its memory back
	}
	w.pending, w.count = w.pending[:0], 0
	if err != nil {
		w.cutBack()
		return count, fmt.Errorf("append to spool %s: %w", w.path, err)
	}
	w.off += int64(n)
	return 0, nil
}

// cutBack removes a partly written tail.
func (w *Writer) cutBack() {
	if err := w.f.Truncate(w.off); err == nil {
		w.f.Seek(w.off, io.SeekStart)
	}
}

// Remove deletes the spool file; the lock stays held until Close.
func (w *Writer) Remove() error {
	if err := os.Remove(w.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove spool %s: %w", w.path, err)
	}
	return nil
}

// Close releases the lock and closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Lock is an exclusive lock taken on an existing spool whose writer is gone.
type Lock struct{ f *os.File }

// TryLock takes the spool's lock without waiting. It returns ErrLocked when a
// live writer holds it.
func TryLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock spool %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() error { return l.f.Close() }

// Reader reads records in order. A torn or corrupt tail ends the stream with
// io.EOF and Torn reports true: nothing after the first bad record is read.
type Reader struct {
	r    *bufio.Reader
	buf  []byte
	torn bool
	n    int64
}

// NewReader reads a spool from r, checking Magic first.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head := make([]byte, len(Magic))
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSpool, err)
	}
	if string(head) != Magic {
		return nil, ErrNotSpool
	}
	return &Reader{r: br}, nil
}

// Next returns the next record. The payload is valid until the next call.
// At the end it returns io.EOF.
func (r *Reader) Next() (typ byte, payload []byte, err error) {
	if r.torn {
		return 0, nil, io.EOF
	}
	var h [headerLen]byte
	if _, err := io.ReadFull(r.r, h[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			r.torn = true
			return 0, nil, io.EOF
		}
		return 0, nil, fmt.Errorf("read spool: %w", err)
	}
	n := binary.LittleEndian.Uint32(h[0:4])
	if n == 0 || n > MaxRecord {
		r.torn = true
		return 0, nil, io.EOF
	}
	buf, err := r.readPayload(int(n))
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			r.torn = true
			return 0, nil, io.EOF
		}
		return 0, nil, fmt.Errorf("read spool: %w", err)
	}
	if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(h[4:8]) {
		r.torn = true
		return 0, nil, io.EOF
	}
	r.n++
	return buf[0], buf[1:], nil
}

// Torn reports whether a torn or corrupt tail was dropped.
func (r *Reader) Torn() bool { return r.torn }

// readPayload reads n bytes into the reusable buffer, growing it step by step
// so that a corrupt length cannot make it allocate more than the file holds.
func (r *Reader) readPayload(n int) ([]byte, error) {
	const step = 16 << 20
	if cap(r.buf) > 4<<20 && n < 1<<20 {
		r.buf = nil // let a huge buffer go once lines are small again
	}
	buf := r.buf[:0]
	for len(buf) < n {
		want := min(n-len(buf), step)
		if cap(buf)-len(buf) < want {
			grown := make([]byte, len(buf), len(buf)+want)
			copy(grown, buf)
			buf = grown
		}
		got, err := io.ReadFull(r.r, buf[len(buf):len(buf)+want])
		buf = buf[:len(buf)+got]
		if err != nil {
			if err == io.EOF && len(buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			r.buf = buf
			return nil, err
		}
	}
	r.buf = buf
	return buf, nil
}

// Record types of a tapedeck session spool. The spool itself does not look at
// them; they are listed here so that the writer and the reader agree.
const (
	TypeSession byte = 'S' // JSON session metadata; always the first record
	TypeFrame   byte = 'F' // a frame in the frame package's binary encoding
	TypeEnd     byte = 'E' // JSON end record; the last record of a finished session
	TypeNotes   byte = 'N' // JSON notes on the session's frames (check findings)
)
