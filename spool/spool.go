// Package spool owns the per-session append-only spool file: records with a
// length and a CRC-32C, held under an exclusive flock while their writer
// lives. A record is in the file (the page cache) as soon as Flush returns,
// so it survives a SIGKILL of the writer. Short batches are copied into a
// shared mapping of a file pre-allocated in steps, so recording an
// interactive line costs no system call; long batches are written with one
// pwritev straight from the caller's buffers. A reader drops a torn tail
// silently, skips damage before it to the next valid record and counts the
// bytes it could not read. The spool knows nothing of what its records mean;
// the recorder writes them and the store ingests them.
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

// The two spool formats. Version 1 has no salt and is read only. Version 2
// seeds every record's CRC with a random salt stored after the magic, so
// that spool bytes that a plugin happens to print (and that are recorded as
// a line) can never pass for records of this spool when a reader resyncs,
// and may end in zeros: the part of the file allocated ahead of the writer.
const (
	MagicV1 = "TDSPOOL\x01"
	Magic   = "TDSPOOL\x02"
)

// MaxRecord is the largest payload a record may carry; a header claiming more
// is treated as corruption.
const MaxRecord = 1 << 31

const (
	headerLen = 8 // uint32 length + uint32 CRC-32C of the payload
	saltLen   = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sentinel errors.
var (
	ErrLocked   = errors.New("spool is locked by a live writer")
	ErrNotSpool = errors.New("not a spool file")
)

// Record types of a tapedeck session spool. The spool itself does not look at
// them beyond knowing which exist (a reader that resyncs after damage
// accepts only these); they are listed here so that the writer and the
// reader agree.
const (
	TypeSession byte = 'S' // JSON session metadata; always the first record
	TypeFrame   byte = 'F' // a frame in the frame package's binary encoding
	TypeEnd     byte = 'E' // JSON end record; the last record of a finished session
	TypeNotes   byte = 'N' // JSON notes on the session's frames (check findings)
	// TypePiece is the next bytes of a long line that has not ended yet:
	// dir byte, uvarint offset of these bytes in the line, varint time
	// (ns since the session started), then the bytes.
	TypePiece byte = 'P'
	// TypeTail ends a line whose first bytes came in pieces: uvarint length
	// of those bytes, then the frame's full encoding with the line's last
	// bytes as its raw; the stored frame's raw is the pieces and these.
	TypeTail byte = 'T'
	// TypeLines is the whole lines of one read: a frame.AppendLinesHeader
	// header, then the lines, each with its "\n", one seq after another.
	TypeLines byte = 'L'
)

// crcByte is crc32.Update(crc, castagnoli, []byte{b}) without the slice,
// which would escape and cost an allocation per record.
func crcByte(crc uint32, b byte) uint32 {
	crc = ^crc
	crc = castagnoli[byte(crc)^b] ^ (crc >> 8)
	return ^crc
}

func knownType(t byte) bool {
	switch t {
	case TypeSession, TypeFrame, TypeEnd, TypeNotes, TypePiece, TypeTail, TypeLines:
		return true
	}
	return false
}

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

	m       mapping // the mapped window (Linux); zero when none
	noMap   bool    // the file system cannot pre-allocate: every batch is written
	noAlloc bool    // nor allocate ahead of writes
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
)

// Create makes the spool at path: it writes the magic, the salt and first
// (the first record, of type typ) under a temporary name while holding an
// exclusive lock, then renames it into place, so a spool never appears
// without its lock or its first record. The lock is held until Close.
// Errors name path, never the temporary file.
func Create(path string, typ byte, first []byte) (*Writer, error) {
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
	w := &Writer{f: f, path: path}
	var salt [saltLen]byte
	rand.Read(salt[:])
	w.salt = binary.LittleEndian.Uint32(salt[:])
	head := append([]byte(Magic), salt[:]...)
	if _, err := f.Write(head); err != nil {
		w.abandon(tmp)
		return nil, fmt.Errorf("create spool %s: %w", path, bare(err))
	}
	w.off = int64(len(head))
	// The first record is written, not mapped: a spool that never gets a
	// line (a plugin that fails to start) allocates nothing ahead.
	w.noMap = true
	err = w.Append(typ, first)
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
	w.f.Close()
	os.Remove(tmp)
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

// RecordHeader is what a record adds before its payload: length, checksum
// and type.
const RecordHeader = headerLen + 1

// End is where the next record added will start: after the written records
// and the pending batch. A record's payload starts RecordHeader bytes later.
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

// Append writes one record at once: Add then Flush.
func (w *Writer) Append(typ byte, parts ...[]byte) error {
	if _, err := w.Add(typ, parts...); err != nil {
		return err
	}
	_, err := w.Flush()
	return err
}

// Add adds one record of type typ whose payload is the concatenation of
// parts to the pending batch, copying all parts but a large last one: when
// the record is at least BigRecord bytes, its last part is written from the
// caller's slice by Flush, and must not change until then. Add itself never
// writes; lost and err report a record too large to store.
func (w *Writer) Add(typ byte, parts ...[]byte) (lost int, err error) {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxRecord {
		return 1, fmt.Errorf("append to spool %s: a record of %d bytes is over the %d limit", w.path, n, MaxRecord)
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
	}
	w.n += headerLen + n
	w.count++
	return 0, nil
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
	if n < directMin && !w.noMap {
		err = w.copyIn(bufs, n)
	} else {
		w.reserve(w.off + int64(n))
		err = pwritev(w.f, bufs, w.off)
	}
	clear(bufs)
	w.bufs = bufs[:0]
	clear(w.segs)
	w.segs, w.n, w.count = w.segs[:0], 0, 0
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

// cutBack removes a partly written tail and what was allocated ahead.
func (w *Writer) cutBack() {
	w.unmap()
	w.f.Truncate(w.off)
	w.m.alloc = min(w.m.alloc, w.off)
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
	return w.f.Close()
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
func (l *Lock) Release() error { return l.f.Close() }

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
