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
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
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
}

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
	re, err := regexp.Compile(f.Regex)
	if err != nil {
		return c, fmt.Errorf("bad regex: %v", err)
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
	var out []frame.Frame
	var hostCalls map[string]string // host request id → method
	if s.scoped {
		hostCalls = map[string]string{}
	}
	for i := range frames {
		f := &frames[i]
		if f.IsEvent() {
			continue
		}
		if f.Dir == frame.In {
			if hostCalls != nil {
				if e := message.ReadEnvelope(f.Raw); e.Kind == message.Request {
					hostCalls[message.IDKey(e.ID)] = string(e.Method)
				}
			}
			continue
		}
		if f.Dir == frame.Err && !stderr {
			continue
		}
		raw, changed := s.line(f, hostCalls, count)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]frame.Frame(nil), frames...)
		}
		out[i].Raw = raw
	}
	if out == nil {
		return frames
	}
	return out
}

// line applies the filters to one plugin line.
func (s *Set) line(f *frame.Frame, hostCalls map[string]string, count bool) ([]byte, bool) {
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
			method = hostCalls[message.IDKey(e.ID)]
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
		m := f.re.FindAllStringSubmatchIndex(v, -1)
		if len(m) == 0 {
			continue
		}
		nv, ok := expand(f.re, f.Replacement, v, m, limit)
		if !ok {
			continue // not applied, so not counted in the note
		}
		if count {
			s.counts[i] += len(m)
		}
		if nv != v {
			v, changed = nv, true
		}
	}
	return v, changed
}

// expand replaces the matches m of re in v with template, as
// ReplaceAllString would; false when the result would be longer than
// limit (it stops there).
func expand(re *regexp.Regexp, template, v string, m [][]int, limit int) (string, bool) {
	var out []byte
	last := 0
	for _, sub := range m {
		out = append(out, v[last:sub[0]]...)
		out = re.ExpandString(out, template, v, sub)
		if len(out) > limit {
			return "", false
		}
		last = sub[1]
	}
	out = append(out, v[last:]...)
	if len(out) > limit {
		return "", false
	}
	return string(out), true
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
