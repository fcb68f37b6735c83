package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Reader reads records in order from a spool of known size.
//
// What it cannot read it handles by where it is: zeros after the last record
// are the space a writer allocated ahead and end the spool cleanly; a bad
// record (torn, or failing its checksum) after which no valid record follows
// is a torn tail, dropped silently (Torn); a bad stretch with valid records
// after it is damage, skipped to the next valid record and counted
// (Damaged). In live mode, for a spool whose writer still appends, the
// first bad or unwritten record ends the read for now; Resume goes on from
// there once the file has grown.
type Reader struct {
	r      io.ReaderAt
	size   int64
	salt   uint32
	off    int64 // where the next record starts
	buf    []byte
	bufAt  int64 // the file offset of buf[0]
	bufLen int   // valid bytes in buf
	big    []byte

	live    bool
	stopped bool // Next returns io.EOF until Resume
	torn    bool
	damaged int64
}

const (
	readWindow = 64 << 10
	// resyncBudget bounds the payload bytes a resync checks per byte it
	// scans, so that crafted damage cannot make a read quadratic.
	resyncBudget = 64
)

// NewReader reads the spool held by r, of size bytes, checking its magic.
// It fails with an error wrapping ErrNotSpool for anything else.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	var head [len(Magic) + saltLen]byte
	n, err := r.ReadAt(head[:], 0)
	if n < len(Magic) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %v", ErrNotSpool, err)
	}
	rd := &Reader{r: r, size: size, buf: make([]byte, readWindow)}
	switch string(head[:len(Magic)]) {
	case MagicV1:
		rd.off = int64(len(MagicV1))
	case Magic:
		if n < len(head) {
			return nil, fmt.Errorf("%w: no salt", ErrNotSpool)
		}
		rd.salt = binary.LittleEndian.Uint32(head[len(Magic):])
		rd.off = int64(len(head))
		if err := rd.checkSalt(); err != nil {
			return nil, err
		}
	default:
		return nil, ErrNotSpool
	}
	return rd, nil
}

// checkSalt mends a damaged salt. The salt is only the checksums' first
// value: flipped, it fails every record, and a flip of the same bits in a
// record's payload, as many bytes from its end as the flip is from the
// salt's, cancels it (FuzzReader read such a record, never written, after
// a torn tail). So when the first record fails its checksum under the
// salt stored, the salt that it passes under is worked out from it
// (saltFor), and taken when the record after it passes under that salt
// too: two records agreeing is the stored salt's damage, not theirs.
func (r *Reader) checkSalt() error {
	st, _, _, err := r.record(r.off)
	if err != nil || st != recBad || r.size-r.off < headerLen {
		return err
	}
	h, err := r.at(r.off, headerLen)
	if err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(h[0:4]))
	crc := binary.LittleEndian.Uint32(h[4:8])
	if n == 0 || n > MaxRecord || n > r.size-r.off-headerLen {
		return nil
	}
	p, err := r.at(r.off+headerLen, int(n))
	if err != nil {
		return err
	}
	stored := r.salt
	r.salt = saltFor(crc, p)
	if _, _, next, err := r.record(r.off); err != nil {
		return err
	} else if after, _, _, err := r.record(next); err != nil || after != recOK {
		r.salt = stored
		return err
	}
	return nil
}

// saltFor is the salt under which payload p has checksum crc: the one s
// with crc32.Update(s, Castagnoli, p) == crc. A step of the checksum can
// be undone: the register after a byte holds in its top byte the top byte
// of the table entry it took, which names the entry (the top bytes of the
// 256 entries differ), and the rest is the register before shifted.
func saltFor(crc uint32, p []byte) uint32 {
	var entry [256]byte // by its top byte
	for i, v := range castagnoli {
		entry[v>>24] = byte(i)
	}
	reg := ^crc
	for i := len(p) - 1; i >= 0; i-- {
		e := entry[reg>>24]
		reg = (reg^castagnoli[e])<<8 | uint32(e^p[i])
	}
	return ^reg
}

// Open opens the spool file at path for reading. The caller closes the
// file. A missing file gives an error wrapping os.ErrNotExist.
func Open(path string) (*os.File, *Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	r, err := NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, r, nil
}

// Session reads the session record, which a spool always starts with: call
// it before Next. Its payload is valid until the next call.
func (r *Reader) Session() ([]byte, error) {
	typ, p, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("spool has no session record: %w", err)
	}
	if typ != TypeSession {
		return nil, fmt.Errorf("spool starts with record type %q, want session", typ)
	}
	return p, nil
}

// SetLive sets live mode: the spool's writer may still be appending, so a
// bad or unwritten record is taken as not written yet rather than as a torn
// tail or damage.
func (r *Reader) SetLive(live bool) { r.live = live }

// Resume goes on after Next returned io.EOF, from the end of the last good
// record, now that the file is size bytes long. What was read ahead is
// forgotten: a writer may have filled it in since.
func (r *Reader) Resume(size int64) {
	r.size = size
	r.stopped, r.torn = false, false
	r.bufLen = 0
}

// Torn reports whether a torn or corrupt tail was dropped.
func (r *Reader) Torn() bool { return r.torn }

// Damaged is the number of bytes skipped so far because they could not be
// read, with valid records after them.
func (r *Reader) Damaged() int64 { return r.damaged }

// Offset is where the next record would start: after the last good one.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next record. The payload is valid until the next call.
// At the end it returns io.EOF; other errors are the underlying reader's.
func (r *Reader) Next() (typ byte, payload []byte, err error) {
	for !r.stopped {
		st, p, next, err := r.record(r.off)
		if err != nil {
			return 0, nil, err
		}
		switch st {
		case recOK:
			r.off = next
			return p[0], p[1:], nil
		case recEnd:
			r.stopped = true
			return 0, nil, io.EOF
		case recZero:
			if r.live {
				r.stopped = true
				return 0, nil, io.EOF
			}
			zero, err := r.zeroFrom(r.off)
			if err != nil {
				return 0, nil, err
			}
			if zero {
				r.stopped = true
				return 0, nil, io.EOF
			}
		}
		// A bad record.
		if r.live {
			r.stopped = true
			return 0, nil, io.EOF
		}
		at, err := r.resync(r.off + 1)
		if err != nil {
			return 0, nil, err
		}
		if at < 0 {
			r.torn, r.stopped = true, true
			return 0, nil, io.EOF
		}
		r.damaged += at - r.off
		r.off = at
	}
	return 0, nil, io.EOF
}

type recState uint8

const (
	recOK   recState = iota
	recEnd           // the file ends here
	recZero          // zeros where a header would be
	recBad           // torn, too long or failing its checksum
)

// record reads the record at off. For recOK, p is its type byte and
// payload, and next where the record after it starts.
func (r *Reader) record(off int64) (st recState, p []byte, next int64, err error) {
	st, p, next, err = r.recordOnce(off)
	for errors.Is(err, errShrank) { // the size only falls, so this ends
		st, p, next, err = r.recordOnce(off)
	}
	return st, p, next, err
}

func (r *Reader) recordOnce(off int64) (st recState, p []byte, next int64, err error) {
	left := r.size - off
	if left <= 0 {
		return recEnd, nil, 0, nil
	}
	h, err := r.at(off, min(headerLen, int(left)))
	if err != nil {
		return recBad, nil, 0, err
	}
	if len(h) < headerLen {
		if isZero(h) {
			return recZero, nil, 0, nil
		}
		return recBad, nil, 0, nil
	}
	n := int64(binary.LittleEndian.Uint32(h[0:4]))
	crc := binary.LittleEndian.Uint32(h[4:8])
	if n == 0 {
		if crc == 0 {
			return recZero, nil, 0, nil
		}
		return recBad, nil, 0, nil
	}
	if n > MaxRecord || n > left-headerLen {
		return recBad, nil, 0, nil
	}
	p, err = r.at(off+headerLen, int(n))
	if err != nil {
		return recBad, nil, 0, err
	}
	if crc32.Update(r.salt, castagnoli, p) != crc {
		return recBad, nil, 0, nil
	}
	return recOK, p, off + headerLen + n, nil
}

// at returns n bytes at off, which the caller has checked lie within the
// file. They are valid until the next call. A read that comes short
// because the file ends sooner (its writer cut the room it had set aside
// as it closed) takes that end for the spool's size and fails with
// errShrank: the caller reads again against the new size.
func (r *Reader) at(off int64, n int) ([]byte, error) {
	if off >= r.bufAt && off+int64(n) <= r.bufAt+int64(r.bufLen) {
		i := int(off - r.bufAt)
		return r.buf[i : i+n], nil
	}
	if n <= len(r.buf) {
		want := int(min(int64(len(r.buf)), r.size-off))
		got, err := r.r.ReadAt(r.buf[:want], off)
		r.bufAt, r.bufLen = off, got
		if got < n {
			r.bufLen = 0
			return nil, r.short(off, got, err)
		}
		return r.buf[:n], nil
	}
	if cap(r.big) < n || (cap(r.big) > 4<<20 && n < 1<<20) {
		r.big = make([]byte, n) // a huge buffer goes once records are small again
	}
	b := r.big[:n]
	got, err := r.r.ReadAt(b, off)
	if got < n {
		return nil, r.short(off, got, err)
	}
	return b, nil
}

// errShrank is at's failure when the file ended before the size the reader
// was given.
var errShrank = errors.New("spool shrank while it was read")

// short handles a read at off that got fewer bytes than asked: at the
// file's end (io.EOF or no error), the file is now off+got long.
func (r *Reader) short(off int64, got int, err error) error {
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if end := off + int64(got); end < r.size {
		r.size = end
		return errShrank
	}
	return fmt.Errorf("read spool: %w", io.ErrUnexpectedEOF)
}

// zeroFrom reports whether the file holds only zeros from off to its end.
func (r *Reader) zeroFrom(off int64) (bool, error) {
	for off < r.size {
		b, err := r.at(off, int(min(int64(len(r.buf)), r.size-off)))
		if errors.Is(err, errShrank) {
			continue // against the new size
		}
		if err != nil {
			return false, err
		}
		if !isZero(b) {
			return false, nil
		}
		off += int64(len(b))
	}
	return true, nil
}

// resync finds the first offset at or after from where a valid record of a
// known type starts and is followed by another valid record, zeros or the
// end of the file; -1 when there is none (or the search ran over its
// budget, which a real spool never does).
func (r *Reader) resync(from int64) (int64, error) {
	var spent int64
	for at := from; at+headerLen+1 <= r.size; at++ {
		h, err := r.at(at, headerLen+1)
		if errors.Is(err, errShrank) {
			at-- // the same offset against the new size
			continue
		}
		if err != nil {
			return -1, err
		}
		if h[0]|h[1]|h[2]|h[3] == 0 {
			// No record has length zero: skip the zeros in one go.
			skip, err := r.zeros(at)
			if err != nil {
				return -1, err
			}
			at += max(skip-4, 0)
			continue
		}
		n := int64(binary.LittleEndian.Uint32(h[0:4]))
		if !knownType(h[8]) || n > MaxRecord || n > r.size-at-headerLen {
			continue
		}
		if spent += n; spent > 64<<20+resyncBudget*(at-from) {
			return -1, nil
		}
		st, _, next, err := r.record(at)
		if err != nil {
			return -1, err
		}
		if st != recOK {
			continue
		}
		if after, _, _, err := r.record(next); err != nil {
			return -1, err
		} else if after != recBad {
			return at, nil
		}
	}
	return -1, nil
}

// zeros counts the zero bytes from off on, within what is buffered.
func (r *Reader) zeros(off int64) (int64, error) {
	b, err := r.at(off, int(min(int64(len(r.buf)), r.size-off)))
	for errors.Is(err, errShrank) {
		b, err = r.at(off, int(min(int64(len(r.buf)), r.size-off)))
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for n+8 <= len(b) && binary.LittleEndian.Uint64(b[n:]) == 0 {
		n += 8
	}
	for n < len(b) && b[n] == 0 {
		n++
	}
	return int64(n), nil
}
