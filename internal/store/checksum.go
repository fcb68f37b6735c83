package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
)

// How a frame is stored. A frame's value in its session's frames bucket
// (keyed by its seq, 8 bytes big-endian) is one kind byte and then:
//
//	'J' crc, frame.Append          the whole frame (schema 3)
//	'D' crc, header, uvarint(len)  a big frame; its raw bytes in chunks (schema 3)
//	'I', 'C'                       as 'J' and 'D' (schema 2)
//	'i' frame.Append               as 'J', without a checksum (schema 1)
//	'c' header, uvarint(len)       as 'D', without a checksum (schema 1)
//
// crc is the CRC-32C (4 bytes, big-endian) of the kind byte, the key and
// the rest of the value: every byte of the value is under it. Schema 2's
// crc left the kind byte out, and values of schemas 1 and 2 are read as
// they were; what tells their kind byte is damaged is below.
// Under 'D' (and 'C', 'c'), each chunk (keyed by the frame's key and the
// chunk's number, 4 bytes big-endian) is its crc (of its key and its
// bytes) followed by the bytes ('c': the bytes alone). A frame goes in
// chunks when its raw bytes are more than chunkSize, in every schema.
const (
	valInline      = 'i'
	valChunked     = 'c'
	valInlineSum   = 'I'
	valChunkedSum  = 'C'
	valInlineKind  = 'J' // the letters after 'I' and 'C'
	valChunkedKind = 'D'
	sumSize        = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is schema 2's: of the key and the rest of the value.
func checksum(key, rest []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, rest)
}

// kindChecksum is schema 3's: of the kind byte, the key and the rest.
func kindChecksum(kind byte, key, rest []byte) uint32 {
	return crc32.Update(crc32.Update(kindSum(kind), castagnoli, key), castagnoli, rest)
}

// kindSum is the CRC-32C of the one byte kind: one step of the table from
// the initial value, where crc32.Checksum([]byte{kind}) would allocate the
// byte for every frame read.
func kindSum(kind byte) uint32 {
	return ^(castagnoli[0xff^kind] ^ 0xffffffff>>8)
}

// appendSummed appends kind, the checksum of kind, key and body, and body
// to dst.
func appendSummed(dst []byte, kind byte, key, body []byte) []byte {
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint32(dst, kindChecksum(kind, key, body))
	return append(dst, body...)
}

// inlineValue is the stored value of a frame kept whole.
func inlineValue(key []byte, f *frame.Frame) []byte {
	return appendSummed(nil, valInlineKind, key, frame.Append(nil, f))
}

// chunkedValue is the stored value of a frame whose raw bytes go in chunks.
func chunkedValue(key []byte, f *frame.Frame) []byte {
	body := frame.AppendHeader(nil, f)
	body = binary.AppendUvarint(body, uint64(len(f.Raw)))
	return appendSummed(nil, valChunkedKind, key, body)
}

// chunkValue is the stored value of one chunk, under chunk key ck.
func chunkValue(ck, data []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, checksum(ck, data))
}

// putChunks stores f.Raw in chunks of chunkSize under key, each with its
// checksum.
func putChunks(chunks *bolt.Bucket, key []byte, raw []byte) error {
	for i := 0; i*chunkSize < len(raw); i++ {
		ck := binary.BigEndian.AppendUint32(bytes.Clone(key), uint32(i))
		data := raw[i*chunkSize : min((i+1)*chunkSize, len(raw))]
		if err := chunks.Put(ck, append(chunkValue(ck, data), data...)); err != nil {
			return err
		}
	}
	return nil
}

// frameDamage says where damage was found: the session and the frame (its
// seq, from the key, which does not depend on the damaged value).
func frameDamage(id string, key []byte, format string, args ...any) error {
	seq := "?"
	if len(key) == 8 {
		seq = fmt.Sprint(binary.BigEndian.Uint64(key))
	}
	return damaged("session %s frame %s: %s", id, seq, fmt.Sprintf(format, args...))
}

// A kind byte that schemas 1 and 2 left outside the checksum can be
// damaged into another kind, which reads the frame as another shape: 'C'
// read as 'I' made a 10 KB frame its 2-byte length, and 'I' read as 'i'
// takes the checksum for the frame's first bytes. Each kind has what tells
// it from the others (schema 3's kind bytes are under their checksum and
// need none of it):
//
//   - a value without a checksum ('i', 'c') in a session stored with
//     checksums, or whose first 4 bytes are the checksum of the rest, lost
//     its checksum's kind (lostChecksum);
//   - a frame in chunks ('C', 'c') read whole has for raw bytes its length,
//     of more than chunkSize, and chunks under its key (chunkedAsWhole);
//   - a frame kept whole ('I', 'i') read as one in chunks has no length
//     that is all the rest of its value, of more than chunkSize, and no
//     chunks; one kept whole has at most chunkSize raw bytes
//     (decodeValue).

// lostChecksum says why a value of kind 'i' or 'c', with body after its
// kind byte, is one that had a checksum; "" when it is not. summedSession
// says the session was stored with checksums: it has a tally, which came
// with them.
func lostChecksum(kind byte, key, body []byte, summedSession bool) string {
	if kind != valInline && kind != valChunked {
		return ""
	}
	if summedSession {
		return fmt.Sprintf("kind %q (no checksum) in a session stored with checksums: its kind byte is damaged", kind)
	}
	if len(body) >= sumSize {
		want, rest := binary.BigEndian.Uint32(body), body[sumSize:]
		if checksum(key, rest) == want || kindChecksum(valInlineKind, key, rest) == want || kindChecksum(valChunkedKind, key, rest) == want {
			return fmt.Sprintf("kind %q (no checksum), but the value carries one: its kind byte is damaged", kind)
		}
	}
	return ""
}

// chunkedAsWhole reports whether a frame read whole, with raw bytes raw,
// was stored in chunks: raw is a length of more than chunkSize, and there
// are chunks under its key. Only a value of a few bytes that are all a
// length costs a look at the chunks.
func chunkedAsWhole(chunks *bolt.Bucket, key, raw []byte) bool {
	if chunks == nil {
		return false
	}
	if size, n := binary.Uvarint(raw); n != len(raw) || size <= chunkSize {
		return false
	}
	k, _ := chunks.Cursor().Seek(key)
	return k != nil && bytes.HasPrefix(k, key)
}

// kindDamaged names the kind byte as the damage for a value of schema 2
// whose checksum matched: the kind byte is all that could have changed.
func kindDamaged(kind byte) string {
	if kind == valInlineSum || kind == valChunkedSum {
		return ": its kind byte is damaged"
	}
	return ""
}

// decodeValue decodes the stored value v of the frame at key of session id,
// reading a big frame's chunks into *big (reused). It checks every
// checksum, and that the value's kind byte is the one it was stored with;
// a mismatch or a value that does not decode is an error wrapping
// ErrDamaged that names the session and the frame. summedSession says the
// session was stored with checksums (it has a tally): each of its frames
// must have one. summed says whether the value carried checksums (schema 2
// or later).
func decodeValue(id string, key, v []byte, chunks *bolt.Bucket, big *[]byte, summedSession bool) (f frame.Frame, summed bool, err error) {
	bad := func(format string, args ...any) (frame.Frame, bool, error) {
		return frame.Frame{}, summed, frameDamage(id, key, format, args...)
	}
	if len(v) == 0 {
		return bad("empty value")
	}
	kind, body := v[0], v[1:]
	switch kind {
	case valInlineKind, valChunkedKind, valInlineSum, valChunkedSum:
		summed = true
		if len(body) < sumSize {
			return bad("value too short for its checksum")
		}
		want := binary.BigEndian.Uint32(body)
		body = body[sumSize:]
		got := checksum(key, body)
		if kind == valInlineKind || kind == valChunkedKind {
			got = kindChecksum(kind, key, body)
		}
		if got != want {
			return bad("checksum mismatch (stored %08x, computed %08x)", want, got)
		}
	case valInline, valChunked:
	default:
		return bad("unknown value kind %q", kind)
	}
	if why := lostChecksum(kind, key, body, summedSession); why != "" {
		return bad("%s", why)
	}
	if kind == valInline || kind == valInlineSum || kind == valInlineKind {
		if f, err = frame.Decode(body); err != nil {
			return bad("%v", err)
		}
		if len(f.Raw) > chunkSize {
			return bad("kind %q (kept whole), but %d bytes, more than a chunk%s", kind, len(f.Raw), kindDamaged(kind))
		}
		if kind != valInlineKind && chunkedAsWhole(chunks, key, f.Raw) {
			return bad("kind %q (kept whole), but its bytes are a length and there are chunks under its key: its kind byte is damaged", kind)
		}
		return f, summed, nil
	}
	f, rest, err := frame.DecodeHeader(body)
	if err != nil {
		return bad("%v", err)
	}
	size, n := binary.Uvarint(rest)
	if n <= 0 || n != len(rest) || size <= chunkSize {
		return bad("kind %q (in chunks), but no length of more than a chunk after its header%s", kind, kindDamaged(kind))
	}
	if chunks == nil {
		return bad("chunked frame without chunks")
	}
	unsummedChunks := kind == valChunked
	buf := (*big)[:0]
	c := chunks.Cursor()
	i := uint32(0)
	for k, ch := c.Seek(key); k != nil && bytes.HasPrefix(k, key); k, ch = c.Next() {
		if !unsummedChunks {
			if len(k) != len(key)+4 || binary.BigEndian.Uint32(k[len(key):]) != i {
				return bad("chunk %d missing", i)
			}
			if len(ch) < sumSize {
				return bad("chunk %d too short for its checksum", i)
			}
			if want, got := binary.BigEndian.Uint32(ch), checksum(k, ch[sumSize:]); got != want {
				return bad("chunk %d: checksum mismatch (stored %08x, computed %08x)", i, want, got)
			}
			ch = ch[sumSize:]
		}
		buf = append(buf, ch...)
		i++
		if uint64(len(buf)) > size {
			break
		}
	}
	if uint64(len(buf)) != size {
		return bad("frame has %d of %d bytes", len(buf), size)
	}
	*big = buf
	f.Raw = buf
	return f, summed, nil
}

// tally is what a session's frames bucket held when it was stored: how many
// frames and the last seq. A damaged page can lose whole frames, which no
// frame's checksum can show; the tally can. Sessions stored before schema
// 2 have none.
type tally struct {
	n, last uint64
}

func (t *tally) add(seq uint64) { t.n, t.last = t.n+1, seq }

func (t tally) encode() []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, t.n), t.last)
}

// storedTally reads session id's tally from tx; ok is false when it has
// none.
func storedTally(tx *bolt.Tx, id []byte) (t tally, ok bool, err error) {
	b := tx.Bucket(bucketTally)
	if b == nil {
		return t, false, nil
	}
	v := b.Get(id)
	if v == nil {
		return t, false, nil
	}
	n, i := binary.Uvarint(v)
	last, j := binary.Uvarint(v[max(i, 0):])
	if i <= 0 || j <= 0 {
		return t, false, damaged("session %s: frame tally does not decode", id)
	}
	return tally{n: n, last: last}, true, nil
}

// check compares what was read (got) with the stored tally want.
func (got tally) check(id string, want tally) error {
	if got == want {
		return nil
	}
	return damaged("session %s: %d frames read up to seq %d, but %d were stored up to seq %d: frames are missing", id, got.n, got.last, want.n, want.last)
}
