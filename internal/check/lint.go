package check

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tapedeck/tapedeck/frame"
)

// maxBacklog bounds the bytes of frames a Lint holds while its checker
// catches up. Past it the Lint stops checking rather than slow the plugin
// down or grow without end.
const maxBacklog = 64 << 20

// Lint checks a session while it is being recorded and appends each
// finding, as it happens, as one JSON line (a Finding with a "session"
// member) to its writer. Frame never blocks on checking or writing: a
// goroutine owned by the Lint does both, and Close waits for it.
//
// Frame and Close are safe for concurrent use and do nothing on a nil
// *Lint, so a recorder can call them whether linting was asked for or not.
type Lint struct {
	session string
	w       io.Writer
	file    *os.File // closed by Close when OpenLint opened it

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []frame.Frame // copies, in seq order
	backlog int64         // bytes held in queue
	closed  bool
	behind  bool // the backlog overflowed: checking stopped
	done    chan struct{}

	c    *Checker
	buf  []byte
	err  error // the first write error; later findings are not written
	kept Kept  // for Findings: the first MaxKept
}

// OpenLint opens (creating it 0600 when needed) the file at path for
// appending and returns a Lint writing to it. session is the id written
// with every finding.
func OpenLint(path, session string, opts Options) (*Lint, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lint file: %w", err)
	}
	l := NewLint(f, session, opts)
	l.file = f
	return l, nil
}

// NewLint returns a Lint that writes to w, one write per finding. It
// starts the goroutine that Close waits for.
func NewLint(w io.Writer, session string, opts Options) *Lint {
	l := &Lint{session: session, w: w, c: New(opts), done: make(chan struct{})}
	l.wake = sync.NewCond(&l.mu)
	go l.run()
	return l
}

// Frame queues a copy of f for checking and returns at once. Frames must
// come in seq order (the recorder numbers them under its lock: call Frame
// there). Frames after Close are ignored.
func (l *Lint) Frame(f *frame.Frame) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.behind {
		return
	}
	size := int64(len(f.Raw)+len(f.Head())) + 64
	if l.backlog+size > maxBacklog {
		l.behind = true
		l.queue, l.backlog = nil, 0
		l.wake.Signal()
		return
	}
	l.queue = append(l.queue, copyFrame(f))
	l.backlog += size
	l.wake.Signal()
}

// Close checks what is still queued, writes the end-of-session findings,
// waits for the goroutine, closes the file OpenLint opened, and returns the
// first write or close error.
func (l *Lint) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return l.err
	}
	l.closed = true
	l.wake.Signal()
	l.mu.Unlock()
	<-l.done
	if l.file != nil {
		if err := l.file.Close(); err != nil && l.err == nil {
			l.err = fmt.Errorf("close lint file: %w", err)
		}
	}
	return l.err
}

// Findings returns the findings (the first MaxKept, within MaxKeptBytes)
// in the order they were made. Call it after Close.
func (l *Lint) Findings() []Finding {
	if l == nil {
		return nil
	}
	<-l.done
	return l.kept.Findings
}

// run is the Lint's goroutine: it checks queued frames until Close.
func (l *Lint) run() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.closed && !l.behind {
			l.wake.Wait()
		}
		batch, closed, behind := l.queue, l.closed, l.behind
		l.queue, l.backlog = nil, 0
		l.mu.Unlock()

		if behind {
			// Checking the rest with frames missing would raise false
			// alarms: say so once and stop.
			l.write(Finding{Level: Info, Rule: RuleLintStopped, Message: fmt.Sprintf(
				"the checker fell more than %d MiB behind the plugin: the rest of the session was not checked live (tapedeck check SESSION checks it whole)", maxBacklog>>20)})
			l.mu.Lock()
			for !l.closed {
				l.wake.Wait()
			}
			l.mu.Unlock()
			return
		}
		for i := range batch {
			l.write(l.c.Feed(&batch[i])...)
		}
		if closed && len(batch) == 0 {
			l.write(l.c.Finish()...)
			return
		}
	}
}

// lintLine is one line of a lint file.
type lintLine struct {
	Session string `json:"session,omitempty"`
	Finding
}

// write appends each finding as one line.
func (l *Lint) write(fs ...Finding) {
	for _, f := range fs {
		l.kept.Add(f)
		if l.err != nil {
			return
		}
		b, err := json.Marshal(lintLine{Session: l.session, Finding: f})
		if err != nil {
			l.err = fmt.Errorf("write lint finding: %w", err)
			return
		}
		l.buf = append(append(l.buf[:0], b...), '\n')
		if _, err := l.w.Write(l.buf); err != nil {
			l.err = fmt.Errorf("write lint finding: %w", err)
		}
	}
}
