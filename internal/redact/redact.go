// Package redact keeps secrets out of what tapedeck stores and exports: it
// rewrites a frame's bytes so that the values named by METHOD:PATH rules
// (package jsonpath), the text matched by regular expressions and, by
// default, credential-like net/fetch header values are replaced by a stable
// placeholder: the same value always gives the same placeholder
// («redacted:» and the first 12 hex digits of its HMAC-SHA256 under a key),
// so frames that shared a value still do.
//
// A frame nothing applies to comes back as the same slice, untouched. A
// redacted JSON frame is re-serialised compactly with its member order kept,
// every untouched value copied as it was written; only the redacted values
// change (and insignificant white space goes). Responses carry no method:
// the Redactor pairs each response with its request by id and direction, so
// a rule like session/get:result.turns[*].text reaches the answer to a
// session/get request. The package imports only the standard library, the
// frame and jsonpath packages and the JSON scanner (internal/jsonscan), and
// never logs.
package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Placeholder prefix and suffix; between them 12 lowercase hex digits.
const (
	prefix = "«redacted:"
	suffix = "»"
)

// Config says what to redact.
type Config struct {
	// Rules name values to replace (METHOD:PATH, see package jsonpath).
	Rules []jsonpath.Rule
	// Regexps name text to replace inside string values, and in lines that
	// are not JSON (stderr, stray output, frames stored cut).
	Regexps []*regexp.Regexp
	// Defaults adds the default rule: the values of net/fetch request and
	// response headers named Authorization, Cookie, Set-Cookie or
	// Proxy-Authorization, or whose name contains token, secret or key
	// (case-insensitive); in a session's metadata (see Session), the values
	// of environment variables, tags and --NAME=VALUE arguments so named.
	Defaults bool
	// Key is the HMAC key of the placeholders. It must not be empty.
	Key []byte
}

// Count is how much one rule redacted.
type Count struct {
	Rule    string // the rule as the user wrote it, or a description of the default
	N       int64  // values (path rules) or matches (regular expressions) replaced
	Default bool   // the default net/fetch header rule
	Regexp  bool
}

type rule struct {
	path   jsonpath.Rule // zero for the default rule
	dflt   bool
	n      int64
	active bool // applies to the message being rewritten
}

// Redactor rewrites frames. It remembers requests to pair responses with
// them, so one Redactor sees one session's frames in order. It is not safe
// for concurrent use.
type Redactor struct {
	key     []byte
	rules   []rule
	res     []*regexp.Regexp
	reN     []int64
	pending *recent.Calls[string] // request methods (recent.Calls bounds them)
	w       rewriter
}

// ErrNoKey is returned by New for a Config without a key.
var ErrNoKey = errors.New("redaction needs a key")

// Wanted reports whether cfg asks for any redaction at all: a rule, a
// regular expression or the default rules.
func (cfg Config) Wanted() bool {
	return len(cfg.Rules) > 0 || len(cfg.Regexps) > 0 || cfg.Defaults
}

// NewKeyed is New with the placeholder key: key when it is not nil, else
// what storeKey gives (a store's own key, made on first use, which fails
// on a read-only or full store).
func NewKeyed(cfg Config, key []byte, storeKey func() ([]byte, error)) (*Redactor, error) {
	if key == nil {
		var err error
		if key, err = storeKey(); err != nil {
			return nil, err
		}
	}
	cfg.Key = key
	return New(cfg)
}

// New returns a Redactor for cfg, or nil (and no error) when cfg redacts
// nothing.
func New(cfg Config) (*Redactor, error) {
	if len(cfg.Rules) == 0 && len(cfg.Regexps) == 0 && !cfg.Defaults {
		return nil, nil
	}
	if len(cfg.Key) == 0 {
		return nil, ErrNoKey
	}
	r := &Redactor{key: cfg.Key, res: cfg.Regexps, reN: make([]int64, len(cfg.Regexps)), pending: recent.NewCalls(func(m string) int { return len(m) })}
	for _, ru := range cfg.Rules {
		r.rules = append(r.rules, rule{path: ru})
	}
	if cfg.Defaults {
		r.rules = append(r.rules, rule{dflt: true})
	}
	r.w.r = r
	return r, nil
}

// Counts reports, per rule in the order given (path rules, then regular
// expressions, then the default rule), how much was redacted so far.
func (r *Redactor) Counts() []Count {
	var out []Count
	for _, ru := range r.rules {
		if !ru.dflt {
			out = append(out, Count{Rule: ru.path.String(), N: ru.n})
		}
	}
	for i, re := range r.res {
		out = append(out, Count{Rule: re.String(), N: r.reN[i], Regexp: true})
	}
	for _, ru := range r.rules {
		if ru.dflt {
			out = append(out, Count{Rule: "credential-like values", N: ru.n, Default: true})
		}
	}
	return out
}

// Placeholder is the text that stands for value under key.
func Placeholder(key, value []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(value)
	return prefix + hex.EncodeToString(m.Sum(nil))[:12] + suffix
}

// isPlaceholder reports whether s is exactly a placeholder.
func isPlaceholder(s []byte) bool {
	if len(s) != len(prefix)+12+len(suffix) || !bytes.HasPrefix(s, []byte(prefix)) || !bytes.HasSuffix(s, []byte(suffix)) {
		return false
	}
	for _, c := range s[len(prefix) : len(prefix)+12] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Frame redacts f's bytes as Line does, in place (f.Raw is replaced, never
// modified), and gives a header-framed message whose body changed length
// a header block that says the new length. Events are left alone.
func (r *Redactor) Frame(f *frame.Frame) {
	if f.IsEvent() {
		return
	}
	raw := r.Line(f.Dir, f.Raw, f.Cut != nil)
	if head := f.Head(); head != nil && f.Cut == nil && len(raw) != len(f.Raw) {
		f.SetHead(wire.Reframe(head, len(raw)))
	}
	f.Raw = raw
}

// Line returns the bytes to keep of a line that crossed in dir (cut: the
// line was stored cut and raw is only its beginning). raw is never
// modified; when nothing is redacted the result is raw itself, else new
// bytes the caller may keep.
func (r *Redactor) Line(dir frame.Dir, raw []byte, cut bool) []byte {
	if dir == frame.Err {
		return r.text(raw)
	}
	lead, body, trail := trimSpace(raw)
	if len(body) == 0 || body[0] != '{' {
		return r.text(raw)
	}
	env, ok := envelope(body)
	if !ok {
		return r.text(raw)
	}
	// A line that is not JSON gets the regular expressions and pairs
	// nothing. So a line with an id (it may pair), or with regular
	// expressions to apply, is checked now; one without either only once a
	// rule applies to it: without them the check changes nothing but the
	// time, and most lines are notifications no rule is for (the check was
	// most of what redacting a replay's live lines cost).
	checked := cut
	if !checked && (env.hasID || len(r.res) > 0) {
		if !json.Valid(body) {
			return r.text(raw)
		}
		checked = true
	}
	if !r.activate(r.pair(dir, env)) {
		return raw
	}
	if !checked && !json.Valid(body) {
		return r.text(raw)
	}
	return r.rewrite(raw, lead, body, trail, cut)
}

// pair remembers a request for pairing, or forgets the one a response
// answers, and returns the method the message is for ("" for a response
// to no remembered request).
func (r *Redactor) pair(dir frame.Dir, e env) string {
	switch {
	case e.hasID && e.hasMethod:
		r.remember(dir, e.id, e.method)
	case e.hasID && !e.hasMethod:
		return r.answered(dir, e.id)
	}
	return e.method
}

// activate marks the rules that apply to a message for method and reports
// whether anything may be redacted in it (a rule or a regular expression).
func (r *Redactor) activate(method string) bool {
	any := len(r.res) > 0
	for i := range r.rules {
		ru := &r.rules[i]
		ru.active = method != "" && (ru.dflt && method == "net/fetch" || !ru.dflt && ru.path.MatchMethod(method))
		any = any || ru.active
	}
	return any
}

// rewrite is raw, a JSON line made of lead, body and trail, with body
// rewritten by the active rules and regular expressions: raw itself when
// nothing changed.
func (r *Redactor) rewrite(raw, lead, body, trail []byte, cut bool) []byte {
	out, changed := r.w.rewrite(body, cut)
	if !changed {
		return raw
	}
	res := make([]byte, 0, len(lead)+len(out)+len(trail))
	return append(append(append(res, lead...), out...), trail...)
}

// text applies the regular expressions to a line that is not JSON.
func (r *Redactor) text(raw []byte) []byte {
	out, _ := r.replace(raw)
	return out
}

// replace replaces what the regular expressions match in b; b itself is
// returned when nothing matched. A match that overlaps a placeholder is
// left alone, so that redacting twice changes nothing.
func (r *Redactor) replace(b []byte) ([]byte, bool) {
	out, changed := b, false
	for i, re := range r.res {
		ms := re.FindAllIndex(out, -1)
		if len(ms) == 0 {
			continue
		}
		spans := placeholders(out)
		var next []byte
		last, at := 0, 0 // at: the first placeholder that does not end before the match
		for _, m := range ms {
			if m[0] == m[1] || overlapsFrom(spans, &at, m[0], m[1]) {
				continue
			}
			if next == nil {
				next = make([]byte, 0, len(out)+32)
			}
			next = append(next, out[last:m[0]]...)
			next = append(next, Placeholder(r.key, out[m[0]:m[1]])...)
			last = m[1]
			r.reN[i]++
		}
		if next != nil {
			out, changed = append(next, out[last:]...), true
		}
	}
	return out, changed
}

// placeholders returns the [start, end) spans of the placeholders in b.
func placeholders(b []byte) [][2]int {
	var spans [][2]int
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(prefix))
		if i < 0 {
			return spans
		}
		start := off + i
		end := start + len(prefix) + 12 + len(suffix)
		if end <= len(b) && isPlaceholder(b[start:end]) {
			spans = append(spans, [2]int{start, end})
			off = end
			continue
		}
		off = start + len(prefix)
	}
}

// overlapsFrom reports whether [start, end) overlaps one of spans, in
// order and apart as placeholders finds them, looking from *at on and
// moving it past the spans that end before start: matches come in order
// too, so each span is passed once for all of them. Compared with every
// span, a line of n matches and n placeholders took n² (2.6 MB: 10.5 s).
func overlapsFrom(spans [][2]int, at *int, start, end int) bool {
	for *at < len(spans) && spans[*at][1] <= start {
		*at++
	}
	return *at < len(spans) && spans[*at][0] < end
}

func (r *Redactor) remember(dir frame.Dir, id []byte, method string) {
	r.pending.Asked(byte(dir), string(id), method)
}

// answered returns the method of the request that a response in dir with
// this id answers, and forgets it: plugin requests (out) are answered by
// host responses (in) and host requests (in) by plugin responses (out).
func (r *Redactor) answered(dir frame.Dir, id []byte) string {
	other := frame.In
	if dir == frame.In {
		other = frame.Out
	}
	m, _ := r.pending.Answered(byte(other), string(id))
	return m
}

func trimSpace(b []byte) (lead, body, trail []byte) {
	i := jsonscan.SkipSpace(b, 0)
	j := len(b)
	for j > i && jsonscan.IsSpace(b[j-1]) {
		j--
	}
	return b[:i], b[i:j], b[j:]
}

// env is a message's envelope: what redaction needs to know before it
// rewrites.
type env struct {
	method            string
	id                []byte
	hasID, hasMethod  bool
	hasResult, hasErr bool
}

// envelope reads the top-level members of the object b. It tolerates an
// object cut short (a frame stored cut) and reports ok false for anything
// that is not an object. Later members win over earlier ones of the same
// name, as they do for the host.
func envelope(b []byte) (env, bool) {
	var e env
	s := scanner{b: b}
	if !s.consume('{') {
		return e, false
	}
	s.space()
	if s.consume('}') {
		return e, true
	}
	for {
		s.space()
		ks := s.i
		if !s.skipString() {
			return e, s.eof()
		}
		key := b[ks:s.i]
		s.space()
		if !s.consume(':') {
			return e, s.eof()
		}
		s.space()
		vs := s.i
		if !s.skipValue() {
			return e, s.eof()
		}
		val := b[vs:s.i]
		switch string(key) {
		case `"method"`:
			e.hasMethod = true
			e.method = ""
			if str, ok := decodeString(val); ok {
				e.method = string(str)
			} else {
				e.hasMethod = false // not a string: neither a call nor a reply
			}
		case `"id"`:
			e.hasID = string(val) != "null"
			e.id = val
		case `"result"`:
			e.hasResult = true
		case `"error"`:
			e.hasErr = true
		}
		s.space()
		if s.consume('}') {
			return e, true
		}
		if !s.consume(',') {
			return e, s.eof()
		}
	}
}

// credential reports whether a header name looks like it carries a secret.
func credential(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return strings.Contains(n, "token") || strings.Contains(n, "secret") || strings.Contains(n, "key")
}

// matchValue returns the active rule that names the value at path, or nil;
// states are the rules' jsonpath states at path.
func (r *Redactor) matchValue(path []string, states []jsonpath.State) *rule {
	for i := range r.rules {
		ru := &r.rules[i]
		if !ru.active {
			continue
		}
		if ru.dflt {
			if len(path) == 3 && (path[0] == "params" || path[0] == "result") && path[1] == "headers" && credential(path[2]) {
				return ru
			}
			continue
		}
		if p := ru.path.Path; p.Steppable() && p.Accepts(states[i]) || !p.Steppable() && p.Match(path) {
			return ru
		}
	}
	return nil
}

// String describes the configuration, for messages.
func (c Config) String() string {
	var parts []string
	for _, r := range c.Rules {
		parts = append(parts, r.String())
	}
	for _, re := range c.Regexps {
		parts = append(parts, fmt.Sprintf("/%s/", re))
	}
	if c.Defaults {
		parts = append(parts, "default net/fetch credentials")
	}
	return strings.Join(parts, ", ")
}
