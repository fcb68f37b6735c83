// Package frame owns tapedeck's data model: the frame (one line as it crossed
// the shim), the lifecycle events that sit between frames on a session's
// timeline, and the session metadata. It also owns the frame's compact
// binary encoding (codec.go), which the store keeps in its database and a
// spool's frame and tail records carry; the spool's record format around it
// is the spool package's. It imports only the standard library and knows
// nothing of processes, files or databases.
package frame

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Dir is the stream a frame crossed.
type Dir uint8

// The three streams of a plugin process.
const (
	In  Dir = 1 // host → plugin (the plugin's stdin)
	Out Dir = 2 // plugin → host (the plugin's stdout)
	Err Dir = 3 // the plugin's stderr
)

// String returns "in", "out" or "err" (the tape spelling).
func (d Dir) String() string {
	switch d {
	case In:
		return "in"
	case Out:
		return "out"
	case Err:
		return "err"
	}
	return fmt.Sprintf("dir(%d)", uint8(d))
}

// ParseDir is the inverse of String.
func ParseDir(s string) (Dir, error) {
	switch s {
	case "in":
		return In, nil
	case "out":
		return Out, nil
	case "err":
		return Err, nil
	}
	return 0, fmt.Errorf("%w: %q (want in, out or err)", ErrBadDir, s)
}

// Event names a lifecycle event; NoEvent (0) marks a line. Its String is
// the name as spelled on tapes and in the store.
type Event uint8

// The lifecycle events.
const (
	NoEvent     Event = iota // a line, not an event
	EventEOF                 // "eof": the host closed the plugin's stdin
	EventSignal              // "signal": a signal reached the shim and was passed on
	EventClosed              // "closed": the plugin closed its stdout
	EventExit                // "exit": the plugin exited (Code or Signal)
	EventGone                // "gone": the host stopped reading our stdout (EPIPE); output is recorded, not delivered
)

// String returns the event's tape spelling ("eof", …), "" for NoEvent.
func (e Event) String() string {
	switch e {
	case NoEvent:
		return ""
	case EventEOF:
		return "eof"
	case EventSignal:
		return "signal"
	case EventClosed:
		return "closed"
	case EventExit:
		return "exit"
	case EventGone:
		return "gone"
	}
	return fmt.Sprintf("event(%d)", uint8(e))
}

// ParseEvent is the inverse of String for the five events; false for
// any other name (and for "").
func ParseEvent(name string) (Event, bool) {
	for e := EventEOF; e <= EventGone; e++ {
		if e.String() == name {
			return e, true
		}
	}
	return NoEvent, false
}

// MarshalText spells the event as String does.
func (e Event) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an event's name; "" is NoEvent.
func (e *Event) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*e = NoEvent
		return nil
	}
	ev, ok := ParseEvent(string(b))
	if !ok {
		return fmt.Errorf("%w: %q", ErrBadEvent, b)
	}
	*e = ev
	return nil
}

// Sentinel errors of this package.
var (
	ErrBadDir    = errors.New("bad direction")
	ErrBadEvent  = errors.New("unknown event (want eof, signal, closed, exit or gone)")
	ErrTruncated = errors.New("truncated frame encoding")
)

// Cut describes a frame whose stored Raw holds only its first bytes because
// the line was longer than the recording cap.
type Cut struct {
	Len int64 // the full length of the line, without its newline
	// SHA256 is the hash of the full line; all zeros when it is not known
	// (a line whose middle was unreadable in a damaged spool).
	SHA256 [32]byte
}

// Frame is one entry of a session's timeline: a message as it crossed the
// shim (Event == NoEvent) or a lifecycle event. Under newline framing a
// message is a line, and Raw its bytes without the "\n"; under header
// framing (package internal/wire) Raw is the body and Head the header
// block before it, kept byte for byte. Its fields are ordered so that it
// takes 64 bytes: a replay holds two of them a frame (the recording's and
// the live one), so what few frames say (a signal, an exit code, a header
// block) is behind one pointer (see Signal, Code, SetEnd, Head, SetHead).
type Frame struct {
	Seq uint64 // 1, 2, 3 … in the order the shim saw complete frames and events
	At  int64  // nanoseconds since the session started (monotonic clock)
	Raw []byte // the exact bytes of the line without its "\n", or of the body
	// Cut is non-nil when Raw is only the first bytes of a longer line.
	Cut *Cut
	ext *extra // what few frames say: an event's end, a header block

	Event Event // the lifecycle event, NoEvent for a line
	Dir   Dir   // the stream; for events the stream concerned, or 0
	// NoEOL marks an unterminated last line, or a body the stream ended
	// inside.
	NoEOL bool
}

// extra is what a frame says beyond its line: for signal and exit events,
// the signal and the exit code; for a header-framed message, its header
// block.
type extra struct {
	Exit
	head []byte
}

// Head is the header block that came before a header-framed message's
// body, byte for byte ("Content-Length: 2\r\n\r\n"); nil for a line.
func (f *Frame) Head() []byte {
	if f.ext == nil {
		return nil
	}
	return f.ext.head
}

// SetHead sets the header block (nil: the frame is a line). head is kept,
// not copied.
func (f *Frame) SetHead(head []byte) {
	if f.ext == nil {
		if head == nil {
			return
		}
		f.ext = &extra{}
	} else {
		e := *f.ext
		f.ext = &e
	}
	f.ext.head = head
	f.trim()
}

// trim drops ext once it says nothing.
func (f *Frame) trim() {
	if e := f.ext; e != nil && e.head == nil && e.Signal == "" && e.Code == nil {
		f.ext = nil
	}
}

// Same reports whether f and g are the same line or event, leaving aside
// their seq and time.
func (f *Frame) Same(g *Frame) bool {
	return f.Dir == g.Dir && f.Event == g.Event && f.NoEOL == g.NoEOL && bytes.Equal(f.Raw, g.Raw) &&
		(f.Cut == nil) == (g.Cut == nil) && (f.Cut == nil || *f.Cut == *g.Cut) &&
		bytes.Equal(f.Head(), g.Head()) && (f.Head() == nil) == (g.Head() == nil) &&
		f.Signal() == g.Signal() && sameCode(f.Code(), g.Code())
}

// IsEvent reports whether f is a lifecycle event rather than a line.
func (f *Frame) IsEvent() bool { return f.Event != NoEvent }

// Signal is, for signal and exit events, the signal's name (e.g.
// "SIGTERM"); "" when there is none.
func (f *Frame) Signal() string {
	if f.ext == nil {
		return ""
	}
	return f.ext.Signal
}

// Code is, for an exit event, the exit code when the plugin exited
// normally; nil otherwise.
func (f *Frame) Code() *int {
	if f.ext == nil {
		return nil
	}
	return f.ext.Code
}

// SetEnd sets what a signal or exit event says: the signal's name ("" for
// none) and the exit code (nil for none).
func (f *Frame) SetEnd(signal string, code *int) {
	if f.ext == nil {
		if signal == "" && code == nil {
			return
		}
		f.ext = &extra{}
	} else {
		e := *f.ext
		f.ext = &e
	}
	f.ext.Exit = Exit{Signal: signal, Code: code}
	f.trim()
}

// WithEnd is f with what SetEnd sets.
func (f Frame) WithEnd(signal string, code *int) Frame {
	f.SetEnd(signal, code)
	return f
}

// Counts holds one number per stream.
type Counts struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
	Err int64 `json:"err"`
}

// Add adds n to the count of d.
func (c *Counts) Add(d Dir, n int64) {
	switch d {
	case In:
		c.In += n
	case Out:
		c.Out += n
	case Err:
		c.Err += n
	}
}

// Plugin identifies the peer tapedeck runs (an Agentty plugin, an MCP
// server, a language server), as its host profile reads it from the
// handshake.
type Plugin struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Exit is how the plugin ended: Code for a normal exit, Signal when a signal
// killed it. Both empty when it never ran.
type Exit struct {
	Code   *int   `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// sameCode reports whether two exit codes say the same.
func sameCode(a, b *int) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// Lost says what a recording could not keep.
type Lost struct {
	Frames int64  `json:"frames"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Session statuses.
const (
	StatusRecording     = "recording"
	StatusComplete      = "complete"
	StatusInterrupted   = "interrupted"
	StatusFailedToStart = "failed-to-start"
	// StatusDamaged: part of the session's spool could not be read; what
	// read cleanly is stored and Session.Unreadable counts the bytes lost.
	StatusDamaged = "damaged"
)

// Session is the metadata of one recording.
type Session struct {
	ID      string            `json:"id"`
	Name    string            `json:"name,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
	Command []string          `json:"command"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env,omitempty"`
	// Profile names the host profile the session belongs to ("agentty",
	// "mcp", "lsp", "jsonrpc"); "" in sessions recorded before profiles
	// had names (Agentty's). Framing is how the peer's stdin and stdout
	// were framed: "" (lines) or "headers".
	Profile string `json:"profile,omitempty"`
	Framing string `json:"framing,omitempty"`
	Plugin  Plugin `json:"plugin"`
	// APIVersion is the Agentty API version the host spoke; Protocol, the
	// protocol revision of other hosts (an MCP protocolVersion).
	APIVersion  int        `json:"apiVersion,omitempty"`
	Protocol    string     `json:"protocol,omitempty"`
	HostName    string     `json:"hostName,omitempty"`
	HostVersion string     `json:"hostVersion,omitempty"`
	Started     time.Time  `json:"started"`
	Ended       *time.Time `json:"ended"`
	Status      string     `json:"status"`
	Exit        Exit       `json:"exit"`
	Frames      Counts     `json:"frames"`
	Bytes       Counts     `json:"bytes"`
	Lost        *Lost      `json:"lost,omitempty"`
	// Unreadable is the number of bytes of a damaged session's spool that
	// could not be read (status damaged); 0 otherwise.
	Unreadable int64      `json:"unreadable,omitempty"`
	Error      string     `json:"error,omitempty"`
	Tapedeck   string     `json:"tapedeck"`
	Redaction  *Redaction `json:"redaction,omitempty"`
	// Clock is set when the plugin ran with a pinned clock (record
	// --pin-clock); a replay pins it the same way.
	Clock *Clock `json:"clock,omitempty"`
	// Fingerprint is the environment the session ran in, taken after the
	// plugin started (so it arrives with the End record).
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
}

// Redaction says how a session's frames were redacted (when recorded or
// exported), so that a replay can redact the live frames the same way
// before it compares, prints or saves them.
type Redaction struct {
	Rules    []string `json:"rules,omitempty"`    // METHOD:PATH rules
	Regexps  []string `json:"regexps,omitempty"`  // regular expressions
	Defaults bool     `json:"defaults,omitempty"` // the default credential rule
	// KeyID names the key of the placeholders (redact.KeyID): a replay
	// with the same key expects the same placeholders.
	KeyID string `json:"keyId,omitempty"`
}

// Duration is how long the session ran (until now when it has not ended).
func (s *Session) Duration(now time.Time) time.Duration {
	if s.Ended != nil {
		return s.Ended.Sub(s.Started)
	}
	return now.Sub(s.Started)
}
