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
		Frame{Seq: 8, At: 10, Event: EventExit}.WithEnd("", &code),
		Frame{Seq: 9, At: 11, Event: EventSignal}.WithEnd("SIGTERM", nil),
		{Seq: 10, At: 12, Dir: In, Event: EventEOF},
		withHead(Frame{Seq: 11, At: 13, Dir: Out, Raw: []byte(`{}`)}, "Content-Length: 2\r\n\r\n"),
		withHead(Frame{Seq: 12, At: 14, Dir: In, Raw: []byte(`{"a"`), NoEOL: true}, "X: y\ncontent-length: 9\n\n"),
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

func withHead(f Frame, head string) Frame {
	f.SetHead([]byte(head))
	return f
}

// TestOldEncodingsDecodeWithoutHead: an encoding written before header
// framing (no head flag) decodes as a line.
func TestOldEncodingsDecodeWithoutHead(t *testing.T) {
	old := []byte{0, byte(Out), 5, 6, 'h', 'i'} // flags 0, dir out, seq 5, at 3
	f, err := Decode(old)
	if err != nil || f.Head() != nil || string(f.Raw) != "hi" || f.Seq != 5 {
		t.Errorf("Decode(old) = %+v, %v; want seq 5, raw hi, no head", f, err)
	}
}

func FuzzDecode(f *testing.F) {
	code := 1
	f.Add(Append(nil, &Frame{Seq: 1, Dir: In, Raw: []byte("x")}))
	f.Add(Append(nil, ptr(Frame{Seq: 2, Event: EventExit, Cut: &Cut{Len: 9}}.WithEnd("", &code))))
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

func ptr(f Frame) *Frame { return &f }
