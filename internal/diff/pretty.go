package diff

// How values are spelled for a person: JSON as the plugin sent it (no
// \u003c for a <), control characters escaped, and for the line diff a
// string of several lines split at its line breaks.

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// marshal spells v as compact JSON without escaping <, > and &, members
// sorted by name, as encoding/json does.
func marshal(v any) string {
	return string(appendCompact(nil, v))
}

// appendCompact appends v, a decoded JSON value, as marshal spells it: by
// hand for what a decoder yields (its strings are UTF-8, so that
// jsonscan.AppendString spells them as encoding/json does), by
// encoding/json for anything else. A deep tree costs its size, not the
// cycle checks encoding/json makes past 1,000 levels.
func appendCompact(dst []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonscan.AppendString(dst, k)
			dst = append(dst, ':')
			dst = appendCompact(dst, x[k])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCompact(dst, e)
		}
		return append(dst, ']')
	case string:
		if utf8.ValidString(x) {
			return jsonscan.AppendString(dst, x)
		}
	case json.Number:
		if x != "" {
			return append(dst, x...)
		}
	case bool:
		return strconv.AppendBool(dst, x)
	case nil:
		return append(dst, "null"...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return dst
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// MaxDepth is how deeply the values of a frame are walked as a tree, in
// levels of objects and arrays below the message: deeper than that, a
// value is compared, named by a change and shown as one piece, its compact
// JSON, on one line. The host takes UI trees 12 elements deep (about 30
// levels from the message); the cap keeps the work of a frame linear in
// its length however deep it nests, where indentation, paths and ignore
// rules would otherwise cost the depth again at every level.
const MaxDepth = 64

// maxColumn is the widest column a string of several lines is aligned to
// (under its member name); past it, its lines are indented as the member.
const maxColumn = 2*MaxDepth + 40

// blanks are written in pieces of at most their length.
const blanks = "                                                                "

func writeBlanks(b *strings.Builder, n int) {
	for n > 0 {
		k := min(n, len(blanks))
		b.WriteString(blanks[:k])
		n -= k
	}
}

// Indent spells v, a value as encoding/json decodes it (numbers as
// json.Number or float64), as JSON indented by two spaces with the members
// of each object sorted (as json.MarshalIndent), without escaping <, > and
// &; a value nested deeper than MaxDepth is written compact on its line,
// so that what it writes is linear in v's size however deep v nests.
func Indent(v any) string {
	var b strings.Builder
	writeIndented(&b, v, 0, 0, false)
	return b.String()
}

// display spells v as Indent does, except that a string of several lines
// is written as one JSON string per line, each under the one before,
//
//	"text": "first line\n"
//	        "second line"
//
// so that a line diff of two values shows the lines of such a string that
// changed, not the whole string once per side.
func display(v any) string {
	var b strings.Builder
	writeIndented(&b, v, 0, 0, true)
	return b.String()
}

// writeIndented writes v, nested depth levels deep (its line indented by
// two spaces a level) and starting at column col; split writes a string of
// several lines as display does.
func writeIndented(b *strings.Builder, v any, depth, col int, split bool) {
	ind := 2 * depth // the indentation of v's line
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		if depth >= MaxDepth {
			b.WriteString(marshal(x))
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			kq := marshal(k)
			writeBlanks(b, ind+2)
			b.WriteString(kq)
			b.WriteString(": ")
			writeIndented(b, x[k], depth+1, ind+2+utf8.RuneCountInString(kq)+2, split)
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		writeBlanks(b, ind)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		if depth >= MaxDepth {
			b.WriteString(marshal(x))
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			writeBlanks(b, ind+2)
			writeIndented(b, e, depth+1, ind+2, split)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		writeBlanks(b, ind)
		b.WriteByte(']')
	case string:
		if !split {
			b.WriteString(marshal(x))
			return
		}
		if col > maxColumn {
			col = ind + 2
		}
		for i, p := range stringLines(x) {
			if i > 0 {
				b.WriteByte('\n')
				writeBlanks(b, col)
			}
			b.WriteString(marshal(p))
		}
	default:
		b.WriteString(marshal(x))
	}
}

// stringLines splits s after each line break; a break at its end does not
// start another line.
func stringLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// multiline reports whether s has a line break before its last character.
func multiline(s string) bool {
	return len(s) > 1 && strings.Contains(s[:len(s)-1], "\n")
}

// inner is the JSON spelling of s without its quotes: what a person reads
// between them.
func inner(s string) string {
	q := marshal(s)
	return q[1 : len(q)-1]
}
