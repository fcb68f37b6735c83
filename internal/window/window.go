// Package window owns how much of what a plugin says on one of its pipes
// is kept in memory: a Bound (lines and bytes in all, and the length of
// one line), a Keeper that applies it as lines come and counts what goes
// past (Unkept), and a Splitter that cuts a pipe into frames and keeps
// each at most the length of a line. What goes past is counted, not kept:
// a plugin that floods its pipes, or writes one line without end, costs
// its reader time, not memory. The replay engine (internal/host) and the
// playground (internal/playground) keep their live timelines by it. It
// decides no bound itself (each user sizes its own, and words its own
// note of what was left out) and never reads a pipe.
package window

import (
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Bound is how much of one pipe is kept.
type Bound struct {
	Frames, Bytes int64 // lines and bytes in all
	Line          int   // bytes of one line
	// Recorded is how many bytes the pipe is expected to carry: what its
	// buffers are sized by (see BufSize).
	Recorded int64
}

// BufSize is the size of a buffer of at least least and at most most
// bytes for what the pipe is expected to carry: a plugin that says little
// costs its reader little, and one that says more only costs more reads.
func (b Bound) BufSize(least, most int) int {
	return int(min(max(b.Recorded, int64(least)), int64(most)))
}

// Unkept counts what was said on one pipe past its bound.
type Unkept struct {
	// Frames are the lines not kept: every line after the pipe ran over
	// its bound. They were still read (and handed on, marked unkept), but
	// not kept.
	Frames int64
	// Bytes are their bytes, and the bytes cut off the lines that were
	// kept cut.
	Bytes int64
	// Cut are the lines kept cut to the cap (Frame.Cut says how long each
	// was), and CutAt that cap.
	Cut   int64
	CutAt int
	// KeptFrames and KeptBytes are the bound that was reached.
	KeptFrames, KeptBytes int64
}

// Any reports whether anything was left out.
func (u Unkept) Any() bool { return u.Frames > 0 || u.Cut > 0 }

// Keeper applies a bound to the lines of one pipe, as they are read. Its
// zero value keeps nothing; it is not safe for concurrent use.
type Keeper struct {
	Bound Bound
	kept  int64 // lines kept
	size  int64 // their bytes
	full  bool  // the bound was reached: no more lines are kept
	count Unkept
}

// Take counts one line of length n of which stored bytes were read into
// memory, and reports whether it is kept. Once a line is not kept, no
// later one is: what is kept is the pipe's first lines.
func (k *Keeper) Take(n int64, stored int) bool {
	if !k.full && (k.kept >= k.Bound.Frames || k.size+int64(stored) > k.Bound.Bytes) {
		k.full = true
		k.count.KeptFrames, k.count.KeptBytes = k.kept, k.size
	}
	if k.full {
		k.count.Frames++
		k.count.Bytes += n
		return false
	}
	k.kept++
	k.size += int64(stored)
	if int64(stored) < n {
		k.count.Cut++
		k.count.CutAt = k.Bound.Line
		k.count.Bytes += n - int64(stored)
	}
	return true
}

// Count is what was left out so far.
func (k *Keeper) Count() Unkept { return k.count }

// Full reports whether the bound was reached: no more lines are kept.
func (k *Keeper) Full() bool { return k.full }

// Splitter cuts what one pipe says into frames, applying its Keeper: a
// frame longer than the cap is kept cut (Line.Cut), and one past the
// bound is marked unkept. When Stable (a line handed to another
// goroutine), every line is copied out of what is fed, a kept one into
// slabs of its own, an unkept one into a slice of its own. Else a line
// is handed on as a view of what was fed, valid until emit returns, and
// emit keeps what it needs with CopyOut. A Splitter is for one pipe and
// one goroutine.
type Splitter struct {
	Keep   *Keeper
	Scan   *wire.Scanner // cuts the pipe's frames: lines, or header-framed messages
	Stable bool
	acc    []byte // the frame so far, when it spans feeds (up to the cap)
	n      int64  // its length so far, without its newline
	eol    bool   // it has ended
	slab   []byte
}

// The slabs kept lines are copied into: sized by what the pipe is expected
// to carry, within these.
const (
	slabMin  = 1 << 10
	slabSize = 32 << 10
)

// Line is one frame as the splitter hands it on.
type Line struct {
	Raw    []byte
	Head   []byte // a header-framed message's header block (copied when stable)
	EOL    bool
	Cut    *frame.Cut
	Unkept bool
	// View marks Raw as a view into what was fed (see Splitter).
	View bool
}

// Feed cuts b into frames and calls emit for each complete one.
func (s *Splitter) Feed(b []byte, emit func(Line)) {
	for len(b) > 0 {
		n, body, end := s.Scan.Scan(b)
		b = b[n:]
		switch {
		case end && s.n == 0 && len(body) < s.Keep.Bound.Line:
			s.emit(body, int64(len(body)), true, emit) // the whole frame is here
		case end:
			s.add(body)
			s.eol = true
			s.emitAcc(emit)
		case len(body) > 0:
			s.add(body)
		case n == 0:
			return
		}
	}
}

// End hands on the last frame when the stream ended inside it.
func (s *Splitter) End(emit func(Line)) {
	held, inFrame := s.Scan.End()
	s.add(held)
	if inFrame {
		s.emitAcc(emit)
	}
}

func (s *Splitter) add(b []byte) {
	s.n += int64(len(b))
	if room := s.Keep.Bound.Line - len(s.acc); room > 0 {
		s.acc = append(s.acc, b[:min(room, len(b))]...)
	}
}

func (s *Splitter) emitAcc(emit func(Line)) {
	length := s.n
	s.emit(s.acc[:min(int64(len(s.acc)), length)], length, s.eol, emit)
	s.acc, s.n, s.eol = s.acc[:0], 0, false
}

// emit hands on a line of length n of which raw was read.
func (s *Splitter) emit(raw []byte, n int64, eol bool, emit func(Line)) {
	l := Line{EOL: eol, Head: s.Scan.Head()}
	if l.Head != nil && s.Stable {
		l.Head = append([]byte(nil), l.Head...)
	}
	if !s.Keep.Take(n, len(raw)) {
		l.Unkept = true
	} else if int64(len(raw)) < n {
		l.Cut = &frame.Cut{Len: n}
	}
	switch {
	case !s.Stable:
		l.Raw, l.View = raw, true
	case l.Unkept:
		l.Raw = append([]byte(nil), raw...)
	default:
		l.Raw = s.CopyOut(raw)
	}
	emit(l)
}

// CopyOut copies a line into the splitter's slabs (a long one into a
// slice of its own), to stay in a timeline.
func (s *Splitter) CopyOut(raw []byte) []byte {
	if len(raw) > slabSize/4 {
		return append(make([]byte, 0, len(raw)), raw...)
	}
	if cap(s.slab)-len(s.slab) < len(raw) {
		s.slab = make([]byte, 0, max(s.Keep.Bound.BufSize(slabMin, slabSize), len(raw)))
	}
	at := len(s.slab)
	s.slab = append(s.slab, raw...)
	return s.slab[at:len(s.slab):len(s.slab)]
}
