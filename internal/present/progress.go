package present

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/shrink"
)

// ShrinkProgress prints where a shrink stands: one line that rewrites
// itself on a terminal, a line per reduction otherwise. Its methods may be
// called from several goroutines.
type ShrinkProgress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	total int
	base  int // replays run before the search
	left  int
}

// NewShrinkProgress prints to w the progress of a search over total steps
// after base replays.
func NewShrinkProgress(w io.Writer, total, base int) *ShrinkProgress {
	return &ShrinkProgress{w: w, tty: screen.Color(w), total: total, base: base, left: total}
}

// Update prints pr.
func (p *ShrinkProgress) Update(pr shrink.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[Ktapedeck: shrink: %d of %d steps left, %d replays run", pr.Left, p.total, p.base+pr.Runs)
	case pr.Left != p.left:
		fmt.Fprintf(p.w, "tapedeck: shrink: %d of %d steps left, %d replays run\n", pr.Left, p.total, p.base+pr.Runs)
	}
	p.left = pr.Left
}

// End clears the line on a terminal.
func (p *ShrinkProgress) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// List joins items with commas and, when more were left out, says how
// many: "a, b, … and 249,990 more".
func List(items []string, more int) string {
	s := strings.Join(items, ", ")
	if more > 0 {
		s += ", … and " + Thousands(more) + " more"
	}
	return s
}

// Thousands spells n with commas between groups of three digits: 249,990.
func Thousands(n int) string {
	digits := strconv.Itoa(n)
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
