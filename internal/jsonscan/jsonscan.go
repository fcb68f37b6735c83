// Package jsonscan owns the low-level scanning of JSON text that tapedeck's
// parsers share (message, tape, wrap, redact and the canonical form of
// package canon): skipping white space, a string or a whole value without
// decoding it, checking a string (CheckString), finding how much of a
// string cut short decodes (PartialString), decoding a string's escapes
// (Hex4, Unquote), leaving out the white space between tokens (Compact),
// and writing text as a JSON string (AppendString, the one string encoding
// of tapedeck's JSON outputs). It builds no values, keeps no state and
// allocates nothing but what an append to a caller's slice does.
//
// The skip functions do not validate: a caller that needs valid JSON checks
// it first (json.Valid), and on valid JSON they find exactly where each
// value ends. They also take text that is cut short or not JSON at all (a
// frame stored cut, a line of garbage): given 0 <= i <= len(b), they never
// index out of range, never return an index outside [i, len(b)], and report
// false when the text ends before the value does.
package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after b[i] that is not
// white space, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// SkipString returns the index just past the JSON string that opens at
// b[i], and whether that string is terminated. It returns i, false when
// b[i] is not '"', and len(b), false when the text ends first (a trailing
// backslash included). Escapes are not checked: a backslash escapes the
// byte after it, whatever that is.
func SkipString(b []byte, i int) (end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return len(b), false
}

// CheckString checks the JSON string that opens at b[i] as encoding/json
// does: every escape one that JSON names (\" \\ \/ \b \f \n \r \t, or \u
// and four hex digits) and no control character. It returns the index
// just past it and whether it holds an escape; ok is false when b[i] is
// not '"', when the string is not valid, or when the text ends first.
// Bytes that are not UTF-8 pass, as they do encoding/json's scanner.
func CheckString(b []byte, i int) (end int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false, false
	}
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return i, escaped, false
		case c != '\\':
			i++
			continue
		}
		escaped = true
		if i+1 >= len(b) {
			return len(b), escaped, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if _, ok := Hex4(b[i+2:]); !ok {
				return i, escaped, false
			}
			i += 6
		default:
			return i, escaped, false
		}
	}
	return len(b), escaped, false
}

// PartialString is how many bytes of p, the inside of a JSON string from
// some point on (after its opening quote, at a character or an escape),
// can be decoded without the bytes that come after p: up to the closing
// quote (closed true), else up to the last escape that is whole. A \u
// escape of a high surrogate is held back until what follows it shows
// whether a low surrogate completes the pair, so that a string decoded
// piece by piece decodes as it does whole.
func PartialString(p []byte) (n int, closed bool) {
	for i := 0; i < len(p); {
		switch p[i] {
		case '"':
			return i, true
		case '\\':
			need := 2
			if i+1 < len(p) && p[i+1] == 'u' {
				need = 6
				if i+6 <= len(p) && highSurrogate(p[i+2:i+6]) {
					// What follows tells whether a low one completes it.
					switch {
					case i+6 == len(p):
						need = 7
					case p[i+6] != '\\':
					case i+7 == len(p):
						need = 8
					case p[i+7] == 'u' && (i+12 > len(p) || lowSurrogate(p[i+8:i+12])):
						need = 12
					}
				}
			}
			if i+need > len(p) {
				return i, false
			}
			i += need
		default:
			i++
		}
	}
	return len(p), false
}

// highSurrogate reports whether the four bytes h spell U+D800 … U+DBFF in
// hex; lowSurrogate, U+DC00 … U+DFFF.
func highSurrogate(h []byte) bool {
	r, ok := Hex4(h)
	return ok && r >= 0xd800 && r < 0xdc00
}

func lowSurrogate(h []byte) bool {
	r, ok := Hex4(h)
	return ok && r >= 0xdc00 && r < 0xe000
}

// Compact appends src to dst without the white space outside its strings,
// what json.Compact leaves out, and at most max bytes of it (max < 0: all
// of it), so that a caller that shows the start of a long value stops
// early. It does not check src: on any text it never fails, a string that
// does not end running to the end, a backslash in a string escaping the
// byte after it.
func Compact(dst, src []byte, max int) []byte {
	limit := len(dst) + max
	room := func() int {
		if max < 0 {
			return len(src)
		}
		return limit - len(dst)
	}
	for i := 0; i < len(src) && room() > 0; {
		switch c := src[i]; {
		case c == '"':
			end, _ := SkipString(src, i)
			dst = append(dst, src[i:min(end, i+room())]...)
			i = end
		case IsSpace(c):
			i++
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// SkipValue returns the index just past the JSON value that starts at b[i]
// (no white space before it), and whether the value is complete. An object
// or an array ends at the bracket that brings the nesting back to zero
// (which bracket is not checked); any other value is the run of bytes up to
// white space, ',', ':', '}' or ']', and ok is false when that run is
// empty.
func SkipValue(b []byte, i int) (end int, ok bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i, ok = SkipString(b, i); !ok {
					return i, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ':', '}', ']':
			return i, i > start
		}
		i++
	}
	return i, i > start
}

// Hex4 decodes the four hex digits (either case) at the start of s; ok is
// false when s does not start with four.
func Hex4(s []byte) (r rune, ok bool) {
	if len(s) < 4 {
		return 0, false
	}
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Unquote appends to dst the contents of the JSON string q (its quotes
// included) with the escapes decoded, and returns the first lone surrogate
// that a \u escape spelled (0 when none). On a valid JSON string it decodes
// as encoding/json does but for bytes that are not UTF-8, which it copies as
// they are: a surrogate pair becomes its character, and a lone surrogate
// U+FFFD. On other text it never fails: an escape of an unknown character
// is that character and a \u without four hex digits is U+FFFD. ok is false,
// and dst is returned unchanged, when q is not a quoted string or ends in
// the middle of an escape.
func Unquote(dst, q []byte) (out []byte, lone rune, ok bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return dst, 0, false
	}
	n := len(dst)
	s := q[1 : len(q)-1]
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...), lone, true
		}
		if i+1 >= len(s) {
			return dst[:n], 0, false
		}
		dst = append(dst, s[:i]...)
		c := s[i+1]
		s = s[i+2:]
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := Hex4(s)
			if !ok {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				continue
			}
			s = s[4:]
			if r >= 0xd800 && r < 0xdc00 && len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
				if r2, ok := Hex4(s[2:]); ok && r2 >= 0xdc00 && r2 < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
					s = s[6:]
				}
			}
			if r >= 0xd800 && r < 0xe000 {
				if lone == 0 {
					lone = r
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/', or any other byte
			dst = append(dst, c)
		}
	}
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. The encoding is fixed, as tapes
// in git depend on it: '"', '\\' and control characters are escaped (\n,
// \r, \t, \b, \f in short form, others as \u00xx), as are U+2028 and
// U+2029 (which end a line in JavaScript); every other byte is written as
// itself, bytes that are not UTF-8 included.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c != 0xe2:
			continue
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c == '\b':
			esc = `\b`
		case c == '\f':
			esc = `\f`
		case c < 0x20:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
			continue
		case i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9): // c == 0xe2
			esc = `\u2028`
			if s[i+2] == 0xa9 {
				esc = `\u2029`
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, esc...)
			i += 2
			start = i + 1
			continue
		default: // 0xe2 starting another character
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
