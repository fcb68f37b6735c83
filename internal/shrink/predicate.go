package shrink

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
)

// ErrPredicate is wrapped by every predicate syntax error.
var ErrPredicate = errors.New("bad predicate")

// Facts are what a predicate is evaluated on: one replay, compared.
type Facts struct {
	Diff      *diff.Result
	Code      *int   // the plugin's exit code, nil when a signal ended it (or it never exited)
	Signal    string // the signal that ended it
	TimedOut  bool
	Stderr    []string // the plugin's stderr lines
	Unmatched []string // requests the recording had no answer for ("method (replay seq N)")
}

// Predicate says whether a replay fails the way being chased:
//
//	differs                          any difference
//	differs("tools/call")            any difference in a message of that method (a glob)
//	changed("tools/call:result..text")
//	                                 a changed frame of that method with a change at that path
//	missing("notifications/*"), extra("…"), moved("…")
//	                                 a frame of that method missing, extra or moved
//	stderr("TypeError")              a stderr line matches the regular expression
//	unanswered("roots/list")         the plugin asked what the recording never answered
//	exit == 3, exit != 0             the exit code (false when a signal ended it)
//	signal("SIGTERM")                a signal ended it
//	timedout                         the replay ran out of time
//
// combined with !, && and || (in that order of binding) and parentheses.
// Arguments are JSON strings. A path uses the syntax of ignore rules.
type Predicate struct {
	root node
	src  string
}

// String gives the predicate back in canonical form (ParsePredicate reads
// it to the same predicate).
func (p *Predicate) String() string { return p.root.String() }

// Eval reports whether f satisfies the predicate.
func (p *Predicate) Eval(f *Facts) bool { return p.root.eval(f) }

type node interface {
	eval(*Facts) bool
	String() string
}

type notNode struct{ x node }
type binNode struct {
	and  bool
	l, r node
}
type flagNode string // differs, timedout
type exitNode struct {
	eq   bool
	code int
}
type callNode struct {
	fn   string
	arg  string
	rule *jsonpath.Rule // changed/differs with a path
	re   *regexp.Regexp // stderr
}

func (n notNode) eval(f *Facts) bool { return !n.x.eval(f) }
func (n notNode) String() string     { return "!" + n.x.String() }
func (n binNode) eval(f *Facts) bool {
	if n.and {
		return n.l.eval(f) && n.r.eval(f)
	}
	return n.l.eval(f) || n.r.eval(f)
}
func (n binNode) String() string {
	op := " || "
	if n.and {
		op = " && "
	}
	return "(" + n.l.String() + op + n.r.String() + ")"
}
func (n flagNode) eval(f *Facts) bool {
	if n == "timedout" {
		return f.TimedOut
	}
	return f.Diff != nil && f.Diff.Count() > 0
}
func (n flagNode) String() string { return string(n) }
func (n exitNode) eval(f *Facts) bool {
	if f.Code == nil {
		return !n.eq
	}
	return (*f.Code == n.code) == n.eq
}
func (n exitNode) String() string {
	if n.eq {
		return "exit == " + strconv.Itoa(n.code)
	}
	return "exit != " + strconv.Itoa(n.code)
}
func (n callNode) String() string { return n.fn + "(" + strconv.Quote(n.arg) + ")" }

func (n callNode) eval(f *Facts) bool {
	switch n.fn {
	case "stderr":
		for _, l := range f.Stderr {
			if n.re.MatchString(l) {
				return true
			}
		}
		return false
	case "signal":
		return f.Signal == n.arg
	case "unanswered":
		for _, u := range f.Unmatched {
			method, _, _ := strings.Cut(u, " (")
			if globMatch(n.arg, method) {
				return true
			}
		}
		return false
	}
	if f.Diff == nil {
		return false
	}
	for _, d := range f.Diff.Differences {
		if n.fn != "differs" && string(d.Kind) != n.fn {
			continue
		}
		if n.rule == nil {
			if globMatch(n.arg, d.Method) {
				return true
			}
			continue
		}
		if !n.rule.MatchMethod(d.Method) {
			continue
		}
		for _, ch := range d.Changes {
			if n.rule.Path.Match(ch.Segments) {
				return true
			}
		}
	}
	return false
}

func globMatch(glob, s string) bool {
	if glob == "*" {
		return true
	}
	ok, err := path.Match(glob, s)
	return err == nil && ok
}

// ParsePredicate reads a predicate (see Predicate). Errors wrap
// ErrPredicate and name the offset of what is wrong.
func ParsePredicate(s string) (*Predicate, error) {
	p := &parser{src: s}
	p.next()
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errf("unexpected %s", p.tok)
	}
	return &Predicate{root: n, src: s}, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tInt
	tOp // ! && || ( ) == !=
	tBad
)

type token struct {
	kind tokKind
	text string // the identifier, operator, digits, or the decoded string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of predicate"
	case tString:
		return strconv.Quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type parser struct {
	src   string
	pos   int
	tok   token
	depth int // parentheses open
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrPredicate, p.tok.pos, fmt.Sprintf(format, args...))
}

// next reads the next token into p.tok.
func (p *parser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c == '"':
		// A JSON-style string: find its end, then unquote it.
		i := p.pos + 1
		for i < len(p.src) && p.src[i] != '"' {
			if p.src[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(p.src) {
			p.tok = token{kind: tBad, text: "unterminated string", pos: start}
			p.pos = len(p.src)
			return
		}
		s, err := strconv.Unquote(p.src[p.pos : i+1])
		p.pos = i + 1
		if err != nil {
			p.tok = token{kind: tBad, text: "bad string " + p.src[start:p.pos], pos: start}
			return
		}
		p.tok = token{kind: tString, text: s, pos: start}
	case c >= '0' && c <= '9' || c == '-':
		i := p.pos + 1
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		p.tok = token{kind: tInt, text: p.src[p.pos:i], pos: start}
		p.pos = i
	case c < 0x80 && (unicode.IsLetter(rune(c)) || c == '_'):
		i := p.pos
		for i < len(p.src) && p.src[i] < 0x80 && (unicode.IsLetter(rune(p.src[i])) || p.src[i] == '_') {
			i++
		}
		p.tok = token{kind: tIdent, text: p.src[p.pos:i], pos: start}
		p.pos = i
	default:
		for _, op := range []string{"&&", "||", "==", "!=", "!", "(", ")"} {
			if strings.HasPrefix(p.src[p.pos:], op) {
				p.tok = token{kind: tOp, text: op, pos: start}
				p.pos += len(op)
				return
			}
		}
		p.tok = token{kind: tBad, text: p.src[p.pos : p.pos+1], pos: start}
		p.pos++
	}
}

func (p *parser) isOp(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.isOp("||") {
		p.next()
		var r node
		if r, err = p.and(); err == nil {
			l = binNode{l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	for err == nil && p.isOp("&&") {
		p.next()
		var r node
		if r, err = p.unary(); err == nil {
			l = binNode{and: true, l: l, r: r}
		}
	}
	return l, err
}

// maxDepth bounds nesting, so that no input can exhaust the stack.
const maxDepth = 100

func (p *parser) unary() (node, error) {
	neg := 0
	for p.isOp("!") {
		neg++
		p.next()
	}
	var n node
	var err error
	if p.isOp("(") {
		if p.depth++; p.depth > maxDepth {
			return nil, p.errf("nested deeper than %d", maxDepth)
		}
		p.next()
		if n, err = p.or(); err != nil {
			return nil, err
		}
		p.depth--
		if !p.isOp(")") {
			return nil, p.errf("want ), got %s", p.tok)
		}
		p.next()
	} else if n, err = p.atom(); err != nil {
		return nil, err
	}
	for range neg {
		n = notNode{n}
	}
	return n, nil
}

func (p *parser) atom() (node, error) {
	if p.tok.kind == tBad {
		return nil, p.errf("%s", p.tok.text)
	}
	if p.tok.kind != tIdent {
		return nil, p.errf("want a test (differs, changed(…), exit == N, …), got %s", p.tok)
	}
	name := p.tok.text
	p.next()
	switch name {
	case "timedout":
		return flagNode(name), nil
	case "differs":
		if !p.isOp("(") {
			return flagNode(name), nil
		}
	case "exit":
		if !p.isOp("==") && !p.isOp("!=") {
			return nil, p.errf("want == or != after exit, got %s", p.tok)
		}
		eq := p.tok.text == "=="
		p.next()
		if p.tok.kind != tInt {
			return nil, p.errf("want an exit code, got %s", p.tok)
		}
		code, err := strconv.Atoi(p.tok.text)
		if err != nil || code < -1<<31 || code > 1<<31-1 {
			return nil, p.errf("bad exit code %s", p.tok)
		}
		p.next()
		return exitNode{eq: eq, code: code}, nil
	case "changed", "missing", "extra", "moved", "stderr", "unanswered", "signal":
	default:
		return nil, p.errf("unknown test %q (want differs, changed, missing, extra, moved, stderr, unanswered, signal, exit, timedout)", name)
	}
	if !p.isOp("(") {
		return nil, p.errf("want ( after %s, got %s", name, p.tok)
	}
	p.next()
	if p.tok.kind != tString {
		return nil, p.errf("want a quoted string in %s(…), got %s", name, p.tok)
	}
	n := callNode{fn: name, arg: p.tok.text}
	argTok := p.tok
	p.next()
	if !p.isOp(")") {
		return nil, p.errf("want ) after %s(%s, got %s", name, argTok, p.tok)
	}
	p.next()
	switch name {
	case "stderr":
		re, err := regexp.Compile(n.arg)
		if err != nil {
			return nil, fmt.Errorf("%w at offset %d: stderr(%s): %v", ErrPredicate, argTok.pos, argTok, err)
		}
		n.re = re
	case "changed", "differs":
		if strings.Contains(n.arg, ":") {
			r, err := jsonpath.ParseRule(n.arg)
			if err != nil {
				return nil, fmt.Errorf("%w at offset %d: %s(%s): %v", ErrPredicate, argTok.pos, name, argTok, err)
			}
			n.rule = &r
			break
		}
		fallthrough
	case "missing", "extra", "moved", "unanswered":
		if _, err := path.Match(n.arg, ""); err != nil {
			return nil, fmt.Errorf("%w at offset %d: %s(%s): method glob: %v", ErrPredicate, argTok.pos, name, argTok, err)
		}
	}
	return n, nil
}
