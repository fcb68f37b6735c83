package playground

// How much of a run the playground keeps in memory for the page. The
// store has every frame (each run is recorded as any session is); the
// page has, of each pipe, its first frames within pageBound, each line
// at most the host's line limit + 1 (stderr lines at most 1 MiB), and the
// first keptFindings findings. What goes past is counted, not kept, and
// said once (in the page, as a finding, and on the terminal): a plugin
// that floods, or writes one line without end, costs the playground
// time, not memory. The plugin's requests past the bound are still
// answered, and what it said still counts for a replay of actions.

import (
	"fmt"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/window"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// The page's window on a run, on each pipe (see pageBound).
const (
	keptFrames = 20000
	keptBytes  = 8 << 20 // besides one line at its cap
	// errLineCap is a stderr line's cap: a log line (the host's own log
	// cuts it at 2,000 characters).
	errLineCap = 1 << 20
	// keptFindings is how many of a run's findings the page gets.
	keptFindings = 2000
)

// ruleNotKept is the rule of the page's note that a pipe ran past the
// page's window (a playground's note, not one of check's).
const ruleNotKept = "not-kept"

// pageBound is the bound of the page's window on the pipe of direction
// dir. A host frame is never cut (the playground writes it whole); its
// longest is an action's body.
func pageBound(dir frame.Dir, frames int) window.Bound {
	line := host.HostLineLimit + 1
	switch dir {
	case frame.Err:
		line = errLineCap
	case frame.In:
		line = maxAction + 64<<10
	}
	return window.Bound{Frames: int64(frames), Bytes: keptBytes + int64(line), Line: line, Recorded: 64 << 10}
}

// keeping is what a run keeps of its pipes for the page: the keepers of
// the plugin's stdout and stderr are their splitters' (each read on its
// pipe's goroutine until the run has exited), the host's under the
// server's mutex.
type keeping struct {
	in       window.Keeper
	out, err *window.Keeper
	said     map[frame.Dir]bool // the page was told the pipe ran past
	findings int64              // findings not kept
	tooMany  bool               // the page was told of findings not kept
}

// newKeeping keeps frames of each pipe (0: keptFrames).
func newKeeping(frames int) *keeping {
	if frames == 0 {
		frames = keptFrames
	}
	return &keeping{
		in:   window.Keeper{Bound: pageBound(frame.In, frames)},
		out:  &window.Keeper{Bound: pageBound(frame.Out, frames)},
		err:  &window.Keeper{Bound: pageBound(frame.Err, frames)},
		said: map[frame.Dir]bool{},
	}
}

// keeper is the keeper of the pipe of direction dir.
func (k *keeping) keeper(dir frame.Dir) *window.Keeper {
	switch dir {
	case frame.Out:
		return k.out
	case frame.Err:
		return k.err
	}
	return &k.in
}

// pipe is one of the plugin's pipes as capture hands on what the plugin
// writes there: cut into lines at the page's cap, each told to the run.
type pipe struct {
	split window.Splitter
	emit  func(window.Line)
}

// newPipe is run r's pipe of direction dir (frame.Out or frame.Err).
func (s *server) newPipe(r *run, dir frame.Dir) *pipe {
	p := &pipe{split: window.Splitter{Keep: r.keep.keeper(dir), Scan: wire.NewScanner(wire.Lines)}}
	p.emit = func(l window.Line) {
		if !l.Unkept {
			l.Raw = p.split.CopyOut(l.Raw) // a view until now
		}
		s.pluginSaid(r, dir, l)
	}
	return p
}

// Write takes what the plugin wrote; it never fails.
func (p *pipe) Write(b []byte) (int, error) {
	p.split.Feed(b, p.emit)
	return len(b), nil
}

// flush hands on an unterminated last line, once the pipe has ended.
func (p *pipe) flush() { p.split.End(p.emit) }

// takeLocked puts a line the plugin said into run r's timeline when it is
// within the page's window (else tells the page once that the pipe ran
// past it), checks it either way, and returns check's findings.
func (s *server) takeLocked(r *run, dir frame.Dir, l window.Line) []check.Finding {
	f := frame.Frame{Dir: dir, Raw: l.Raw, Cut: l.Cut, NoEOL: !l.EOL}
	if dir == frame.Out {
		r.heardLocked()
	}
	if !l.Unkept {
		return s.addLocked(r, f)
	}
	return s.unkeptLocked(r, f)
}

// hostFrameLocked puts a frame the host sent into run r's timeline, as
// takeLocked does.
func (s *server) hostFrameLocked(r *run, raw []byte) {
	f := frame.Frame{Dir: frame.In, Raw: raw}
	if r.keep.in.Take(int64(len(raw)), len(raw)) {
		s.addLocked(r, f)
		return
	}
	s.unkeptLocked(r, f)
}

// unkeptLocked checks a frame past the page's window (what the host
// would refuse depends on it) without keeping it or its findings, and
// tells the page, once for its pipe, that the pipe ran past.
func (s *server) unkeptLocked(r *run, f frame.Frame) []check.Finding {
	f.At = int64(time.Since(r.start))
	found := r.checker.Feed(&f)
	r.keep.findings += int64(len(found))
	if !r.keep.said[f.Dir] {
		r.keep.said[f.Dir] = true
		msg := fmt.Sprintf("%s ran past what the playground keeps for the page (%d frames, %d bytes): from here on its frames are counted, not shown; run %d's session in the store has every one", pipeName(f.Dir), r.keep.keeper(f.Dir).Bound.Frames, keptBytes, r.n)
		s.noteLocked(r, msg)
	}
	return found
}

// keepFindingLocked reports whether run r's page gets one more finding;
// past keptFindings it says so once, and counts the rest.
func (s *server) keepFindingLocked(r *run) bool {
	switch {
	case len(r.finds) < keptFindings:
		return true
	case !r.keep.tooMany:
		r.keep.tooMany = true
		r.keep.findings++
		s.noteLocked(r, fmt.Sprintf("more findings than the playground keeps for the page (%d): the rest are counted, not shown; tapedeck check of run %d's session lists them all", keptFindings, r.n))
	default:
		r.keep.findings++
	}
	return false
}

// noteLocked tells the page (as a finding of the playground's, past any
// bound) and the terminal what run r left out.
func (s *server) noteLocked(r *run, msg string) {
	fmt.Fprintf(s.opt.Log, "tapedeck: play: %s\n", msg)
	d := findingData{Index: -1, Level: string(check.Info), Rule: ruleNotKept, Message: msg}
	r.finds = append(r.finds, d)
	s.broadcastLocked(struct {
		T   string      `json:"t"`
		Run int         `json:"run"`
		X   findingData `json:"x"`
	}{"finding", r.n, d})
}

// unkeptNoteLocked says, once run r has exited, what its pipes said past
// the page's window ("" when nothing). The splitters' keepers are read
// only now: their pipes have ended.
func (s *server) unkeptNoteLocked(r *run) string {
	var parts []string
	for _, p := range []struct {
		dir frame.Dir
		u   window.Unkept
	}{{frame.Out, r.keep.out.Count()}, {frame.Err, r.keep.err.Count()}, {frame.In, r.keep.in.Count()}} {
		if p.u.Frames > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d bytes) on %s", counted(int(p.u.Frames), "line"), p.u.Bytes, pipeName(p.dir)))
		}
		if p.u.Cut > 0 {
			parts = append(parts, fmt.Sprintf("%s on %s cut at %d bytes", counted(int(p.u.Cut), "line"), pipeName(p.dir), p.u.CutAt))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("run %d: not kept for the page: %s (the session in the store has every frame)", r.n, joinAnd(parts))
}

func pipeName(d frame.Dir) string {
	switch d {
	case frame.Out:
		return "the plugin's stdout"
	case frame.Err:
		return "the plugin's stderr"
	}
	return "the host's side"
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	out := parts[0]
	for _, p := range parts[1 : len(parts)-1] {
		out += ", " + p
	}
	return out + " and " + parts[len(parts)-1]
}
