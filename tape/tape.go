// Package tape owns reading and writing tapes, the JSONL form of a session
// that is meant to live in git: a header line with the format version and
// the session metadata, then one line per frame or lifecycle event.
//
// Writing then reading gives back every frame exactly (Raw byte for byte,
// and NoEOL, Cut, Event, Signal, Code, Seq, At, Dir), and a tape written by
// Writer, read by Reader and written again is byte-identical. The package
// imports only the standard library, the frame package and the JSON scanner
// (internal/jsonscan); it knows nothing of files, stores or processes, and
// never logs.
package tape

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Version is the format version Writer writes. Reader reads this version and
// older ones, and refuses newer ones with ErrNewer.
const Version = 1

// Sentinel errors of this package.
var (
	// ErrNewer is wrapped by NewReader's error for a tape written in a newer
	// format than this tapedeck reads.
	ErrNewer = errors.New("tape format is newer than this tapedeck")
	// ErrMalformed is wrapped by every error about a line that is not a valid
	// tape line; the error text names the line number and what is wrong.
	ErrMalformed = errors.New("malformed tape")
)

// Writer writes a tape. It buffers: call Flush when done. It is not safe for
// concurrent use. After a write error every later call returns that error.
type Writer struct {
	// headers: the session is header-framed (its heads are elided where
	// plain, and a bare line says so; see appendHead).
	headers bool
	bw      *bufio.Writer
	buf     []byte
	seq     uint64
	err     error
	wrote   bool // a line was written (so seq holds its Seq)
}

// NewWriter returns a Writer on w and writes (into its buffer) the header
// line {"tapedeck":1,"session":…}, the session being json.Marshal(meta). A
// nil meta is written as the zero Session. NewWriter fails only when meta
// cannot be marshalled; write errors surface from Write or Flush.
func NewWriter(w io.Writer, meta *frame.Session) (*Writer, error) {
	if meta == nil {
		meta = &frame.Session{}
	}
	sess, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("write tape header: %w", err)
	}
	tw := &Writer{bw: bufio.NewWriter(w), headers: meta.Framing == wire.Headers.String()}
	tw.buf = append(tw.buf, `{"tapedeck":`...)
	tw.buf = strconv.AppendInt(tw.buf, Version, 10)
	tw.buf = append(tw.buf, `,"session":`...)
	tw.buf = append(tw.buf, sess...)
	tw.buf = append(tw.buf, "}\n"...)
	_, tw.err = tw.bw.Write(tw.buf)
	return tw, nil
}

// Write appends one line for f: a frame line when f.Event is "", an event
// line otherwise. It refuses (without writing anything) what a tape cannot
// hold or Reader would reject, so that everything written reads back the
// same: a Seq not greater than the previous one, a frame whose Dir is not
// In, Out or Err or that carries Signal or Code, an unknown event, an event
// with Raw, NoEOL or Cut, an event whose Dir is not the one its name implies
// (In for eof, Out for closed and gone, 0 otherwise), Signal on an event
// other than signal and exit, Code on an event other than exit. Write does
// not keep f.
func (w *Writer) Write(f *frame.Frame) error {
	if w.err != nil {
		return w.err
	}
	if err := check(f, w.seq, w.wrote); err != nil {
		return fmt.Errorf("write tape seq %d: %w", f.Seq, err)
	}
	w.seq, w.wrote = f.Seq, true
	w.buf = appendLine(w.buf[:0], f, w.headers)
	_, w.err = w.bw.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not hold on to one huge frame's buffer
	}
	return w.err
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// check says why f cannot be written after a frame with sequence number prev
// (when any was written).
// WriteAll writes a whole tape to w: the header of meta, then frames.
func WriteAll(w io.Writer, meta *frame.Session, frames []frame.Frame) error {
	tw, err := NewWriter(w, meta)
	if err != nil {
		return err
	}
	for i := range frames {
		if err := tw.Write(&frames[i]); err != nil {
			return err
		}
	}
	return tw.Flush()
}

func check(f *frame.Frame, prev uint64, wrote bool) error {
	if f.Seq == 0 {
		return errors.New("seq must be at least 1")
	}
	if wrote && f.Seq <= prev {
		return fmt.Errorf("seq must increase (%d after %d)", f.Seq, prev)
	}
	if !f.IsEvent() {
		switch {
		case f.Dir != frame.In && f.Dir != frame.Out && f.Dir != frame.Err:
			return fmt.Errorf("frame has %v, want in, out or err", f.Dir)
		case f.Signal() != "" || f.Code() != nil:
			return errors.New("a frame (not an event) has a signal or a code")
		}
		return nil
	}
	dir, ok := eventDir(f.Event)
	switch {
	case !ok:
		return fmt.Errorf("unknown event %v", f.Event)
	case len(f.Raw) > 0 || f.NoEOL || f.Cut != nil:
		return fmt.Errorf("%s event has bytes, eol or cut", f.Event)
	case f.Dir != dir:
		return fmt.Errorf("%s event has dir %v, want %v", f.Event, f.Dir, dir)
	case f.Signal() != "" && f.Event != frame.EventSignal && f.Event != frame.EventExit:
		return fmt.Errorf("%s event has a signal", f.Event)
	case f.Code() != nil && f.Event != frame.EventExit:
		return fmt.Errorf("%s event has a code", f.Event)
	}
	return nil
}

// eventDir is the Dir an event has on a tape, and whether the event is known.
func eventDir(event frame.Event) (frame.Dir, bool) {
	switch event {
	case frame.EventEOF:
		return frame.In, true
	case frame.EventClosed, frame.EventGone:
		return frame.Out, true
	case frame.EventSignal, frame.EventExit:
		return 0, true
	}
	return 0, false
}

// appendLine appends f's tape line, "\n" included, to dst. f has passed
// check; headers says the session is header-framed.
func appendLine(dst []byte, f *frame.Frame, headers bool) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, f.Seq, 10)
	dst = append(dst, `,"at":`...)
	dst = strconv.AppendInt(dst, f.At, 10)
	if f.IsEvent() {
		dst = append(dst, `,"event":`...)
		dst = AppendString(dst, []byte(f.Event.String()))
		if sig := f.Signal(); sig != "" {
			dst = append(dst, `,"signal":`...)
			dst = AppendString(dst, []byte(sig))
		}
		if code := f.Code(); code != nil {
			dst = append(dst, `,"code":`...)
			dst = strconv.AppendInt(dst, int64(*code), 10)
		}
		return append(dst, "}\n"...)
	}
	dst = append(dst, `,"dir":"`...)
	dst = append(dst, f.Dir.String()...)
	dst = append(dst, '"')
	dst = appendHead(dst, f, headers && f.Dir != frame.Err)
	dst = AppendBytes(dst, f)
	return append(dst, "}\n"...)
}

// appendHead appends what a tape says of f's header block. In a stream
// that is header-framed (framed), a plain block (wire.HeadFor of the
// frame's length) is not written, any other is (`,"head":"…"`, or
// `,"head64":"…"` when it is not UTF-8), and a frame without one is a bare
// line (`,"line":true`). In a stream of lines, a block is always written.
func appendHead(dst []byte, f *frame.Frame, framed bool) []byte {
	head := f.Head()
	switch {
	case head == nil && framed:
		return append(dst, `,"line":true`...)
	case head == nil, framed && wire.Canonical(head, frameLen(f)):
		return dst
	case utf8.Valid(head):
		dst = append(dst, `,"head":`...)
		return AppendString(dst, head)
	}
	dst = append(dst, `,"head64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, head)
	return append(dst, '"')
}

// frameLen is the length of a frame's bytes as they crossed.
func frameLen(f *frame.Frame) int {
	if f.Cut != nil {
		return int(f.Cut.Len)
	}
	return len(f.Raw)
}

// AppendBytes appends the members that carry a frame's bytes, as a tape
// writes them: `,"json":…`, `,"text":…` or `,"b64":…`, then `,"eol":false`
// and `,"cut":{…}` where they apply. Other JSON outputs (show --json) use
// it so that every output spells bytes the same way.
func AppendBytes(dst []byte, f *frame.Frame) []byte {
	switch {
	case verbatim(f.Raw):
		dst = append(dst, `,"json":`...)
		dst = append(dst, f.Raw...)
	case utf8.Valid(f.Raw):
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, f.Raw)
	default:
		dst = append(dst, `,"b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, f.Raw)
		dst = append(dst, '"')
	}
	if f.NoEOL {
		dst = append(dst, `,"eol":false`...)
	}
	if f.Cut != nil {
		dst = append(dst, `,"cut":{"len":`...)
		dst = strconv.AppendInt(dst, f.Cut.Len, 10)
		dst = append(dst, `,"sha256":"`...)
		dst = hex.AppendEncode(dst, f.Cut.SHA256[:])
		dst = append(dst, `"}`...)
	}
	return dst
}

// verbatim reports whether raw can be written as a "json" member: a JSON
// value, valid UTF-8, with no whitespace around it (so json.RawMessage gives
// back exactly these bytes) and no CR or LF (so it cannot break the line,
// even for tools that split on CR).
func verbatim(raw []byte) bool {
	if len(raw) == 0 || jsonscan.IsSpace(raw[0]) || jsonscan.IsSpace(raw[len(raw)-1]) {
		return false
	}
	return bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 &&
		utf8.Valid(raw) && json.Valid(raw)
}

// AppendString appends s, valid UTF-8, as a JSON string. The encoding is
// fixed: '"', '\\' and control characters are escaped (\n, \r, \t, \b, \f
// in short form, others as \u00xx), as are U+2028 and U+2029; every other
// character is written as itself. It is the one string encoding that
// tapedeck's JSON outputs share (package internal/jsonscan).
func AppendString(dst, s []byte) []byte { return jsonscan.AppendString(dst, s) }

// Reader reads a tape. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	sess    *frame.Session
	n       int    // number of the last line read
	blank   int    // number of the first blank line of a run not yet followed by a line, or 0
	seq     uint64 // seq of the last frame read
	written uint64 // seq as the last line spelled it (seq may be more: see Next)
	seen    bool   // a line was read (so seq holds its seq)
	err     error  // sticky
	line    []byte
	members []member
	cutOver int // CutLinesOver's bound, 0: none
	lineCap int // while the header is read, MaxHeader; else 0: none
	long    *longLine
	f       frame.Frame
	raw     []byte
	cut     frame.Cut
	// shifted counts the bytes of long lines moved to the start of what
	// is pending (see streamString).
	shifted int64
}

// NewReader reads and checks the header line of the tape r. It returns an
// error wrapping ErrNewer for a newer format version, one wrapping
// ErrMalformed for a missing or invalid header, or the read error.
// The Reader reads r as needed and does not close it.
func NewReader(r io.Reader) (*Reader, error) {
	tr := &Reader{br: bufio.NewReader(r), lineCap: MaxHeader}
	line, err := tr.readLine()
	tr.lineCap = 0
	if err == io.EOF {
		tr.n = 1
		return nil, tr.malformed("empty tape, want the header line")
	}
	if err != nil {
		return nil, err
	}
	if blank(line) {
		return nil, tr.malformed("blank line, want the header line")
	}
	if err := tr.header(line); err != nil {
		return nil, err
	}
	return tr, nil
}

// Session returns the session metadata from the header. Unlike frames, it
// stays valid and unchanged for the life of the Reader. Members of the
// session that frame.Session does not know are ignored: the session is
// metadata, not a frame.
func (r *Reader) Session() *frame.Session { return r.sess }

// Line returns the line of the frame Next returned last, as written
// (without its "\n"), and the seq that line spells. Both are valid until the
// next call to Next.
func (r *Reader) Line() (line []byte, seq uint64) { return r.line, r.written }

// Next returns the next frame or event. Seqs come out strictly increasing:
// a line may repeat the seq of the line before it (replay --update writes a
// frame it inserts so, to leave the lines after it as they were), and such
// a frame is read with the next free seq, as is any later one it would
// collide with. It returns io.EOF at the end of the tape, an error wrapping ErrMalformed for an invalid line, or the read
// error; after an error it keeps returning it. The returned Frame and
// everything it points to (Raw, Cut, Code) belong to the Reader and are
// overwritten by the next call: copy what you keep. Raw is nil for events
// and non-nil for frames.
func (r *Reader) Next() (*frame.Frame, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			return nil, err
		}
		if blank(line) {
			if r.blank == 0 {
				r.blank = r.n
			}
			continue
		}
		if r.blank != 0 {
			r.n = r.blank
			r.err = r.malformed("blank line (only allowed at the end)")
			return nil, r.err
		}
		if err := r.parse(line); err != nil {
			r.err = err
			return nil, err
		}
		if r.long != nil {
			r.f.Raw = r.long.raw
			if r.f.Cut == nil {
				r.cut = frame.Cut{Len: r.long.len, SHA256: r.long.sum}
				r.f.Cut = &r.cut
			}
		}
		return &r.f, nil
	}
}

// Each calls fn with every frame Next returns, to the end of the tape: nil
// at its end, else Next's error or fn's. The frame is fn's only while it
// runs (see Next).
func (r *Reader) Each(fn func(*frame.Frame) error) error {
	for {
		f, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
}

// CutLinesOver bounds what a line costs: a frame line longer than
// maxFrame bytes and 64 KiB is read as it goes, never held whole, and its
// frame comes out cut, as record stores a line longer than its
// --max-frame: its first maxFrame bytes, and a Cut with the whole frame's
// length and SHA-256 (a frame that was cut already keeps its own). A
// "text" or "b64" frame is decoded as it comes, wherever it stands among
// the members; a "json" one must be the line's last member, as tapedeck
// writes it (else the line is read whole, as is one whose long part is a
// member before the frame's bytes). It is for import; tapes that are
// replayed are read whole.
func (r *Reader) CutLinesOver(maxFrame int) { r.cutOver = maxFrame }

// longSlack is how much more than its frame a line may hold before
// CutLinesOver streams it: its other members.
const longSlack = 64 << 10

// longLine is what the reader kept of a line it streamed: the first bytes
// of its frame, and the frame's whole length and SHA-256.
type longLine struct {
	raw []byte
	len int64
	sum [32]byte
}

// MaxHeader is the longest header line a tape may have: a session's
// metadata is a few kilobytes.
const MaxHeader = 1 << 20

// readLine returns the next line without its "\n", or io.EOF when there is
// none. Lines have no length limit but the header's (lineCap, while it is
// read).
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	r.long = nil
	for {
		b, err := r.br.ReadSlice('\n')
		if r.lineCap > 0 && len(r.line)+len(b) > r.lineCap {
			r.n++
			return nil, r.malformed("the header line is longer than %d MiB: not a tape", r.lineCap>>20)
		}
		if r.cutOver > 0 && len(r.line)+len(b) > r.cutOver+longSlack && err != nil {
			r.line = append(r.line, b...)
			return r.streamLine()
		}
		r.line = append(r.line, b...)
		switch {
		case err == nil:
			r.n++
			return r.line[:len(r.line)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(r.line) > 0:
			r.n++
			return r.line, nil
		case err == io.EOF:
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("read tape line %d: %w", r.n+1, err)
		}
	}
}

// streamLine reads the rest of a line too long to hold, r.line holding
// its first bytes: it keeps the first cutOver bytes of its "json" value,
// hashes the whole value, and returns the line with the value spelled
// null, for parse (Next puts the cut frame back).
func (r *Reader) streamLine() ([]byte, error) {
	start, key, ok := dataValueAt(r.line)
	if ok && key != `"json"` && start < len(r.line) && r.line[start] == '"' {
		return r.streamString(start, key == `"b64"`)
	}
	if !ok || key != `"json"` || len(r.line)-start < r.cutOver {
		// Members before the frame's bytes that are themselves long: read
		// whole, as every line was.
		for ended := false; !ended; {
			var err error
			if r.line, ended, err = r.readPiece(r.line); err != nil {
				return nil, err
			}
		}
		r.n++
		return r.line, nil
	}
	h := sha256.New()
	long := &longLine{raw: bytes.Clone(r.line[start : start+r.cutOver])}
	// The value is what lies between start and the line's closing brace:
	// a tail is held back until the line ends, so that the brace and the
	// white space around it are not hashed. The value is not checked as
	// JSON past what parse reads of the line: a cut frame is not JSON.
	const keep = 64
	value := r.line[start:]
	held := max(len(value)-keep, 0)
	h.Write(value[:held])
	long.len = int64(held)
	pending := bytes.Clone(value[held:])
	var readErr error
	for {
		b, err := r.br.ReadSlice('\n')
		ended := err != bufio.ErrBufferFull
		if err == nil {
			b = b[:len(b)-1]
		}
		pending = append(pending, b...)
		if ended {
			readErr = err
			break
		}
		if len(pending) > keep {
			h.Write(pending[:len(pending)-keep])
			long.len += int64(len(pending) - keep)
			pending = append(pending[:0], pending[len(pending)-keep:]...)
		}
	}
	r.n++
	if readErr != nil && readErr != io.EOF {
		return nil, fmt.Errorf("read tape line %d: %w", r.n, readErr)
	}
	pending = bytes.TrimRight(pending, " \t\r")
	if !bytes.HasSuffix(pending, []byte("}")) {
		return nil, r.malformed("not valid JSON: a long line that does not end its object")
	}
	pending = bytes.TrimRight(pending[:len(pending)-1], " \t\r\n")
	h.Write(pending)
	long.len += int64(len(pending))
	h.Sum(long.sum[:0])
	r.long = long
	r.line = append(r.line[:start], "null}"...)
	return r.line, nil
}

// dataValueAt finds, in the first bytes of a line, where the value of its
// member that holds the frame's bytes ("json", "text" or "b64") starts
// when every member before it is whole, and that member's key (quoted).
func dataValueAt(head []byte) (int, string, bool) {
	i := jsonscan.SkipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return 0, "", false
	}
	for i = jsonscan.SkipSpace(head, i+1); i < len(head); {
		k, ok := jsonscan.SkipString(head, i)
		if !ok {
			return 0, "", false
		}
		key := head[i:k]
		i = jsonscan.SkipSpace(head, k)
		if i >= len(head) || head[i] != ':' {
			return 0, "", false
		}
		i = jsonscan.SkipSpace(head, i+1)
		switch string(key) {
		case `"json"`, `"text"`, `"b64"`:
			return i, string(key), true
		}
		if i, ok = jsonscan.SkipValue(head, i); !ok {
			return 0, "", false
		}
		i = jsonscan.SkipSpace(head, i)
		if i >= len(head) || head[i] != ',' {
			return 0, "", false
		}
		i = jsonscan.SkipSpace(head, i+1)
	}
	return 0, "", false
}

// readPiece appends to pending the next piece of a line too long to
// hold, as much as the buffer has; ended says the line's end was read
// (its "\n" left out) or the file ended.
func (r *Reader) readPiece(pending []byte) (_ []byte, ended bool, _ error) {
	b, err := r.br.ReadSlice('\n')
	switch {
	case err == nil:
		b, ended = b[:len(b)-1], true
	case err == io.EOF:
		ended = true
	case err != bufio.ErrBufferFull:
		return nil, false, fmt.Errorf("read tape line %d: %w", r.n+1, err)
	}
	return append(pending, b...), ended, nil
}

// streamString reads the rest of a line too long to hold whose frame is
// a "text" or (b64) "b64" string starting at start in r.line: the string
// is decoded as it comes, its first cutOver bytes kept and all of them
// hashed, and the members after it are read as they are. It returns the
// line with the string spelled "", for parse (Next puts the cut frame
// back).
func (r *Reader) streamString(start int, b64 bool) ([]byte, error) {
	h := sha256.New()
	long := &longLine{raw: make([]byte, 0, r.cutOver)}
	pending := bytes.Clone(r.line[start+1:]) // after the opening quote
	// off is how much of pending is decoded: it is moved past, and
	// pending kept whole until the next read, when what is left is moved
	// to its start (less than a piece). Moving what is left after every
	// piece moved up to the whole first read each time: a 64 MiB line
	// took 4.6 s.
	off := 0
	var decoded, quoted []byte
	ended := false // the line's "\n" was read
	for {
		// A piece at a time, so that what is decoded stays the size of a
		// piece, not of the line's first MiB.
		rest := pending[off:]
		piece := len(rest) > decodePiece
		n, closed := wholeString(rest[:min(len(rest), decodePiece)], b64)
		if n == 0 && !closed && piece {
			// Not one whole escape in a piece: not JSON, which the
			// whole says.
			piece = false
			n, closed = wholeString(rest, b64)
		}
		var err error
		if b64 {
			decoded, err = decode64(decoded[:0], rest[:n])
		} else {
			quoted = append(append(append(quoted[:0], '"'), rest[:n]...), '"')
			var lone rune
			var ok bool
			decoded, lone, ok = jsonscan.Unquote(decoded[:0], quoted)
			if !ok || lone != 0 {
				err = errors.New("not a valid JSON string")
			}
		}
		if err != nil {
			r.n++
			return nil, r.malformed("a long line's frame: %v", err)
		}
		h.Write(decoded)
		long.len += int64(len(decoded))
		if room := r.cutOver - len(long.raw); room > 0 {
			long.raw = append(long.raw, decoded[:min(room, len(decoded))]...)
		}
		off += n
		if closed {
			off++ // the closing quote
			break
		}
		if piece {
			continue
		}
		if ended {
			r.n++
			return nil, r.malformed("not valid JSON: a long line whose string does not end")
		}
		r.shifted += int64(len(pending) - off)
		pending, off = append(pending[:0], pending[off:]...), 0
		if pending, ended, err = r.readPiece(pending); err != nil {
			return nil, err
		}
	}
	pending = pending[off:]
	for !ended { // the members after the string
		var err error
		if pending, ended, err = r.readPiece(pending); err != nil {
			return nil, err
		}
	}
	r.n++
	h.Sum(long.sum[:0])
	r.long = long
	r.line = append(append(r.line[:start], `""`...), pending...)
	return r.line, nil
}

// decodePiece is the most of a long line's string streamString decodes
// at once.
const decodePiece = 64 << 10

// wholeString is how many bytes of p, the inside of a JSON string from
// some point on, can be decoded now: up to the closing quote (closed),
// else up to the last escape that is whole (a surrogate pair is one), and
// for b64 a multiple of four.
func wholeString(p []byte, b64 bool) (n int, closed bool) {
	if b64 {
		if q := bytes.IndexByte(p, '"'); q >= 0 {
			return q, true
		}
		return len(p) / 4 * 4, false
	}
	return jsonscan.PartialString(p)
}

func blank(line []byte) bool {
	for _, c := range line {
		if !jsonscan.IsSpace(c) {
			return false
		}
	}
	return true
}

// lineError is a malformed line: its Error is "tape line N: what".
type lineError struct {
	line int
	what string
}

func (e *lineError) Error() string { return fmt.Sprintf("tape line %d: %s", e.line, e.what) }
func (e *lineError) Unwrap() error { return ErrMalformed }

// malformed returns an error about the current line.
func (r *Reader) malformed(format string, args ...any) error {
	return &lineError{line: r.n, what: fmt.Sprintf(format, args...)}
}

// member is one member of a JSON object: its key (still quoted) and value.
type member struct {
	key, val []byte
}

// object checks that line is valid UTF-8 and one JSON object, and splits it
// into its members (into r.members). Keys are compared as written, quotes
// included: an escaped key is not one a tape has.
func (r *Reader) object(line []byte) error {
	if !utf8.Valid(line) {
		return r.malformed("not valid UTF-8")
	}
	if !json.Valid(line) {
		var syn *json.SyntaxError
		if err := json.Unmarshal(line, new(json.RawMessage)); errors.As(err, &syn) {
			return r.malformed("not valid JSON: %v (at byte %d)", syn, syn.Offset)
		}
		return r.malformed("not valid JSON")
	}
	ms, ok := members(r.members[:0], line)
	r.members = ms
	if !ok {
		return r.malformed("want a JSON object")
	}
	return nil
}

// members appends to dst the members of the JSON object b, which must be
// valid JSON; ok is false when b is not an object.
func members(dst []member, b []byte) (_ []member, ok bool) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return dst, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if b[i] == '}' {
		return dst, true
	}
	for {
		k, _ := jsonscan.SkipString(b, i)
		key := b[i:k]
		i = jsonscan.SkipSpace(b, k)
		i = jsonscan.SkipSpace(b, i+1) // ':'
		v, _ := jsonscan.SkipValue(b, i)
		dst = append(dst, member{key: key, val: b[i:v]})
		i = jsonscan.SkipSpace(b, v)
		if b[i] == '}' {
			return dst, true
		}
		i = jsonscan.SkipSpace(b, i+1) // ','
	}
}

// header parses the header line.
func (r *Reader) header(line []byte) error {
	if err := r.object(line); err != nil {
		return err
	}
	var version, session, unknown []byte
	for _, m := range r.members {
		switch string(m.key) {
		case `"tapedeck"`:
			if version != nil {
				return r.malformed(`duplicate member "tapedeck"`)
			}
			version = m.val
		case `"session"`:
			if session != nil {
				return r.malformed(`duplicate member "session"`)
			}
			session = m.val
		default:
			if unknown == nil {
				unknown = m.key
			}
		}
	}
	if version == nil {
		return r.malformed(`not a tape header: missing "tapedeck"`)
	}
	v, err := strconv.ParseInt(string(version), 10, 64)
	if err != nil || v < 1 {
		return r.malformed(`"tapedeck" must be a positive integer (the format version)`)
	}
	if v > Version {
		return fmt.Errorf("%w: the tape is version %d, this tapedeck reads versions up to %d: upgrade tapedeck",
			ErrNewer, v, Version)
	}
	if unknown != nil {
		return r.malformed("unknown member %s in the header", unknown)
	}
	if session == nil {
		return r.malformed(`missing "session"`)
	}
	if session[0] != '{' {
		return r.malformed(`"session" must be an object`)
	}
	r.sess = new(frame.Session)
	if err := json.Unmarshal(session, r.sess); err != nil {
		return r.malformed(`"session": %v`, err)
	}
	return nil
}

// parse parses a frame or event line into r.f.
func (r *Reader) parse(line []byte) error {
	if err := r.object(line); err != nil {
		return err
	}
	var lm lineMembers
	if err := r.take(&lm); err != nil {
		return err
	}
	f := &r.f
	*f = frame.Frame{}
	if err := r.stamp(f, lm.seq, lm.at); err != nil {
		return err
	}
	var err error
	if lm.event != nil {
		if lm.head != nil || lm.head64 != nil || lm.bare != nil {
			return r.malformed(`"head" and "line" are not allowed on an event line`)
		}
		err = r.event(f, &lm)
	} else {
		err = r.frame(f, &lm)
		if err == nil {
			err = r.head(f, lm.head, lm.head64, lm.bare)
		}
	}
	if err != nil {
		return err
	}
	r.seq, r.seen = f.Seq, true
	return nil
}

// lineMembers are the members of a frame or event line, each its JSON
// value, nil when the line has none; form is the member that holds the
// bytes (data): "json", "text" or "b64", quoted.
type lineMembers struct {
	seq, at, dir, event, signal, code, eol, cut, data, head, head64, bare []byte
	form                                                                  string
}

// slot is where the value of the member key goes; nil for one of the
// bytes' forms and for a member a line does not have.
func (lm *lineMembers) slot(key []byte) *[]byte {
	switch string(key) {
	case `"seq"`:
		return &lm.seq
	case `"at"`:
		return &lm.at
	case `"dir"`:
		return &lm.dir
	case `"event"`:
		return &lm.event
	case `"signal"`:
		return &lm.signal
	case `"code"`:
		return &lm.code
	case `"eol"`:
		return &lm.eol
	case `"cut"`:
		return &lm.cut
	case `"head"`:
		return &lm.head
	case `"head64"`:
		return &lm.head64
	case `"line"`:
		return &lm.bare
	}
	return nil
}

// take puts the members of the line (r.members) in lm: each at most once,
// one form of the bytes at most, no other member.
func (r *Reader) take(lm *lineMembers) error {
	for _, m := range r.members {
		p := lm.slot(m.key)
		if p == nil {
			k := formName(m.key)
			if k == "" {
				return r.malformed("unknown member %s", m.key)
			}
			if lm.form == k {
				return r.malformed("duplicate member %s", k)
			}
			if lm.form != "" {
				return r.malformed(`want exactly one of "json", "text" or "b64", have %s and %s`, lm.form, k)
			}
			lm.form, p = k, &lm.data
		}
		if *p != nil {
			return r.malformed("duplicate member %s", m.key)
		}
		*p = m.val
	}
	return nil
}

// stamp sets f's seq and time from the line's "seq" and "at".
func (r *Reader) stamp(f *frame.Frame, seq, at []byte) error {
	if seq == nil {
		return r.malformed(`missing "seq"`)
	}
	s, err := strconv.ParseUint(string(seq), 10, 64)
	if err != nil || s == 0 {
		return r.malformed(`"seq" must be a positive integer`)
	}
	if r.seen && s < r.written {
		return r.malformed(`"seq" must not decrease (%d after %d)`, s, r.written)
	}
	r.written = s
	// A line may repeat the seq before it (a frame that replay --update
	// inserted): it is read as one more than the frame before, and so is
	// every seq it would otherwise collide with.
	if r.seen && s <= r.seq {
		s = r.seq + 1
	}
	f.Seq = s
	if at == nil {
		return r.malformed(`missing "at"`)
	}
	if f.At, err = strconv.ParseInt(string(at), 10, 64); err != nil {
		return r.malformed(`"at" must be an integer (nanoseconds since the start)`)
	}
	return nil
}

// formName is the member name of a frame's bytes, "json", "text" or "b64"
// quoted, as a constant (no string is made per line); "" for another
// member.
func formName(key []byte) string {
	switch string(key) {
	case `"json"`:
		return `"json"`
	case `"text"`:
		return `"text"`
	case `"b64"`:
		return `"b64"`
	}
	return ""
}

// event fills in an event line's members.
func (r *Reader) event(f *frame.Frame, lm *lineMembers) error {
	signal, code := lm.signal, lm.code
	name, ok := r.str(lm.event)
	if !ok {
		return r.malformed(`"event" must be a string`)
	}
	if f.Event, ok = frame.ParseEvent(string(name)); !ok {
		return r.malformed("unknown event %q (want eof, signal, closed, exit or gone)", name)
	}
	f.Dir, _ = eventDir(f.Event)
	switch {
	case lm.dir != nil:
		return r.malformed(`"dir" is not allowed on an event line`)
	case lm.form != "":
		return r.malformed(`%s is not allowed on an event line`, lm.form)
	case lm.eol != nil:
		return r.malformed(`"eol" is not allowed on an event line`)
	case lm.cut != nil:
		return r.malformed(`"cut" is not allowed on an event line`)
	}
	var sig string
	var exit *int
	if signal != nil {
		if f.Event != frame.EventSignal && f.Event != frame.EventExit {
			return r.malformed(`"signal" is not allowed on a %s event`, f.Event)
		}
		s, ok := r.str(signal)
		if !ok || len(s) == 0 {
			return r.malformed(`"signal" must be a non-empty string`)
		}
		sig = string(s)
	}
	if code != nil {
		if f.Event != frame.EventExit {
			return r.malformed(`"code" is not allowed on a %s event`, f.Event)
		}
		c, err := strconv.ParseInt(string(code), 10, strconv.IntSize)
		if err != nil {
			return r.malformed(`"code" must be an integer`)
		}
		n := int(c)
		exit = &n
	}
	f.SetEnd(sig, exit)
	return nil
}

// frame fills in a frame line's members.
func (r *Reader) frame(f *frame.Frame, lm *lineMembers) error {
	dir, form, data, eol, cut := lm.dir, lm.form, lm.data, lm.eol, lm.cut
	switch {
	case lm.signal != nil:
		return r.malformed(`"signal" is only allowed on an event line`)
	case lm.code != nil:
		return r.malformed(`"code" is only allowed on an event line`)
	case dir == nil:
		return r.malformed(`missing "dir" (or "event")`)
	}
	switch string(dir) {
	case `"in"`:
		f.Dir = frame.In
	case `"out"`:
		f.Dir = frame.Out
	case `"err"`:
		f.Dir = frame.Err
	default:
		return r.malformed(`"dir" must be in, out or err`)
	}

	switch form {
	case "":
		return r.malformed(`want exactly one of "json", "text" or "b64"`)
	case `"json"`:
		f.Raw = data // it belongs to r.line, which the next call overwrites
	case `"text"`:
		if data[0] != '"' {
			return r.malformed(`"text" must be a string`)
		}
		raw, err := unquote(r.raw[:0], data)
		if err != nil {
			return r.malformed(`"text": %v`, err)
		}
		r.raw, f.Raw = raw, raw
	case `"b64"`:
		s, ok := r.str(data)
		if !ok {
			return r.malformed(`"b64" must be a string`)
		}
		raw, err := decode64(r.raw[:0], s)
		if err != nil {
			return r.malformed(`"b64" is not valid base64`)
		}
		r.raw, f.Raw = raw, raw
	}

	if f.Raw == nil {
		f.Raw = []byte{} // an empty frame is not an event
	}
	if eol != nil {
		if string(eol) != "false" {
			return r.malformed(`"eol" may only be false (a last line without a newline)`)
		}
		f.NoEOL = true
	}
	if cut != nil {
		if err := r.parseCut(cut); err != nil {
			return err
		}
		f.Cut = &r.cut
	}
	return nil
}

// head sets f's header block from the line's "head", "head64" or "line"
// members: in a header-framed session a frame of stdin or stdout that
// names none has the plain block for its length (see appendHead).
func (r *Reader) head(f *frame.Frame, head, head64, bare []byte) error {
	framed := r.sess != nil && r.sess.Framing == wire.Headers.String() && f.Dir != frame.Err
	switch {
	case head != nil && head64 != nil, (head != nil || head64 != nil) && bare != nil:
		return r.malformed(`at most one of "head", "head64" and "line"`)
	case bare != nil:
		if string(bare) != "true" || !framed {
			return r.malformed(`"line" may only be true, on stdin or stdout of a header-framed session`)
		}
	case head != nil:
		if head[0] != '"' {
			return r.malformed(`"head" must be a string`)
		}
		h, err := unquote(nil, head)
		if err != nil || len(h) == 0 {
			return r.malformed(`"head" must be a non-empty string`)
		}
		f.SetHead(h)
	case head64 != nil:
		s, ok := r.str(head64)
		if !ok {
			return r.malformed(`"head64" must be a string`)
		}
		h, err := decode64(nil, s)
		if err != nil || len(h) == 0 {
			return r.malformed(`"head64" is not valid base64`)
		}
		f.SetHead(h)
	case framed:
		f.SetHead(wire.HeadFor(frameLen(f)))
	}
	return nil
}

// parseCut parses the "cut" member into r.cut.
func (r *Reader) parseCut(v []byte) error {
	ms, ok := members(nil, v)
	if !ok {
		return r.malformed(`"cut" must be an object with "len" and "sha256"`)
	}
	var n, sum []byte
	for i, m := range ms {
		for _, o := range ms[:i] {
			if bytes.Equal(m.key, o.key) {
				return r.malformed(`duplicate member %s in "cut"`, m.key)
			}
		}
		switch string(m.key) {
		case `"len"`:
			n = m.val
		case `"sha256"`:
			sum = m.val
		default:
			return r.malformed(`unknown member %s in "cut"`, m.key)
		}
	}
	if n == nil || sum == nil {
		return r.malformed(`"cut" must have "len" and "sha256"`)
	}
	l, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || l < 0 {
		return r.malformed(`"cut.len" must be a non-negative integer`)
	}
	r.cut.Len = l
	s, ok := r.str(sum)
	if !ok || len(s) != 64 {
		return r.malformed(`"cut.sha256" must be 64 hex digits`)
	}
	if _, err := hex.Decode(r.cut.SHA256[:], s); err != nil {
		return r.malformed(`"cut.sha256" must be 64 hex digits`)
	}
	return nil
}

// str returns the contents of v when it is a JSON string without escapes
// (all the strings a tape holds other than "text" are such strings).
func (r *Reader) str(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// decode64 appends to dst the standard base64 (padded) decoding of s,
// refusing non-canonical encodings. (The decoder skips CR and LF, but s
// comes from a JSON string without escapes, which cannot hold them.)
func decode64(dst, s []byte) ([]byte, error) {
	return base64.StdEncoding.Strict().AppendDecode(dst, s)
}

// unquote appends to dst the contents of the JSON string q (quotes
// included), which is valid JSON and valid UTF-8. A \u escape of a lone
// surrogate is an error: it stands for no character.
func unquote(dst, q []byte) ([]byte, error) {
	out, lone, _ := jsonscan.Unquote(dst, q)
	if lone != 0 {
		return nil, fmt.Errorf(`lone surrogate \u%04x`, lone)
	}
	return out, nil
}
