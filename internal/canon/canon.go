// Package canon owns tapedeck's one canonical spelling of a JSON value,
// and with it what "the same JSON" means: replay matches a live request to
// a recorded call by the canonical spelling of its params, and diff compares
// frames by the canonical spelling of the whole message, so that what replay
// takes for the same request diff takes for the same frame.
//
// Two values are the same exactly when encoding/json, numbers decoded with
// UseNumber, decodes them to equal values, but for bytes that are not UTF-8:
//
//   - white space outside strings and the order of members do not count;
//   - of members of the same name the last counts, as a decoder keeps it;
//   - strings count by what they decode to: "\u003c", "\u003C" and "<" are
//     one string, and an escaped lone surrogate reads as U+FFFD;
//   - a run of bytes that are not UTF-8 reads as one U+FFFD, as package
//     message reads a line (the host's view: the params replay matches are
//     cut from that line), where encoding/json would read one per byte;
//   - numbers count as written: 1, 1.0 and 1e0 are three numbers, and -0 is
//     not 0 (JSON says nothing of their value, and a float64 would merge
//     large integers);
//   - text that is not exactly one valid JSON value (nesting deeper than
//     encoding/json takes included) has no canonical spelling: replay then
//     matches the bytes as they are, and diff decodes what it can.
//
// The spelling is compact JSON with members sorted by their canonical names
// and strings spelled as jsonscan.AppendString spells them. The package
// builds no tree and allocates little beyond what it appends, and its work
// is linear in the input however deeply it nests: an object whose members
// are out of order is noted where it lies, and all of them are reordered in
// one pass at the end, never one copy of a subtree per level.
package canon

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// MaxDepth is how deeply objects and arrays may nest, as deep as
// encoding/json accepts.
const MaxDepth = 10000

// Append appends to dst the canonical spelling of the JSON value raw (white
// space around it allowed); ok is false, and dst is returned unchanged,
// when raw is not exactly one valid JSON value.
func Append(dst, raw []byte) (_ []byte, ok bool) {
	return appendValue(dst, &parser{in: raw})
}

// AppendWithID is Append, but when raw is an object, the value of its
// top-level "id" member (however the name is spelled) is spelled as the
// JSON string id: diff compares a request by the id it stands for.
func AppendWithID(dst, raw []byte, id string) (_ []byte, ok bool) {
	return appendValue(dst, &parser{in: raw, id: id, withID: true})
}

func appendValue(dst []byte, p *parser) ([]byte, bool) {
	n := len(dst)
	p.i = jsonscan.SkipSpace(p.in, 0)
	out, ok := p.value(dst, true)
	if !ok || jsonscan.SkipSpace(p.in, p.i) != len(p.in) {
		return dst[:n], false
	}
	if len(p.unsorted) > 0 {
		out = p.reorder(out, n)
	}
	return out, true
}

type parser struct {
	in      []byte
	i       int
	depth   int
	id      string // the top-level id's replacement, when withID
	withID  bool
	scratch []byte // a string's decoded contents
	// unsorted are the objects spelled with their members out of order
	// (or a name twice), in the order they ended; members holds their
	// members in canonical order, duplicates dropped. Positions are
	// indexes into the output. reorder spells them sorted at the end.
	unsorted []unsortedObject
	members  []member
	// moved counts the bytes reorder copied: tests check that it stays
	// linear in the input.
	moved int
}

// unsortedObject is where an object whose members must be reordered lies in
// the output, [start, end), and its members, members[first:first+n].
type unsortedObject struct{ start, end, first, n int }

// value appends the canonical spelling of the value at p.i.
func (p *parser) value(dst []byte, top bool) ([]byte, bool) {
	if p.i >= len(p.in) {
		return dst, false
	}
	switch c := p.in[p.i]; c {
	case '{', '[':
		if p.depth++; p.depth > MaxDepth {
			return dst, false
		}
		var ok bool
		if c == '{' {
			dst, ok = p.object(dst, top)
		} else {
			dst, ok = p.array(dst)
		}
		p.depth--
		return dst, ok
	case '"':
		return p.str(dst)
	case 't':
		return p.literal(dst, "true")
	case 'f':
		return p.literal(dst, "false")
	case 'n':
		return p.literal(dst, "null")
	}
	return p.number(dst)
}

func (p *parser) array(dst []byte) ([]byte, bool) {
	p.i = jsonscan.SkipSpace(p.in, p.i+1)
	dst = append(dst, '[')
	if p.i < len(p.in) && p.in[p.i] == ']' {
		p.i++
		return append(dst, ']'), true
	}
	for {
		var ok bool
		if dst, ok = p.value(dst, false); !ok {
			return dst, false
		}
		p.i = jsonscan.SkipSpace(p.in, p.i)
		if p.i >= len(p.in) {
			return dst, false
		}
		switch p.in[p.i] {
		case ',':
			dst = append(dst, ',')
			p.i = jsonscan.SkipSpace(p.in, p.i+1)
		case ']':
			p.i++
			return append(dst, ']'), true
		default:
			return dst, false
		}
	}
}

// member is where one member's canonical spelling lies in the output: its
// name over [start, colon), its value over (colon, end).
type member struct{ start, colon, end int }

// object appends the members in input order; unless they are already
// sorted with no name twice, it notes where they lie, sorted (stably: of
// the same names the last one is the one kept), for reorder.
func (p *parser) object(dst []byte, top bool) ([]byte, bool) {
	p.i = jsonscan.SkipSpace(p.in, p.i+1)
	open := len(dst)
	dst = append(dst, '{')
	if p.i < len(p.in) && p.in[p.i] == '}' {
		p.i++
		return append(dst, '}'), true
	}
	var few [8]member
	ms := few[:0]
	sorted := true
	for {
		if p.i >= len(p.in) || p.in[p.i] != '"' {
			return dst, false
		}
		var ok bool
		start := len(dst)
		if dst, ok = p.str(dst); !ok {
			return dst, false
		}
		colon := len(dst)
		p.i = jsonscan.SkipSpace(p.in, p.i)
		if p.i >= len(p.in) || p.in[p.i] != ':' {
			return dst, false
		}
		p.i = jsonscan.SkipSpace(p.in, p.i+1)
		dst = append(dst, ':')
		if dst, ok = p.value(dst, false); !ok {
			return dst, false
		}
		if top && p.withID && string(dst[start:colon]) == `"id"` {
			dst = jsonscan.AppendString(dst[:colon+1], p.id)
			p.forget(colon)
		}
		if k := len(ms); k > 0 && bytes.Compare(dst[ms[k-1].start:ms[k-1].colon], dst[start:colon]) >= 0 {
			sorted = false
		}
		ms = append(ms, member{start, colon, len(dst)})
		p.i = jsonscan.SkipSpace(p.in, p.i)
		if p.i >= len(p.in) {
			return dst, false
		}
		if p.in[p.i] == '}' {
			p.i++
			break
		}
		if p.in[p.i] != ',' {
			return dst, false
		}
		dst = append(dst, ',')
		p.i = jsonscan.SkipSpace(p.in, p.i+1)
	}
	dst = append(dst, '}')
	if !sorted {
		name := func(m member) []byte { return dst[m.start:m.colon] }
		slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(name(a), name(b)) })
		first := len(p.members)
		for k, m := range ms {
			if k+1 < len(ms) && bytes.Equal(name(ms[k+1]), name(m)) {
				continue // a later member of the same name counts
			}
			p.members = append(p.members, m)
		}
		p.unsorted = append(p.unsorted, unsortedObject{open, len(dst), first, len(p.members) - first})
	}
	return dst, true
}

// forget drops the unsorted objects noted at or past position at, which
// the output no longer holds.
func (p *parser) forget(at int) {
	for k := len(p.unsorted); k > 0 && p.unsorted[k-1].start >= at; k-- {
		p.members = p.members[:p.unsorted[k-1].first]
		p.unsorted = p.unsorted[:k-1]
	}
}

// reorder spells out[from:] again with the members of every unsorted
// object in their canonical order: one copy of the value, whatever the
// nesting.
func (p *parser) reorder(out []byte, from int) []byte {
	// Objects ended inner first; by where they start, outer first.
	slices.SortFunc(p.unsorted, func(a, b unsortedObject) int { return a.start - b.start })
	r := reorderer{body: slices.Clone(out[from:]), off: from, objects: p.unsorted, members: p.members}
	p.moved += len(r.body)
	return r.span(out[:from], from, len(out))
}

// reorderer writes a spelling with its unsorted objects in order: body is
// the spelling as first written, which started at position off.
type reorderer struct {
	body    []byte
	off     int
	objects []unsortedObject // by start
	members []member
}

// span appends what lay over [a, b), every unsorted object in it reordered.
func (r *reorderer) span(dst []byte, a, b int) []byte {
	k, _ := slices.BinarySearchFunc(r.objects, a, func(o unsortedObject, at int) int { return o.start - at })
	for k < len(r.objects) && r.objects[k].start < b {
		o := r.objects[k]
		dst = append(dst, r.body[a-r.off:o.start-r.off]...)
		dst = append(dst, '{')
		for i, m := range r.members[o.first : o.first+o.n] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = r.span(dst, m.start, m.end)
		}
		dst = append(dst, '}')
		a = o.end
		// Past the objects inside this one, which it wrote.
		j, _ := slices.BinarySearchFunc(r.objects[k+1:], a, func(o unsortedObject, at int) int { return o.start - at })
		k += 1 + j
	}
	return append(dst, r.body[a-r.off:b-r.off]...)
}

// str appends the canonical spelling of the string at p.i: as written when
// that is already the spelling (no escape, UTF-8, no U+2028 or U+2029),
// else decoded and spelled again.
func (p *parser) str(dst []byte) ([]byte, bool) {
	end, escaped, ok := jsonscan.CheckString(p.in, p.i)
	if !ok {
		return dst, false
	}
	lit := p.in[p.i:end]
	p.i = end
	if !escaped && utf8.Valid(lit) && !hasLineSep(lit) {
		return append(dst, lit...), true
	}
	p.scratch, _, _ = jsonscan.Unquote(p.scratch[:0], lit)
	if !utf8.Valid(p.scratch) {
		p.scratch = bytes.ToValidUTF8(p.scratch, []byte("\uFFFD"))
	}
	return jsonscan.AppendString(dst, p.scratch), true
}

// hasLineSep reports whether s holds U+2028 or U+2029, which
// jsonscan.AppendString escapes.
func hasLineSep(s []byte) bool {
	for {
		i := bytes.IndexByte(s, 0xe2)
		if i < 0 || i+2 >= len(s) {
			return false
		}
		if s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
			return true
		}
		s = s[i+1:]
	}
}

func (p *parser) literal(dst []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(p.in[p.i:], []byte(lit)) {
		return dst, false
	}
	p.i += len(lit)
	return append(dst, lit...), true
}

// number appends a number as written, after checking its grammar.
func (p *parser) number(dst []byte) ([]byte, bool) {
	start := p.i
	if p.in[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	n := p.digits()
	if n == 0 || n > 1 && p.in[intStart] == '0' {
		return dst, false
	}
	if p.i < len(p.in) && p.in[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return dst, false
		}
	}
	if p.i < len(p.in) && (p.in[p.i] == 'e' || p.in[p.i] == 'E') {
		p.i++
		if p.i < len(p.in) && (p.in[p.i] == '+' || p.in[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return dst, false
		}
	}
	return append(dst, p.in[start:p.i]...), true
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.in) && p.in[p.i] >= '0' && p.in[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}
