package diff

// Changed strings: a word diff for one too long to show whole, a line
// diff for one of several lines, and the spelling of both for a person.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a piece of a changed string: Op "=" is in both values, "-" only
// in the recorded one, "+" only in the live one. Text is the string's own
// text (not JSON-escaped).
type Span struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Thresholds of a changed string.
const (
	// wholeString is how long (as JSON, in characters) both values of a
	// changed string may be to be shown whole; longer ones show a word diff.
	wholeString = 60
	// briefMax is how long a value may be in Change.Old and Change.New.
	briefMax = 120
	// contextWords is how many words around a change a word diff keeps.
	contextWords = 4
)

// stringChange fills c for two differing strings: Old and New (whole, or
// both cut to a window that starts before the first difference), and
// Words and Lines when they are long or span lines.
func stringChange(c *Change, a, b string) {
	qa, qb := marshal(a), marshal(b)
	if utf8.RuneCountInString(qa) <= briefMax && utf8.RuneCountInString(qb) <= briefMax {
		c.Old, c.New = qa, qb
	} else {
		c.Old, c.New = window(a, b)
	}
	if utf8.RuneCountInString(qa) > wholeString || utf8.RuneCountInString(qb) > wholeString || multiline(a) || multiline(b) {
		c.Words = wordDiff(a, b)
	}
	if multiline(a) || multiline(b) {
		c.Lines = lineDiff(a, b)
	}
}

// window cuts two long strings to a window of each that starts a few
// words before their first difference: never the same prefix on both
// sides. It spells them as JSON, with … where cut.
func window(a, b string) (string, string) {
	ra, rb := []rune(a), []rune(b)
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	start := max(p-40, 0)
	// Start at a word.
	for start > 0 && start < p && !unicode.IsSpace(ra[start-1]) {
		start++
	}
	cut := func(r []rune) string {
		var sb strings.Builder
		sb.WriteByte('"')
		n := 1
		if start > 0 {
			sb.WriteString("…")
			n++
		}
		for _, c := range r[start:] {
			piece := inner(string(c))
			w := utf8.RuneCountInString(piece)
			if n+w > briefMax-2 {
				sb.WriteString("…")
				return sb.String()
			}
			sb.WriteString(piece)
			n += w
		}
		sb.WriteByte('"')
		return sb.String()
	}
	return cut(ra), cut(rb)
}

// tokens splits s into words (runs of letters and digits), runs of white
// space, and single other characters.
func tokens(s string) []string {
	var out []string
	kind := func(r rune) int {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			return 1
		case unicode.IsSpace(r):
			return 2
		}
		return 0
	}
	start, prev := 0, -1
	for i, r := range s {
		k := kind(r)
		if i > start && (k != prev || k == 0) {
			out = append(out, s[start:i])
			start = i
		}
		prev = k
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// wordDiff diffs two strings word by word.
func wordDiff(a, b string) []Span {
	a, b = strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD")
	ta, tb := tokens(a), tokens(b)
	if len(ta)+len(tb) > maxWordTokens {
		return roughWords(ta, tb)
	}
	var spans []Span
	ia, ib := 0, 0
	for _, e := range scriptOf(ta, tb) {
		switch e.op {
		case opEqual:
			spans = appendSpan(spans, "=", strings.Join(ta[ia:ia+e.n], ""))
			ia, ib = ia+e.n, ib+e.n
		case opDelete:
			spans = appendSpan(spans, "-", strings.Join(ta[ia:ia+e.n], ""))
			ia += e.n
		case opInsert:
			spans = appendSpan(spans, "+", strings.Join(tb[ib:ib+e.n], ""))
			ib += e.n
		}
	}
	return absorbSpaces(spans)
}

// maxWordTokens caps the words (and spaces) wordDiff diffs: past it, only
// what the two strings share at their start and end is told apart, so
// that a huge string cannot stall a report.
const maxWordTokens = 20000

// roughWords is the word diff of two token lists told apart only by their
// common first and last tokens.
func roughWords(ta, tb []string) []Span {
	p := 0
	for p < len(ta) && p < len(tb) && ta[p] == tb[p] {
		p++
	}
	q := 0
	for q < len(ta)-p && q < len(tb)-p && ta[len(ta)-1-q] == tb[len(tb)-1-q] {
		q++
	}
	var spans []Span
	spans = appendSpan(spans, "=", strings.Join(ta[:p], ""))
	spans = appendSpan(spans, "-", strings.Join(ta[p:len(ta)-q], ""))
	spans = appendSpan(spans, "+", strings.Join(tb[p:len(tb)-q], ""))
	return appendSpan(spans, "=", strings.Join(ta[len(ta)-q:], ""))
}

// absorbSpaces makes white space alone between two changes part of both:
// "[-a b-]{+x y+}", not "[-a-]{+x+} [-b-]{+y+}". A run of changes joined
// so is gathered once, in two builders, and spelled at its end: its cost
// is the length of spans, however many spaces it absorbs.
func absorbSpaces(spans []Span) []Span {
	var out []Span
	// del and ins are the - and + that end out (not yet in it) while
	// pending: the changes gathered at the last white space absorbed.
	var del, ins strings.Builder
	pending := false
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		if s.Op == "=" && strings.TrimSpace(s.Text) == "" && (pending || len(out) > 0 && out[len(out)-1].Op != "=") && i+1 < len(spans) && spans[i+1].Op != "=" {
			// Gather the changes on both sides of it into one - and one +.
			if !pending {
				// The changes that end out, last first (as out is
				// emptied from its end).
				for len(out) > 0 && out[len(out)-1].Op != "=" {
					last := out[len(out)-1]
					out = out[:len(out)-1]
					if last.Op == "-" {
						del.WriteString(last.Text)
					} else {
						ins.WriteString(last.Text)
					}
				}
				pending = true
			}
			del.WriteString(s.Text)
			ins.WriteString(s.Text)
			for i+1 < len(spans) && spans[i+1].Op != "=" {
				i++
				if spans[i].Op == "-" {
					del.WriteString(spans[i].Text)
				} else {
					ins.WriteString(spans[i].Text)
				}
			}
			// What follows may be white space between changes again.
			continue
		}
		if pending {
			out = appendSpan(out, "-", del.String())
			out = appendSpan(out, "+", ins.String())
			del.Reset()
			ins.Reset()
			pending = false
		}
		out = appendSpan(out, s.Op, s.Text)
	}
	if pending {
		out = appendSpan(out, "-", del.String())
		out = appendSpan(out, "+", ins.String())
	}
	return out
}

// appendSpan appends a span, joining it with the last one of the same op.
func appendSpan(spans []Span, op, text string) []Span {
	if text == "" {
		return spans
	}
	if n := len(spans); n > 0 && spans[n-1].Op == op {
		spans[n-1].Text += text
		return spans
	}
	return append(spans, Span{op, text})
}

// lineDiff diffs two strings line by line, each line kept with its break.
func lineDiff(a, b string) []Span {
	la, lb := stringLines(strings.ToValidUTF8(a, "\uFFFD")), stringLines(strings.ToValidUTF8(b, "\uFFFD"))
	var spans []Span
	ia, ib := 0, 0
	for _, e := range scriptOf(la, lb) {
		switch e.op {
		case opEqual:
			spans = appendSpan(spans, "=", strings.Join(la[ia:ia+e.n], ""))
			ia, ib = ia+e.n, ib+e.n
		case opDelete:
			spans = appendSpan(spans, "-", strings.Join(la[ia:ia+e.n], ""))
			ia += e.n
		case opInsert:
			spans = appendSpan(spans, "+", strings.Join(lb[ib:ib+e.n], ""))
			ib += e.n
		}
	}
	return spans
}

// WordsOptions spells a word diff for a person.
type WordsOptions struct {
	// Escape makes each piece of text safe to print; nil leaves it.
	Escape func(string) string
	// Del and Ins wrap a removed and an added piece; zero: "[-…-]" and
	// "{+…+}".
	Del, Ins [2]string
}

// Words spells a word diff as one quoted JSON string: the changes as
// [-removed-]{+added+} with a few words around each, … where the rest is
// left out. Text is JSON-escaped, so a line break shows as \n.
func Words(spans []Span, o WordsOptions) string {
	esc := o.Escape
	if esc == nil {
		esc = func(s string) string { return s }
	}
	del, ins := o.Del, o.Ins
	if del == [2]string{} {
		del = [2]string{"[-", "-]"}
	}
	if ins == [2]string{} {
		ins = [2]string{"{+", "+}"}
	}
	first, last := -1, -1
	for i, s := range spans {
		if s.Op != "=" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	var b strings.Builder
	b.WriteByte('"')
	for i, s := range spans {
		switch s.Op {
		case "-":
			b.WriteString(del[0] + esc(inner(s.Text)) + del[1])
			continue
		case "+":
			b.WriteString(ins[0] + esc(inner(s.Text)) + ins[1])
			continue
		}
		ts := tokens(s.Text)
		switch {
		case first < 0:
			b.WriteString(esc(inner(s.Text)))
		case i < first: // before the first change: its last words
			k := keepFromEnd(ts, contextWords)
			if k > 0 {
				b.WriteString("…")
			}
			b.WriteString(esc(inner(strings.Join(ts[k:], ""))))
		case i > last: // after the last change: its first words
			k := keepFromStart(ts, contextWords)
			b.WriteString(esc(inner(strings.Join(ts[:k], ""))))
			if k < len(ts) {
				b.WriteString("…")
			}
		default: // between two changes
			h, t := keepFromStart(ts, contextWords), keepFromEnd(ts, contextWords)
			if h >= t {
				b.WriteString(esc(inner(s.Text)))
				break
			}
			b.WriteString(esc(inner(strings.Join(ts[:h], ""))) + "…" + esc(inner(strings.Join(ts[t:], ""))))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isWord reports whether a token is a word (not white space or a sign).
func isWord(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
}

// keepFromStart is how many tokens from the start hold n words (and the
// white space or signs before the next one).
func keepFromStart(ts []string, n int) int {
	words := 0
	for i, t := range ts {
		if isWord(t) {
			if words == n {
				return i
			}
			words++
		}
	}
	return len(ts)
}

// keepFromEnd is the index from which the tokens hold the last n words
// (and what follows them).
func keepFromEnd(ts []string, n int) int {
	words := 0
	for i := len(ts) - 1; i >= 0; i-- {
		if isWord(ts[i]) {
			if words == n {
				return i + 1
			}
			words++
		}
	}
	return 0
}
