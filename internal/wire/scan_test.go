package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// frameOf is one frame as a test sees it.
type frameOf struct {
	head, body string
	eol        bool // a bare line ended by "\n"
	ended      bool // the frame ended (else the stream stopped inside it)
}

func (f frameOf) String() string {
	return fmt.Sprintf("{head %q body %q eol %v ended %v}", f.head, f.body, f.eol, f.ended)
}

// scanAll cuts in into frames, feeding the scanner the reads that sizes
// say (cycled), as the relay would.
func scanAll(f Framing, in []byte, sizes []int) []frameOf {
	s := NewScanner(f)
	var out []frameOf
	var cur bytes.Buffer
	k := 0
	for len(in) > 0 {
		size := len(in)
		if len(sizes) > 0 {
			size = max(1, min(sizes[k%len(sizes)], len(in)))
			k++
		}
		read := in[:size]
		in = in[size:]
		for len(read) > 0 || s.state == sLineStart {
			n, body, end := s.Scan(read)
			cur.Write(body)
			read = read[n:]
			if end {
				head := s.Head()
				out = append(out, frameOf{head: string(head), body: cur.String(), eol: head == nil, ended: true})
				cur.Reset()
			}
			if n == 0 && body == nil && !end {
				break
			}
		}
	}
	rest, inFrame := s.End()
	cur.Write(rest)
	if inFrame {
		out = append(out, frameOf{head: string(s.Head()), body: cur.String()})
	}
	return out
}

// join writes the frames back as Append does.
func join(frames []frameOf) []byte {
	var b []byte
	for _, f := range frames {
		var head []byte
		if f.head != "" {
			head = []byte(f.head)
		}
		b = Append(b, head, []byte(f.body), f.eol && f.ended)
	}
	return b
}

func TestScanHeaders(t *testing.T) {
	msg := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	tests := []struct {
		name string
		in   string
		want []frameOf
	}{
		{"two messages", msg(`{"a":1}`) + msg(`{}`), []frameOf{
			{head: "Content-Length: 7\r\n\r\n", body: `{"a":1}`, ended: true},
			{head: "Content-Length: 2\r\n\r\n", body: `{}`, ended: true},
		}},
		{"extra fields", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", []frameOf{
			{head: "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n", body: "{}", ended: true},
		}},
		{"newline without CR", "content-length: 2\n\n{}", []frameOf{{head: "content-length: 2\n\n", body: "{}", ended: true}}},
		{"no length", "X-Thing: 1\r\n\r\n{}\n", []frameOf{
			{head: "X-Thing: 1\r\n\r\n", body: "", ended: true},
			{body: "{}", eol: true, ended: true},
		}},
		{"a bare line first", "log line\n" + msg("{}"), []frameOf{
			{body: "log line", eol: true, ended: true},
			{head: "Content-Length: 2\r\n\r\n", body: "{}", ended: true},
		}},
		{"a JSON line", "{\"jsonrpc\":\"2.0\"}\n", []frameOf{{body: `{"jsonrpc":"2.0"}`, eol: true, ended: true}}},
		{"wrong length takes what it says", "Content-Length: 4\r\n\r\n{}" + msg("{}"), []frameOf{
			{head: "Content-Length: 4\r\n\r\n", body: "{}Co", ended: true},
			{head: "ntent-Length: 2\r\n\r\n", body: "", ended: true},
			{body: "{}"},
		}},
		{"cut short", "Content-Length: 10\r\n\r\n{}", []frameOf{{head: "Content-Length: 10\r\n\r\n", body: "{}"}}},
		{"head cut short", "Content-Length: 10\r\n", []frameOf{{body: "Content-Length: 10\r\n"}}},
		{"zero length", "Content-Length: 0\r\n\r\n" + msg("{}"), []frameOf{
			{head: "Content-Length: 0\r\n\r\n", body: "", ended: true},
			{head: "Content-Length: 2\r\n\r\n", body: "{}", ended: true},
		}},
	}
	for _, tt := range tests {
		for _, sizes := range [][]int{nil, {1}, {2, 3}, {7}} {
			got := scanAll(Headers, []byte(tt.in), sizes)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s, reads %v:\n got %v\nwant %v", tt.name, sizes, got, tt.want)
			}
			if back := join(got); string(back) != tt.in {
				t.Errorf("%s, reads %v: written back %q, want %q", tt.name, sizes, back, tt.in)
			}
		}
	}
}

func TestScanLines(t *testing.T) {
	in := "a\r\n\nlast"
	want := []frameOf{{body: "a\r", eol: true, ended: true}, {body: "", eol: true, ended: true}, {body: "last"}}
	for _, sizes := range [][]int{nil, {1}, {3}} {
		if got := scanAll(Lines, []byte(in), sizes); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("reads %v: got %v, want %v", sizes, got, want)
		}
	}
}

// TestScanHoldsNoMoreThanMaxHead: a header line that never ends is given
// back as a bare line once it passes MaxHead; the scanner never holds more.
func TestScanHoldsNoMoreThanMaxHead(t *testing.T) {
	long := "Content-Length: " + strings.Repeat("1", 3*MaxHead) + "\n{}\n"
	s := NewScanner(Headers)
	held := 0
	in := []byte(long)
	for len(in) > 0 {
		n, _, _ := s.Scan(in[:min(len(in), 4096)])
		in = in[n:]
		held = max(held, cap(s.head))
	}
	if held > 2*MaxHead+8192 {
		t.Errorf("the scanner held %d bytes, want at most about MaxHead (%d)", held, MaxHead)
	}
	if got := join(scanAll(Headers, []byte(long), []int{4096})); string(got) != long {
		t.Errorf("written back differs from the input")
	}
}

func TestScanGivesTheHeadOfAFrameUntilTheNextBegins(t *testing.T) {
	s := NewScanner(Headers)
	in := []byte("Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]")
	var heads []string
	var keep [][]byte
	for len(in) > 0 {
		n, _, end := s.Scan(in)
		in = in[n:]
		if end {
			keep = append(keep, s.Head())
			heads = append(heads, string(s.Head()))
		}
	}
	if len(keep) != 2 || string(keep[0]) != heads[0] || string(keep[1]) != heads[1] {
		t.Errorf("heads %q changed under the caller: now %q", heads, keep)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want Framing
		sure bool
	}{
		{"Content-Length: 2\r\n", Headers, true},
		{"content-type: x\r\n", Headers, true},
		{"Content-Le", Headers, false},
		{"C", Headers, false},
		{`{"jsonrpc":"2.0"}`, Lines, true},
		{"Error: bad\n", Lines, true},
		{"", Headers, false},
	}
	for _, tt := range tests {
		if got, sure := Detect([]byte(tt.in)); got != tt.want || sure != tt.sure {
			t.Errorf("Detect(%q) = %v, %v; want %v, %v", tt.in, got, sure, tt.want, tt.sure)
		}
	}
}

func TestReframe(t *testing.T) {
	tests := []struct {
		head string
		n    int
		want string
	}{
		{"Content-Length: 2\r\n\r\n", 2, "Content-Length: 2\r\n\r\n"},
		{"Content-Length: 2\r\n\r\n", 10, "Content-Length: 10\r\n\r\n"},
		{"X: y\r\ncontent-length:7\n\n", 3, "X: y\r\ncontent-length: 3\n\n"},
		{"X: y\r\n\r\n", 3, "X: y\r\n\r\n"},
	}
	for _, tt := range tests {
		if got := Reframe([]byte(tt.head), tt.n); string(got) != tt.want {
			t.Errorf("Reframe(%q, %d) = %q, want %q", tt.head, tt.n, got, tt.want)
		}
	}
	if !Canonical(HeadFor(327), 327) || Canonical(HeadFor(327), 32) || Canonical([]byte("Content-Length: 0327\r\n\r\n"), 327) {
		t.Error("Canonical disagrees with HeadFor")
	}
}

func TestParse(t *testing.T) {
	for _, f := range []Framing{Lines, Headers} {
		if got, err := Parse(f.String()); err != nil || got != f {
			t.Errorf("Parse(%q) = %v, %v", f, got, err)
		}
	}
	if _, err := Parse("crlf"); err == nil {
		t.Error("Parse(crlf) took it")
	}
}

// FuzzScan: whatever the stream and however reads split it, the frames
// written back are the stream, byte for byte, and no frame's head is held
// past MaxHead.
func FuzzScan(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]"), uint8(3))
	f.Add([]byte("log\nContent-Type: x\r\ncontent-length: 1\n\n1\n\n"), uint8(1))
	f.Add([]byte("Content-Length: 99\r\n\r\n{}"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, size uint8) {
		for _, fr := range []Framing{Lines, Headers} {
			frames := scanAll(fr, in, []int{int(size), int(size)/2 + 1})
			if back := join(frames); !bytes.Equal(back, in) {
				t.Fatalf("%v: written back %q, want %q (frames %v)", fr, back, in, frames)
			}
			for _, fm := range frames {
				if len(fm.head) > MaxHead+1 {
					t.Fatalf("%v: a head of %d bytes", fr, len(fm.head))
				}
			}
		}
	})
}
