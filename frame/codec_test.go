package frame

import (
	"bytes"
	"reflect"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	code := 3
	cases := []Frame{
		{Seq: 1, At: 0, Dir: In, Raw: []byte(`{"jsonrpc":"2.0"}`)},
		{Seq: 2, At: 12345, Dir: Out, Raw: []byte("a\rb\x00\xff"), NoEOL: true},
		{Seq: 1 << 40, At: -5, Dir: Err, Raw: []byte{}},
		{Seq: 7, At: 9, Dir: Out, Raw: []byte("first"), Cut: &Cut{Len: 1 << 30, SHA256: [32]byte{1, 2, 3}}},
		{Seq: 8, At: 10, Event: EventExit, Code: &code},
		{Seq: 9, At: 11, Event: EventSignal, Signal: "SIGTERM"},
		{Seq: 10, At: 12, Dir: In, Event: EventEOF},
	}
	for _, want := range cases {
		enc := Append(nil, &want)
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Append(%+v)): %v", want, err)
		}
		if got.Raw == nil {
			got.Raw = []byte{}
		}
		if want.Raw == nil {
			want.Raw = []byte{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	code := 1
	f.Add(Append(nil, &Frame{Seq: 1, Dir: In, Raw: []byte("x")}))
	f.Add(Append(nil, &Frame{Seq: 2, Event: EventExit, Code: &code, Cut: &Cut{Len: 9}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes must encode back to the same bytes' meaning.
		again, err := Decode(Append(nil, &fr))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(again.Raw, fr.Raw) || again.Seq != fr.Seq || again.Event != fr.Event {
			t.Fatalf("re-decode differs: %+v vs %+v", again, fr)
		}
	})
}

func TestPieceAndTailRoundTrip(t *testing.T) {
	b := append(AppendPieceHeader(nil, Out, 1<<20, -3), "bytes"...)
	d, off, at, rest, err := DecodePiece(b)
	if err != nil || d != Out || off != 1<<20 || at != -3 || string(rest) != "bytes" {
		t.Fatalf("DecodePiece = %v %d %d %q %v", d, off, at, rest, err)
	}
	f := Frame{Seq: 4, At: 5, Dir: In, Raw: []byte("end")}
	b = append(AppendTailHeader(nil, 77, &f), f.Raw...)
	d2, seq, at2, block, err := DecodeLines(append(AppendLinesHeader(nil, Err, 9, 10), "x\n\ny\n"...))
	if err != nil || d2 != Err || seq != 9 || at2 != 10 || string(block) != "x\n\ny\n" {
		t.Fatalf("DecodeLines = %v %d %d %q %v", d2, seq, at2, block, err)
	}
	prefix, got, err := DecodeTail(b)
	if err != nil || prefix != 77 || got.Seq != 4 || string(got.Raw) != "end" {
		t.Fatalf("DecodeTail = %d %+v %v", prefix, got, err)
	}
}

func FuzzDecodePiece(f *testing.F) {
	f.Add(append(AppendPieceHeader(nil, Err, 3, 4), "x"...))
	f.Add(append(AppendTailHeader(nil, 3, &Frame{Seq: 1, Dir: In}), "y"...))
	f.Add(append(AppendLinesHeader(nil, Out, 5, 6), "a\nb\n"...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, off, at, rest, err := DecodePiece(b); err == nil {
			again := append(AppendPieceHeader(nil, d, off, at), rest...)
			if d2, off2, at2, rest2, err := DecodePiece(again); err != nil || d2 != d || off2 != off || at2 != at || !bytes.Equal(rest2, rest) {
				t.Fatalf("piece re-decode differs")
			}
		}
		if d, seq, at, block, err := DecodeLines(b); err == nil {
			again := append(AppendLinesHeader(nil, d, seq, at), block...)
			if d2, seq2, at2, block2, err := DecodeLines(again); err != nil || d2 != d || seq2 != seq || at2 != at || !bytes.Equal(block2, block) {
				t.Fatalf("lines re-decode differs")
			}
		}
		if prefix, fr, err := DecodeTail(b); err == nil {
			again := append(AppendTailHeader(nil, prefix, &fr), fr.Raw...)
			if p2, f2, err := DecodeTail(again); err != nil || p2 != prefix || f2.Seq != fr.Seq || !bytes.Equal(f2.Raw, fr.Raw) {
				t.Fatalf("tail re-decode differs")
			}
		}
	})
}
