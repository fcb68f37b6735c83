// Package recorder owns a session while it is being recorded: it is the
// proxy's Sink, numbering and timestamping every line and lifecycle event and
// appending each to the session's spool before the proxy passes the line on.
// A long line is appended in pieces as it arrives, so the recorder never
// holds it whole (unless a hook or observer needs it whole); what a line
// longer than the recording cap keeps is decided here: its first bytes, its
// length and its hash. A recording failure (a full disk, a vanished folder)
// never stops the relay: it is reported once and counted as lost. The
// recorder decides what goes into the spool, not how: the record format is
// the spool package's, written through its Writer's typed methods (and a
// frame's own encoding is the frame package's). The recorder never opens
// the database; the store ingests the spool afterwards.
package recorder

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/spool"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// DefaultMaxLine is how many bytes of a line are stored unless SetMaxLine
// says otherwise; longer lines are stored cut.
const DefaultMaxLine = 64 << 20

// Recorder records one session. Its methods are safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	w       *spool.Writer // nil when the spool could not be made
	id      string
	started time.Time // carries the monotonic clock reading
	max     int64
	seq     uint64
	hdr     []byte
	fr      frame.Frame
	lost    frame.Lost
	warn    io.Writer
	warned  bool
	lines   [4]line // by stream: the line in progress

	// What the pending batch holds, to count as lost if its write fails:
	// frames (lines and events) and their bytes, and whether lines had
	// pieces in it.
	pendingFrames int64
	pendingBytes  int64
	pendingPieces bool

	observe func(*frame.Frame)
	save    BeforeSave
}

// line is what the recorder knows of a line that is coming in pieces.
type line struct {
	stored int64     // bytes of it appended to the spool (at most max)
	failed bool      // a piece could not be stored: the line is lost
	hash   hash.Hash // once the line is longer than max
	pieces []extent  // where its stored bytes are in the spool
	// pending: a piece of it is in the unwritten batch.
	pending bool
	// whole is the line so far (up to max) when a hook or observer needs
	// lines whole.
	whole []byte
}

// extent is a stretch of the spool file.
type extent struct{ off, n int64 }

// BeforeSave is a hook that runs before each line is appended to the spool:
// it gets the line's direction and bytes (cut: only the first bytes of a
// longer line) and returns the bytes to store instead. It never changes
// what is forwarded: the proxy passes every line on as it came. It runs
// under the recorder's lock, one line at a time in recorded order; it must
// not modify or keep raw, and its result need only stay valid until it
// returns to the recorder. With a hook, long lines are held whole (up to
// the recording cap) until they end.
type BeforeSave func(dir frame.Dir, raw []byte, cut bool) []byte

// SetBeforeSave installs the hook h (nil removes it). Call it before the
// recorder is handed to the proxy. Without a hook no line is looked at.
func (r *Recorder) SetBeforeSave(h BeforeSave) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.save = h
}

// SetObserver installs fn, called under the recorder's lock in seq order
// with every line as it crossed (before any BeforeSave hook; cut like the
// stored one) and every event. fn must not block, and must not keep f or
// its Raw. With an observer, long lines are held whole until they end.
func (r *Recorder) SetObserver(fn func(*frame.Frame)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe = fn
}

// SetMaxLine sets how many bytes of a line are stored (n <= 0: the
// default); longer lines are stored cut, with their length and hash. Call
// it before the recorder is handed to the proxy.
func (r *Recorder) SetMaxLine(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.max = DefaultMaxLine
	if n > 0 {
		r.max = int64(n)
	}
}

// Notes appends notes about the session's frames (JSON) to the spool; the
// store keeps them with the session. Call it before Finish.
func (r *Recorder) Notes(js []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return fmt.Errorf("record notes: no spool")
	}
	r.flush()
	if err := r.w.AppendNotes(js); err != nil {
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
	r := &Recorder{id: meta.ID, started: meta.Started, warn: warn, max: DefaultMaxLine}
	js, err := json.Marshal(meta)
	if err != nil {
		return r, fmt.Errorf("start recording %s: %w", meta.ID, err)
	}
	r.w, err = spool.Create(path, js)
	if err != nil {
		r.fail(err)
		return r, fmt.Errorf("start recording %s: %w", meta.ID, err)
	}
	return r, nil
}

// Line implements relay.Sink: a line, or the next piece of a long one.
func (r *Recorder) Line(l *relay.Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line(l)
}

// Lines implements relay.Batcher: the whole lines of one read become one
// record, with one header and one checksum, written from the relay's
// buffer. With a hook or an observer, or a cap shorter than the lines, each
// line goes its own way.
func (r *Recorder) Lines(s relay.Stream, block []byte, n int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.save != nil || r.observe != nil || int64(len(block)) > r.max {
		l := relay.Line{Stream: s, Done: true, EOL: true, Time: at}
		for len(block) > 0 {
			i := wire.LineEnd(block)
			l.Bytes, block = block[:i], block[i+1:]
			r.line(&l)
		}
		return
	}
	r.lines[s&3].reset()
	first := r.seq + 1
	r.seq += uint64(n)
	size := int64(len(block) - n)
	if r.w == nil {
		r.lost.Frames += int64(n)
		r.lost.Bytes += size
		return
	}
	r.w.AddLines(byte(s), first, r.at(at), block)
	r.pendingFrames += int64(n)
	r.pendingBytes += size
}

// line is Line with mu held.
func (r *Recorder) line(l *relay.Line) {
	ln := &r.lines[l.Stream&3]
	whole := r.save != nil || r.observe != nil
	if l.Off == 0 {
		ln.reset()
	}
	if !l.Done {
		if whole {
			ln.keep(l.Bytes, r.max)
		} else {
			r.piece(ln, l)
		}
		return
	}
	r.seq++
	f := &r.fr
	*f = frame.Frame{Seq: r.seq, At: r.at(l.Time), Dir: frame.Dir(l.Stream), NoEOL: !l.EOL}
	f.SetHead(l.Head)
	size := l.Off + int64(len(l.Bytes))
	switch {
	case l.Off == 0:
		// The common case: the whole line came in one read.
		raw := l.Bytes
		if int64(len(raw)) > r.max {
			sum := sha256.Sum256(raw)
			f.Cut = &frame.Cut{Len: size, SHA256: sum}
			raw = raw[:r.max]
		}
		r.whole(f, raw, size, false)
	case whole:
		ln.keep(l.Bytes, r.max)
		if ln.hash != nil {
			f.Cut = &frame.Cut{Len: size}
			ln.hash.Sum(f.Cut.SHA256[:0])
		}
		r.whole(f, ln.whole, size, true)
	default:
		r.tail(ln, f, l.Bytes, size)
	}
	ln.reset()
}

// whole stores a frame whose raw the recorder has in one piece. held: raw
// is the recorder's own buffer, reused by the next line.
func (r *Recorder) whole(f *frame.Frame, raw []byte, size int64, held bool) {
	if r.observe != nil {
		f.Raw = raw
		r.observe(f)
		f.Raw = nil
	}
	if r.save != nil {
		n := len(raw)
		raw = r.save(f.Dir, raw, f.Cut != nil)
		held = true
		if head := f.Head(); head != nil && f.Cut == nil && len(raw) != n {
			// The stored body is not the one that crossed: its header
			// block says the stored length.
			f.SetHead(wire.Reframe(head, len(raw)))
		}
	}
	r.hdr = frame.AppendHeader(r.hdr[:0], f)
	r.addFrame(r.hdr, raw, size)
	if held && r.w != nil && r.w.Borrowed() {
		// The batch refers to raw, which changes before the next Flush.
		r.flush()
	}
}

// piece appends the next piece of a long line to the spool, as far as the
// line is within the cap, and hashes what is beyond.
func (r *Recorder) piece(ln *line, l *relay.Line) {
	b := l.Bytes
	if room := r.max - ln.stored; room > 0 && !ln.failed {
		keep := b[:min(int64(len(b)), room)]
		b = b[len(keep):]
		if r.w == nil {
			ln.failed = true
		} else {
			at, _ := r.w.AddPiece(byte(l.Stream), ln.stored, r.at(l.Time), keep)
			ln.pieces = append(ln.pieces, extent{at, int64(len(keep))})
			ln.stored += int64(len(keep))
			ln.pending, r.pendingPieces = true, true
		}
	}
	if len(b) > 0 {
		r.overCap(ln)
		ln.hash.Write(b)
	}
}

// overCap starts the hash of a line that has just grown over the cap: the
// stored pieces are read back from the spool (a line over the cap is rare;
// hashing every long line on the way would halve the relay's throughput).
func (r *Recorder) overCap(ln *line) {
	if ln.hash != nil {
		return
	}
	ln.hash = sha256.New()
	if ln.failed {
		return
	}
	r.flush()
	if ln.failed {
		return
	}
	buf := make([]byte, 64<<10)
	for _, e := range ln.pieces {
		for off := e.off; off < e.off+e.n; {
			n := min(int64(len(buf)), e.off+e.n-off)
			if _, err := r.w.ReadAt(buf[:n], off); err != nil {
				r.fail(err)
				ln.failed = true
				return
			}
			ln.hash.Write(buf[:n])
			off += n
		}
	}
}

// tail ends a line that came in pieces: its last bytes go to the spool in a
// tail record that the store joins to the pieces.
func (r *Recorder) tail(ln *line, f *frame.Frame, b []byte, size int64) {
	keep := b[:max(0, min(int64(len(b)), r.max-ln.stored))]
	if rest := b[len(keep):]; len(rest) > 0 || ln.hash != nil {
		if ln.hash == nil {
			r.overCap(ln) // the stored pieces, then what is kept of b
			ln.hash.Write(keep)
		}
		ln.hash.Write(rest)
		f.Cut = &frame.Cut{Len: size}
		ln.hash.Sum(f.Cut.SHA256[:0])
	}
	if ln.failed || r.w == nil {
		r.countLost(size)
		return
	}
	r.hdr = frame.AppendHeader(r.hdr[:0], f)
	if err := r.w.AddTail(ln.stored, r.hdr, keep); err != nil {
		r.notAdded(err, size)
		return
	}
	r.pendingFrames++
	r.pendingBytes += size
}

func (ln *line) reset() {
	ln.stored, ln.failed, ln.hash, ln.pending = 0, false, nil, false
	ln.pieces = ln.pieces[:0]
	if cap(ln.whole) > 4<<20 {
		ln.whole = nil // a long line is over: give its memory back
	}
	ln.whole = ln.whole[:0]
}

// keep adds b to the line held whole, up to max bytes; beyond, it hashes.
func (ln *line) keep(b []byte, max int64) {
	if room := max - int64(len(ln.whole)); ln.hash == nil && int64(len(b)) > room {
		ln.hash = sha256.New()
		ln.hash.Write(ln.whole)
		ln.hash.Write(b)
		ln.whole = append(ln.whole, b[:room]...)
		return
	}
	if ln.hash != nil {
		ln.hash.Write(b)
		return
	}
	ln.whole = append(ln.whole, b...)
}

// at is t as a frame time: nanoseconds since the session started.
func (r *Recorder) at(t time.Time) int64 {
	if t.IsZero() {
		return int64(time.Since(r.started))
	}
	return int64(t.Sub(r.started))
}

// Event implements relay.Sink.
func (r *Recorder) Event(e relay.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	f := &r.fr
	*f = frame.Frame{Seq: r.seq, At: int64(time.Since(r.started))}
	switch e.Kind {
	case relay.EventEOF:
		f.Event, f.Dir = frame.EventEOF, frame.In
	case relay.EventSignal:
		f.Event = frame.EventSignal
		f.SetEnd(frame.SignalName(int(e.Signal)), nil)
	case relay.EventClosed:
		f.Event, f.Dir = frame.EventClosed, frame.Out
	case relay.EventGone:
		f.Event, f.Dir = frame.EventGone, frame.Out
	case relay.EventExit:
		f.Event = frame.EventExit
		if e.Signal != 0 {
			f.SetEnd(frame.SignalName(int(e.Signal)), nil)
		} else {
			code := e.Code
			f.SetEnd("", &code)
		}
	}
	if r.observe != nil {
		r.observe(f)
	}
	r.hdr = frame.AppendHeader(r.hdr[:0], f)
	r.addFrame(r.hdr, nil, 0)
	r.flush() // events are few, and a signal's must be on disk before it is passed on
}

// addFrame adds one frame record (the frame's header and raw) to the
// spool's pending batch; the caller holds mu. Flush writes the batch.
func (r *Recorder) addFrame(hdr, raw []byte, size int64) {
	if r.w == nil {
		r.countLost(size)
		return
	}
	if err := r.w.AddFrame(hdr, raw); err != nil {
		r.notAdded(err, size)
		return
	}
	r.pendingFrames++
	r.pendingBytes += size
}

// notAdded counts a frame of size bytes that err kept out of the batch as
// lost.
func (r *Recorder) notAdded(err error, size int64) {
	r.fail(err)
	r.countLost(size)
}

// Flush implements relay.Flusher: it writes what was handed over since the
// last Flush, before the proxy forwards it.
func (r *Recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
}

func (r *Recorder) flush() {
	if r.w == nil {
		return
	}
	if _, err := r.w.Flush(); err != nil {
		r.fail(err)
		r.lost.Frames += r.pendingFrames
		r.lost.Bytes += r.pendingBytes
		if r.pendingPieces {
			for i := range r.lines {
				if r.lines[i].pending {
					r.lines[i].failed = true
				}
			}
		}
	}
	if r.pendingPieces {
		for i := range r.lines {
			r.lines[i].pending = false
		}
	}
	r.pendingFrames, r.pendingBytes, r.pendingPieces = 0, 0, false
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
	fmt.Fprintf(r.warn, "tapedeck: recording of session %s is failing (%v); the plugin keeps running, unrecorded frames are counted as lost\n", r.id, err)
}

// Warned reports whether the recorder has told the user that recording
// failed.
func (r *Recorder) Warned() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.warned
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
	if r.w == nil {
		return fmt.Errorf("finish recording: no spool")
	}
	r.flush()
	if end.Lost == nil && (r.lost.Frames > 0 || r.lost.Reason != "") {
		l := r.lost
		end.Lost = &l
	}
	js, err := json.Marshal(end)
	if err != nil {
		return fmt.Errorf("finish recording: %w", err)
	}
	if err := r.w.AppendEnd(js); err != nil {
		r.fail(err)
		return fmt.Errorf("finish recording: %w", err)
	}
	return nil
}
