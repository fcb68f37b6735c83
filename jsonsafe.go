package main

import (
	"fmt"
	"unicode/utf8"
)

// hides reports whether r, printed as it is, could hide, reorder or run
// text on a terminal or in a reviewer's editor: DEL and the C1 controls
// (U+0080–U+009F; U+009B is a CSI on some terminals), the bidirectional
// marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069), the line and paragraph separators and
// the BOM. sanitize escapes these in human output, jsonSafe in JSON; C0
// controls are escaped by both on their own.
func hides(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029 || r == 0xfeff
}

// jsonSafe appends the JSON text src to dst with every character hides
// names written as a \uXXXX escape, so that what a plugin sent cannot
// drive the terminal of whoever reads --json output. The result is valid
// JSON exactly when src is, and decodes to the same value: in valid JSON
// such characters occur only inside strings, where the escape means the
// same character. Everything else is copied byte for byte (bytes that are
// not UTF-8 too). Tapes must not go through it: their frames are verbatim.
//
// Call it on a whole JSON text or a whole line of one (never on a piece
// that may end inside a UTF-8 sequence): out = jsonSafe(out[:0], js).
func jsonSafe(dst, src []byte) []byte {
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
