// Package relay owns the byte-exact relay: it starts the plugin as a child
// process, pumps the host's stdin to it and its stdout and stderr back, passes
// signals on, and reports the child's exit status. Every byte of every line
// is handed to a Sink before it is passed on: a short line whole, a long one
// in pieces as it arrives (the relay never holds a line), the lines of one
// read at once to a sink that batches. So a line that reached the other
// side has been recorded first. Between pipes and sockets on Linux, a
// stream that comes in large chunks is passed on with splice(2) from a
// pipe of the relay's own, after the sink has had a tee(2)'d copy, so the
// relay copies each byte once, not twice (splice_linux.go). The proxy
// never rewrites, delays for a line, or drops a byte; it imports only the
// standard library and knows nothing of storage.
package relay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/internal/child"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Stream names one of the child's standard streams. The values match the
// frame directions (1 stdin, 2 stdout, 3 stderr).
type Stream uint8

// The child's streams.
const (
	Stdin  Stream = 1
	Stdout Stream = 2
	Stderr Stream = 3
)

// Line is a frame, or the next piece of a long one, as it crossed the
// relay: under newline framing a line, under header framing a message's
// body with its header block in Head (package wire cuts the stream). A
// frame that arrives within one read is handed over once, whole (Off 0,
// Done); a long one is handed over in pieces as they arrive, each before
// it is forwarded, and its last bytes with Done once its end has come.
type Line struct {
	Stream Stream
	// Bytes are the frame's bytes from Off on, never a line's "\n" or a
	// header block. They stay valid until the sink's Flush returns (for a
	// Flusher; otherwise until Line returns) and must not be modified.
	Bytes []byte
	// Head is a header-framed message's header block, complete, on every
	// piece of it; nil for a line. It stays valid as Bytes does.
	Head []byte
	// Off is where Bytes start in the line: the number of its bytes handed
	// over before.
	Off int64
	// Done: Bytes end the line.
	Done bool
	// EOL is false for a last line that ended without "\n", or a body
	// the stream ended inside (Done only).
	EOL bool
	// Time is when the read that brought Bytes returned.
	Time time.Time
}

// EventKind names a lifecycle event.
type EventKind uint8

// Lifecycle events, in the order they usually happen.
const (
	EventEOF    EventKind = iota + 1 // the host closed our stdin; the child's stdin is closed too
	EventSignal                      // a signal reached us and was passed to the child
	EventClosed                      // the child closed its stdout
	EventGone                        // writing to the host failed (it closed our stdout): output is still read, not delivered
	EventExit                        // the child exited
)

// Event is a lifecycle event.
type Event struct {
	Kind   EventKind
	Signal syscall.Signal // EventSignal: the signal; EventExit: the signal that killed the child, or 0
	Code   int            // EventExit: the exit code when Signal is 0
}

// Sink receives what crosses the relay. Line and Event are called from several
// goroutines, one at a time per stream; implementations serialise themselves.
// They must not block for long: forwarding waits for them.
type Sink interface {
	Line(l *Line)
	Event(e Event)
}

// Flusher is a Sink that batches: Flush is called after the lines and pieces
// of one read have been handed over and before those bytes are forwarded, so
// a sink can store a whole read with one write, straight from the relay's
// buffers.
type Flusher interface {
	Flush()
}

// Batcher is a Sink that takes the whole lines of a read at once, to store
// them as one record. When a read completes three lines or more, Line is
// called for the first (which may have begun in an earlier read), then
// Lines with the others: n ≥ 2 complete lines, each with its "\n", as they
// lie in the read buffer. block stays valid until Flush and must not be
// modified.
type Batcher interface {
	Lines(stream Stream, block []byte, n int, at time.Time)
}

// Config describes one run.
type Config struct {
	Command []string // argv; Command[0] is looked up in PATH when it has no slash
	Dir     string   // working directory; "" means the current one
	Env     []string // environment; nil means ours

	Stdin  *os.File  // the host's side; read until EOF
	Stdout io.Writer // the host's side of the child's stdout
	Stderr io.Writer // where the child's stderr goes

	Sink    Sink             // nil records nothing
	Signals <-chan os.Signal // signals to pass on to the child; may be nil

	// Group starts the child in a process group of its own and, once it
	// has exited (or ctx is done), ends what it left behind: the rest of
	// its group and what left the group with setsid(2) (child.EndGroup).
	// Without it the child is in ours, as a shim's child should be, and
	// what it leaves behind is its host's to end.
	Group bool
	// Started, when set, is called with the child's pid once it has
	// started, before a byte is relayed.
	Started func(pid int)

	// Drain is how long the child's stdout and stderr are still read after it
	// exits, for pipes a grandchild keeps open. Zero means DefaultDrain.
	Drain time.Duration

	// Framing is how stdin and stdout are cut into frames (stderr is
	// always cut into lines). With Detect, the first bytes that cross
	// either stream decide it for both (wire.Detect), and Framing is not
	// used; Framed then says what was decided.
	Framing wire.Framing
	Detect  bool
	// Framed, when set, is called once with the framing of stdin and
	// stdout, before the first frame of either is handed to the sink.
	Framed func(wire.Framing)
}

// Defaults for Config, and the relay's buffer sizes.
const (
	DefaultDrain = 250 * time.Millisecond
	// bufSize is what the stdin and stdout pumps read at a time, and the
	// size the relay asks for the pipes of its own on those streams (the
	// plugin's stdin and stdout, and the zero-copy path's): a streaming
	// plugin can then write ahead while the relay records, and a read
	// takes up to twice a default pipe's 64 KiB for the same system calls
	// and one record. The host's pipes are left as the host made them.
	// (256 KiB measured no faster and cost the recording relay 0.9 MiB
	// more peak memory.)
	bufSize = 128 << 10
	// errBufSize is what the stderr pump reads at a time: a log, never
	// streamed through the zero-copy path.
	errBufSize = 64 << 10
	// pieceMin is the least a piece of a long line holds, unless its read
	// brought less: shorter remainders of a read are kept until the line
	// ends or this much has come.
	pieceMin = 32 << 10
)

// Result is how the child ended.
type Result struct {
	Code   int            // the exit code, or 128+signal when a signal killed it
	Signal syscall.Signal // the signal that killed the child, or 0
}

// Errors from Run when the child cannot start; the shim maps them to 127 and
// 126 as a shell does.
var (
	ErrNotFound      = errors.New("command not found")
	ErrNotExecutable = errors.New("command not executable")
)

type discardSink struct{}

func (discardSink) Line(*Line)  {}
func (discardSink) Event(Event) {}

// Run starts the child and relays until it has exited and its output is
// drained. It blocks until then. Cancelling ctx kills the child. The error is
// non-nil only when the child could not be started (wrapping ErrNotFound or
// ErrNotExecutable where that is the cause) or the pipes could not be made.
//
// The host's stdin is read with plain blocking reads (a poller costs a
// round trip two more system calls and a wakeup). Such a read cannot be
// interrupted: when the child is gone while the host keeps stdin open, Run
// returns without waiting for it. The goroutine left in that read is
// fenced off: from then on it hands nothing to the sink and writes nothing,
// and it ends when its read returns (or with the process). When cfg.Stdin
// supports deadlines (a non-blocking pipe), Run stops the read and waits.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if len(cfg.Command) == 0 {
		return Result{}, fmt.Errorf("run: %w: empty command", ErrNotFound)
	}
	if cfg.Sink == nil {
		cfg.Sink = discardSink{}
	}
	if cfg.Drain <= 0 {
		cfg.Drain = DefaultDrain
	}

	path, err := resolve(cfg.Command[0])
	if err != nil {
		return Result{}, err
	}
	pipes, err := child.Pipes()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: pipes: %w", cfg.Command[0], err)
	}
	hostIn, outR, errR := pipes.In, pipes.Out, pipes.Err
	growPipe(hostIn, bufSize)
	growPipe(outR, bufSize)
	cmd := &exec.Cmd{
		Path:        path,
		Args:        cfg.Command,
		Dir:         cfg.Dir,
		Env:         cfg.Env,
		Stdin:       pipes.ChildIn,
		Stdout:      pipes.ChildOut,
		Stderr:      pipes.ChildErr,
		SysProcAttr: sysProcAttr(),
	}
	if cfg.Group {
		child.NewGroup(cmd.SysProcAttr)
	}

	started := time.Now()
	proc, exited, err := child.Start(cmd) // a parent-death signal that holds
	pipes.CloseChild()
	if err != nil {
		pipes.Close()
		return Result{}, classifyStart(cfg.Command[0], err)
	}
	if cfg.Started != nil {
		cfg.Started(proc.Pid)
	}

	stdin := cfg.Stdin
	if stdin == nil {
		null := devNull()
		defer null.Close()
		stdin = null
	}
	fence := &fence{}
	framing := newChoice(cfg)
	var closeHostIn sync.Once
	stdinDone := make(chan struct{})
	go func() {
		defer close(stdinDone)
		p := pump{stream: Stdin, sink: cfg.Sink, fence: fence, splice: true, framing: framing}
		eof := p.run(stdin, hostIn)
		if eof && fence.enter() {
			cfg.Sink.Event(Event{Kind: EventEOF})
			fence.leave()
		}
		if fence.enter() {
			closeHostIn.Do(func() { hostIn.Close() })
			fence.leave()
		}
	}()
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		p := pump{stream: Stdout, sink: cfg.Sink, splice: true, framing: framing}
		if p.run(outR, cfg.Stdout) {
			cfg.Sink.Event(Event{Kind: EventClosed})
			hangUp(cfg.Stdout)
		}
	}()
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		p := pump{stream: Stderr, sink: cfg.Sink, bufSize: errBufSize}
		p.run(errR, cfg.Stderr)
	}()

	// Pass signals on until the child is gone.
	signalsDone := make(chan struct{})
	signalsOver := make(chan struct{})
	go func() {
		defer close(signalsOver)
		for {
			select {
			case s := <-cfg.Signals:
				if sig, ok := s.(syscall.Signal); ok {
					cfg.Sink.Event(Event{Kind: EventSignal, Signal: sig})
				}
				proc.Signal(s)
			case <-ctx.Done():
				proc.Kill()
				<-signalsDone
				return
			case <-signalsDone:
				return
			}
		}
	}()

	state := <-exited
	close(signalsDone)
	<-signalsOver
	if cfg.Group {
		// What the child left behind goes with it, and the pipes it held
		// with them.
		child.EndGroup(proc.Pid, started)
	}

	// The child is gone. What it wrote is in the pipes; a grandchild may keep
	// them open, so read on only for the drain window.
	deadline := time.Now().Add(cfg.Drain)
	outR.SetReadDeadline(deadline)
	errR.SetReadDeadline(deadline)
	<-outDone
	<-errDone
	closeAll(outR, errR)

	// Nobody reads the host's input any more.
	if stdin.SetReadDeadline(time.Now()) == nil {
		<-stdinDone
	} else {
		select {
		case <-stdinDone:
		default:
			// A write to a grandchild that keeps the plugin's stdin open
			// but does not read gives up at once, so the fence is free.
			hostIn.SetWriteDeadline(time.Now())
			fence.close()
		}
	}
	closeHostIn.Do(func() { hostIn.Close() })

	res := result(state)
	cfg.Sink.Event(Event{Kind: EventExit, Signal: res.Signal, Code: res.Code})
	return res, nil
}

// fence lets Run end while the stdin pump may still be blocked in a read:
// the pump enters before it touches the sink or the child's stdin, and once
// the fence is closed it cannot enter any more.
type fence struct {
	mu     sync.Mutex
	closed bool
}

// enter reports whether the caller may go on; if so it must call leave.
func (f *fence) enter() bool {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return false
	}
	return true
}

func (f *fence) leave() { f.mu.Unlock() }

// close waits for the one inside to leave and keeps everyone out after.
func (f *fence) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func result(state *os.ProcessState) Result {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Result{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	return Result{Code: state.ExitCode()}
}

func resolve(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	if errors.Is(err, exec.ErrDot) {
		return path, nil
	}
	return "", classifyStart(name, err)
}

func classifyStart(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", name, ErrNotFound)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%s: %w", name, ErrNotExecutable)
	}
	return fmt.Errorf("start %s: %w", name, err)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// choice is the framing of stdin and stdout, decided once for both: at
// the start, or by the first bytes of either.
type choice struct {
	once    sync.Once
	framing wire.Framing
	detect  bool
	framed  func(wire.Framing)
}

func newChoice(cfg Config) *choice {
	c := &choice{framing: cfg.Framing, detect: cfg.Detect, framed: cfg.Framed}
	if !c.detect {
		c.decide(nil)
	}
	return c
}

// decide returns the framing, deciding it from first if nobody has.
func (c *choice) decide(first []byte) wire.Framing {
	c.once.Do(func() {
		if c.detect {
			c.framing, _ = wire.Detect(first)
		}
		if c.framed != nil {
			c.framed(c.framing)
		}
	})
	return c.framing
}

// pump copies one stream read by read and cuts it into frames for the
// sink: lines (split), or header-framed messages through a wire.Scanner
// (splitFrames).
type pump struct {
	stream Stream
	sink   Sink
	fence  *fence // the stdin pump's; nil for the others
	// framing is the choice stdin and stdout share; nil for stderr (lines).
	// scan cuts a header-framed stream; nil while it is cut into lines.
	framing *choice
	chosen  bool
	scan    *wire.Scanner
	// splice: large chunks may take the zero-copy path when both ends are
	// pipes or sockets (stdin and stdout; stderr is read and written).
	splice bool
	// splicedChunks counts the chunks that took it.
	splicedChunks int
	// bufSize is what one read takes at most; zero means the package's
	// bufSize.
	bufSize int

	// The current line: off bytes of it handed over, acc kept (a
	// remainder shorter than pieceMin). spare is acc's other buffer: what
	// was handed over must stay as it is until Flush.
	off   int64
	acc   []byte
	spare []byte
	now   time.Time
	line  Line
}

// run copies src to dst until src ends. It returns true when src reached EOF
// (rather than failing or hitting its deadline). A failing dst stops
// delivery but not reading and recording. Past a closed fence it stops.
func (p *pump) run(src io.Reader, dst io.Writer) (eof bool) {
	buf := make([]byte, cmp.Or(p.bufSize, bufSize))
	deliver := true
	flusher, _ := p.sink.(Flusher)
	// The zero-copy path (see splice_linux.go): made when a chunk first
	// is large enough, used while chunks are; canSplice is false once it
	// cannot be had or delivery has failed.
	var z *zeroCopy
	defer func() { z.close() }()
	canSplice, spliced := p.splice, false
	for {
		var n int
		var err error
		if spliced {
			n, err = z.take(buf)
			if err == errNoSplice {
				canSplice, spliced = false, false
				continue
			}
			if n > 0 {
				p.splicedChunks++
			}
		} else {
			n, err = src.Read(buf)
		}
		if p.fence != nil && !p.fence.enter() {
			return false
		}
		if n > 0 {
			data := buf[:n]
			p.now = time.Now()
			if !p.chosen {
				p.choose(data)
			}
			var handed bool
			if p.scan != nil {
				handed = p.splitFrames(data)
			} else {
				handed = p.split(data)
			}
			if handed && flusher != nil {
				flusher.Flush()
			}
			if deliver {
				var werr error
				if spliced {
					werr = z.forward(data)
				} else {
					_, werr = dst.Write(data)
				}
				if werr != nil {
					deliver, canSplice = false, false
					if p.stream == Stdout {
						p.sink.Event(Event{Kind: EventGone})
					}
				}
			}
			// The next chunk's path: spliced while chunks are large.
			switch {
			case !canSplice || n < spliceMin:
				spliced = false
			case z == nil:
				if z = newZeroCopy(src, dst); z == nil {
					canSplice = false
				}
				spliced = z != nil
			default:
				spliced = true
			}
		}
		if err != nil && p.end() && flusher != nil {
			flusher.Flush()
		}
		if p.fence != nil {
			p.fence.leave()
		}
		if err != nil {
			return err == io.EOF
		}
	}
}

// choose takes the framing stdin and stdout share, deciding it from data
// when this stream speaks first.
func (p *pump) choose(data []byte) {
	p.chosen = true
	if p.framing != nil && p.framing.decide(data) == wire.Headers {
		p.scan = wire.NewScanner(wire.Headers)
	}
}

// split hands every line completed by data to the sink (to a Batcher, all
// but the first at once), and the rest as a piece
// once enough of it has come. It reports whether it handed anything.
func (p *pump) split(data []byte) (handed bool) {
	if b, ok := p.sink.(Batcher); ok {
		if i := wire.LineEnd(data); i >= 0 {
			p.emit(data[:i], true)
			handed = true
			data = data[i+1:]
			if j := bytes.LastIndexByte(data, '\n'); j >= 0 {
				if n := wire.CountLines(data[:j+1]); n >= 2 {
					b.Lines(p.stream, data[:j+1], n, p.now)
					data = data[j+1:]
				}
			}
		}
	}
	for {
		i := wire.LineEnd(data)
		if i < 0 {
			break
		}
		p.emit(data[:i], true)
		handed = true
		data = data[i+1:]
	}
	return p.rest(data) || handed
}

// rest keeps the start of a frame that data does not end, and hands it as
// a piece once enough of it has come. It reports whether it handed it.
func (p *pump) rest(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	if len(p.acc)+len(data) < pieceMin {
		p.acc = append(p.acc, data...)
		return false
	}
	p.hand(data, false, false)
	return true
}

// splitFrames is split for a header-framed stream: the scanner holds each
// header block and gives the body bytes, which go to the sink as split's
// lines do (never in a batch), each frame with its block.
func (p *pump) splitFrames(data []byte) (handed bool) {
	for {
		n, body, end := p.scan.Scan(data)
		data = data[n:]
		switch {
		case end:
			p.emit(body, true)
			handed = true
		case len(body) > 0:
			handed = p.rest(body) || handed
		case n == 0:
			return handed
		}
	}
}

// end ends the stream: a frame it was inside is handed over unterminated.
// It reports whether it handed anything.
func (p *pump) end() bool {
	if p.scan != nil {
		held, inFrame := p.scan.End()
		if !inFrame {
			return false
		}
		p.acc = append(p.acc, held...)
		p.emit(nil, false)
		return true
	}
	if p.off > 0 || len(p.acc) > 0 {
		p.emit(nil, false)
		return true
	}
	return false
}

// emit completes the current line with tail and hands it over.
func (p *pump) emit(tail []byte, eol bool) {
	p.hand(tail, true, eol)
	p.off = 0
}

// hand hands b, after what acc holds, to the sink: from the read buffer
// when acc is empty, else joined in acc.
func (p *pump) hand(b []byte, done, eol bool) {
	if len(p.acc) > 0 {
		p.acc = append(p.acc, b...)
		b = p.acc
		p.acc, p.spare = p.spare[:0], p.acc
	}
	l := &p.line
	*l = Line{Stream: p.stream, Bytes: b, Off: p.off, Done: done, EOL: eol, Time: p.now}
	if p.scan != nil {
		l.Head = p.scan.Head()
	}
	p.sink.Line(l)
	p.off += int64(len(b))
}
