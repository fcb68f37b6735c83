package redact

import (
	"bytes"

	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// scanner walks JSON text without building values. It never panics, on any
// input: a frame stored cut ends in the middle of a value, and the skip
// methods report false when the text ends before the value does.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) eof() bool { return s.i >= len(s.b) }

func (s *scanner) space() { s.i = jsonscan.SkipSpace(s.b, s.i) }

func (s *scanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// skipString moves past the string at s.i; false when there is none or it
// is not terminated.
func (s *scanner) skipString() (ok bool) {
	s.i, ok = jsonscan.SkipString(s.b, s.i)
	return ok
}

// skipValue moves past the value at s.i; false when the text ends first or
// there is no value.
func (s *scanner) skipValue() (ok bool) {
	s.i, ok = jsonscan.SkipValue(s.b, s.i)
	return ok
}

// rewriter writes a compact copy of a JSON value with the values that the
// Redactor's active rules name, and the regular expressions' matches inside
// strings, replaced.
type rewriter struct {
	r    *Redactor
	s    scanner
	out  []byte
	path []string
	// states holds, for each level of path (from the top), each rule's
	// jsonpath.State: len(r.rules) of them a level.
	states  []jsonpath.State
	changed bool
}

// maxDepth is how deeply the rewriter enters a value: what lies deeper is
// copied as it is but for the regular expressions, which apply to its
// text. encoding/json refuses JSON nested more deeply (so the host would
// take such a line for no JSON), and only a frame stored cut, which is not
// checked, gets here; entering it level by level would take the stack a
// level per byte.
const maxDepth = 10000

// enter steps into the member or element seg: the path and every rule's
// state gain a level.
func (w *rewriter) enter(seg string) {
	n := len(w.r.rules)
	top := w.states[len(w.states)-n:]
	for i := range w.r.rules {
		st := top[i]
		if p := w.r.rules[i].path.Path; p.Steppable() {
			st = p.Step(st, seg)
		}
		w.states = append(w.states, st)
	}
	w.path = append(w.path, seg)
}

// leave steps back out of what enter entered.
func (w *rewriter) leave() {
	w.path = w.path[:len(w.path)-1]
	w.states = w.states[:len(w.states)-len(w.r.rules)]
}

// rewrite rewrites the JSON value b (cut: b may end early) and reports
// whether anything was redacted. The result is valid until the next call.
func (w *rewriter) rewrite(b []byte, cut bool) ([]byte, bool) {
	w.s = scanner{b: b}
	w.out = w.out[:0]
	w.path = w.path[:0]
	w.states = w.states[:0]
	for i := range w.r.rules {
		w.states = append(w.states, w.r.rules[i].path.Path.Start())
	}
	w.changed = false
	w.value()
	if !cut && w.s.i < len(b) {
		// Only white space can follow a valid value; keep it as it was.
		w.out = append(w.out, b[w.s.i:]...)
	}
	if cap(w.out) > 1<<20 {
		out := w.out
		w.out = nil
		return out, w.changed
	}
	return w.out, w.changed
}

// value rewrites the value at the scanner; false when the text ended first.
func (w *rewriter) value() bool {
	s := &w.s
	s.space()
	if s.eof() {
		return false
	}
	if ru := w.r.matchValue(w.path, w.states[len(w.states)-len(w.r.rules):]); ru != nil {
		return w.redactValue(ru)
	}
	switch c := s.b[s.i]; {
	case (c == '{' || c == '[') && len(w.path) >= maxDepth:
		return w.deepValue()
	case c == '{':
		return w.object()
	case c == '[':
		return w.array()
	case c == '"':
		return w.str()
	}
	start := s.i
	ok := s.skipValue()
	w.out = append(w.out, s.b[start:s.i]...)
	return ok
}

// redactValue writes a placeholder for the value at the scanner, which
// rule ru names (a placeholder already there is kept as it is).
func (w *rewriter) redactValue(ru *rule) bool {
	s := &w.s
	start := s.i
	complete := s.skipValue()
	v := s.b[start:s.i]
	if str, ok := decodeString(v); ok && isPlaceholder(str) {
		w.out = append(w.out, v...) // redacted already
		return complete
	}
	var canon []byte
	if str, ok := decodeString(v); ok {
		canon = str
	} else {
		canon = compact(v)
	}
	w.out = jsonscan.AppendString(w.out, Placeholder(w.r.key, canon))
	ru.n++
	w.changed = true
	return complete
}

// deepValue copies an object or array past maxDepth as it is, but for
// the regular expressions' matches in its text.
func (w *rewriter) deepValue() bool {
	s := &w.s
	start := s.i
	complete := s.skipValue()
	rest, changed := w.r.replace(s.b[start:s.i])
	w.out = append(w.out, rest...)
	w.changed = w.changed || changed
	return complete
}

// object rewrites the object at the scanner, each member's value under
// its name.
func (w *rewriter) object() bool {
	s := &w.s
	s.i++
	w.out = append(w.out, '{')
	s.space()
	if s.consume('}') {
		w.out = append(w.out, '}')
		return true
	}
	for {
		s.space()
		ks := s.i
		if !s.skipString() {
			w.out = append(w.out, s.b[ks:s.i]...)
			return false
		}
		key := s.b[ks:s.i]
		w.out = append(w.out, key...)
		name, _ := decodeString(key)
		s.space()
		if !s.consume(':') {
			return false
		}
		w.out = append(w.out, ':')
		w.enter(string(name))
		ok := w.value()
		w.leave()
		if !ok {
			return false
		}
		if done, ok := w.next('}'); done {
			return ok
		}
	}
}

// array rewrites the array at the scanner, each element under its index.
func (w *rewriter) array() bool {
	s := &w.s
	s.i++
	w.out = append(w.out, '[')
	s.space()
	if s.consume(']') {
		w.out = append(w.out, ']')
		return true
	}
	for n := 0; ; n++ {
		w.enter(jsonpath.Index(n))
		ok := w.value()
		w.leave()
		if !ok {
			return false
		}
		if done, ok := w.next(']'); done {
			return ok
		}
	}
}

// next reads what follows a member or element: the closing bracket
// (done, ok), a comma (on to the next one), or else the end (done, not
// ok).
func (w *rewriter) next(closing byte) (done, ok bool) {
	s := &w.s
	s.space()
	if s.consume(closing) {
		w.out = append(w.out, closing)
		return true, true
	}
	if !s.consume(',') {
		return true, false
	}
	w.out = append(w.out, ',')
	return false, false
}

// str rewrites the string at the scanner, the regular expressions'
// matches in it replaced (a placeholder is left as it is).
func (w *rewriter) str() bool {
	s := &w.s
	start := s.i
	complete := s.skipString()
	v := s.b[start:s.i]
	if complete && len(w.r.res) > 0 {
		if str, ok := decodeString(v); ok && !isPlaceholder(str) {
			if red, changed := w.r.replace(str); changed {
				w.out = jsonscan.AppendString(w.out, red)
				w.changed = true
				return true
			}
		}
	}
	w.out = append(w.out, v...)
	return complete
}

// compact returns v without white space outside strings.
func compact(v []byte) []byte { return jsonscan.Compact(make([]byte, 0, len(v)), v, -1) }

// decodeString returns the contents of the JSON string q (quotes included);
// ok is false when q is not a whole string. Invalid escapes and lone
// surrogates decode to U+FFFD; other bytes are kept as they are. A string
// without escapes is returned as a part of q.
func decodeString(q []byte) ([]byte, bool) {
	if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' && bytes.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1], true
	}
	out, _, ok := jsonscan.Unquote(nil, q)
	return out, ok
}
