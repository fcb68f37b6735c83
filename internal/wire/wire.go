// Package wire owns framing: how the byte stream a JSON-RPC peer reads or
// writes is cut into frames, and how a frame is written back. There are
// two framings. Lines: one frame per line, ended by "\n" (Agentty plugins,
// MCP servers). Headers: a header block ending in a blank line, then a
// body of Content-Length bytes (language servers); the header bytes are
// kept beside the body, so that a frame written back is the bytes that
// crossed. Every part of tapedeck that cuts a peer's stream into frames
// (the relay, the spool's line records, the live reader of the engine that
// plays the host, the playground) does it here; nothing else splits a
// peer's stream on "\n".
//
// The package never rewrites a frame's bytes unless asked (Reframe) and
// never holds more than a header block of its own. It imports only the
// standard library.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Framing names how a stream is cut into frames. The zero value is Lines.
type Framing uint8

// The framings.
const (
	Lines   Framing = iota // one frame per line, ended by "\n"
	Headers                // a header block with Content-Length, then the body
)

// String is the framing's name as tapes and flags spell it.
func (f Framing) String() string {
	switch f {
	case Lines:
		return "lines"
	case Headers:
		return "headers"
	}
	return fmt.Sprintf("framing(%d)", uint8(f))
}

// ErrFraming is returned by Parse for a name that is not a framing.
var ErrFraming = errors.New("unknown framing")

// Parse is the inverse of String; "" is Lines (the framing of every
// session recorded before framings had names).
func Parse(s string) (Framing, error) {
	switch s {
	case "", "lines":
		return Lines, nil
	case "headers":
		return Headers, nil
	}
	return Lines, fmt.Errorf("%w %q (want lines or headers)", ErrFraming, s)
}

// MaxHead bounds a header block: a stream whose header lines run longer
// without ending the block is not header-framed there, and what was held
// is given back as a bare line (see Scanner).
const MaxHead = 64 << 10

// LineEnd is the index of the "\n" that ends the line at the start of p, or
// -1 when p holds no line end. It is the one place a line's end is found.
func LineEnd(p []byte) int { return bytes.IndexByte(p, '\n') }

// CountLines is how many line ends p holds.
func CountLines(p []byte) int { return bytes.Count(p, newline) }

var newline = []byte{'\n'}

// Lines returns the lines of block, each without its "\n"; a last line
// without one is returned too. It is for blocks known to be whole lines
// (a spool's record of several lines).
func SplitLines(block []byte) [][]byte {
	var out [][]byte
	for len(block) > 0 {
		i := LineEnd(block)
		if i < 0 {
			out = append(out, block)
			break
		}
		out = append(out, block[:i])
		block = block[i+1:]
	}
	return out
}

// Detect names the framing of a stream from its first bytes: Headers when
// they begin with a Content-Length or Content-Type header field (the two
// fields of the base protocol of language servers), in any letter case;
// Lines otherwise. sure is false while first is a prefix of such a field
// name and more bytes could tell.
func Detect(first []byte) (f Framing, sure bool) {
	for _, name := range headerFields {
		n := min(len(first), len(name))
		if asciiEqualFold(first[:n], name[:n]) {
			if n == len(name) {
				return Headers, true
			}
			return Headers, false
		}
	}
	return Lines, true
}

var headerFields = [][]byte{[]byte("content-length:"), []byte("content-type:")}

func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// HeadFor is the header block tapedeck writes before a body of n bytes
// that it made itself: "Content-Length: n\r\n\r\n".
func HeadFor(n int) []byte {
	return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", n)
}

// Canonical reports whether head is exactly HeadFor(n).
func Canonical(head []byte, n int) bool {
	const pre, post = "Content-Length: ", "\r\n\r\n"
	if len(head) < len(pre)+len(post)+1 || string(head[:len(pre)]) != pre || string(head[len(head)-len(post):]) != post {
		return false
	}
	digits := head[len(pre) : len(head)-len(post)]
	if len(digits) > 1 && digits[0] == '0' {
		return false
	}
	v, err := strconv.ParseUint(string(digits), 10, 63)
	return err == nil && v == uint64(n)
}

// ContentLength is the value of head's Content-Length field, and whether it
// has one that parses (a decimal number below 2^40; the field name in any
// letter case, the value with blanks around it).
func ContentLength(head []byte) (int64, bool) {
	for len(head) > 0 {
		i := LineEnd(head)
		line := head
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if n, ok := lengthField(line); ok {
			return n, true
		}
	}
	return 0, false
}

// lengthField parses one header line as a Content-Length field.
func lengthField(line []byte) (int64, bool) {
	const name = "content-length:"
	if len(line) < len(name) || !asciiEqualFold(line[:len(name)], []byte(name)) {
		return 0, false
	}
	v := bytes.TrimSpace(line[len(name):])
	if len(v) == 0 || len(v) > 13 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n < 1<<40
}

// Reframe is head with its Content-Length set to n, for a body that
// tapedeck changed (a live id put in a recorded answer): head itself when
// it says n already or has no such field, else a copy with the number
// replaced and every other byte kept.
func Reframe(head []byte, n int) []byte {
	if head == nil {
		return nil
	}
	if old, ok := ContentLength(head); !ok || old == int64(n) {
		return head
	}
	out := make([]byte, 0, len(head)+4)
	rest := head
	done := false
	for len(rest) > 0 {
		i := LineEnd(rest)
		line, end := rest, []byte(nil)
		if i >= 0 {
			line, end, rest = rest[:i], rest[i:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		if _, ok := lengthField(line); ok && !done {
			const name = len("content-length:")
			cr := bytes.HasSuffix(line, []byte("\r"))
			out = append(out, line[:name]...)
			out = append(out, ' ')
			out = strconv.AppendInt(out, int64(n), 10)
			if cr {
				out = append(out, '\r')
			}
			done = true
		} else {
			out = append(out, line...)
		}
		out = append(out, end...)
	}
	return out
}

// Append appends a frame as it goes on the wire: its head and body as they
// are when it has a head (a header-framed message), else the body and,
// when eol, the "\n" that ends its line. It never changes a byte: a caller
// that changed a header-framed body calls Reframe first.
func Append(dst, head, body []byte, eol bool) []byte {
	if head != nil {
		dst = append(dst, head...)
		return append(dst, body...)
	}
	dst = append(dst, body...)
	if eol {
		dst = append(dst, '\n')
	}
	return dst
}
