package noise

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/internal/filter"
)

// What noise looks like inside a string: the shapes --runs recognises in
// the part of a string that varied between runs, and the placeholders
// their filters put in its place.
const (
	isoTimeShape = `\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`
	isoDateShape = `\d{4}-\d{2}-\d{2}`
	clockShape   = `\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?`
	uuidShape    = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
)

// A shape is distinctive when its regular expression matches little else
// than what it names (a time, a UUID): its filter needs no context. The
// others (a number, a random id, a run of characters) are anchored to the
// constant text before them.
type shape struct {
	re          string // the regular expression, unanchored
	placeholder string
	distinctive bool
	whole       *regexp.Regexp // the shape as a whole string
	prefix      *regexp.Regexp // the shape at the start of a string
}

var tokenShapes = func() []shape {
	mk := func(re, placeholder string) shape {
		return shape{re: re, placeholder: placeholder, distinctive: true,
			whole:  regexp.MustCompile(`\A(?:` + re + `)\z`),
			prefix: regexp.MustCompile(`\A(?:` + re + `)`)}
	}
	return []shape{
		mk(isoTimeShape, "[time]"),
		mk(uuidShape, "[uuid]"),
		mk(isoDateShape, "[date]"),
		mk(clockShape, "[time]"),
	}
}()

var (
	numberWhole  = regexp.MustCompile(`\A\d+\z`)
	decimalWhole = regexp.MustCompile(`\A\d+(?:\.\d+)?\z`)
)

// token is a piece of a string: a time, a UUID, a run of letters and
// digits, or one other character.
type token struct {
	text string
	word bool // holds a letter or a digit
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenize cuts s into tokens.
func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		if t, ok := shapeAt(s[i:]); ok {
			out = append(out, token{text: t, word: true})
			i += len(t)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			out = append(out, token{text: s[i : i+n]})
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		out = append(out, token{text: s[i:j], word: true})
		i = j
	}
	return out
}

// shapeAt is the distinctive shape s starts with, when one does and
// does not run on into a letter or digit.
func shapeAt(s string) (string, bool) {
	if s == "" || s[0] < '0' || s[0] > 'f' {
		return "", false
	}
	for _, sh := range tokenShapes {
		m := sh.prefix.FindStringIndex(s)
		if m == nil {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[m[1]:]); m[1] < len(s) && isWordRune(r) {
			continue
		}
		return s[:m[1]], true
	}
	return "", false
}

// proposeStringFilters proposes the filters under which every one of
// values (a string that varied between runs) reads the same, each matching
// the shape of one part that varied; nil when the whole value varied (no
// letter or digit stayed the same) or no filter makes them agree.
func proposeStringFilters(values []string) []filter.Filter {
	toks := make(tokenRows, len(values))
	for i, v := range values {
		toks[i] = tokenize(v)
	}
	regions, kept := toks.varied()
	if !kept {
		return nil
	}
	var out []filter.Filter
	for _, r := range regions {
		out = append(out, filterFor(toks.text(r), toks.context(r), toks.atStart(r), toks.atEnd(r)))
	}
	if !readSame(values, out) {
		return nil
	}
	return out
}

// tokenRows are the tokens of each of the values compared.
type tokenRows [][]token

// region is a run of tokens that varied: from to to (past its end) in
// each row.
type region struct{ from, to []int }

// constant reports whether the tokens at pos (one per row) are the same.
func (toks tokenRows) constant(pos []int) bool {
	for i := range toks {
		if toks[i][pos[i]].text != toks[0][pos[0]].text {
			return false
		}
	}
	return true
}

// at is the position p in every row.
func (toks tokenRows) at(p int) []int {
	pos := make([]int, len(toks))
	for i := range pos {
		pos[i] = p
	}
	return pos
}

// varied are the regions that varied, and whether a letter or digit
// stayed the same (kept): when the rows are as long as each other, each
// run of positions that varied; else what lies between the common prefix
// and suffix.
func (toks tokenRows) varied() (regions []region, kept bool) {
	for _, t := range toks[1:] {
		if len(t) != len(toks[0]) {
			r, kept := toks.between()
			return []region{r}, kept
		}
	}
	for p := 0; p < len(toks[0]); p++ {
		if toks.constant(toks.at(p)) {
			kept = kept || toks[0][p].word
			continue
		}
		q := p
		for q+1 < len(toks[0]) && !toks.constant(toks.at(q+1)) {
			q++
		}
		regions = append(regions, region{from: toks.at(p), to: toks.at(q + 1)})
		p = q
	}
	return regions, kept
}

// between is the region between the common prefix and suffix of tokens,
// and whether they keep a letter or digit.
func (toks tokenRows) between() (r region, kept bool) {
	n := len(toks[0])
	for _, t := range toks[1:] {
		n = min(n, len(t))
	}
	pre := 0
	for pre < n && toks.constant(toks.at(pre)) {
		kept = kept || toks[0][pre].word
		pre++
	}
	suf := 0
	for suf < n-pre {
		pos := make([]int, len(toks))
		for i := range toks {
			pos[i] = len(toks[i]) - 1 - suf
		}
		if !toks.constant(pos) {
			break
		}
		kept = kept || toks[0][pos[0]].word
		suf++
	}
	r = region{from: toks.at(pre), to: make([]int, len(toks))}
	for i := range toks {
		r.to[i] = len(toks[i]) - suf
	}
	return r, kept
}

// text is what each row holds in r.
func (toks tokenRows) text(r region) []string {
	parts := make([]string, len(toks))
	for i := range toks {
		var b strings.Builder
		for _, t := range toks[i][r.from[i]:r.to[i]] {
			b.WriteString(t.text)
		}
		parts[i] = b.String()
	}
	return parts
}

// context is the constant text just before r: back to the nearest word
// that stayed the same (the same in every row).
func (toks tokenRows) context(r region) string {
	ctx := ""
	for p := r.from[0] - 1; p >= 0; p-- {
		pos := make([]int, len(toks))
		ok := true
		for i := range toks {
			pos[i] = r.from[i] - (r.from[0] - p)
			ok = ok && pos[i] >= 0
		}
		if !ok || !toks.constant(pos) {
			break
		}
		ctx = toks[0][p].text + ctx
		if toks[0][p].word {
			break
		}
	}
	return ctx
}

// atStart reports whether r starts every row.
func (toks tokenRows) atStart(r region) bool {
	for i := range r.from {
		if r.from[i] != 0 {
			return false
		}
	}
	return true
}

// atEnd reports whether r ends every row.
func (toks tokenRows) atEnd(r region) bool {
	for i := range toks {
		if r.to[i] != len(toks[i]) {
			return false
		}
	}
	return true
}

// readSame reports whether every one of values reads the same under
// filters (each valid): what a proposal must do.
func readSame(values []string, filters []filter.Filter) bool {
	var got string
	for i, v := range values {
		for _, f := range filters {
			if f.Check() != nil {
				return false
			}
			re, err := regexp.Compile(f.Regex)
			if err != nil {
				return false
			}
			v = re.ReplaceAllString(v, f.Replacement)
		}
		if i > 0 && v != got {
			return false
		}
		got = v
	}
	return true
}

// filterFor is the filter for one part that varied, whose values are
// parts, after the constant text ctx.
func filterFor(parts []string, ctx string, atStart, atEnd bool) filter.Filter {
	// Inside one word, letters that stayed the same around digits that
	// varied ("41ms", "v12") are kept as they are.
	pre, suf := affixes(parts)
	if pre != "" || suf != "" {
		core := make([]string, len(parts))
		for i, p := range parts {
			core[i] = p[len(pre) : len(p)-len(suf)]
		}
		if all(core, numberWhole.MatchString) {
			parts = core
		} else {
			pre, suf = "", ""
		}
	}
	re, placeholder, distinctive := classify(parts)
	if distinctive && pre == "" && suf == "" {
		return filter.Filter{Regex: re, Replacement: placeholder}
	}
	lead := `\b`
	switch {
	case ctx != "":
		lead = regexp.QuoteMeta(ctx)
	case atStart:
		lead = `^`
	}
	if r, _ := utf8.DecodeRuneInString(pre + parts[0]); ctx == "" && !atStart && !isWordRune(r) {
		lead = ""
	}
	trail := ""
	if last := parts[0] + suf; last != "" {
		r, _ := utf8.DecodeLastRuneInString(last)
		if isWordRune(r) {
			trail = `\b`
		}
	}
	if atEnd && trail == "" {
		trail = `$`
	}
	return filter.Filter{
		Regex:       lead + regexp.QuoteMeta(pre) + re + regexp.QuoteMeta(suf) + trail,
		Replacement: strings.ReplaceAll(ctx+pre, "$", "$$") + placeholder + strings.ReplaceAll(suf, "$", "$$"),
	}
}

// affixes are the letters every part starts and ends with, when they
// leave something in the middle of each.
func affixes(parts []string) (pre, suf string) {
	pre, suf = parts[0], parts[0]
	for _, p := range parts[1:] {
		pre = commonPrefix(pre, p)
		suf = commonSuffix(suf, p)
	}
	pre = strings.TrimRightFunc(pre, func(r rune) bool { return !unicode.IsLetter(r) })
	if strings.IndexFunc(pre, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
		pre = ""
	}
	suf = strings.TrimLeftFunc(suf, func(r rune) bool { return !unicode.IsLetter(r) })
	if strings.IndexFunc(suf, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
		suf = ""
	}
	for _, p := range parts {
		if len(pre)+len(suf) >= len(p) {
			return "", ""
		}
	}
	return pre, suf
}

func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) {
		ra, sa := utf8.DecodeRuneInString(a[n:])
		rb, _ := utf8.DecodeRuneInString(b[n:])
		if ra != rb {
			break
		}
		n += sa
	}
	return a[:n]
}

func commonSuffix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) {
		ra, sa := utf8.DecodeLastRuneInString(a[:len(a)-n])
		rb, _ := utf8.DecodeLastRuneInString(b[:len(b)-n])
		if ra != rb {
			break
		}
		n += sa
	}
	return a[len(a)-n:]
}

func all(ss []string, ok func(string) bool) bool {
	for _, s := range ss {
		if !ok(s) {
			return false
		}
	}
	return true
}

// classify names the shape all of parts have: a time, a UUID, a date, a
// number, a hex or a random id of letters and digits, else a run of the
// characters seen, as long as seen.
func classify(parts []string) (re, placeholder string, distinctive bool) {
	for _, sh := range tokenShapes {
		if all(parts, sh.whole.MatchString) {
			return sh.re, sh.placeholder, true
		}
	}
	switch {
	case all(parts, numberWhole.MatchString):
		return `\d+`, "[number]", false
	case all(parts, decimalWhole.MatchString):
		return `\d+(?:\.\d+)?`, "[number]", false
	}
	m := mixOf(parts)
	n := quantifier(m.minLen, m.maxLen)
	switch {
	case len(m.others) == 0 && m.digit && (m.lower && m.hexLower || m.upper && m.hexUpper):
		if m.lower {
			return `[0-9a-f]` + n, "[hex]", false
		}
		return `[0-9A-F]` + n, "[hex]", false
	case len(m.others) == 0:
		return "[" + classOf(m.digit, m.lower, m.upper, nil) + "]" + n, "[id]", false
	}
	return "[" + classOf(m.digit, m.lower, m.upper, m.others) + "]" + n, "[varies]", false
}

// charMix is what characters some strings hold, and how long they are.
type charMix struct {
	digit, lower, upper bool
	// hexLower, hexUpper: no letter past f (F), nor of the other case.
	hexLower, hexUpper bool
	others             []rune // the other characters, in the order seen
	minLen, maxLen     int    // in runes
}

// mixOf is the mix of characters of parts.
func mixOf(parts []string) charMix {
	m := charMix{hexLower: true, hexUpper: true, minLen: -1}
	seen := map[rune]bool{}
	for _, p := range parts {
		n := utf8.RuneCountInString(p)
		if m.minLen < 0 || n < m.minLen {
			m.minLen = n
		}
		m.maxLen = max(m.maxLen, n)
		for _, r := range p {
			m.add(r, seen)
		}
	}
	return m
}

// add notes the character r; seen are the other characters noted so far.
func (m *charMix) add(r rune, seen map[rune]bool) {
	switch {
	case '0' <= r && r <= '9':
		m.digit = true
	case 'a' <= r && r <= 'z':
		m.lower = true
		m.hexUpper = false
		m.hexLower = m.hexLower && r <= 'f'
	case 'A' <= r && r <= 'Z':
		m.upper = true
		m.hexLower = false
		m.hexUpper = m.hexUpper && r <= 'F'
	case !seen[r]:
		seen[r] = true
		m.others = append(m.others, r)
	}
}

// classOf spells a character class's contents.
func classOf(digit, lower, upper bool, others []rune) string {
	var b strings.Builder
	if digit {
		b.WriteString("0-9")
	}
	if lower {
		b.WriteString("a-z")
	}
	if upper {
		b.WriteString("A-Z")
	}
	for _, r := range others {
		switch {
		case r == '\\' || r == ']' || r == '[' || r == '^' || r == '-':
			b.WriteString(`\` + string(r))
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == utf8.RuneError:
			b.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quantifier is {n} or {min,max} (+ past what RE2 repeats).
func quantifier(minLen, maxLen int) string {
	switch {
	case maxLen > 1000:
		return "+"
	case minLen == maxLen:
		return "{" + strconv.Itoa(minLen) + "}"
	}
	return "{" + strconv.Itoa(minLen) + "," + strconv.Itoa(maxLen) + "}"
}
