package frame

// The frame's binary encoding: a header (flags, dir, uvarint seq, varint at,
// then the cut's length and hash, the event and signal, the exit code, the
// header block's length and bytes, as the flags say) followed by the raw
// bytes. Encodings without the head flag (every one written before header
// framing) decode as they did. It is the frame's stored form:
// the store keeps it in its database (see store/checksum.go), and a spool's
// frame and tail records carry it as it is (the spool package owns the
// records around it).

import (
	"encoding/binary"
	"fmt"
)

const (
	flagNoEOL = 1 << iota
	flagCut
	flagEvent
	flagCode
	flagHead
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
	if f.Event != NoEvent {
		flags |= flagEvent
	}
	if f.Code() != nil {
		flags |= flagCode
	}
	head := f.Head()
	if head != nil {
		flags |= flagHead
	}
	dst = append(dst, flags, byte(f.Dir))
	dst = binary.AppendUvarint(dst, f.Seq)
	dst = binary.AppendVarint(dst, f.At)
	if f.Cut != nil {
		dst = binary.AppendUvarint(dst, uint64(f.Cut.Len))
		dst = append(dst, f.Cut.SHA256[:]...)
	}
	if f.Event != NoEvent {
		dst = appendString(dst, f.Event.String())
		dst = appendString(dst, f.Signal())
	}
	if code := f.Code(); code != nil {
		dst = binary.AppendVarint(dst, int64(*code))
	}
	if head != nil {
		dst = binary.AppendUvarint(dst, uint64(len(head)))
		dst = append(dst, head...)
	}
	return dst
}

// Append appends the full binary encoding of f (header and Raw) to dst.
func Append(dst []byte, f *Frame) []byte {
	return append(AppendHeader(dst, f), f.Raw...)
}

// DecodeHeader decodes a header written by AppendHeader and returns the frame
// (Raw unset; its header block, if any, a copy) and the bytes that follow
// the header.
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
	var signal string
	var code *int
	if flags&flagEvent != 0 {
		name, rest, err := readString(b)
		if err != nil {
			return f, nil, err
		}
		var ok bool
		if f.Event, ok = ParseEvent(name); !ok {
			return f, nil, fmt.Errorf("decode frame: %w: %q", ErrBadEvent, name)
		}
		if signal, b, err = readString(rest); err != nil {
			return f, nil, err
		}
	}
	if flags&flagCode != 0 {
		c, n := binary.Varint(b)
		if n <= 0 {
			return f, nil, ErrTruncated
		}
		code = new(int)
		*code = int(c)
		b = b[n:]
	}
	f.SetEnd(signal, code)
	if flags&flagHead != 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return f, nil, ErrTruncated
		}
		f.SetHead(append(make([]byte, 0, l), b[n:n+int(l)]...)) // a copy: b may be a database's memory
		b = b[n+int(l):]
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
