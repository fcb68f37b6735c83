package diff

// How values are spelled for a person: JSON as the plugin sent it (no
// \u003c for a <), control characters escaped, and for the line diff a
// string of several lines split at its line breaks.

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"
)

// marshal spells v as compact JSON without escaping <, > and &.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// indent spells v as JSON indented by two spaces (as json.MarshalIndent),
// without escaping <, > and &.
func indent(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// display spells v as indent does, except that a string of several lines
// is written as one JSON string per line, each under the one before,
//
//	"text": "first line\n"
//	        "second line"
//
// so that a line diff of two values shows the lines of such a string that
// changed, not the whole string once per side.
func display(v any) string {
	var b strings.Builder
	writeDisplay(&b, v, "", 0)
	return b.String()
}

// writeDisplay writes v, the current line being indented by ind and v
// starting at column col.
func writeDisplay(b *strings.Builder, v any, ind string, col int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		in := ind + "  "
		for i, k := range keys {
			kq := marshal(k)
			b.WriteString(in)
			b.WriteString(kq)
			b.WriteString(": ")
			writeDisplay(b, x[k], in, len(in)+utf8.RuneCountInString(kq)+2)
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		in := ind + "  "
		for i, e := range x {
			b.WriteString(in)
			writeDisplay(b, e, in, len(in))
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(ind)
		b.WriteByte(']')
	case string:
		pieces := stringLines(x)
		for i, p := range pieces {
			if i > 0 {
				b.WriteByte('\n')
				b.WriteString(strings.Repeat(" ", col))
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
