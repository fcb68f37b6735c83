// Package screen fits output to the user's terminal: whether to colour it
// (Color), how wide a line may be (Width), and text cut and columns padded
// by display width (Truncate, Pad, Table), so that CJK and emoji, which
// take two cells, line up. It escapes nothing: callers pass it text that is
// already safe to print (package escape).
package screen

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// Color reports whether to colour what goes to w: only when w is a
// terminal whose TERM is not "dumb", and NO_COLOR is unset or empty
// (no-color.org: set to the empty string, it is ignored).
func Color(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Width is how many cells a line written to w may take: the width of the
// terminal w is, else $COLUMNS. ok is false when neither says.
func Width(w io.Writer) (n int, ok bool) {
	if f, isFile := w.(*os.File); isFile && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols, true
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n, true
	}
	return 0, false
}

// StringWidth is how many cells s takes on a terminal.
func StringWidth(s string) int { return runewidth.StringWidth(s) }

// Truncate cuts s to at most width cells, marking a cut with "…".
func Truncate(s string, width int) string {
	if width <= 1 || runewidth.StringWidth(s) <= width {
		return s
	}
	return runewidth.Truncate(s, width, "…")
}

// Pad pads s with spaces to width cells; s as wide or wider gets one space.
func Pad(s string, width int) string {
	n := runewidth.StringWidth(s)
	if n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s + " "
}

// Table lays out rows in columns two spaces apart, each as wide as its
// widest cell in display cells; the last column is not padded. The zero
// Table is ready to use.
type Table struct {
	rows [][]string
}

// Row adds a row of cells.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

const gap = 2

// widths is the display width of each column.
func (t *Table) widths() []int {
	var w []int
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(w) {
				w = append(w, 0)
			}
			w[i] = max(w[i], runewidth.StringWidth(c))
		}
	}
	return w
}

// Fit cuts the cells of the columns named by shrink (indexes, widest first)
// so that a line takes at most width cells, no such column narrower than
// min cells. Columns not named are never cut.
func (t *Table) Fit(width, min int, shrink ...int) {
	w := t.widths()
	total := 0
	for i, n := range w {
		total += n
		if i < len(w)-1 {
			total += gap
		}
	}
	for total > width {
		widest := -1
		for _, i := range shrink {
			if i < len(w) && w[i] > min && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]--
		total--
	}
	for _, i := range shrink {
		if i >= len(w) {
			continue
		}
		for _, r := range t.rows {
			if i < len(r) {
				r[i] = Truncate(r[i], w[i])
			}
		}
	}
}

// WriteTo writes the rows to w, a row at a time.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	widths := t.widths()
	bw := bufio.NewWriter(w)
	var n int64
	for _, r := range t.rows {
		for i, c := range r {
			k, _ := bw.WriteString(c)
			n += int64(k)
			if i < len(r)-1 {
				for range widths[i] - runewidth.StringWidth(c) + gap {
					bw.WriteByte(' ')
					n++
				}
			}
		}
		bw.WriteByte('\n')
		n++
	}
	if err := bw.Flush(); err != nil {
		return n - int64(bw.Buffered()), err
	}
	return n, nil
}
