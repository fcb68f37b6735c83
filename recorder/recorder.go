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
	r.append(f, l.Bytes, l.Len)
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
	r.append(f, nil, 0)
}

// append writes one frame; the caller holds mu.
func (r *Recorder) append(f *frame.Frame, raw []byte, size int64) {
	if r.w == nil {
		r.countLost(size)
		return
	}
	r.hdr = frame.AppendHeader(r.hdr[:0], f)
	if err := r.w.Append(spool.TypeFrame, r.hdr, raw); err != nil {
		r.fail(err)
		r.countLost(size)
	}
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
