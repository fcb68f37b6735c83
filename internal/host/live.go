package host

import (
	"fmt"
	"io"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/window"
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
type bound = window.Bound

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
		Frames:   liveFactor*n + liveMarginFrames,
		Bytes:    liveFactor*size + line + liveMarginBytes,
		Line:     int(line),
		Recorded: size,
	}
}

// scriptBound is a host script's bound: a script records nothing of its
// own, so it keeps a generous timeline and lines the host would read.
func scriptBound() bound {
	return bound{Frames: 100000, Bytes: 256 << 20, Line: HostLineLimit + 1, Recorded: readBufMax}
}

// The buffers a pipe of the plugin is read into are sized by what the
// recording says there, within these.
const readBufMin, readBufMax = 4 << 10, 64 << 10

// Unkept counts what the plugin said on one pipe past what the recording
// can explain (see bound): its lines past the bound were still read, and a
// request among them was still answered, but they are not in Result.Live.
type Unkept = window.Unkept

// unkeptNote says what was left out of pipe name, "" when nothing was.
func unkeptNote(u Unkept, name string) string {
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

// read sends every line of one of the plugin's pipes to the main loop
// (the reader of a pipe the main loop does not read itself).
func (r *runner) read(src io.Reader, dir frame.Dir, k *window.Keeper) {
	s := &window.Splitter{Keep: k, Scan: r.scanner(dir), Stable: true}
	buf := make([]byte, k.Bound.BufSize(readBufMin, readBufMax))
	emit := func(l window.Line) {
		r.post(event{kind: evLine, dir: dir, raw: l.Raw, head: l.Head, eol: l.EOL, cut: l.Cut, unkept: l.Unkept, at: time.Now()})
	}
	for {
		n, err := src.Read(buf)
		s.Feed(buf[:n], emit)
		if err != nil {
			s.End(emit)
			r.post(event{kind: evEOF, dir: dir, at: time.Now()})
			return
		}
	}
}
