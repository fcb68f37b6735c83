package spool

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenSalt is the salt of testdata/v2.spool.
const goldenSalt = 0x67733970

type goldenRecord struct {
	typ     byte
	payload string
	decoded any // piece, lines or tail, for those types
}

// What a piece, lines or tail record decodes to.
type (
	piece struct {
		stream  byte
		off, at int64
		bytes   string
	}
	lines struct {
		stream byte
		seq    uint64
		at     int64
		block  string
	}
	tail struct {
		prefix int64
		frame  string
	}
)

// decode decodes a piece, lines or tail payload; nil for other types.
func decode(typ byte, p []byte) (any, error) {
	switch typ {
	case TypePiece:
		s, off, at, b, err := DecodePiece(p)
		return piece{s, off, at, string(b)}, err
	case TypeLines:
		s, seq, at, block, err := DecodeLines(p)
		return lines{s, seq, at, string(block)}, err
	case TypeTail:
		prefix, frame, err := DecodeTail(p)
		return tail{prefix, string(frame)}, err
	}
	return nil, nil
}

// goldenRecords are the records of testdata/v2.spool, a spool the recorder
// wrote before the record format moved into this package (at commit
// 88923e8, when frame encoded the piece, tail and lines headers): one
// record of every type, whole lines, a read's lines, a long line in pieces
// under the recording cap (64 bytes) and one over it, a line over the cap,
// a line without "\n", and every event. The payloads are written down here
// byte for byte; the frame encodings in F and T records are the frame
// package's.
func goldenRecords() []goldenRecord {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return string(h[:]) }
	cutLine := strings.Repeat("x", 100)
	cutPieces := strings.Repeat("e", 40) + strings.Repeat("f", 40) + "gg"
	return []goldenRecord{
		{typ: 'S', payload: `{"id":"01golden","name":"golden","command":["node","main.mjs"],"cwd":"/plugin","plugin":{"id":"","name":"","version":""},"started":"2026-01-02T03:04:05Z","ended":null,"status":"recording","exit":{"code":null},"frames":{"in":0,"out":0,"err":0},"bytes":{"in":0,"out":0,"err":0},"tapedeck":"dev"}`},
		// flags 0, dir in, seq 1, at 1 ms (zigzag varint), raw.
		{typ: 'F', payload: "\x00\x01\x01\x80\x89\x7a" + `{"jsonrpc":"2.0","id":1,"method":"initialize"}`},
		{typ: 'F', payload: "\x00\x02\x02\x80\x92\xf4\x01" + `{"id":1,"result":{}}`},
		// stream out, seq 3, at 2 ms, three lines.
		{typ: 'L', payload: "\x02\x03\x80\x92\xf4\x01a\n\nc\n",
			decoded: lines{StreamOut, 3, 2000000, "a\n\nc\n"}},
		// stream out, offset 0, at 3 ms, the bytes.
		{typ: 'P', payload: "\x02\x00\x80\x9b\xee\x02" + "0123456789abcdefghij",
			decoded: piece{StreamOut, 0, 3000000, "0123456789abcdefghij"}},
		{typ: 'P', payload: "\x02\x14\x80\xa4\xe8\x03" + "ABCDEFGHIJKLMNOPQRST",
			decoded: piece{StreamOut, 20, 4000000, "ABCDEFGHIJKLMNOPQRST"}},
		// prefix 40, then the frame: flags 0, dir out, seq 6, at 5 ms, "end".
		{typ: 'T', payload: "\x28" + "\x00\x02\x06\x80\xad\xe2\x04end",
			decoded: tail{40, "\x00\x02\x06\x80\xad\xe2\x04end"}},
		// flags cut, dir in, seq 7, at 6 ms, len 100, sha256, the first 64 bytes.
		{typ: 'F', payload: "\x02\x01\x07\x80\xb6\xdc\x05\x64" + sum(cutLine) + cutLine[:64]},
		{typ: 'P', payload: "\x03\x00\x80\xbf\xd6\x06" + cutPieces[:40],
			decoded: piece{StreamErr, 0, 7000000, cutPieces[:40]}},
		{typ: 'P', payload: "\x03\x28\x80\xc8\xd0\x07" + cutPieces[40:64],
			decoded: piece{StreamErr, 40, 8000000, cutPieces[40:64]}},
		// prefix 64, then the frame: flags cut, dir err, seq 8, at 9 ms,
		// len 82, sha256, no raw (the line's end is over the cap).
		{typ: 'T', payload: "\x40" + "\x02\x03\x08\x80\xd1\xca\x08\x52" + sum(cutPieces),
			decoded: tail{64, "\x02\x03\x08\x80\xd1\xca\x08\x52" + sum(cutPieces)}},
		// flags no EOL, dir err, seq 9, at 10 ms.
		{typ: 'F', payload: "\x01\x03\x09\x80\xda\xc4\x09warn\r\x00\xff"},
		// Events (flags event, and code for exit): their times were the
		// clock's, since a start in 2026.
		{typ: 'F', payload: "\x04\x01\x0a\xa8\x9f\xcb\xa7\xb6\xc3\xc0\x66\x03eof\x00"},
		{typ: 'F', payload: "\x04\x00\x0b\xfe\xab\xcb\xa7\xb6\xc3\xc0\x66\x06signal\x07SIGTERM"},
		{typ: 'F', payload: "\x04\x02\x0c\xf4\xb9\xcb\xa7\xb6\xc3\xc0\x66\x06closed\x00"},
		{typ: 'F', payload: "\x0c\x00\x0d\xfe\xbd\xcb\xa7\xb6\xc3\xc0\x66\x04exit\x00\x06"},
		{typ: 'N', payload: `{"findings":[]}`},
		{typ: 'E', payload: `{"ended":"2026-01-02T03:04:05.011Z","status":"complete","exit":{"code":3}}`},
	}
}

// layout builds a spool file from the layout as it is written down in
// format.go, independently of the Writer: magic, salt (none for version
// 1), and each record as length, CRC-32C seeded with the salt, type,
// payload.
func layout(magic string, salt uint32, recs []goldenRecord) []byte {
	tab := crc32.MakeTable(crc32.Castagnoli)
	b := []byte(magic)
	if magic != MagicV1 {
		b = binary.LittleEndian.AppendUint32(b, salt)
	}
	for _, r := range recs {
		p := append([]byte{r.typ}, r.payload...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = binary.LittleEndian.AppendUint32(b, crc32.Update(salt, tab, p))
		b = append(b, p...)
	}
	return b
}

func golden(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v2.spool"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenSpoolLayout: the spool the recorder wrote before the format
// moved here is exactly the layout written down.
func TestGoldenSpoolLayout(t *testing.T) {
	if got, want := golden(t), layout(Magic, goldenSalt, goldenRecords()); !bytes.Equal(got, want) {
		t.Fatalf("testdata/v2.spool (%d bytes) is not the layout written down (%d bytes)", len(got), len(want))
	}
}

// TestGoldenSpoolReads: an old spool reads back record for record, and
// every piece, lines and tail record decodes to what was written; a
// version 1 spool of the same records does too.
func TestGoldenSpoolReads(t *testing.T) {
	want := goldenRecords()
	for name, file := range map[string][]byte{"v2": golden(t), "v1": layout(MagicV1, 0, want)} {
		r, err := NewReader(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		session, err := r.Session()
		if err != nil || string(session) != want[0].payload {
			t.Fatalf("%s: Session = %q, %v", name, session, err)
		}
		for i, w := range want[1:] {
			typ, p, err := r.Next()
			if err != nil {
				t.Fatalf("%s: record %d: %v", name, i+1, err)
			}
			if typ != w.typ || string(p) != w.payload {
				t.Fatalf("%s: record %d is %c %q, want %c %q", name, i+1, typ, p, w.typ, w.payload)
			}
			if got, err := decode(typ, p); err != nil || got != w.decoded {
				t.Errorf("%s: record %d decodes to %+v, %v; want %+v", name, i+1, got, err, w.decoded)
			}
		}
		if _, _, err := r.Next(); err != io.EOF || r.Torn() || r.Damaged() != 0 {
			t.Fatalf("%s: after the last record: %v, torn %v, damaged %d", name, err, r.Torn(), r.Damaged())
		}
	}
}

// TestGoldenSpoolWrites: the Writer's typed methods, given the decoded
// records of the old spool (and its salt), write it again byte for byte.
func TestGoldenSpoolWrites(t *testing.T) {
	recs := goldenRecords()
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := create(path, goldenSalt, []byte(recs[0].payload))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, r := range recs[1:] {
		p := []byte(r.payload)
		switch r.typ {
		case TypeFrame:
			err = w.AddFrame(p[:len(p)/2], p[len(p)/2:])
		case TypeLines:
			l := r.decoded.(lines)
			err = w.AddLines(l.stream, l.seq, l.at, []byte(l.block))
		case TypePiece:
			pc := r.decoded.(piece)
			var where int64
			where, err = w.AddPiece(pc.stream, pc.off, pc.at, []byte(pc.bytes))
			if _, ferr := w.Flush(); ferr != nil {
				t.Fatal(ferr)
			}
			back := make([]byte, len(pc.bytes))
			if _, rerr := w.ReadAt(back, where); rerr != nil || string(back) != pc.bytes {
				t.Errorf("record %d: the piece's bytes at %d read back %q, %v", i+1, where, back, rerr)
			}
		case TypeTail:
			tl := r.decoded.(tail)
			err = w.AddTail(tl.prefix, []byte(tl.frame[:3]), []byte(tl.frame[3:]))
		case TypeNotes:
			err = w.AppendNotes(p)
		case TypeEnd:
			err = w.AppendEnd(p)
		}
		if err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
	}
	w.Close()
	if got, want := fileOf(t, path), golden(t); !bytes.Equal(got, want) {
		t.Fatalf("the Writer wrote %d bytes that differ from testdata/v2.spool (%d bytes)", len(got), len(want))
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"piece empty", func() error { _, _, _, _, err := DecodePiece(nil); return err }()},
		{"piece stream 0", func() error { _, _, _, _, err := DecodePiece([]byte("\x00\x00\x00x")); return err }()},
		{"piece stream 4", func() error { _, _, _, _, err := DecodePiece([]byte("\x04\x00\x00x")); return err }()},
		{"piece no time", func() error { _, _, _, _, err := DecodePiece([]byte("\x01\x00")); return err }()},
		{"piece offset too big", func() error {
			_, _, _, _, err := DecodePiece(binary.AppendVarint(binary.AppendUvarint([]byte{1}, 1<<63), 0))
			return err
		}()},
		{"lines no newline", func() error { _, _, _, _, err := DecodeLines([]byte("\x01\x01\x00a")); return err }()},
		{"lines empty block", func() error { _, _, _, _, err := DecodeLines([]byte("\x01\x01\x00")); return err }()},
		{"lines stream 9", func() error { _, _, _, _, err := DecodeLines([]byte("\x09\x01\x00a\n")); return err }()},
		{"tail empty", func() error { _, _, err := DecodeTail(nil); return err }()},
		{"tail prefix too big", func() error { _, _, err := DecodeTail(binary.AppendUvarint(nil, 1<<63)); return err }()},
	} {
		if !errors.Is(c.err, ErrBadRecord) {
			t.Errorf("%s: %v, want ErrBadRecord", c.name, c.err)
		}
	}
}

// TestBorrowed: a big record's last part is the caller's until Flush, and
// the Writer says so.
func TestBorrowed(t *testing.T) {
	w, _ := newSpool(t)
	w.AddFrame([]byte("hdr"), []byte("small"))
	if w.Borrowed() {
		t.Fatal("a small record borrowed its bytes")
	}
	// The payload is the type byte, the header and raw: BigRecord exactly.
	w.AddFrame([]byte("hdr"), make([]byte, BigRecord-4))
	if !w.Borrowed() {
		t.Fatal("a record of BigRecord bytes did not say it borrows its last part")
	}
	if _, err := w.Flush(); err != nil || w.Borrowed() {
		t.Fatalf("after Flush: %v, borrowed %v", err, w.Borrowed())
	}
}

// FuzzDecodePiece: whatever the bytes, the decoders of piece, lines and
// tail records never panic, and what decodes encodes back to the same
// meaning.
func FuzzDecodePiece(f *testing.F) {
	f.Add(append(appendPieceHeader(nil, StreamErr, 3, 4), "x"...))
	f.Add(append(appendTailHeader(nil, 3), "\x00\x01\x01\x00y"...))
	f.Add(append(appendLinesHeader(nil, StreamOut, 5, 6), "a\nb\n"...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, off, at, rest, err := DecodePiece(b); err == nil {
			again := append(appendPieceHeader(nil, s, off, at), rest...)
			if s2, off2, at2, rest2, err := DecodePiece(again); err != nil || s2 != s || off2 != off || at2 != at || !bytes.Equal(rest2, rest) {
				t.Fatalf("piece re-decode differs: %v", err)
			}
		}
		if s, seq, at, block, err := DecodeLines(b); err == nil {
			again := append(appendLinesHeader(nil, s, seq, at), block...)
			if s2, seq2, at2, block2, err := DecodeLines(again); err != nil || s2 != s || seq2 != seq || at2 != at || !bytes.Equal(block2, block) {
				t.Fatalf("lines re-decode differs: %v", err)
			}
		}
		if prefix, frame, err := DecodeTail(b); err == nil {
			again := append(appendTailHeader(nil, prefix), frame...)
			if p2, f2, err := DecodeTail(again); err != nil || p2 != prefix || !bytes.Equal(f2, frame) {
				t.Fatalf("tail re-decode differs: %v", err)
			}
		}
	})
}
