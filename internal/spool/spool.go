// Package spool owns the per-session append-only spool file and its record
// format, all of it: the file's layout, the record header (length, CRC-32C,
// type), the record types and each type's payload, with their encoders and
// decoders (format.go). The recorder writes records through the Writer's
// typed methods; the store reads them with the Reader and decodes them with
// DecodePiece, DecodeLines and DecodeTail. Only the frame's own binary
// encoding, which a frame or tail record carries, belongs to the frame
// package: the store keeps the same bytes in its database.
//
// A spool is held under an exclusive flock while its writer lives. A record
// is in the file (the page cache) as soon as Flush returns, so it survives a
// SIGKILL of the writer. Short batches are copied into a shared mapping of a
// file pre-allocated in steps, so recording an interactive line costs no
// system call; long batches are written with one pwritev straight from the
// caller's buffers. A reader drops a torn tail silently, skips damage before
// it to the next valid record and counts the bytes it could not read. The
// spool knows nothing of what a session or a frame means.
package spool

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"syscall"
)

// Sentinel errors.
var (
	ErrLocked   = errors.New("spool is locked by a live writer")
	ErrNotSpool = errors.New("not a spool file")
)

// Writer appends records to one spool file. Records are added to a pending
// batch and written by Flush, so that the lines of one read cost at most one
// system call; Flush copies a short batch into the mapped file (no system
// call) and writes a long one with pwritev from the caller's buffers. It is
// not safe for concurrent use; the recorder serialises its calls.
type Writer struct {
	f    *os.File
	path string
	salt uint32
	off  int64 // the end of the last record written

	arena []byte    // record headers and copied parts of the pending batch
	segs  []segment // the pending batch, in order
	n     int       // bytes pending
	count int       // records pending
	bufs  [][]byte  // scratch for Flush

	// borrowed: the pending batch refers to a caller's slice.
	borrowed bool
	// scratch holds a record's payload header (a tail's with its frame's
	// header: at most 74 bytes), which add copies into arena.
	scratch [96]byte

	m       mapping // the mapped window (Linux); zero when none
	noMap   bool    // the file system cannot pre-allocate: every batch is written
	noAlloc bool    // nor allocate ahead of writes
	// final is set while the record that ends the session (or the one
	// that begins it) is written: it may use the room kept for the end.
	final bool
}

// segment is a piece of the pending batch: ext when set, else arena[a:b].
type segment struct {
	ext  []byte
	a, b int
}

// Thresholds of the writer.
const (
	// BigRecord is the payload size (type byte included) from which a
	// record's last part is written from the caller's buffer, by Flush,
	// instead of being copied into the batch.
	BigRecord = 16 << 10
	// directMin is the batch size from which Flush writes with pwritev
	// rather than copying into the mapping: big copies into fresh mapped
	// pages cost a page fault every 4 KiB, which a write does not.
	directMin = 16 << 10
	// endReserve is the room kept allocated behind the last record for the
	// end record: a batch of lines that would leave less is refused (its
	// lines are lost, and counted) rather than taking it, so that a full
	// disk never costs a finished session its end, its exit status and its
	// count of lost frames. (On a file system that cannot pre-allocate
	// nothing can be kept.)
	endReserve = 64 << 10
)

// Create makes the spool at path: it writes the magic, the salt and the
// session record (session: the session's metadata as JSON) under a
// temporary name while holding an exclusive lock, then renames it into
// place, so a spool never appears without its lock or its session record.
// The lock is held until Close. Errors name path, never the temporary file.
func Create(path string, session []byte) (*Writer, error) {
	var salt [saltLen]byte
	rand.Read(salt[:])
	return create(path, binary.LittleEndian.Uint32(salt[:]), session)
}

// create is Create with the salt given.
func create(path string, salt uint32, session []byte) (*Writer, error) {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create spool %s: %w", path, bare(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("lock spool %s: %w", path, err)
	}
	w := &Writer{f: f, path: path, salt: salt}
	head := binary.LittleEndian.AppendUint32([]byte(Magic), salt)
	if _, err := f.Write(head); err != nil {
		w.abandon(tmp)
		return nil, fmt.Errorf("create spool %s: %w", path, bare(err))
	}
	w.off = int64(len(head))
	// The first record is written, not mapped: a spool that never gets a
	// line (a plugin that fails to start) allocates nothing ahead.
	w.noMap = true
	err = w.appendRecord(TypeSession, session)
	w.noMap = !canMap
	if err != nil {
		w.abandon(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		w.abandon(tmp)
		return nil, fmt.Errorf("publish spool %s: %w", path, bare(err))
	}
	return w, nil
}

func (w *Writer) abandon(tmp string) {
	unlockClose(w.f)
	os.Remove(tmp)
}

// unlockClose drops f's lock, then closes f. Closing alone does not drop
// it while another descriptor of the same open file lives on: a child
// forked by another goroutine holds a copy of every descriptor until it
// execs, and a TryLock in that window took the spool for a live one and
// left it unread (TestRecordKeepsAnEmptyDatabase failed so, once, in CI).
func unlockClose(f *os.File) error {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return f.Close()
}

// bare strips the file name from a *PathError, whose name may be a temporary
// one that no longer exists.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// End is where the next record added will start: after the written records
// and the pending batch.
func (w *Writer) End() int64 { return w.off + int64(w.n) }

// ReadAt reads back what was written (not what is pending).
func (w *Writer) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > w.off {
		return 0, fmt.Errorf("read spool %s: %d bytes at %d are past what was written", w.path, len(p), off)
	}
	n, err := w.f.ReadAt(p, off)
	if err != nil {
		return n, fmt.Errorf("read spool %s: %w", w.path, bare(err))
	}
	return n, nil
}

// Size is the length of the spool's written records, in bytes.
func (w *Writer) Size() int64 { return w.off }

// Path is where the spool lives.
func (w *Writer) Path() string { return w.path }

// The typed methods below are the only way records get into a spool. Each
// Add method adds one record to the pending batch and never writes; Flush
// writes the batch. A record is copied into the batch except for a large
// last part: when the record's payload (its type byte included) is at least
// BigRecord bytes, that part (raw, block or b) is written from the caller's
// slice by Flush, and must not change until then (see Borrowed). An error
// says the record was too large to store and was not added.

// AddFrame adds a frame record: hdr is the frame's header (frame.AppendHeader)
// and raw its bytes; together they are the frame's binary encoding.
func (w *Writer) AddFrame(hdr, raw []byte) error {
	return w.add(TypeFrame, hdr, raw)
}

// AddLines adds a lines record: the whole lines of one read in block, each
// ending in "\n", the first with seq and all with time at.
func (w *Writer) AddLines(stream byte, seq uint64, at int64, block []byte) error {
	return w.add(TypeLines, appendLinesHeader(w.scratch[:0], stream, seq, at), block)
}

// AddPiece adds a piece record: b, the bytes of a long line from offset off
// on, that came at time at. where is the offset in the spool file at which
// b will be, to be read back with ReadAt once flushed.
func (w *Writer) AddPiece(stream byte, off, at int64, b []byte) (where int64, err error) {
	hdr := appendPieceHeader(w.scratch[:0], stream, off, at)
	where = w.End() + recordHeader + int64(len(hdr))
	return where, w.add(TypePiece, hdr, b)
}

// AddTail adds a tail record: the end of a line whose first prefix bytes
// came in pieces; hdr is the frame's header (frame.AppendHeader) and raw the
// line's last bytes.
func (w *Writer) AddTail(prefix int64, hdr, raw []byte) error {
	// One part for the prefix and hdr: each part costs a CRC update.
	return w.add(TypeTail, append(appendTailHeader(w.scratch[:0], prefix), hdr...), raw)
}

// AppendNotes writes a notes record (JSON) at once, with what is pending.
func (w *Writer) AppendNotes(js []byte) error { return w.appendRecord(TypeNotes, js) }

// AppendEnd writes the end record (JSON of how the session ended) at once,
// with what is pending. It is the last record of a finished session.
func (w *Writer) AppendEnd(js []byte) error { return w.appendRecord(TypeEnd, js) }

// Borrowed reports whether the pending batch refers to a slice of a caller
// (the last part of a big record), which must not change until Flush.
func (w *Writer) Borrowed() bool { return w.borrowed }

// appendRecord writes one record at once: add then Flush. The session
// and end records may use the room kept for the end (endReserve).
func (w *Writer) appendRecord(typ byte, parts ...[]byte) error {
	if err := w.add(typ, parts...); err != nil {
		return err
	}
	w.final = typ == TypeEnd || typ == TypeSession
	_, err := w.Flush()
	w.final = false
	return err
}

// add adds one record of type typ whose payload is the concatenation of
// parts to the pending batch, copying all parts but a large last one.
func (w *Writer) add(typ byte, parts ...[]byte) error {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxRecord {
		return fmt.Errorf("append to spool %s: a record of %d bytes is over the %d limit", w.path, n, MaxRecord)
	}
	crc := crcByte(w.salt, typ)
	for _, p := range parts {
		crc = crc32.Update(crc, castagnoli, p)
	}
	a := len(w.arena)
	w.arena = binary.LittleEndian.AppendUint32(w.arena, uint32(n))
	w.arena = binary.LittleEndian.AppendUint32(w.arena, crc)
	w.arena = append(w.arena, typ)
	var ext []byte
	if n >= BigRecord && len(parts) > 0 {
		ext, parts = parts[len(parts)-1], parts[:len(parts)-1]
	}
	for _, p := range parts {
		w.arena = append(w.arena, p...)
	}
	w.addSeg(segment{a: a, b: len(w.arena)})
	if len(ext) > 0 {
		w.addSeg(segment{ext: ext})
		w.borrowed = true
	}
	w.n += headerLen + n
	w.count++
	return nil
}

func (w *Writer) addSeg(s segment) {
	if k := len(w.segs) - 1; k >= 0 && s.ext == nil && w.segs[k].ext == nil && w.segs[k].b == s.a {
		w.segs[k].b = s.b // one run of the arena
		return
	}
	w.segs = append(w.segs, s)
}

// Pending reports the size of the batch not yet written, in bytes.
func (w *Writer) Pending() int { return w.n }

// Flush writes the pending batch. When it returns nil the batch is in the
// file. On failure it cuts the file back to its last good record, so a later
// write can still succeed (for example once a full disk has room again);
// lost is the number of records of the batch that are not in the spool.
func (w *Writer) Flush() (lost int, err error) {
	if w.count == 0 {
		return 0, nil
	}
	bufs := w.bufs[:0]
	for _, s := range w.segs {
		if s.ext != nil {
			bufs = append(bufs, s.ext)
		} else {
			bufs = append(bufs, w.arena[s.a:s.b])
		}
	}
	n, count := w.n, w.count
	keep := int64(endReserve)
	if w.final {
		keep = 0
	}
	if n < directMin && !w.noMap {
		err = w.copyIn(bufs, n, keep)
	} else if err = w.reserve(w.off+int64(n), keep); err == nil {
		err = pwritev(w.f, bufs, w.off)
	}
	clear(bufs)
	w.bufs = bufs[:0]
	clear(w.segs)
	w.segs, w.n, w.count, w.borrowed = w.segs[:0], 0, 0, false
	if cap(w.arena) > 4<<20 {
		w.arena = nil // a burst is over: give its memory back
	}
	w.arena = w.arena[:0]
	if err != nil {
		w.cutBack()
		return count, fmt.Errorf("append to spool %s: %w", w.path, bare(err))
	}
	w.off += int64(n)
	return 0, nil
}

// cutBack removes a partly written tail and what was allocated ahead but
// the room kept for the end record, which it zeroes (its blocks are
// allocated: writing them needs no room).
func (w *Writer) cutBack() {
	w.unmap()
	keep := w.off
	if w.m.alloc > w.off {
		keep = min(w.m.alloc, w.off+endReserve)
		w.f.WriteAt(make([]byte, keep-w.off), w.off)
	}
	w.f.Truncate(keep)
	w.m.alloc = min(w.m.alloc, keep)
}

// Remove deletes the spool file; the lock stays held until Close.
func (w *Writer) Remove() error {
	if err := os.Remove(w.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove spool %s: %w", w.path, err)
	}
	return nil
}

// Close gives back what was allocated ahead of the last record, releases the
// lock and closes the file. Pending records that were not flushed are
// dropped.
func (w *Writer) Close() error {
	w.unmap()
	if w.m.alloc > w.off {
		w.f.Truncate(w.off)
	}
	return unlockClose(w.f)
}

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
func (l *Lock) Release() error { return unlockClose(l.f) }

// isZero reports whether b holds only zero bytes.
func isZero(b []byte) bool {
	var zeros [256]byte
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		if !bytes.Equal(b[:n], zeros[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
