// Package escape makes what a plugin or a host sent safe to print: in text
// for a person (Text, Lines) and in JSON for a machine (JSON). It owns the
// list of characters that could drive a terminal or hide text, and nothing
// else: it neither colours nor cuts.
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// hides reports whether r, printed as it is, could hide, reorder or run
// text on a terminal or in a reviewer's editor: DEL and the C1 controls
// (U+0080–U+009F; U+009B is a CSI on some terminals), the bidirectional
// marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069), the line and paragraph separators and
// the BOM. Text escapes these in human output, JSON in JSON; C0 controls
// are escaped by both on their own.
func hides(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029 || r == 0xfeff
}

// JSON appends the JSON text src to dst with every character hides
// names written as a \uXXXX escape, so that what a plugin sent cannot
// drive the terminal of whoever reads --json output. The result is valid
// JSON exactly when src is, and decodes to the same value: in valid JSON
// such characters occur only inside strings, where the escape means the
// same character. Everything else is copied byte for byte (bytes that are
// not UTF-8 too). Tapes must not go through it: their frames are verbatim.
//
// Call it on a whole JSON text or a whole line of one (never on a piece
// that may end inside a UTF-8 sequence): out = escape.JSON(out[:0], js).
func JSON(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		c := src[i]
		if c < 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if hides(r) && !(r == utf8.RuneError && size == 1) {
			dst = fmt.Appendf(dst, `\u%04x`, r)
		} else {
			dst = append(dst, src[i:i+size]...)
		}
		i += size
	}
	return dst
}

// Text escapes what could drive the user's terminal or hide text:
// control characters (C0, DEL, C1, including ESC, so no escape sequence
// survives), bidirectional overrides and isolates, line and paragraph
// separators, and bytes that are not UTF-8 (as \xNN). Everything else is
// kept as it is.
func Text(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hides(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Text for text of several lines: it keeps the line breaks.
func Lines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Text(l)
	}
	return strings.Join(lines, "\n")
}
