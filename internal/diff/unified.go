package diff

import (
	"fmt"
	"strings"
)

// maxLines caps each side of a line diff: a diff that long helps nobody.
const maxLines = 200000

// Unified returns a unified diff (three lines of context, like diff -U3) of
// two texts, "" when they are equal; their lines are aligned as frames
// are (see script), in work near linear in their number.
func Unified(a, b, nameA, nameB string) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	edits := scriptOf(la, lb)

	// Flatten to one op per line.
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	ops := make([]op, 0, len(la)+len(lb))
	pa, pb := 0, 0 // the next line of each side
	for _, e := range edits {
		switch e.op {
		case opEqual:
			for _, l := range la[pa : pa+e.n] {
				ops = append(ops, op{' ', l})
			}
			pa, pb = pa+e.n, pb+e.n
		case opDelete:
			for _, l := range la[pa : pa+e.n] {
				ops = append(ops, op{'-', l})
			}
			pa += e.n
		case opInsert:
			for _, l := range lb[pb : pb+e.n] {
				ops = append(ops, op{'+', l})
			}
			pb += e.n
		}
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	// Line numbers on each side of ops[at], counted up to each hunk.
	at, aLine, bLine := 0, 1, 1
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
		for ; at < start; at++ {
			if ops[at].kind != '+' {
				aLine++
			}
			if ops[at].kind != '-' {
				bLine++
			}
		}
		aStart, bStart := aLine, bLine
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

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// splitLines splits s after each "\n", keeping it, capped at maxLines (the
// rest joined into the last line) and with invalid UTF-8 made valid.
func splitLines(s string) []string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], strings.Join(lines[maxLines-1:], ""))
	}
	return lines
}
