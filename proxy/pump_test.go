package proxy

import (
	"bytes"
	"crypto/sha256"
	"io"
	"testing"
	"testing/iotest"
)

type collectSink struct {
	lines  []Line
	events []Event
}

func (c *collectSink) Line(l *Line) {
	cp := *l
	cp.Bytes = bytes.Clone(l.Bytes)
	c.lines = append(c.lines, cp)
}

func (c *collectSink) Event(e Event) { c.events = append(c.events, e) }

// joined rebuilds the stream from the lines the sink saw.
func (c *collectSink) joined() []byte {
	var b bytes.Buffer
	for _, l := range c.lines {
		b.Write(l.Bytes)
		if l.EOL {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func pumpAll(t *testing.T, r io.Reader, max int) (*collectSink, []byte) {
	t.Helper()
	sink := &collectSink{}
	var out bytes.Buffer
	p := pump{stream: Stdout, sink: sink, max: max}
	if !p.run(r, &out) {
		t.Fatal("run did not report EOF")
	}
	return sink, out.Bytes()
}

func TestPumpSplitsEveryWayAReadCanSplit(t *testing.T) {
	inputs := []string{
		"",
		"\n",
		"a\nb\n",
		"no newline at end",
		"crlf\r\n\r\n",
		"\x00\xff\n\xe2\x80\xa8\n",
		string(bytes.Repeat([]byte("long"), 50000)) + "\nshort\n",
	}
	readers := map[string]func(io.Reader) io.Reader{
		"plain":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, in := range inputs {
		for name, wrap := range readers {
			sink, out := pumpAll(t, wrap(bytes.NewReader([]byte(in))), DefaultMaxLine)
			if !bytes.Equal(out, []byte(in)) {
				t.Errorf("%s %.20q: forwarded %.20q", name, in, out)
			}
			if got := sink.joined(); !bytes.Equal(got, []byte(in)) {
				t.Errorf("%s %.20q: lines join to %.20q", name, in, got)
			}
			for _, l := range sink.lines {
				if l.Len != int64(len(l.Bytes)) || l.SHA256 != nil {
					t.Errorf("%s: uncut line has Len %d for %d bytes", name, l.Len, len(l.Bytes))
				}
			}
		}
	}
}

func TestPumpCutsLongLines(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789"), 30000)
	in := append(append(bytes.Clone(long), '\n'), "next\n"...)
	sink, out := pumpAll(t, iotest.HalfReader(bytes.NewReader(in)), 1000)
	if !bytes.Equal(out, in) {
		t.Fatal("a cut line was not forwarded whole")
	}
	if len(sink.lines) != 2 {
		t.Fatalf("%d lines, want 2", len(sink.lines))
	}
	l := sink.lines[0]
	if len(l.Bytes) != 1000 || l.Len != int64(len(long)) || l.SHA256 == nil || *l.SHA256 != sha256.Sum256(long) {
		t.Errorf("cut line: %d bytes, Len %d, hash set %v", len(l.Bytes), l.Len, l.SHA256 != nil)
	}
	if string(sink.lines[1].Bytes) != "next" || sink.lines[1].SHA256 != nil {
		t.Errorf("line after the cut one: %+v", sink.lines[1])
	}
}

// FuzzPump: whatever the bytes and however reads split them, the forwarded
// output and the concatenated lines both equal the input.
func FuzzPump(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), uint8(0), uint16(100))
	f.Add([]byte("x"), uint8(1), uint16(1))
	f.Fuzz(func(t *testing.T, in []byte, how uint8, max uint16) {
		var r io.Reader = bytes.NewReader(in)
		switch how % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		m := int(max)%4096 + 1
		sink, out := pumpAll(t, r, m)
		if !bytes.Equal(out, in) {
			t.Fatalf("forwarded %q, want %q", out, in)
		}
		var rebuilt bytes.Buffer
		for _, l := range sink.lines {
			if l.SHA256 == nil && int64(len(l.Bytes)) != l.Len {
				t.Fatalf("line length %d, Len %d", len(l.Bytes), l.Len)
			}
			if len(l.Bytes) > m {
				t.Fatalf("line of %d bytes over the cap %d", len(l.Bytes), m)
			}
			if l.SHA256 != nil {
				// Recover the full line from the input to check the hash.
				full := in[rebuilt.Len() : rebuilt.Len()+int(l.Len)]
				if sha256.Sum256(full) != *l.SHA256 || !bytes.HasPrefix(full, l.Bytes) {
					t.Fatal("cut line's hash or prefix is wrong")
				}
				rebuilt.Write(full)
			} else {
				rebuilt.Write(l.Bytes)
			}
			if l.EOL {
				rebuilt.WriteByte('\n')
			}
		}
		if !bytes.Equal(rebuilt.Bytes(), in) {
			t.Fatalf("lines rebuild %q, want %q", rebuilt.Bytes(), in)
		}
	})
}
