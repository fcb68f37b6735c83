// Package filter owns filters: placeholders for noise inside strings (a
// random id, a time), as insta's filters are. A Filter names what to
// replace and where; a Set is filters compiled and applied to a
// timeline's frames on both sides of a comparison, counting how often
// each applied. Config is tapedeck.json, which keeps the ignore rules and
// the filters of the tapes beside it.
package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// Filter names noise inside a string, as insta's filters do: before
// comparing, every match of Regex inside a JSON string value of what the
// plugin said is replaced with Replacement, on both sides alike, so that
// a random id or a time is compared as its placeholder while the rest of
// the string still counts. In tapedeck.json:
//
//	{"filters": [
//	  {"regex": "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:Z|[+-]\\d{2}:\\d{2})", "replacement": "[time]"},
//	  {"regex": "note [0-9a-z]{6}\\b", "replacement": "note [id]", "at": "terminal/send:params.text"}
//	]}
//
// Regex is Go's syntax (package regexp) and may not match the empty
// string; Replacement is expanded as regexp.ReplaceAllString does ($1 or
// ${name} name a group, $$ is a dollar). At, when set, is a METHOD:PATH
// rule, as ignore rules are spelled: the filter then applies only to the
// string values it names or that lie below what it names, in messages of
// that method (a response has the method of the request it answers).
// Without At a filter applies to every string value, and to the whole
// text of a line that is not JSON (stray output, and stderr lines when
// they are compared).
//
// Filters apply in order, each to what the one before left. Member names
// are never rewritten, nor anything but the string values: the JSON stays
// valid and a frame that no filter matches is compared byte for byte as
// it was. Host frames are left alone, and filters never touch what is
// saved (pending updates, stored replays keep the real values).
type Filter struct {
	Regex       string `json:"regex"`
	Replacement string `json:"replacement"`
	At          string `json:"at,omitempty"`
}

// Label is how the filter is named in notes: its replacement, or when it
// replaces with nothing its regular expression.
func (f Filter) Label() string {
	if f.Replacement == "" {
		return "/" + f.Regex + "/"
	}
	return f.Replacement
}

// compiledFilter is a Filter ready to apply.
type compiledFilter struct {
	Filter
	re *regexp.Regexp
	at *jsonpath.Rule // nil: everywhere
	// lit is a string every match of re begins with ("" when re has no
	// literal prefix): a value that does not hold it is not searched.
	lit string
	// context: re has an assertion that looks before where a search
	// starts (^, \A, \b, \B), so it cannot be searched for one match
	// at a time from inside a value (see expand).
	context bool
}

// The bounds of a filter, checked before it is used: each match builds
// the positions of every group, and each replacement is written out, so
// a regex of many groups or a long replacement made one 4 MB tape cost
// 3.5 GB and 112 s (201 groups) or all the memory there was (900).
const (
	maxGroups      = 32
	maxReplacement = 4 << 10
)

// Check says what is wrong with f, if anything: a regex that is empty,
// does not compile or matches the empty string, or an At that is not a
// METHOD:PATH rule.
func (f Filter) Check() error {
	_, err := f.compile()
	return err
}

// compile checks and compiles f; the error says what is wrong with it.
func (f Filter) compile() (compiledFilter, error) {
	c := compiledFilter{Filter: f}
	if f.Regex == "" {
		return c, fmt.Errorf("the regex is empty")
	}
	if len(f.Replacement) > maxReplacement {
		return c, fmt.Errorf("the replacement is %d bytes long: at most %d", len(f.Replacement), maxReplacement)
	}
	re, err := regexp.Compile(f.Regex)
	if err != nil {
		return c, fmt.Errorf("bad regex: %v", err)
	}
	if n := re.NumSubexp(); n > maxGroups {
		return c, fmt.Errorf("the regex has %d groups: at most %d (a group that is not needed in the replacement can be (?:…))", n, maxGroups)
	}
	c.lit, _ = re.LiteralPrefix()
	if tree, err := syntax.Parse(f.Regex, syntax.Perl); err == nil {
		c.context = looksBack(tree)
	}
	if re.MatchString("") {
		return c, fmt.Errorf("the regex matches the empty string (it would put %q between every character)", f.Replacement)
	}
	c.re = re
	if f.At != "" {
		r, err := jsonpath.ParseRule(f.At)
		if err != nil {
			return c, fmt.Errorf("at: %v", err)
		}
		c.at = &r
	}
	return c, nil
}

// Set is the filters a comparison applies, with how often each applied.
// A nil *Set applies none.
type Set struct {
	filters []compiledFilter
	scoped  bool  // some filter has At: paths and methods are needed
	counts  []int // replacements made, per filter
}

// Compile compiles the filters of opt (a program's own, named "filter N
// of the options") and those of the tapedeck.json at cfgPath (cfg),
// naming the bad one. Nil when there are none.
func Compile(opt []Filter, cfg *Config, cfgPath string) (*Set, error) {
	s := &Set{}
	add := func(f Filter, where string) error {
		c, err := f.compile()
		if err != nil {
			return fmt.Errorf("%s (regex %q): %v", where, f.Regex, err)
		}
		s.filters = append(s.filters, c)
		s.scoped = s.scoped || c.at != nil
		return nil
	}
	for i, f := range opt {
		if err := add(f, fmt.Sprintf("filter %d of the options", i+1)); err != nil {
			return nil, err
		}
	}
	for i, f := range cfg.Filters {
		if err := add(f, fmt.Sprintf("%s: filter %d", cfgPath, i+1)); err != nil {
			return nil, err
		}
	}
	if len(s.filters) == 0 {
		return nil, nil
	}
	s.counts = make([]int, len(s.filters))
	return s, nil
}

// Note is the line that says which filters applied and how often
// (replacements, both sides together), "" when none did.
func (s *Set) Note() string {
	if s == nil {
		return ""
	}
	var labels []string
	n := map[string]int{}
	for i, f := range s.filters {
		if s.counts[i] == 0 {
			continue
		}
		l := f.Label()
		if _, ok := n[l]; !ok {
			labels = append(labels, l)
		}
		n[l] += s.counts[i]
	}
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s ×%d", l, n[l])
	}
	return "filters applied: " + strings.Join(parts, ", ")
}

// Frames returns frames with the filters applied to what the plugin said
// on stdout (and on stderr when stderr is set): the same slice when
// nothing matched, else a copy in which only the frames that changed have
// new bytes. frames itself is never changed. count says whether the
// replacements count towards the note.
func (s *Set) Frames(frames []frame.Frame, stderr, count bool) []frame.Frame {
	if s == nil {
		return frames
	}
	apply := s.Each(stderr, count)
	var out []frame.Frame
	for i := range frames {
		f := apply(&frames[i])
		if f == &frames[i] {
			continue
		}
		if out == nil {
			out = append([]frame.Frame(nil), frames...)
		}
		out[i] = *f
	}
	if out == nil {
		return frames
	}
	return out
}

// Each is Frames one frame at a time, for a timeline read as a stream:
// the function it returns takes each frame in order and returns it, or a
// copy with the filters applied when they changed it (f itself is never
// changed). A nil Set returns every frame as it is.
func (s *Set) Each(stderr, count bool) func(f *frame.Frame) *frame.Frame {
	if s == nil {
		return func(f *frame.Frame) *frame.Frame { return f }
	}
	var hostCalls *recent.Map[string] // host request id → method
	if s.scoped {
		hostCalls = recent.New(diff.MaxHostCalls, diff.MaxHostCallBytes, func(m string) int { return len(m) }) // as a comparison: see it
	}
	return func(f *frame.Frame) *frame.Frame {
		if f.IsEvent() {
			return f
		}
		if f.Dir == frame.In {
			if hostCalls != nil {
				if e := message.ReadEnvelope(f.Raw); e.Kind == message.Request {
					hostCalls.Put(message.IDKey(e.ID), string(e.Method))
				}
			}
			return f
		}
		if f.Dir == frame.Err && !stderr {
			return f
		}
		raw, changed := s.line(f, hostCalls, count)
		if !changed {
			return f
		}
		c := *f
		c.Raw = raw
		return &c
	}
}

// line applies the filters to one plugin line.
func (s *Set) line(f *frame.Frame, hostCalls *recent.Map[string], count bool) ([]byte, bool) {
	body, cr := f.Raw, false
	if bytes.HasSuffix(body, []byte("\r")) {
		body, cr = body[:len(body)-1], true
	}
	if f.Dir == frame.Err || f.Cut != nil || !json.Valid(body) {
		t, ok := s.text(string(f.Raw), "", nil, count, false)
		return []byte(t), ok
	}
	method := ""
	if s.scoped {
		switch e := message.ReadEnvelope(body); {
		case e.Kind == message.Request || e.Kind == message.Notification:
			method = string(e.Method)
		case e.Kind.IsReply():
			method, _ = hostCalls.Get(message.IDKey(e.ID))
		}
	}
	w := walker{in: body, apply: func(path []string, v string) (string, bool) {
		return s.text(v, method, path, count, true)
	}, paths: s.scoped}
	w.value(0, nil)
	if w.out == nil {
		return nil, false
	}
	w.out = append(w.out, body[w.last:]...)
	if cr {
		w.out = append(w.out, '\r')
	}
	return w.out, true
}

// text applies the filters that reach a string value (inJSON) at path of
// a message of method, or a whole line of text (only the filters without
// At reach one).
//
// Filters apply one after the other, each to what the one before made, so
// a value may grow: a filter whose result would pass twice the value's
// first length and 4 KiB leaves the value as it found it (forty filters
// of "$0$0" had grown one string past a gigabyte).
func (s *Set) text(v, method string, path []string, count, inJSON bool) (string, bool) {
	changed := false
	limit := 2*len(v) + 4<<10
	for i := range s.filters {
		f := &s.filters[i]
		if f.at != nil && (!inJSON || !f.at.MatchMethod(method) || !underRule(f.at.Path, path)) {
			continue
		}
		if f.lit != "" && !strings.Contains(v, f.lit) {
			continue
		}
		nv, n, ok := expand(f, v, limit)
		if !ok || n == 0 {
			continue // not applied, so not counted in the note
		}
		if count {
			s.counts[i] += n
		}
		if nv != v {
			v, changed = nv, true
		}
	}
	return v, changed
}

// maxMatches bounds the matches of one filter in one value: past it the
// filter leaves the value as it is (a regex of many groups that matches
// every other byte of a 4 MB string took 14 s). A regex whose matches
// must be found all at once (see expand) holds their positions together.
const maxMatches = 1 << 14

// expand replaces the matches of f's regex in v with its replacement, as
// ReplaceAllString would, and returns how many it replaced; false when
// the result would be longer than limit or the matches more than
// maxMatches (it stops there). It finds one
// match at a time, searching from the end of the last, so that it holds
// one match's positions however many there are; a regex whose
// assertions look before where a search starts is searched once for at
// most maxContextMatches matches instead.
func expand(f *compiledFilter, v string, limit int) (string, int, bool) {
	re, template := f.re, f.Replacement
	var out []byte
	last, at, n := 0, 0, 0
	if f.context {
		all := re.FindAllStringSubmatchIndex(v, maxMatches+1)
		if len(all) > maxMatches {
			return "", 0, false
		}
		for _, sub := range all {
			out = append(out, v[last:sub[0]]...)
			out = re.ExpandString(out, template, v, sub)
			if len(out) > limit {
				return "", 0, false
			}
			n, last = n+1, sub[1]
		}
		at = len(v) + 1
	}
	// As regexp's FindAll: successive matches that do not overlap, an
	// empty match right after a match ignored, and past an empty match
	// the search goes on a character later.
	for prevEnd := -1; at <= len(v); {
		sub := re.FindStringSubmatchIndex(v[at:])
		if sub == nil {
			break
		}
		for k := range sub {
			if sub[k] >= 0 {
				sub[k] += at
			}
		}
		accept := true
		if sub[1] == at {
			accept = sub[0] != prevEnd
			if at < len(v) {
				_, w := utf8.DecodeRuneInString(v[at:])
				at += w
			} else {
				at++
			}
		} else {
			at = sub[1]
		}
		prevEnd = sub[1]
		if !accept {
			continue
		}
		out = append(out, v[last:sub[0]]...)
		out = re.ExpandString(out, template, v, sub)
		if len(out) > limit || n == maxMatches {
			return "", 0, false
		}
		n, last = n+1, sub[1]
	}
	if n == 0 {
		return v, 0, true
	}
	out = append(out, v[last:]...)
	if len(out) > limit {
		return "", 0, false
	}
	return string(out), n, true
}

// looksBack reports whether a regex holds an assertion about what comes
// before a position: the start of the text or a line, a word boundary.
func looksBack(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBack(sub) {
			return true
		}
	}
	return false
}

// underRule reports whether path, or a path it lies below, is one p names.
func underRule(p jsonpath.Path, path []string) bool {
	for k := len(path); k >= 1; k-- {
		if p.Match(path[:k]) {
			return true
		}
	}
	return false
}

// walker rewrites the string values of one valid JSON text in place: it
// copies in to out only once a value changed, and then only what is
// before each changed string, so that the rest stays byte for byte.
//
// The path of a value is built on one slice that apply must not keep, and
// only diff.MaxDepth segments deep: a value nested deeper gets the path of
// its ancestor at that depth, so that a filter whose At names that
// ancestor or one above it still reaches it, and the work stays linear in
// the line however deep it nests.
type walker struct {
	in    []byte
	out   []byte // nil until a string changed
	last  int    // in[last:] is not yet in out
	paths bool   // build the path of each value
	apply func(path []string, v string) (string, bool)
}

// value walks the value at or after in[i] (white space first) and returns
// the index past it. in is valid JSON.
func (w *walker) value(i int, path []string) int {
	i = jsonscan.SkipSpace(w.in, i)
	if i >= len(w.in) {
		return i
	}
	switch w.in[i] {
	case '{':
		i++
		for {
			i = jsonscan.SkipSpace(w.in, i)
			if i >= len(w.in) || w.in[i] == '}' {
				return i + 1
			}
			if w.in[i] == ',' {
				i++
				continue
			}
			end, _ := jsonscan.SkipString(w.in, i)
			sub := path
			if w.paths && len(path) < diff.MaxDepth {
				sub = append(path, unquote(w.in[i:end]))
			}
			i = jsonscan.SkipSpace(w.in, end)
			i++ // the colon
			i = w.value(i, sub)
		}
	case '[':
		i++
		for n := 0; ; {
			i = jsonscan.SkipSpace(w.in, i)
			if i >= len(w.in) || w.in[i] == ']' {
				return i + 1
			}
			if w.in[i] == ',' {
				i++
				continue
			}
			sub := path
			if w.paths && len(path) < diff.MaxDepth {
				sub = append(path, "["+strconv.Itoa(n)+"]")
			}
			i = w.value(i, sub)
			n++
		}
	case '"':
		end, _ := jsonscan.SkipString(w.in, i)
		if v, ok := w.apply(path, unquote(w.in[i:end])); ok {
			w.out = append(w.out, w.in[w.last:i]...)
			w.out = jsonscan.AppendString(w.out, v)
			w.last = end
		}
		return end
	}
	end, _ := jsonscan.SkipValue(w.in, i)
	return end
}

// unquote is the contents of the JSON string q (quotes included).
func unquote(q []byte) string {
	s, _, _ := jsonscan.Unquote(nil, q)
	return string(s)
}
