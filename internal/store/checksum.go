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
//	'I' crc, frame.Append          the whole frame (schema 2)
//	'C' crc, header, uvarint(len)  a big frame; its raw bytes in chunks (schema 2)
//	'i' frame.Append               as 'I', without a checksum (schema 1)
//	'c' header, uvarint(len)       as 'C', without a checksum (schema 1)
//
// crc is the CRC-32C (4 bytes, big-endian) of the key and the rest of the
// value. Under 'C', each chunk (keyed by the frame's key and the chunk's
// number, 4 bytes big-endian) is its crc (of its key and its bytes)
// followed by the bytes. Values of schema 1 are read as they were.
const (
	valInline     = 'i'
	valChunked    = 'c'
	valInlineSum  = 'I'
	valChunkedSum = 'C'
	sumSize       = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(key, rest []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, rest)
}

// appendSummed appends kind, the checksum of key and body, and body to dst.
func appendSummed(dst []byte, kind byte, key, body []byte) []byte {
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint32(dst, checksum(key, body))
	return append(dst, body...)
}

// inlineValue is the stored value of a frame kept whole.
func inlineValue(key []byte, f *frame.Frame) []byte {
	return appendSummed(nil, valInlineSum, key, frame.Append(nil, f))
}

// chunkedValue is the stored value of a frame whose raw bytes go in chunks.
func chunkedValue(key []byte, f *frame.Frame) []byte {
	body := frame.AppendHeader(nil, f)
	body = binary.AppendUvarint(body, uint64(len(f.Raw)))
	return appendSummed(nil, valChunkedSum, key, body)
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

// decodeValue decodes the stored value v of the frame at key of session id,
// reading a big frame's chunks into *big (reused). It checks every
// checksum; a mismatch or a value that does not decode is an error
// wrapping ErrDamaged that names the session and the frame. summed says
// whether the value carried checksums (schema 2).
func decodeValue(id string, key, v []byte, chunks *bolt.Bucket, big *[]byte) (f frame.Frame, summed bool, err error) {
	bad := func(format string, args ...any) (frame.Frame, bool, error) {
		return frame.Frame{}, summed, frameDamage(id, key, format, args...)
	}
	if len(v) == 0 {
		return bad("empty value")
	}
	kind, body := v[0], v[1:]
	switch kind {
	case valInlineSum, valChunkedSum:
		summed = true
		if len(body) < sumSize {
			return bad("value too short for its checksum")
		}
		want := binary.BigEndian.Uint32(body)
		body = body[sumSize:]
		if got := checksum(key, body); got != want {
			return bad("checksum mismatch (stored %08x, computed %08x)", want, got)
		}
	case valInline, valChunked:
	default:
		return bad("unknown value kind %q", kind)
	}
	if kind == valInline || kind == valInlineSum {
		if f, err = frame.Decode(body); err != nil {
			return bad("%v", err)
		}
		return f, summed, nil
	}
	f, rest, err := frame.DecodeHeader(body)
	if err != nil {
		return bad("%v", err)
	}
	size, n := binary.Uvarint(rest)
	if n <= 0 || chunks == nil {
		return bad("chunked frame without chunks")
	}
	buf := (*big)[:0]
	c := chunks.Cursor()
	i := uint32(0)
	for k, ch := c.Seek(key); k != nil && bytes.HasPrefix(k, key); k, ch = c.Next() {
		if summed {
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
