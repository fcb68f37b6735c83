package diff

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/tapedeck/tapedeck/frame"
)

// The alignment as it was before script: go-diff over the whole of both
// sequences, and changed frames paired by a scan of the gap's extra frames
// for each missing one; and the line diff as it was. Quadratic when every
// frame differs (80,000 frames: 120 s), they are the oracles the tests
// hold script, pairChanged and Unified to.

// oracleAlign is the former (*comparison).align.
func (c *comparison) oracleAlign(a, b []item) []Difference {
	ids := map[contentSum]int{}
	toRunes := func(items []item) []rune {
		rs := make([]rune, len(items))
		for i, it := range items {
			id, ok := ids[it.sum]
			if !ok {
				id = min(len(ids), maxDistinct-1)
				ids[it.sum] = id
			}
			rs[i] = runeOf(id)
		}
		return rs
	}
	ra, rb := toRunes(a), toRunes(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	diffs := dmp.DiffMainRunes(ra, rb, false)

	var out []Difference
	var missing, extra []item
	flush := func() {
		out = append(out, c.oraclePairChanged(&missing, &extra)...)
	}
	ia, ib := 0, 0
	for _, d := range diffs {
		n := len([]rune(d.Text))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			ia, ib = ia+n, ib+n
		case diffmatchpatch.DiffDelete:
			missing = append(missing, a[ia:ia+n]...)
			ia += n
		case diffmatchpatch.DiffInsert:
			extra = append(extra, b[ib:ib+n]...)
			ib += n
		}
	}
	flush()
	return detectMoves(out)
}

// oraclePairChanged is the former (*comparison).pairChanged.
func (c *comparison) oraclePairChanged(missing, extra *[]item) []Difference {
	var out []Difference
	used := make([]bool, len(*extra))
	for _, m := range *missing {
		paired := false
		for j, e := range *extra {
			if used[j] || e.cls.align != m.cls.align {
				continue
			}
			used[j], paired = true, true
			out = append(out, c.changed(m, e))
			break
		}
		if !paired {
			out = append(out, Difference{Kind: Missing, Dir: m.f.Dir.String(), Method: m.cls.method, What: m.cls.what, Recorded: c.side(m, nil)})
		}
	}
	for j, e := range *extra {
		if !used[j] {
			out = append(out, Difference{Kind: Extra, Dir: e.f.Dir.String(), Method: e.cls.method, What: e.cls.what, Live: c.side(e, nil)})
		}
	}
	*missing, *extra = (*missing)[:0], (*extra)[:0]
	sort.SliceStable(out, func(i, j int) bool { return position(out[i]) < position(out[j]) })
	return out
}

// oracleFrames is Frames as it was.
func oracleFrames(recorded, live []frame.Frame, opts Options) Result {
	return compare(Slice(recorded), Slice(live), opts, 0, (*comparison).oracleAlign, false)
}

// framesWithBudget is Frames with another budget for exact alignments
// (0: anchors only).
func framesWithBudget(recorded, live []frame.Frame, opts Options, budget int) Result {
	return compare(Slice(recorded), Slice(live), opts, 0, func(c *comparison, a, b []item) []Difference { return c.align(a, b, budget) }, false)
}

// oracleScript is go-diff's alignment of the whole of a and b, as edits.
func oracleScript(a, b []int32) []edit {
	return goDiff(a, b, func(id int32) rune { return runeOf(min(int(id), maxDistinct-1)) })
}

// oracleUnified is the former Unified.
func oracleUnified(a, b, nameA, nameB string) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ra, rb, lines := dmp.DiffLinesToRunes(strings.Join(la, ""), strings.Join(lb, ""))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)

	// Flatten to one op per line.
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var ops []op
	for _, d := range diffs {
		kind := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			kind = '-'
		case diffmatchpatch.DiffInsert:
			kind = '+'
		}
		for _, l := range splitLines(d.Text) {
			ops = append(ops, op{kind, l})
		}
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before the change to context lines
		// after the last change that is within 2*context of the next.
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		// Line numbers of the hunk on each side.
		aStart, bStart := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				aStart++
			}
			if o.kind != '-' {
				bStart++
			}
		}
		aLen, bLen := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(strings.TrimSuffix(o.text, "\n"))
			out.WriteByte('\n')
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// oracleIndent and oracleDisplay are the former Indent and display.
func oracleIndent(v any) string {
	var b strings.Builder
	oracleWriteIndented(&b, v, 0, 0, false)
	return b.String()
}

func oracleDisplay(v any) string {
	var b strings.Builder
	oracleWriteIndented(&b, v, 0, 0, true)
	return b.String()
}

// oracleWriteIndented writes v, nested depth levels deep (its line indented by
// two spaces a level) and starting at column col; split writes a string of
// several lines as display does.
func oracleWriteIndented(b *strings.Builder, v any, depth, col int, split bool) {
	ind := 2 * depth // the indentation of v's line
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		if depth >= MaxDepth {
			b.WriteString(marshal(x))
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			kq := marshal(k)
			writeBlanks(b, ind+2)
			b.WriteString(kq)
			b.WriteString(": ")
			oracleWriteIndented(b, x[k], depth+1, ind+2+utf8.RuneCountInString(kq)+2, split)
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		writeBlanks(b, ind)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		if depth >= MaxDepth {
			b.WriteString(marshal(x))
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			writeBlanks(b, ind+2)
			oracleWriteIndented(b, e, depth+1, ind+2, split)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		writeBlanks(b, ind)
		b.WriteByte(']')
	case string:
		if !split {
			b.WriteString(marshal(x))
			return
		}
		if col > maxColumn {
			col = ind + 2
		}
		for i, p := range stringLines(x) {
			if i > 0 {
				b.WriteByte('\n')
				writeBlanks(b, col)
			}
			b.WriteString(marshal(p))
		}
	default:
		b.WriteString(marshal(x))
	}
}

// oracleWordDiff is the former wordDiff: it diffs two strings word by
// word.
func oracleWordDiff(a, b string) []Span {
	a, b = strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD")
	ids := map[string]rune{}
	var table []string
	toRunes := func(ts []string) []rune {
		rs := make([]rune, len(ts))
		for i, t := range ts {
			id, ok := ids[t]
			if !ok {
				id = runeOf(min(len(table), maxDistinct-1))
				ids[t] = id
				table = append(table, t)
			}
			rs[i] = id
		}
		return rs
	}
	ta, tb := tokens(a), tokens(b)
	if len(ta)+len(tb) > maxWordTokens {
		return roughWords(ta, tb)
	}
	ra, rb := toRunes(ta), toRunes(tb)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	var spans []Span
	ia, ib := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			spans = appendSpan(spans, "=", strings.Join(ta[ia:ia+n], ""))
			ia, ib = ia+n, ib+n
		case diffmatchpatch.DiffDelete:
			spans = appendSpan(spans, "-", strings.Join(ta[ia:ia+n], ""))
			ia += n
		case diffmatchpatch.DiffInsert:
			spans = appendSpan(spans, "+", strings.Join(tb[ib:ib+n], ""))
			ib += n
		}
	}
	return absorbSpaces(spans)
}

// oracleLineDiff is the former lineDiff: it diffs two strings line by
// line, each line kept with its break.
func oracleLineDiff(a, b string) []Span {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ra, rb, lines := dmp.DiffLinesToRunes(strings.ToValidUTF8(a, "\uFFFD"), strings.ToValidUTF8(b, "\uFFFD"))
	var spans []Span
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines) {
		op := map[diffmatchpatch.Operation]string{diffmatchpatch.DiffEqual: "=", diffmatchpatch.DiffDelete: "-", diffmatchpatch.DiffInsert: "+"}[d.Type]
		spans = appendSpan(spans, op, d.Text)
	}
	return spans
}
