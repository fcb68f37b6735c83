package host

import (
	"fmt"
	"io"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// HostLineLimit is the longest line the host reads from a plugin's stdout
// (host-behaviour.md: past 16 MiB it stops reading stdout for good).
const HostLineLimit = 16 << 20

// A replay keeps what the plugin says in its live timeline only as far as
// the recording can explain it: on each of its pipes, at most
//
//	liveFactor × the recorded lines + liveMarginFrames lines, and
//	liveFactor × the recorded bytes + a line's cap + liveMarginBytes bytes,
//
// and of each line at most its cap: twice the recording's longest line
// (at least 1 MiB), at most the host's line limit + 1, and never less than
// the recording's longest line. What goes past is counted, not kept (see
// Result.Unkept): a plugin that floods its pipes costs a replay time, not
// memory.
const (
	liveFactor       = 4
	liveMarginFrames = 1000
	liveMarginBytes  = 1 << 20
	minLineCap       = 1 << 20
)

// bound is how much of one of the plugin's pipes a replay keeps.
type bound struct {
	frames, bytes int64 // lines and bytes in all
	line          int   // bytes of one line
	// recorded is how many bytes the recording has on the pipe: what the
	// pipe's buffers are sized by (see bufSize).
	recorded int64
}

// bufSize is the size of a buffer of at least least and at most most
// bytes for what the recording says on a pipe: a plugin that says little
// costs a replay little (a run of a small recording is mostly its
// buffers otherwise), and one that says more than recorded only costs
// more reads.
func (b bound) bufSize(least, most int) int {
	return int(min(max(b.recorded, int64(least)), int64(most)))
}

// boundOf is the bound the recorded frames of direction dir set.
func boundOf(recorded []frame.Frame, dir frame.Dir) bound {
	var n, size, longest int64
	for i := range recorded {
		f := &recorded[i]
		if f.IsEvent() || f.Dir != dir {
			continue
		}
		l := int64(len(f.Raw))
		if f.Cut != nil {
			l = f.Cut.Len
		}
		n++
		size += l
		longest = max(longest, l)
	}
	line := min(max(2*longest, minLineCap), HostLineLimit+1)
	line = max(line, longest)
	return bound{
		frames:   liveFactor*n + liveMarginFrames,
		bytes:    liveFactor*size + line + liveMarginBytes,
		line:     int(line),
		recorded: size,
	}
}

// scriptBound is a host script's bound: a script records nothing of its
// own, so it keeps a generous timeline and lines the host would read.
func scriptBound() bound {
	return bound{frames: 100000, bytes: 256 << 20, line: HostLineLimit + 1, recorded: readBufMax}
}

// The buffers a pipe of the plugin is read into, and the slabs its lines
// are copied into, are sized by what the recording says there, within
// these.
const (
	readBufMin, readBufMax = 4 << 10, 64 << 10
	slabMin                = 1 << 10
)

// Unkept counts what the plugin said on one pipe past what the recording
// can explain (see bound).
type Unkept struct {
	// Frames are the lines not kept: every line after the pipe ran over
	// its bound. They were still read, and a request among them was still
	// answered, but they are not in Result.Live.
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

// note says what was left out of pipe name, "" when nothing was.
func (u Unkept) note(name string) string {
	switch {
	case u.Frames > 0 && u.Cut > 0:
		return fmt.Sprintf("the plugin said more on %s than the recording can explain: %s cut at %d bytes, and %s more after the first %d (%d bytes in all) were counted, not kept", name, lines(u.Cut), u.CutAt, lines(u.Frames), u.KeptFrames, u.Bytes)
	case u.Frames > 0:
		return fmt.Sprintf("the plugin said more on %s than the recording can explain: %s more after the first %d (%d bytes) were counted, not kept", name, lines(u.Frames), u.KeptFrames, u.Bytes)
	case u.Cut > 0:
		return fmt.Sprintf("the plugin said longer lines on %s than the recording can explain: %s kept cut at %d bytes (%d bytes counted, not kept)", name, lines(u.Cut), u.CutAt, u.Bytes)
	}
	return ""
}

// lines is "1 line", "N lines".
func lines(n int64) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// keeper applies a bound to the lines of one pipe, as they are read.
type keeper struct {
	bound bound
	kept  int64 // lines kept
	size  int64 // their bytes
	full  bool  // the bound was reached: no more lines are kept
	count Unkept
}

// take counts one line of length n of which stored bytes were read into
// memory, and reports whether it is kept.
func (k *keeper) take(n int64, stored int) bool {
	if !k.full && (k.kept >= k.bound.frames || k.size+int64(stored) > k.bound.bytes) {
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
		k.count.CutAt = k.bound.line
		k.count.Bytes += n - int64(stored)
	}
	return true
}

// splitter cuts what one of the plugin's pipes says into lines, applying
// its keeper: a line longer than the cap is kept cut (Frame.Cut), and one
// past the bound is marked unkept. When stable (a line handed to another
// goroutine) every line is copied out of what is fed, a kept one into
// slabs of its own (it stays in the timeline), an unkept one into a slice
// of its own. Else a line is handed on as a view of what was fed, valid
// until emit returns, and emit keeps what it needs with copyOut: a line
// the same as a recorded one is not copied at all (see runner.handle).
type splitter struct {
	keep   *keeper
	scan   *wire.Scanner // cuts the pipe's frames: lines, or header-framed messages
	stable bool
	acc    []byte // the frame so far, when it spans feeds (up to the cap)
	n      int64  // its length so far, without its newline
	eol    bool   // it has ended
	slab   []byte
}

// slabSize is how much line text one allocation holds at most.
const slabSize = 32 << 10

// line is one frame as the splitter hands it on.
type line struct {
	raw    []byte
	head   []byte // a header-framed message's header block (copied when stable)
	eol    bool
	cut    *frame.Cut
	unkept bool
	// view marks raw as a view into what was fed (see splitter).
	view bool
}

// feed cuts b into frames and calls emit for each complete one.
func (s *splitter) feed(b []byte, emit func(line)) {
	for len(b) > 0 {
		n, body, end := s.scan.Scan(b)
		b = b[n:]
		switch {
		case end && s.n == 0 && len(body) < s.keep.bound.line:
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

// end hands on the last frame when the stream ended inside it.
func (s *splitter) end(emit func(line)) {
	held, inFrame := s.scan.End()
	s.add(held)
	if inFrame {
		s.emitAcc(emit)
	}
}

func (s *splitter) add(b []byte) {
	s.n += int64(len(b))
	if room := s.keep.bound.line - len(s.acc); room > 0 {
		s.acc = append(s.acc, b[:min(room, len(b))]...)
	}
}

func (s *splitter) emitAcc(emit func(line)) {
	length := s.n
	s.emit(s.acc[:min(int64(len(s.acc)), length)], length, s.eol, emit)
	s.acc, s.n, s.eol = s.acc[:0], 0, false
}

// emit hands on a line of length n of which raw was read.
func (s *splitter) emit(raw []byte, n int64, eol bool, emit func(line)) {
	l := line{eol: eol, head: s.scan.Head()}
	if l.head != nil && s.stable {
		l.head = append([]byte(nil), l.head...)
	}
	if !s.keep.take(n, len(raw)) {
		l.unkept = true
	} else if int64(len(raw)) < n {
		l.cut = &frame.Cut{Len: n}
	}
	switch {
	case !s.stable:
		l.raw, l.view = raw, true
	case l.unkept:
		l.raw = append([]byte(nil), raw...)
	default:
		l.raw = s.copyOut(raw)
	}
	emit(l)
}

// copyOut copies a line into the splitter's slabs (a long one into a slice
// of its own), to stay in the timeline.
func (s *splitter) copyOut(raw []byte) []byte {
	if len(raw) > slabSize/4 {
		return append(make([]byte, 0, len(raw)), raw...)
	}
	if cap(s.slab)-len(s.slab) < len(raw) {
		s.slab = make([]byte, 0, max(s.keep.bound.bufSize(slabMin, slabSize), len(raw)))
	}
	at := len(s.slab)
	s.slab = append(s.slab, raw...)
	return s.slab[at:len(s.slab):len(s.slab)]
}

// read sends every line of one of the plugin's pipes to the main loop
// (the reader of a pipe the main loop does not read itself).
func (r *runner) read(src io.Reader, dir frame.Dir, k *keeper) {
	s := &splitter{keep: k, scan: r.scanner(dir), stable: true}
	buf := make([]byte, k.bound.bufSize(readBufMin, readBufMax))
	emit := func(l line) {
		r.post(event{kind: evLine, dir: dir, raw: l.raw, head: l.head, eol: l.eol, cut: l.cut, unkept: l.unkept, at: time.Now()})
	}
	for {
		n, err := src.Read(buf)
		s.feed(buf[:n], emit)
		if err != nil {
			s.end(emit)
			r.post(event{kind: evEOF, dir: dir, at: time.Now()})
			return
		}
	}
}
