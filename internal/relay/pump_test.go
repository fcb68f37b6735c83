package relay

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tapedeck/tapedeck/internal/wire"
)

// collectSink joins what the pump hands over back into lines, checking
// that pieces come in order.
type collectSink struct {
	lines   []collected
	events  []Event
	partial [4][]byte
	pieces  int
	bad     []string
}

type collected struct {
	Stream Stream
	Head   []byte
	Bytes  []byte
	EOL    bool
}

func (c *collectSink) Line(l *Line) {
	got := c.partial[l.Stream]
	if l.Off != int64(len(got)) {
		c.bad = append(c.bad, fmt.Sprintf("piece at offset %d after %d bytes", l.Off, len(got)))
	}
	got = append(got, l.Bytes...)
	if !l.Done {
		c.pieces++
		if l.EOL {
			c.bad = append(c.bad, "a piece with EOL")
		}
		c.partial[l.Stream] = got
		return
	}
	c.lines = append(c.lines, collected{Stream: l.Stream, Head: bytes.Clone(l.Head), Bytes: got, EOL: l.EOL})
	c.partial[l.Stream] = nil
}

func (c *collectSink) Event(e Event) { c.events = append(c.events, e) }

// batchSink is a collectSink that takes a read's lines at once, checking
// what Batcher promises.
type batchSink struct {
	collectSink
	batches int
}

func (c *batchSink) Lines(s Stream, block []byte, n int, at time.Time) {
	c.batches++
	if n < 2 || bytes.Count(block, []byte("\n")) != n || block[len(block)-1] != '\n' {
		c.bad = append(c.bad, fmt.Sprintf("batch of %d lines: %q", n, block))
	}
	if len(c.partial[s]) > 0 {
		c.bad = append(c.bad, "a batch in the middle of a line")
	}
	for _, l := range bytes.SplitAfter(block, []byte("\n")) {
		if len(l) > 0 {
			c.lines = append(c.lines, collected{Stream: s, Bytes: bytes.Clone(l[:len(l)-1]), EOL: true})
		}
	}
}

// joined rebuilds the stream from the lines the sink saw.
func (c *collectSink) joined() []byte {
	var b bytes.Buffer
	var out []byte
	for _, l := range c.lines {
		out = wire.Append(out, l.Head, l.Bytes, l.EOL)
	}
	b.Write(out)
	return b.Bytes()
}

func pumpAll(t *testing.T, r io.Reader) (*collectSink, []byte) {
	t.Helper()
	sink := &collectSink{}
	return sink, pumpInto(t, r, sink, sink)
}

// pumpBatched is pumpAll with a sink that takes a read's lines at once.
func pumpBatched(t *testing.T, r io.Reader) (*batchSink, []byte) {
	t.Helper()
	sink := &batchSink{}
	return sink, pumpInto(t, r, sink, &sink.collectSink)
}

// pumpInto runs a pump from r into sink, whose collected lines are c, and
// returns what it forwarded.
func pumpInto(t *testing.T, r io.Reader, sink Sink, c *collectSink) []byte {
	t.Helper()
	return pumpFramed(t, r, sink, c, nil)
}

// pumpFramed is pumpInto for a stream whose framing ch decides (nil:
// lines).
func pumpFramed(t *testing.T, r io.Reader, sink Sink, c *collectSink, ch *choice) []byte {
	t.Helper()
	var out bytes.Buffer
	p := pump{stream: Stdout, sink: sink, framing: ch}
	if !p.run(r, &out) {
		t.Fatal("run did not report EOF")
	}
	if len(c.bad) > 0 {
		t.Fatalf("pieces out of order: %v", c.bad)
	}
	for s, b := range c.partial {
		if len(b) > 0 {
			t.Fatalf("stream %d: %d bytes handed in pieces, never ended", s, len(b))
		}
	}
	return out.Bytes()
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
			sink, out := pumpAll(t, wrap(bytes.NewReader([]byte(in))))
			if !bytes.Equal(out, []byte(in)) {
				t.Errorf("%s %.20q: forwarded %.20q", name, in, out)
			}
			if got := sink.joined(); !bytes.Equal(got, []byte(in)) {
				t.Errorf("%s %.20q: lines join to %.20q", name, in, got)
			}
			bsink, out := pumpBatched(t, wrap(bytes.NewReader([]byte(in))))
			if got := bsink.joined(); !bytes.Equal(out, []byte(in)) || !bytes.Equal(got, []byte(in)) {
				t.Errorf("%s %.20q, lines taken at once: forwarded %.20q, lines join to %.20q", name, in, out, got)
			}
		}
	}
}

// TestPumpHandsLongLinesInPieces: a line longer than a read reaches the
// sink in pieces of at least pieceMin bytes (but the last) as it arrives,
// each before it is forwarded, and the pump keeps no copy of it.
func TestPumpHandsLongLinesInPieces(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789"), 300000)
	in := append(append(bytes.Clone(long), '\n'), "next\n"...)
	sink := &orderSink{}
	p := pump{stream: Stdout, sink: sink}
	if !p.run(iotest.HalfReader(bytes.NewReader(in)), &sink.out) {
		t.Fatal("no EOF")
	}
	if len(sink.bad) > 0 {
		t.Fatal(sink.bad[0])
	}
	if sink.pieces < len(long)/bufSize {
		t.Errorf("%d pieces for a %d-byte line, want at least %d", sink.pieces, len(long), len(long)/bufSize)
	}
	if cap(p.acc) > pieceMin+bufSize || cap(p.spare) > pieceMin+bufSize {
		t.Errorf("the pump kept %d bytes for a long line", max(cap(p.acc), cap(p.spare)))
	}
}

// orderSink checks that every piece and line reaches it before its bytes
// are forwarded: what it has seen always covers what went out.
type orderSink struct {
	out    bytes.Buffer
	seen   int64
	pieces int
	bad    []string
}

func (s *orderSink) Line(l *Line) {
	if int64(s.out.Len()) > s.seen {
		s.bad = append(s.bad, fmt.Sprintf("%d bytes forwarded before the sink saw more than %d", s.out.Len(), s.seen))
	}
	if !l.Done {
		s.pieces++
		if len(l.Bytes) < pieceMin {
			s.bad = append(s.bad, fmt.Sprintf("a piece of %d bytes", len(l.Bytes)))
		}
	}
	s.seen += int64(len(l.Bytes))
	if l.Done && l.EOL {
		s.seen++
	}
}

func (s *orderSink) Event(Event) {}

// FuzzPump: whatever the bytes and however reads split them, the forwarded
// output and the lines the sink saw (pieces joined; a read's lines at once
// for a Batcher) both equal the input.
func FuzzPump(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), uint8(0))
	f.Add([]byte("x"), uint8(1))
	f.Add(bytes.Repeat([]byte("long line "), 10000), uint8(2))
	f.Add([]byte("a\nb\nc\nd\ne"), uint8(4))
	f.Add([]byte("Content-Length: 2\r\n\r\n{}Content-Length: 5\r\n\r\n[1,2]log\n"), uint8(8))
	f.Add([]byte("content-length: 3\n\n[1]"), uint8(25))
	f.Fuzz(func(t *testing.T, in []byte, how uint8) {
		var r io.Reader = bytes.NewReader(in)
		switch how % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		var sink *collectSink
		var out []byte
		if how&8 != 0 {
			// Header framing, or framing found from the first bytes.
			sink = &collectSink{}
			out = pumpFramed(t, r, sink, sink, newChoice(Config{Framing: wire.Headers, Detect: how&16 != 0}))
		} else if how&4 != 0 {
			b, o := pumpBatched(t, r)
			sink, out = &b.collectSink, o
		} else {
			sink, out = pumpAll(t, r)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("forwarded %q, want %q", out, in)
		}
		if got := sink.joined(); !bytes.Equal(got, in) {
			t.Fatalf("lines rebuild %q, want %q", got, in)
		}
	})
}

// TestPumpCutsHeaderFramedMessages: under header framing each message is
// one frame, its block in Head and its body in Bytes, handed once the body
// is complete, however the reads split it; a bare line is a line.
func TestPumpCutsHeaderFramedMessages(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{}}`
	in := "Content-Length: 36\r\n\r\n" + body + "stray\n" + "Content-Length: 2\r\nX: y\r\n\r\n{}"
	for name, r := range map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(in) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in)) },
		"halves":   func() io.Reader { return iotest.HalfReader(strings.NewReader(in)) },
	} {
		sink := &collectSink{}
		out := pumpFramed(t, r(), sink, sink, newChoice(Config{Detect: true}))
		if string(out) != in {
			t.Errorf("%s: forwarded %q, want %q", name, out, in)
		}
		want := []collected{
			{Stream: Stdout, Head: []byte("Content-Length: 36\r\n\r\n"), Bytes: []byte(body), EOL: true},
			{Stream: Stdout, Bytes: []byte("stray"), EOL: true},
			{Stream: Stdout, Head: []byte("Content-Length: 2\r\nX: y\r\n\r\n"), Bytes: []byte("{}"), EOL: true},
		}
		if !reflect.DeepEqual(sink.lines, want) {
			t.Errorf("%s: frames\n%+v\nwant\n%+v", name, sink.lines, want)
		}
	}
}
