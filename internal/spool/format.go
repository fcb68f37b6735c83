package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The record format of a session spool, all of it: the file's layout, the
// record header, the record types and the layout of each type's payload,
// with their encoders and decoders. The Writer and the Reader frame records;
// the recorder writes them through the Writer's typed methods and the store
// decodes them with the functions here.
//
// A spool file is
//
//	Magic  salt  record*
//
// where salt is 4 bytes (uint32, little-endian, random per spool) and a
// record is
//
//	length  crc  type  payload
//
// length (uint32, little-endian) is 1 + len(payload); crc (uint32,
// little-endian) is crc32.Update(salt, Castagnoli, type+payload). A spool
// of version 1 (MagicV1, read only) has no salt: its CRCs start from 0. After
// the last record the file may hold zeros: what a writer allocated ahead.
//
// The payload of each type:
//
//	S  session   JSON of the session's metadata (frame.Session); always the first record
//	F  frame     a frame's binary encoding (frame.Append): a frame header, then its raw bytes
//	P  piece     stream, uvarint offset of the bytes in their line, varint time, the bytes
//	T  tail      uvarint length of the line's pieces before it, then a frame's binary
//	             encoding whose raw is the line's last bytes
//	L  lines     stream, uvarint seq of the first line, varint time, then the lines
//	             of one read, each with its "\n", their seqs following one another
//	N  notes     JSON notes on the session's frames (check findings)
//	E  end       JSON of how the session ended (frame.End); the last record of a finished session
//
// A stream is one byte: 1 stdin, 2 stdout, 3 stderr (frame.Dir's values).
// A time is nanoseconds since the session started. The frame encoding is the
// frame package's: the store keeps the same bytes in its database, so it is
// not part of the spool format; the spool carries it as it is.

// The two spool formats. Version 1 has no salt and is read only. Version 2
// seeds every record's CRC with a random salt stored after the magic, so
// that spool bytes that a plugin happens to print (and that are recorded as
// a line) can never pass for records of this spool when a reader resyncs,
// and may end in zeros: the part of the file allocated ahead of the writer.
const (
	MagicV1 = "TDSPOOL\x01"
	Magic   = "TDSPOOL\x02"
)

// MaxRecord is the largest payload a record may carry (type byte included);
// a header claiming more is treated as corruption.
const MaxRecord = 1 << 31

const (
	headerLen = 8 // uint32 length + uint32 CRC-32C of the payload
	saltLen   = 4
	// recordHeader is what a record adds before its payload: length,
	// checksum and type.
	recordHeader = headerLen + 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcByte is crc32.Update(crc, castagnoli, []byte{b}) without the slice,
// which would escape and cost an allocation per record.
func crcByte(crc uint32, b byte) uint32 {
	crc = ^crc
	crc = castagnoli[byte(crc)^b] ^ (crc >> 8)
	return ^crc
}

// Record types of a tapedeck session spool (see the layout above). A reader
// that resyncs after damage accepts only these.
const (
	TypeSession byte = 'S'
	TypeFrame   byte = 'F'
	TypeEnd     byte = 'E'
	TypeNotes   byte = 'N'
	TypePiece   byte = 'P'
	TypeTail    byte = 'T'
	TypeLines   byte = 'L'
)

func knownType(t byte) bool {
	switch t {
	case TypeSession, TypeFrame, TypeEnd, TypeNotes, TypePiece, TypeTail, TypeLines:
		return true
	}
	return false
}

// The streams a piece or lines record names, numbered as frame.Dir numbers
// them (the spool does not import the frame package).
const (
	StreamIn  byte = 1
	StreamOut byte = 2
	StreamErr byte = 3
)

// ErrBadRecord: a record read whole and passed its checksum, but its payload
// does not decode as its type says.
var ErrBadRecord = errors.New("bad spool record")

// maxOffset bounds the offsets and lengths a record may claim.
const maxOffset = 1 << 62

// appendPieceHeader appends what a piece record's payload holds before its
// bytes.
func appendPieceHeader(dst []byte, stream byte, off, at int64) []byte {
	dst = append(dst, stream)
	dst = binary.AppendUvarint(dst, uint64(off))
	return binary.AppendVarint(dst, at)
}

// appendLinesHeader appends what a lines record's payload holds before its
// lines.
func appendLinesHeader(dst []byte, stream byte, seq uint64, at int64) []byte {
	dst = append(dst, stream)
	dst = binary.AppendUvarint(dst, seq)
	return binary.AppendVarint(dst, at)
}

// appendTailHeader appends what a tail record's payload holds before its
// frame.
func appendTailHeader(dst []byte, prefix int64) []byte {
	return binary.AppendUvarint(dst, uint64(prefix))
}

func validStream(s byte) bool { return s >= StreamIn && s <= StreamErr }

// badRecord is the error of a payload of kind that does not decode.
func badRecord(kind, why string) error {
	return fmt.Errorf("decode %s: %w: %s", kind, ErrBadRecord, why)
}

// badStream is the error of a payload of kind that names no stream.
func badStream(kind string, s byte) error {
	return fmt.Errorf("decode %s: %w: stream %d", kind, ErrBadRecord, s)
}

// DecodePiece decodes the payload of a piece record: the stream, where the
// bytes start in their line, when they came, and the bytes (aliasing b).
func DecodePiece(b []byte) (stream byte, off, at int64, bytes []byte, err error) {
	if len(b) < 1 {
		return 0, 0, 0, nil, badRecord("piece", "empty")
	}
	stream = b[0]
	if !validStream(stream) {
		return 0, 0, 0, nil, badStream("piece", stream)
	}
	o, n := binary.Uvarint(b[1:])
	if n <= 0 || o > maxOffset {
		return 0, 0, 0, nil, badRecord("piece", "bad offset")
	}
	b = b[1+n:]
	if at, n = binary.Varint(b); n <= 0 {
		return 0, 0, 0, nil, badRecord("piece", "bad time")
	}
	return stream, int64(o), at, b[n:], nil
}

// DecodeLines decodes the payload of a lines record: the stream, the seq of
// the first line, when the read came, and the lines (aliasing b), each
// ending in "\n".
func DecodeLines(b []byte) (stream byte, seq uint64, at int64, block []byte, err error) {
	if len(b) < 1 {
		return 0, 0, 0, nil, badRecord("lines", "empty")
	}
	stream = b[0]
	if !validStream(stream) {
		return 0, 0, 0, nil, badStream("lines", stream)
	}
	seq, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, 0, 0, nil, badRecord("lines", "bad seq")
	}
	b = b[1+n:]
	if at, n = binary.Varint(b); n <= 0 {
		return 0, 0, 0, nil, badRecord("lines", "bad time")
	}
	block = b[n:]
	if len(block) == 0 || block[len(block)-1] != '\n' {
		return 0, 0, 0, nil, badRecord("lines", "the last line has no newline")
	}
	return stream, seq, at, block, nil
}

// DecodeTail decodes the payload of a tail record: the length of the line's
// pieces before it, and the frame's binary encoding (aliasing b), which is
// the frame package's to decode.
func DecodeTail(b []byte) (prefix int64, frame []byte, err error) {
	p, n := binary.Uvarint(b)
	if n <= 0 || p > maxOffset {
		return 0, nil, badRecord("tail", "bad prefix")
	}
	return int64(p), b[n:], nil
}
