package render

import (
	"fmt"
	"io"
	"sync"

	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/shrink"
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
