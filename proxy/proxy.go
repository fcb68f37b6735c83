// Package proxy owns the byte-exact relay: it starts the plugin as a child
// process, pumps the host's stdin to it and its stdout and stderr back, passes
// signals on, and reports the child's exit status. Every complete line is
// handed to a Sink before the bytes that complete it are passed on, so a line
// that reached the other side has been recorded first. The proxy never
// rewrites, delays for a line, or drops a byte; it imports only the standard
// library and knows nothing of storage.
package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
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

// Line is one line as it crossed the relay.
type Line struct {
	Stream Stream
	// Bytes is the line without its "\n", or only its first MaxLine bytes when
	// SHA256 is set. It is valid only during the Sink call.
	Bytes []byte
	// EOL is false for a last line that ended without "\n".
	EOL bool
	// Len is the full length of the line without its "\n".
	Len int64
	// SHA256 is the hash of the full line when the line was longer than
	// MaxLine and Bytes holds only its beginning; nil otherwise.
	SHA256 *[32]byte
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

// Flusher is a Sink that batches: Flush is called after the lines completed
// by one read have been handed over and before the bytes that complete them
// are forwarded, so a sink can store a whole read's lines with one write.
type Flusher interface {
	Flush()
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

	// MaxLine is the largest line handed to the Sink whole; longer lines are
	// still forwarded whole and handed over cut, with their length and hash.
	// Zero means DefaultMaxLine.
	MaxLine int
	// Drain is how long the child's stdout and stderr are still read after it
	// exits, for pipes a grandchild keeps open. Zero means DefaultDrain.
	Drain time.Duration
}

// Defaults for Config.
const (
	DefaultMaxLine = 64 << 20
	DefaultDrain   = 250 * time.Millisecond
	bufSize        = 64 << 10
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
func Run(ctx context.Context, cfg Config) (Result, error) {
	if len(cfg.Command) == 0 {
		return Result{}, fmt.Errorf("run: %w: empty command", ErrNotFound)
	}
	if cfg.Sink == nil {
		cfg.Sink = discardSink{}
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	if cfg.Drain <= 0 {
		cfg.Drain = DefaultDrain
	}

	path, err := resolve(cfg.Command[0])
	if err != nil {
		return Result{}, err
	}
	childIn, hostIn, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: stdin pipe: %w", cfg.Command[0], err)
	}
	outR, childOut, err := os.Pipe()
	if err != nil {
		closeAll(childIn, hostIn)
		return Result{}, fmt.Errorf("run %s: stdout pipe: %w", cfg.Command[0], err)
	}
	errR, childErr, err := os.Pipe()
	if err != nil {
		closeAll(childIn, hostIn, outR, childOut)
		return Result{}, fmt.Errorf("run %s: stderr pipe: %w", cfg.Command[0], err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        cfg.Command,
		Dir:         cfg.Dir,
		Env:         cfg.Env,
		Stdin:       childIn,
		Stdout:      childOut,
		Stderr:      childErr,
		SysProcAttr: sysProcAttr(),
	}

	proc, exited, err := startLocked(cmd)
	closeAll(childIn, childOut, childErr)
	if err != nil {
		closeAll(hostIn, outR, errR)
		return Result{}, classifyStart(cfg.Command[0], err)
	}

	stdin, restoreStdin := pollable(cfg.Stdin)
	defer restoreStdin()

	var pumps sync.WaitGroup
	pumps.Add(3)
	var stdinDone = make(chan struct{})
	go func() {
		defer pumps.Done()
		defer close(stdinDone)
		p := pump{stream: Stdin, sink: cfg.Sink, max: cfg.MaxLine}
		eof := p.run(stdin, hostIn)
		if eof {
			cfg.Sink.Event(Event{Kind: EventEOF})
		}
		hostIn.Close()
	}()
	outDone := make(chan struct{})
	go func() {
		defer pumps.Done()
		defer close(outDone)
		p := pump{stream: Stdout, sink: cfg.Sink, max: cfg.MaxLine}
		if p.run(outR, cfg.Stdout) {
			cfg.Sink.Event(Event{Kind: EventClosed})
			hangUp(cfg.Stdout)
		}
	}()
	errDone := make(chan struct{})
	go func() {
		defer pumps.Done()
		defer close(errDone)
		p := pump{stream: Stderr, sink: cfg.Sink, max: cfg.MaxLine}
		p.run(errR, cfg.Stderr)
	}()

	// Pass signals on until the child is gone.
	var signals sync.WaitGroup
	signalsDone := make(chan struct{})
	signals.Add(1)
	go func() {
		defer signals.Done()
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
	signals.Wait()

	// The child is gone. What it wrote is in the pipes; a grandchild may keep
	// them open, so read on only for the drain window.
	deadline := time.Now().Add(cfg.Drain)
	outR.SetReadDeadline(deadline)
	errR.SetReadDeadline(deadline)
	<-outDone
	<-errDone
	// Nobody reads the host's input any more.
	stdin.SetReadDeadline(time.Now())
	<-stdinDone
	pumps.Wait()
	closeAll(outR, errR)

	res := result(state)
	cfg.Sink.Event(Event{Kind: EventExit, Signal: res.Signal, Code: res.Code})
	return res, nil
}

// startLocked starts cmd and waits for it on one goroutine locked to its OS
// thread: Linux's parent-death signal fires when the thread that forked the
// child ends, so that thread must live exactly as long as the child.
func startLocked(cmd *exec.Cmd) (*os.Process, <-chan *os.ProcessState, error) {
	started := make(chan error, 1)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, after the child.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		state, err := cmd.Process.Wait()
		if err != nil && state == nil {
			state = &os.ProcessState{}
		}
		exited <- state
	}()
	if err := <-started; err != nil {
		return nil, nil, err
	}
	return cmd.Process, exited, nil
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

// pump copies one stream chunk by chunk and cuts it into lines for the sink.
type pump struct {
	stream Stream
	sink   Sink
	max    int

	acc   []byte    // the current line's bytes so far (up to max)
	total int64     // the current line's length so far
	hash  hash.Hash // non-nil once the current line is over max
	line  Line
}

// run copies src to dst until src ends. It returns true when src reached EOF
// (rather than failing or hitting its deadline). A failing dst stops
// delivery but not reading and recording.
func (p *pump) run(src io.Reader, dst io.Writer) (eof bool) {
	buf := make([]byte, bufSize)
	deliver := true
	flusher, _ := p.sink.(Flusher)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			data := buf[:n]
			if p.split(data) && flusher != nil {
				flusher.Flush()
			}
			if deliver {
				if _, werr := dst.Write(data); werr != nil {
					deliver = false
					if p.stream == Stdout {
						p.sink.Event(Event{Kind: EventGone})
					}
				}
			}
		}
		if err != nil {
			if p.total > 0 || len(p.acc) > 0 {
				p.emit(nil, false)
				if flusher != nil {
					flusher.Flush()
				}
			}
			return err == io.EOF
		}
	}
}

// split hands every line completed by data to the sink and keeps the rest.
// It reports whether it completed any line.
func (p *pump) split(data []byte) (completed bool) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		p.emit(data[:i], true)
		completed = true
		data = data[i+1:]
	}
	if len(data) > 0 {
		p.add(data)
	}
	return completed
}

func (p *pump) add(b []byte) {
	p.total += int64(len(b))
	if p.hash != nil {
		p.hash.Write(b)
		return
	}
	if room := p.max - len(p.acc); len(b) > room {
		p.hash = sha256.New()
		p.hash.Write(p.acc)
		p.hash.Write(b)
		p.grow(room)
		p.acc = append(p.acc, b[:room]...)
		return
	}
	p.grow(len(b))
	p.acc = append(p.acc, b...)
}

// grow makes room for n more bytes, doubling the buffer (append grows large
// slices by a quarter, which copies a 16 MiB line some twenty times).
func (p *pump) grow(n int) {
	if len(p.acc)+n <= cap(p.acc) {
		return
	}
	c := max(2*cap(p.acc), len(p.acc)+n, 4096)
	c = min(c, max(p.max, len(p.acc)+n))
	grown := make([]byte, len(p.acc), c)
	copy(grown, p.acc)
	p.acc = grown
}

// emit completes the current line with tail and hands it over.
func (p *pump) emit(tail []byte, eol bool) {
	l := &p.line
	*l = Line{Stream: p.stream, EOL: eol}
	if p.total == 0 && len(tail) <= p.max {
		// The whole line is in the read buffer: no copy.
		l.Bytes, l.Len = tail, int64(len(tail))
	} else {
		p.add(tail)
		l.Bytes, l.Len = p.acc, p.total
		if p.hash != nil {
			var sum [32]byte
			p.hash.Sum(sum[:0])
			l.SHA256 = &sum
		}
	}
	p.sink.Line(l)
	// The buffer is kept, at the size of the longest line so far: a plugin
	// that sends one long line usually sends more.
	p.acc, p.total, p.hash = p.acc[:0], 0, nil
}
