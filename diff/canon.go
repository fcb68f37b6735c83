package diff

import (
	"bytes"
	"encoding/json"
	"sort"
	"unicode/utf8"
)

// canonical appends to dst a canonical spelling of the JSON value raw: no
// white space, object members sorted by key (the last of duplicate keys
// kept, as a decoder keeps it), strings with their escapes resolved and
// re-escaped one way, numbers as written. Two values are equal as JSON
// (what the comparison means by equal) exactly when their canonical
// spellings are equal. When id is not nil and raw is an object, the value
// of its top-level "id" member is spelled as the string id instead. ok is
// false when raw is not one valid JSON value.
//
// It is the fast way to a frame's key: no tree of interfaces is built, and
// nothing is allocated beyond dst and the member lists of objects.
func canonical(dst, raw []byte, id *string) (_ []byte, ok bool) {
	c := canonizer{in: raw}
	c.space()
	dst, ok = c.value(dst, id)
	c.space()
	return dst, ok && c.i == len(c.in)
}

type canonizer struct {
	in    []byte
	i     int
	depth int
}

// maxDepth is how deep canonical goes, as deep as encoding/json decodes.
const maxDepth = 10000

func (c *canonizer) space() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

type member struct {
	key []byte // canonical string, quotes included
	val []byte // canonical value
}

func (c *canonizer) value(dst []byte, id *string) ([]byte, bool) {
	if c.i >= len(c.in) {
		return dst, false
	}
	if c.depth++; c.depth > maxDepth {
		return dst, false
	}
	defer func() { c.depth-- }()
	switch b := c.in[c.i]; {
	case b == '{':
		return c.object(dst, id)
	case b == '[':
		c.i++
		dst = append(dst, '[')
		c.space()
		if c.i < len(c.in) && c.in[c.i] == ']' {
			c.i++
			return append(dst, ']'), true
		}
		for {
			var ok bool
			c.space()
			if dst, ok = c.value(dst, nil); !ok {
				return dst, false
			}
			c.space()
			if c.i >= len(c.in) {
				return dst, false
			}
			switch c.in[c.i] {
			case ',':
				c.i++
				dst = append(dst, ',')
			case ']':
				c.i++
				return append(dst, ']'), true
			default:
				return dst, false
			}
		}
	case b == '"':
		return c.str(dst)
	case b == 't':
		return c.literal(dst, "true")
	case b == 'f':
		return c.literal(dst, "false")
	case b == 'n':
		return c.literal(dst, "null")
	default:
		return c.number(dst)
	}
}

func (c *canonizer) object(dst []byte, id *string) ([]byte, bool) {
	c.i++ // {
	var members []member
	c.space()
	if c.i < len(c.in) && c.in[c.i] == '}' {
		c.i++
		return append(dst, "{}"...), true
	}
	for {
		c.space()
		if c.i >= len(c.in) || c.in[c.i] != '"' {
			return dst, false
		}
		key, ok := c.str(nil)
		if !ok {
			return dst, false
		}
		c.space()
		if c.i >= len(c.in) || c.in[c.i] != ':' {
			return dst, false
		}
		c.i++
		c.space()
		var val []byte
		if val, ok = c.value(nil, nil); !ok {
			return dst, false
		}
		if id != nil && string(key) == `"id"` {
			val, _ = json.Marshal(*id)
		}
		members = append(members, member{key, val})
		c.space()
		if c.i >= len(c.in) {
			return dst, false
		}
		if c.in[c.i] == ',' {
			c.i++
			continue
		}
		if c.in[c.i] != '}' {
			return dst, false
		}
		c.i++
		break
	}
	// Sorted by key; of duplicate keys the last counts. A stable sort
	// keeps duplicates in input order, so the last of a run is the one.
	sort.SliceStable(members, func(a, b int) bool { return bytes.Compare(members[a].key, members[b].key) < 0 })
	dst = append(dst, '{')
	first := true
	for k, m := range members {
		if k+1 < len(members) && bytes.Equal(members[k+1].key, m.key) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, m.key...)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}'), true
}

// str appends the canonical spelling of the string at c.i: as written when
// it has no escape, else decoded and escaped the one way (", \ and control
// characters only; invalid UTF-8 as U+FFFD, as a decoder reads it).
func (c *canonizer) str(dst []byte) ([]byte, bool) {
	start := c.i
	c.i++
	plain := true
	for c.i < len(c.in) {
		b := c.in[c.i]
		switch {
		case b == '"':
			c.i++
			lit := c.in[start:c.i]
			if plain && utf8.Valid(lit) {
				return append(dst, lit...), true
			}
			var s string
			if json.Unmarshal(lit, &s) != nil {
				return dst, false
			}
			return appendString(dst, s), true
		case b == '\\':
			plain = false
			c.i += 2
		case b < 0x20:
			return dst, false
		default:
			c.i++
		}
	}
	return dst, false
}

func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func (c *canonizer) literal(dst []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(c.in[c.i:], []byte(lit)) {
		return dst, false
	}
	c.i += len(lit)
	return append(dst, lit...), true
}

// number appends a number as written, after checking its grammar.
func (c *canonizer) number(dst []byte) ([]byte, bool) {
	start := c.i
	if c.i < len(c.in) && c.in[c.i] == '-' {
		c.i++
	}
	digits := func() int {
		n := 0
		for c.i < len(c.in) && c.in[c.i] >= '0' && c.in[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	intStart := c.i
	n := digits()
	if n == 0 || n > 1 && c.in[intStart] == '0' {
		return dst, false
	}
	if c.i < len(c.in) && c.in[c.i] == '.' {
		c.i++
		if digits() == 0 {
			return dst, false
		}
	}
	if c.i < len(c.in) && (c.in[c.i] == 'e' || c.in[c.i] == 'E') {
		c.i++
		if c.i < len(c.in) && (c.in[c.i] == '+' || c.in[c.i] == '-') {
			c.i++
		}
		if digits() == 0 {
			return dst, false
		}
	}
	return append(dst, c.in[start:c.i]...), true
}
