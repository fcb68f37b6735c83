package frame

import (
	"encoding/binary"
	"fmt"
)

const (
	flagNoEOL = 1 << iota
	flagCut
	flagEvent
	flagCode
)

// AppendHeader appends the binary encoding of everything in f but Raw to dst.
// A full encoding is the header followed by Raw; see Decode.
func AppendHeader(dst []byte, f *Frame) []byte {
	var flags byte
	if f.NoEOL {
		flags |= flagNoEOL
	}
	if f.Cut != nil {
		flags |= flagCut
	}
	if f.Event != "" {
		flags |= flagEvent
	}
	if f.Code != nil {
		flags |= flagCode
	}
	dst = append(dst, flags, byte(f.Dir))
	dst = binary.AppendUvarint(dst, f.Seq)
	dst = binary.AppendVarint(dst, f.At)
	if f.Cut != nil {
		dst = binary.AppendUvarint(dst, uint64(f.Cut.Len))
		dst = append(dst, f.Cut.SHA256[:]...)
	}
	if f.Event != "" {
		dst = appendString(dst, f.Event)
		dst = appendString(dst, f.Signal)
	}
	if f.Code != nil {
		dst = binary.AppendVarint(dst, int64(*f.Code))
	}
	return dst
}

// Append appends the full binary encoding of f (header and Raw) to dst.
func Append(dst []byte, f *Frame) []byte {
	return append(AppendHeader(dst, f), f.Raw...)
}

// DecodeHeader decodes a header written by AppendHeader and returns the frame
// (Raw unset) and the bytes that follow the header.
func DecodeHeader(b []byte) (Frame, []byte, error) {
	var f Frame
	if len(b) < 2 {
		return f, nil, ErrTruncated
	}
	flags, dir := b[0], Dir(b[1])
	if dir > Err {
		return f, nil, fmt.Errorf("decode frame: %w: %d", ErrBadDir, dir)
	}
	f.Dir = dir
	f.NoEOL = flags&flagNoEOL != 0
	b = b[2:]
	var n int
	if f.Seq, n = binary.Uvarint(b); n <= 0 {
		return f, nil, ErrTruncated
	}
	b = b[n:]
	if f.At, n = binary.Varint(b); n <= 0 {
		return f, nil, ErrTruncated
	}
	b = b[n:]
	if flags&flagCut != 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+32 || l > 1<<62 {
			return f, nil, ErrTruncated
		}
		f.Cut = &Cut{Len: int64(l)}
		copy(f.Cut.SHA256[:], b[n:n+32])
		b = b[n+32:]
	}
	if flags&flagEvent != 0 {
		var err error
		if f.Event, b, err = readString(b); err != nil {
			return f, nil, err
		}
		if f.Signal, b, err = readString(b); err != nil {
			return f, nil, err
		}
	}
	if flags&flagCode != 0 {
		c, n := binary.Varint(b)
		if n <= 0 {
			return f, nil, ErrTruncated
		}
		code := int(c)
		f.Code = &code
		b = b[n:]
	}
	return f, b, nil
}

// Decode decodes a full encoding written by Append. Raw aliases b.
func Decode(b []byte) (Frame, error) {
	f, rest, err := DecodeHeader(b)
	if err != nil {
		return f, err
	}
	f.Raw = rest
	return f, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return "", nil, ErrTruncated
	}
	return string(b[n : n+int(l)]), b[n+int(l):], nil
}

// A long line may reach the spool in pieces as it arrives, before its end
// is known: each piece record is a piece header and the bytes; the record
// that ends the line is a tail header (the length of the pieces before it)
// followed by the frame's full encoding, whose Raw is the line's last bytes.

// AppendPieceHeader appends the header of a piece: the stream, the offset
// of the piece's bytes in its line and the time they arrived.
func AppendPieceHeader(dst []byte, d Dir, off int64, at int64) []byte {
	dst = append(dst, byte(d))
	dst = binary.AppendUvarint(dst, uint64(off))
	return binary.AppendVarint(dst, at)
}

// DecodePiece decodes a piece written after AppendPieceHeader; bytes aliases b.
func DecodePiece(b []byte) (d Dir, off int64, at int64, bytes []byte, err error) {
	if len(b) < 1 {
		return 0, 0, 0, nil, ErrTruncated
	}
	d = Dir(b[0])
	if d < In || d > Err {
		return 0, 0, 0, nil, fmt.Errorf("decode piece: %w: %d", ErrBadDir, d)
	}
	b = b[1:]
	o, n := binary.Uvarint(b)
	if n <= 0 || o > 1<<62 {
		return 0, 0, 0, nil, ErrTruncated
	}
	b = b[n:]
	if at, n = binary.Varint(b); n <= 0 {
		return 0, 0, 0, nil, ErrTruncated
	}
	return d, int64(o), at, b[n:], nil
}

// AppendTailHeader appends the header of a line's tail record: prefix, the
// length of the pieces that came before, and the header of f, whose Raw
// (the line's last bytes) follows.
func AppendTailHeader(dst []byte, prefix int64, f *Frame) []byte {
	dst = binary.AppendUvarint(dst, uint64(prefix))
	return AppendHeader(dst, f)
}

// DecodeTail decodes a tail record: the length of the pieces before it and
// the frame, whose Raw (aliasing b) is the line's last bytes.
func DecodeTail(b []byte) (prefix int64, f Frame, err error) {
	p, n := binary.Uvarint(b)
	if n <= 0 || p > 1<<62 {
		return 0, f, ErrTruncated
	}
	f, err = Decode(b[n:])
	if err == nil && f.IsEvent() {
		err = fmt.Errorf("decode tail: an event has no pieces")
	}
	return int64(p), f, err
}

// The whole lines of one read may reach the spool as one record: a lines
// header (the stream, the seq of the first line, the time of the read)
// followed by the lines as they came, each with its "\n". Their seqs follow
// one another.

// AppendLinesHeader appends the header of a record of whole lines.
func AppendLinesHeader(dst []byte, d Dir, seq uint64, at int64) []byte {
	dst = append(dst, byte(d))
	dst = binary.AppendUvarint(dst, seq)
	return binary.AppendVarint(dst, at)
}

// DecodeLines decodes a record of whole lines; block (aliasing b) holds the
// lines, each ending in "\n".
func DecodeLines(b []byte) (d Dir, seq uint64, at int64, block []byte, err error) {
	if len(b) < 1 {
		return 0, 0, 0, nil, ErrTruncated
	}
	d = Dir(b[0])
	if d < In || d > Err {
		return 0, 0, 0, nil, fmt.Errorf("decode lines: %w: %d", ErrBadDir, d)
	}
	b = b[1:]
	seq, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, 0, nil, ErrTruncated
	}
	b = b[n:]
	if at, n = binary.Varint(b); n <= 0 {
		return 0, 0, 0, nil, ErrTruncated
	}
	block = b[n:]
	if len(block) == 0 || block[len(block)-1] != '\n' {
		return 0, 0, 0, nil, fmt.Errorf("decode lines: %w: the last line has no newline", ErrTruncated)
	}
	return d, seq, at, block, nil
}
