// Package recorder owns a session while it is being recorded: it is the
// proxy's Sink, numbering and timestamping every line and lifecycle event and
// appending each to the session's spool with one write before the proxy
// passes the line on. A recording failure (a full disk, a vanished folder)
// never stops the relay: it is reported once and counted as lost. The
// recorder never opens the database; the store ingests the spool afterwards.
package recorder

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/proxy"
	"github.com/tapedeck/tapedeck/spool"
)

// Recorder records one session. Its methods are safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	w       *spool.Writer // nil when the spool could not be made
	started time.Time     // carries the monotonic clock reading
	seq     uint64
	hdr     []byte
	fr      frame.Frame
	lost    frame.Lost
	warn    io.Writer
	warned  bool
	// pendingBytes is the size of the lines in the spool's unwritten
	// batch, to count as lost if its write fails.
	pendingBytes int64
	observe      func(*frame.Frame)
	save         BeforeSave
}

// BeforeSave is a hook that runs before each line is appended to the spool:
// it gets the line's direction and bytes (cut: only the first bytes of a
// longer line) and returns the bytes to store instead. It never changes
// what is forwarded: the proxy passes every line on as it came. It runs
// under the recorder's lock, one line at a time in recorded order; it must
// not modify or keep raw, and its result need only stay valid until it
// returns to the recorder.
type BeforeSave func(dir frame.Dir, raw []byte, cut bool) []byte

// SetBeforeSave installs the hook h (nil removes it). Call it before the
// recorder is handed to the proxy. Without a hook no line is looked at.
func (r *Recorder) SetBeforeSave(h BeforeSave) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.save = h
}

// SetObserver installs fn, called under the recorder's lock in seq order
// with every line as it crossed (before any BeforeSave hook) and every
// event. fn must not block, and must not keep f or its Raw.
func (r *Recorder) SetObserver(fn func(*frame.Frame)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe = fn
}

// Notes appends notes about the session's frames (JSON) to the spool; the
// store keeps them with the session. Call it before Finish.
func (r *Recorder) Notes(js []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return fmt.Errorf("record notes: no spool")
	}
	if err := r.w.Append(spool.TypeNotes, js); err != nil {
		r.fail(err)
		return fmt.Errorf("record notes: %w", err)
	}
	return nil
}

// Start creates the session's spool at path with meta as its first record.
// When the spool cannot be made the returned Recorder still works as a Sink
// (everything is counted as lost) and the error says why; warn receives the
// one line that tells the user. meta.Started is the zero point of every
// frame's time.
func Start(path string, meta *frame.Session, warn io.Writer) (*Recorder, error) {
	r := &Recorder{started: meta.Started, warn: warn}
	js, err := json.Marshal(meta)
	if err != nil {
		return r, fmt.Errorf("start recording %s: %w", meta.ID, err)
	}
	r.w, err = spool.Create(path, spool.TypeSession, js)
	if err != nil {
		r.fail(err)
		return r, fmt.Errorf("start recording %s: %w", meta.ID, err)
	}
	return r, nil
}

// Line implements proxy.Sink.
func (r *Recorder) Line(l *proxy.Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	f := &r.fr
	*f = frame.Frame{
		Seq:   r.seq,
		At:    int64(time.Since(r.started)),
		Dir:   frame.Dir(l.Stream),
		NoEOL: !l.EOL,
	}
	if l.SHA256 != nil {
		f.Cut = &frame.Cut{Len: l.Len, SHA256: *l.SHA256}
	}
	raw := l.Bytes
	if r.observe != nil {
		f.Raw = raw
		r.observe(f)
		f.Raw = nil
	}
	if r.save != nil {
		raw = r.save(f.Dir, raw, f.Cut != nil)
	}
	r.append(f, raw, l.Len)
}

// Event implements proxy.Sink.
func (r *Recorder) Event(e proxy.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	f := &r.fr
	*f = frame.Frame{Seq: r.seq, At: int64(time.Since(r.started))}
	switch e.Kind {
	case proxy.EventEOF:
		f.Event, f.Dir = frame.EventEOF, frame.In
	case proxy.EventSignal:
		f.Event, f.Signal = frame.EventSignal, frame.SignalName(int(e.Signal))
	case proxy.EventClosed:
		f.Event, f.Dir = frame.EventClosed, frame.Out
	case proxy.EventGone:
		f.Event, f.Dir = frame.EventGone, frame.Out
	case proxy.EventExit:
		f.Event = frame.EventExit
		if e.Signal != 0 {
			f.Signal = frame.SignalName(int(e.Signal))
		} else {
			code := e.Code
			f.Code = &code
		}
	}
	if r.observe != nil {
		r.observe(f)
	}
	r.append(f, nil, 0)
	r.flush() // events are few, and a signal's must be on disk before it is passed on
}

// append adds one frame to the spool's pending batch; the caller holds mu.
// A large frame is written at once, after the batch, so that what a failed
// write loses is known exactly. Flush writes the batch.
func (r *Recorder) append(f *frame.Frame, raw []byte, size int64) {
	if r.w == nil {
		r.countLost(size)
		return
	}
	r.hdr = frame.AppendHeader(r.hdr[:0], f)
	big := 1+len(r.hdr)+len(raw) >= spool.BigRecord
	if big {
		r.flush()
	}
	if _, err := r.w.Add(spool.TypeFrame, r.hdr, raw); err != nil {
		r.fail(err)
		r.countLost(size)
		return
	}
	if !big {
		r.pendingBytes += size
	}
}

// Flush implements proxy.Flusher: it writes the lines handed over since the
// last Flush with one write, before the proxy forwards them.
func (r *Recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
}

func (r *Recorder) flush() {
	if r.w == nil {
		return
	}
	lost, err := r.w.Flush()
	if err != nil {
		r.fail(err)
		r.lost.Frames += int64(lost)
		r.lost.Bytes += r.pendingBytes
	}
	r.pendingBytes = 0
}

func (r *Recorder) countLost(size int64) {
	r.lost.Frames++
	r.lost.Bytes += size
}

// fail reports the first recording failure on the warn writer, once.
func (r *Recorder) fail(err error) {
	if r.lost.Reason == "" {
		r.lost.Reason = err.Error()
	}
	if r.warned || r.warn == nil {
		return
	}
	r.warned = true
	fmt.Fprintf(r.warn, "tapedeck: recording is failing (%v); the plugin keeps running, unrecorded frames are counted as lost\n", err)
}

// Lost reports what could not be recorded so far, or nil when nothing was lost.
func (r *Recorder) Lost() *frame.Lost {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost.Frames == 0 && r.lost.Reason == "" {
		return nil
	}
	l := r.lost
	return &l
}

// Spool is the spool being written, or nil when there is none.
func (r *Recorder) Spool() *spool.Writer { return r.w }

// Finish appends the end record. It does not close the spool: the caller
// ingests it (still holding its lock) and then closes it.
func (r *Recorder) Finish(end frame.End) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if end.Lost == nil && (r.lost.Frames > 0 || r.lost.Reason != "") {
		l := r.lost
		end.Lost = &l
	}
	if r.w == nil {
		return fmt.Errorf("finish recording: no spool")
	}
	js, err := json.Marshal(end)
	if err != nil {
		return fmt.Errorf("finish recording: %w", err)
	}
	if err := r.w.Append(spool.TypeEnd, js); err != nil {
		r.fail(err)
		return fmt.Errorf("finish recording: %w", err)
	}
	return nil
}
