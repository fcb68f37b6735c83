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
	w := indenter{}
	w.value(v, 0, 0)
	return w.b.String()
}

// display spells v as Indent does, except that a string of several lines
// is written as one JSON string per line, each under the one before,
//
//	"text": "first line\n"
//	        "second line"
//
// so that a line diff of two values shows the lines of such a string that
// changed, not the whole string once per side. split reports whether it
// did split a string: if not, it is Indent(v).
func display(v any) (s string, split bool) {
	w := indenter{split: true}
	w.value(v, 0, 0)
	return w.b.String(), w.didSplit
}

// indenter writes a value indented; split writes a string of several
// lines as display does (didSplit: it did). scratch holds the compact
// spelling of a name or a value on its way to b.
type indenter struct {
	b        strings.Builder
	split    bool
	didSplit bool
	scratch  []byte
}

// compact writes v as marshal spells it, and returns how many characters
// it wrote.
func (w *indenter) compact(v any) int {
	w.scratch = appendCompact(w.scratch[:0], v)
	w.b.Write(w.scratch)
	return utf8.RuneCount(w.scratch)
}

// value writes v, nested depth levels deep (its line indented by two
// spaces a level) and starting at column col.
func (w *indenter) value(v any, depth, col int) {
	b := &w.b
	ind := 2 * depth // the indentation of v's line
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		if depth >= MaxDepth {
			w.compact(x)
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			writeBlanks(b, ind+2)
			n := w.compact(k)
			b.WriteString(": ")
			w.value(x[k], depth+1, ind+2+n+2)
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
			w.compact(x)
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			writeBlanks(b, ind+2)
			w.value(e, depth+1, ind+2)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		writeBlanks(b, ind)
		b.WriteByte(']')
	case string:
		if !w.split || !multiline(x) {
			w.compact(x)
			return
		}
		w.didSplit = true
		if col > maxColumn {
			col = ind + 2
		}
		for i, p := range stringLines(x) {
			if i > 0 {
				b.WriteByte('\n')
				writeBlanks(b, col)
			}
			w.compact(p)
		}
	default:
		w.compact(x)
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
