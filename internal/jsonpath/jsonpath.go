// Package jsonpath owns the small path language that names places inside a
// JSON-RPC message, as used by redaction rules (`export --redact`) and by
// replay's ignore rules: a rule is `METHOD:PATH`, METHOD a glob over method
// names and PATH a dotted path relative to the message object, with `[n]`
// for an array index, `[*]` for any index, `*` for any member name and `..`
// for any depth:
//
//	net/fetch:params.headers.Authorization
//	session/get:result.turns[*].text
//	storage/set:params..value
//
// A member name that is not a plain identifier is written in brackets as a
// JSON string: params["content-type"]. The package parses paths and matches
// them against concrete paths (the list of segments that leads to one value,
// like params, tree, [3], label); it does not walk JSON itself, but for
// looking one value up by its concrete path (Lookup). It imports only the
// standard library and the one JSON scanner.
package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// ErrSyntax is wrapped by every Parse and ParseRule error.
var ErrSyntax = errors.New("bad path")

// segKind is what one pattern segment matches.
type segKind uint8

const (
	segName     segKind = iota // one member with exactly this name
	segAnyName                 // *: any one member
	segIndex                   // [n]: one array element
	segAnyIndex                // [*]: any one array element
	segDescend                 // ..: zero or more segments of any kind
)

type segment struct {
	kind segKind
	name string // segName: the member name; segIndex: the canonical "[n]"
}

// Path is a parsed path. The zero Path matches only the message itself (the
// empty concrete path). Paths are values: safe to copy and to use from
// several goroutines.
type Path struct {
	segs []segment
}

// Rule is a parsed METHOD:PATH rule.
type Rule struct {
	Method string // a path.Match glob; "*" alone matches every method
	Path   Path
}

// ParseRule parses "METHOD:PATH". The method is everything before the first
// colon and must be a valid glob; the path must not be empty.
func ParseRule(s string) (Rule, error) {
	method, p, ok := strings.Cut(s, ":")
	if !ok {
		return Rule{}, fmt.Errorf("%w %q: want METHOD:PATH, e.g. net/fetch:params.headers.Authorization", ErrSyntax, s)
	}
	if method == "" {
		return Rule{}, fmt.Errorf("%w %q: the method before the colon is empty (use * for every method)", ErrSyntax, s)
	}
	if _, err := path.Match(method, ""); err != nil {
		return Rule{}, fmt.Errorf("%w %q: method glob %q: %v", ErrSyntax, s, method, err)
	}
	if p == "" {
		return Rule{}, fmt.Errorf("%w %q: the path after the colon is empty", ErrSyntax, s)
	}
	parsed, err := Parse(p)
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	return Rule{Method: method, Path: parsed}, nil
}

// MatchMethod reports whether method m matches the rule's glob (path.Match
// syntax; the glob "*" alone matches every method, slashes included).
func (r Rule) MatchMethod(m string) bool {
	if r.Method == "*" {
		return true
	}
	ok, err := path.Match(r.Method, m)
	return err == nil && ok
}

// String gives back the rule in the form ParseRule reads.
func (r Rule) String() string { return r.Method + ":" + r.Path.String() }

// Parse parses a path such as params.tree..updatedAt or result.turns[*].text.
func Parse(s string) (Path, error) {
	// Room for the segments of most paths (params.headers.Authorization,
	// result.turns[*].text), so that they are not grown one by one.
	ps := pathParser{s: s, needName: true, segs: make([]segment, 0, 4)}
	if s == "" {
		return Path{}, ps.bad("empty path")
	}
	for ps.i < len(s) {
		var err error
		switch s[ps.i] {
		case '.':
			err = ps.dot()
		case '[':
			err = ps.bracket()
		default:
			err = ps.name()
		}
		if err != nil {
			return Path{}, err
		}
	}
	if ps.needName {
		return Path{}, ps.bad("a name is missing at the end")
	}
	p := Path{segs: ps.segs}
	if p.descends() && len(p.segs) > MaxStepped {
		return Path{}, ps.bad("a path with .. may have at most %d segments", MaxStepped)
	}
	return p, nil
}

// pathParser is Parse's state: the segments read from s up to byte i.
type pathParser struct {
	s        string
	i        int
	segs     []segment
	needName bool // at the start or after a single dot: a name must follow
}

// bad is a syntax error at the byte read.
func (ps *pathParser) bad(format string, args ...any) error {
	return fmt.Errorf("%w %q at byte %d: %s", ErrSyntax, ps.s, ps.i, fmt.Sprintf(format, args...))
}

// dot reads a '.' between segments, or "..".
func (ps *pathParser) dot() error {
	s := ps.s
	if strings.HasPrefix(s[ps.i:], "...") {
		return ps.bad("three dots")
	}
	if strings.HasPrefix(s[ps.i:], "..") {
		return ps.descend()
	}
	if ps.needName {
		return ps.bad("a dot where a name should be")
	}
	ps.i++
	if ps.i == len(s) {
		return ps.bad("a dot at the end")
	}
	if s[ps.i] == '[' || s[ps.i] == '.' {
		return ps.bad("a dot before %q", s[ps.i])
	}
	ps.needName = true
	return nil
}

// descend reads "..", which a name or a bracket must follow.
func (ps *pathParser) descend() error {
	if n := len(ps.segs); n > 0 && ps.segs[n-1].kind == segDescend {
		return ps.bad("two .. in a row")
	}
	ps.segs = append(ps.segs, segment{kind: segDescend})
	ps.i += 2
	if ps.i == len(ps.s) {
		return ps.bad(".. at the end: name what to look for at any depth, e.g. ..value")
	}
	ps.needName = ps.s[ps.i] != '['
	return nil
}

// bracket reads [n], [*] or ["name"].
func (ps *pathParser) bracket() error {
	s, i := ps.s, ps.i
	if i+1 < len(s) && s[i+1] == '"' {
		// ["name"]: a JSON string, which may itself hold ']'.
		q, n, err := quoted(s[i+1:])
		if err != nil {
			return ps.bad("%v", err)
		}
		if i+1+n >= len(s) || s[i+1+n] != ']' {
			return ps.bad(`want ] after the quoted name`)
		}
		ps.segs = append(ps.segs, segment{kind: segName, name: q})
		ps.i += n + 2
		ps.needName = false
		return nil
	}
	end := strings.IndexByte(s[i:], ']')
	if end < 0 {
		return ps.bad("[ without ]")
	}
	inner := s[i+1 : i+end]
	if inner == "*" {
		ps.segs = append(ps.segs, segment{kind: segAnyIndex})
	} else {
		n, err := strconv.ParseUint(inner, 10, 31)
		if err != nil || (len(inner) > 1 && inner[0] == '0') {
			return ps.bad("want [n], [*] or [\"name\"], have [%s]", inner)
		}
		ps.segs = append(ps.segs, segment{kind: segIndex, name: "[" + strconv.FormatUint(n, 10) + "]"})
	}
	ps.i += end + 1
	ps.needName = false
	return nil
}

// name reads a member name, or * for any.
func (ps *pathParser) name() error {
	s := ps.s
	if !ps.needName {
		return ps.bad("want . or [ before %q", s[ps.i])
	}
	j := ps.i
	for j < len(s) && s[j] != '.' && s[j] != '[' {
		if s[j] == ']' || s[j] == '"' {
			ps.i = j
			return ps.bad("%q in a name: write odd names as [\"name\"]", s[j])
		}
		j++
	}
	if name := s[ps.i:j]; name == "*" {
		ps.segs = append(ps.segs, segment{kind: segAnyName})
	} else {
		ps.segs = append(ps.segs, segment{kind: segName, name: name})
	}
	ps.i = j
	ps.needName = false
	return nil
}

// quoted reads the JSON string at the start of s and returns its contents
// and its length in s.
func quoted(s string) (string, int, error) {
	end, ok := jsonscan.SkipString([]byte(s), 0)
	if !ok {
		return "", 0, errors.New("unterminated quoted name")
	}
	var v string
	if err := json.Unmarshal([]byte(s[:end]), &v); err != nil {
		return "", 0, fmt.Errorf("bad quoted name %s", s[:end])
	}
	return v, end, nil
}

// Match reports whether the concrete path (member names and "[n]" indexes,
// outermost first) is one the pattern names. A pattern names exactly the
// values it reaches, not what lies below them: callers that act on whole
// subtrees check the prefixes of a concrete path.
func (p Path) Match(concrete []string) bool {
	return match(p.segs, concrete)
}

// match reports whether c is a concrete path pat names. A pattern without
// ".." names paths of its own length, segment by segment; one with ".." is
// run as a set of positions in it (Start, Step, Accepts): time len(c) ×
// len(pat), however many ".." it holds (trying each place for each ".."
// in turn took time exponential in their number).
func match(pat []segment, c []string) bool {
	p := Path{segs: pat}
	if !p.descends() {
		if len(c) != len(pat) {
			return false
		}
		for i, s := range pat {
			if !s.matches(c[i]) {
				return false
			}
		}
		return true
	}
	st := p.Start()
	for _, seg := range c {
		if st = p.Step(st, seg); st == 0 {
			return false
		}
	}
	return p.Accepts(st)
}

// descends reports whether the path holds "..".
func (p Path) descends() bool {
	for _, s := range p.segs {
		if s.kind == segDescend {
			return true
		}
	}
	return false
}

// State is where a walk down a JSON value stands in a path of at most
// MaxStepped segments (Parse refuses a longer one with ".."): bit i set
// means position i of the pattern is reached. A walker keeps one per level (Start at the top, Step for each
// member or index it enters) instead of matching the whole concrete path
// at every value, which costs the depth at each value, the square of it
// over a deep value.
type State uint64

// MaxStepped is the longest path Start and Step follow.
const MaxStepped = 63

// Steppable reports whether the path has at most MaxStepped segments.
func (p Path) Steppable() bool { return len(p.segs) <= MaxStepped }

// Start is the state of the empty concrete path.
func (p Path) Start() State {
	return p.close(1)
}

// Step is the state after one more concrete segment.
func (p Path) Step(st State, seg string) State {
	var next State
	for i, s := range p.segs {
		if st&(1<<i) == 0 {
			continue
		}
		switch {
		case s.kind == segDescend:
			next |= 1 << i
		case s.matches(seg):
			next |= 1 << (i + 1)
		}
	}
	return p.close(next)
}

// Accepts reports whether the concrete path that led to st is one the
// pattern names (as Match would say).
func (p Path) Accepts(st State) bool { return st&(1<<len(p.segs)) != 0 }

// close adds the positions a ".." reaches by taking no segment.
func (p Path) close(st State) State {
	for i, s := range p.segs {
		if st&(1<<i) != 0 && s.kind == segDescend {
			st |= 1 << (i + 1)
		}
	}
	return st
}

func (s segment) matches(c string) bool {
	switch s.kind {
	case segName:
		return c == s.name
	case segAnyName:
		return !IsIndex(c)
	case segIndex:
		return c == s.name
	case segAnyIndex:
		return IsIndex(c)
	}
	return false
}

// IsIndex reports whether a concrete segment is an array index "[n]", of
// decimal digits.
func IsIndex(c string) bool {
	if len(c) < 3 || c[0] != '[' || c[len(c)-1] != ']' {
		return false
	}
	for _, d := range c[1 : len(c)-1] {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// Index is the concrete segment of array index n: "[n]".
func Index(n int) string { return "[" + strconv.Itoa(n) + "]" }

// String gives back the path in the form Parse reads (canonical: indexes
// without leading zeros, odd names quoted).
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p.segs {
		switch s.kind {
		case segDescend:
			b.WriteString("..")
			continue
		case segIndex:
			b.WriteString(s.name)
			continue
		case segAnyIndex:
			b.WriteString("[*]")
			continue
		}
		name := "*"
		if s.kind == segName {
			name = s.name
			if !plain(name) {
				q, _ := json.Marshal(name)
				b.WriteString("[" + string(q) + "]")
				continue
			}
		}
		if i > 0 && p.segs[i-1].kind != segDescend {
			b.WriteByte('.')
		}
		b.WriteString(name)
	}
	return b.String()
}

// plain reports whether a member name can be written bare in a path.
func plain(name string) bool {
	if name == "" || name == "*" {
		return false
	}
	return !strings.ContainsAny(name, `.[]"`)
}

// Segments is the number of segments of p, a `..` counting as one.
func (p Path) Segments() int { return len(p.segs) }

// Root returns the first member name of p when p starts with one (as
// params.x or result[0] do), and "" when it starts with *, [ or `..`.
// Callers use it to skip messages that cannot match.
func (p Path) Root() string {
	if len(p.segs) == 0 || p.segs[0].kind != segName {
		return ""
	}
	return p.segs[0].name
}

// Lookup is the value at a concrete path (as Match takes it: member names
// and "[n]") in the JSON text doc, decoded with numbers as json.Number;
// false when doc is not JSON or holds nothing there. It is Decode, then
// Walk: a caller that looks up many paths in one document decodes it once.
func Lookup(doc []byte, concrete []string) (any, bool) {
	v, ok := Decode(doc)
	if !ok {
		return nil, false
	}
	return Walk(v, concrete)
}

// Decode is the first JSON value of doc, decoded with numbers as
// json.Number; false when doc is nil or does not begin with one.
func Decode(doc []byte) (any, bool) {
	if doc == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// Walk is the value at a concrete path in v, a decoded JSON value (see
// Decode); false when v holds nothing there.
func Walk(v any, concrete []string) (any, bool) {
	for _, seg := range concrete {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(seg, "["), "]"))
			if !IsIndex(seg) || err != nil || k < 0 || k >= len(x) {
				return nil, false
			}
			v = x[k]
		default:
			return nil, false
		}
	}
	return v, true
}
