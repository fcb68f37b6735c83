// Package replay owns playing the host: it starts the plugin, sends the
// recorded host frames in order (each once the plugin has said what it said
// before it in the recording, has gone quiet, or a bounded wait passed),
// answers the plugin's own requests from the recorded answers, reproduces
// the host's closing of stdin, its signals and its grace periods, and
// collects everything the plugin says as a live timeline. It takes frames,
// never a database, and never sleeps for a fixed time: every wait ends on an
// event or a bound.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// Options tunes a replay. Zero values mean the defaults.
type Options struct {
	Command []string // argv of the plugin; Command[0] is looked up in PATH
	Dir     string   // its working directory
	Env     []string // its environment (nil: ours)

	// StepTimeout bounds the wait before each host frame. Default 5 s.
	StepTimeout time.Duration
	// Quiet is how long the plugin must say nothing (and not be running on
	// a CPU) to count as having gone quiet. Default 200 ms.
	Quiet time.Duration
	// Pace scales the recorded gaps between host frames: 0 sends as soon as
	// the plugin is ready (asap), 1 keeps the recorded gaps (realtime), N
	// divides them by N.
	Pace float64
	// MaxGap clamps each paced gap. Default 2 s.
	MaxGap time.Duration
	// Grace is the host's wait after shutdown or stdin close before SIGTERM,
	// and again before SIGKILL. Default 1.5 s.
	Grace time.Duration
}

func (o *Options) defaults() {
	if o.StepTimeout <= 0 {
		o.StepTimeout = 5 * time.Second
	}
	if o.Quiet <= 0 {
		o.Quiet = 200 * time.Millisecond
	}
	if o.MaxGap <= 0 {
		o.MaxGap = 2 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 1500 * time.Millisecond
	}
}

// Result is what happened in one replay.
type Result struct {
	// Live is the replay's timeline: host frames sent (in), the plugin's
	// stdout (out) and stderr (err) lines, and lifecycle events.
	Live []frame.Frame
	// Unmatched lists the plugin's requests the recording had no answer
	// for; each got a JSON-RPC error.
	Unmatched []string
	// Notes says what did not go as recorded: steps that waited in vain,
	// requests answered from a recorded call with other params, the host's
	// grace periods running out.
	Notes   []string
	Elapsed time.Duration
}

// ErrStart wraps the reason a plugin could not be started.
var ErrStart = errors.New("plugin did not start")

// event is what the main loop hears from its goroutines.
type event struct {
	kind  eventKind
	dir   frame.Dir
	raw   []byte
	eol   bool
	at    time.Time
	state *os.ProcessState
}

type eventKind uint8

const (
	evLine eventKind = iota + 1
	evEOF            // a reader reached the end of its pipe
	evExit
)

// write is one item of the stdin writer's queue.
type write struct {
	data   []byte
	signal syscall.Signal
	close  bool
}

type runner struct {
	opts    Options
	plan    *plan
	start   time.Time
	proc    *os.Process
	events  chan event
	writes  chan write
	res     Result
	seq     uint64
	out     int // stdout lines so far
	readers int // readers still running
	exited  bool
	closed  bool // stdin closed
	lastOut time.Time
	// exitFrame is the plugin's exit, held back until its pipes are read
	// to the end so that it stands after its last line.
	exitFrame *frame.Frame
	stdin     *os.File // our end of the plugin's stdin, to see what it has not read
}

// Run replays recorded against a fresh plugin process and returns the live
// timeline. It blocks until the plugin has exited and its output is read.
// The error is non-nil only when the plugin could not be started (wrapping
// ErrStart) or ctx was cancelled.
func Run(ctx context.Context, recorded []frame.Frame, opts Options) (*Result, error) {
	opts.defaults()
	if len(opts.Command) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrStart)
	}
	r := &runner{opts: opts, plan: makePlan(recorded)}

	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	cmd.SysProcAttr = sysProcAttr()
	var pipes [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		var err error
		if pipes[i], pipes[i+1], err = os.Pipe(); err != nil {
			for _, f := range pipes[:i] {
				f.Close()
			}
			return nil, fmt.Errorf("%w: %v", ErrStart, err)
		}
	}
	inR, stdin, outR, outW, errR, errW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		for _, f := range pipes {
			f.Close()
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrStart, opts.Command[0], err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	r.stdin = stdin
	r.proc = cmd.Process
	r.lastOut = r.start

	r.events = make(chan event, 256)
	r.writes = make(chan write, len(recorded)+4096)
	var wg sync.WaitGroup
	wg.Add(4)
	r.readers = 2
	go func() { defer wg.Done(); r.read(outR, frame.Out) }()
	go func() { defer wg.Done(); r.read(errR, frame.Err) }()
	go func() { defer wg.Done(); r.writeLoop(stdin) }()
	go func() {
		defer wg.Done()
		state, _ := cmd.Process.Wait()
		r.events <- event{kind: evExit, state: state, at: time.Now()}
	}()

	runErr := r.play(ctx, outR, errR)
	if !r.closed {
		r.closed = true
		r.writes <- write{close: true}
	}
	close(r.writes)
	if runErr != nil {
		r.proc.Kill()
		for !r.exited {
			r.handle(<-r.events, outR, errR)
		}
	}
	wg.Wait()
	outR.Close()
	errR.Close()
	r.res.Elapsed = time.Since(r.start)
	return &r.res, runErr
}

// play runs the steps and the ending; it returns once the plugin has exited
// and its pipes are drained.
func (r *runner) play(ctx context.Context, outR, errR *os.File) error {
	var lastStep time.Time
	var lastAt int64
	for i, st := range r.plan.steps {
		if r.exited {
			r.note("the plugin exited before the recording's host frame seq %d; the rest was not sent", st.frame.Seq)
			return nil
		}
		why, err := r.waitOut(ctx, st.expectOut, st.call, r.opts.StepTimeout, outR, errR)
		if err != nil {
			return err
		}
		if why == waitTimedOut {
			r.note("host frame seq %d sent after waiting %v for the plugin's output (%d of %d lines)", st.frame.Seq, r.opts.StepTimeout, r.out, st.expectOut)
		}
		if r.opts.Pace > 0 && i > 0 {
			gap := time.Duration(float64(st.frame.At-lastAt) / r.opts.Pace)
			gap = min(max(gap, 0), r.opts.MaxGap)
			if err := r.idleUntil(ctx, lastStep.Add(gap), outR, errR); err != nil {
				return err
			}
		}
		lastStep, lastAt = time.Now(), st.frame.At
		r.perform(st)
	}
	// Let the plugin say what it said after the last host frame.
	if !r.exited {
		if _, err := r.waitOut(ctx, r.plan.totalOut, nil, r.opts.StepTimeout, outR, errR); err != nil {
			return err
		}
	}
	// The host's ending: stdin closed, then its grace periods.
	if !r.closed {
		r.closed = true
		r.writes <- write{close: true}
		r.add(frame.Frame{Event: frame.EventEOF, Dir: frame.In})
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := r.idleUntil(ctx, time.Now().Add(r.opts.Grace), outR, errR); err != nil {
			return err
		}
		if r.exited {
			return nil
		}
		r.note("the plugin was still running %v after stdin closed: %s, as the host does", r.opts.Grace, frame.SignalName(int(sig)))
		r.proc.Signal(sig)
		r.add(frame.Frame{Event: frame.EventSignal, Signal: frame.SignalName(int(sig))})
	}
	for !r.exited {
		select {
		case ev := <-r.events:
			r.handle(ev, outR, errR)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

type waitResult uint8

const (
	waitReached waitResult = iota + 1
	waitQuiet
	waitTimedOut
	waitExited
)

// waitOut handles events until the plugin has written expect stdout lines
// (and made the request of awaited, when set), has gone quiet, has exited,
// or limit passed.
func (r *runner) waitOut(ctx context.Context, expect int, awaited *call, limit time.Duration, outR, errR *os.File) (waitResult, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	quiet := time.NewTimer(r.opts.Quiet)
	defer quiet.Stop()
	for {
		switch {
		case r.out >= expect && (awaited == nil || awaited.used):
			return waitReached, nil
		case r.exited:
			return waitExited, nil
		}
		select {
		case ev := <-r.events:
			r.handle(ev, outR, errR)
			if ev.kind == evLine {
				quiet.Reset(r.opts.Quiet)
			}
		case <-quiet.C:
			if r.quiet() {
				return waitQuiet, nil
			}
			quiet.Reset(r.opts.Quiet)
		case <-deadline.C:
			return waitTimedOut, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// idleUntil handles events until t (or until the plugin has exited).
func (r *runner) idleUntil(ctx context.Context, t time.Time, outR, errR *os.File) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	for !r.exited {
		select {
		case ev := <-r.events:
			r.handle(ev, outR, errR)
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// perform carries out one host step.
func (r *runner) perform(st step) {
	switch st.kind {
	case sendFrame:
		data := make([]byte, 0, len(st.frame.Raw)+1)
		data = append(data, st.frame.Raw...)
		if !st.frame.NoEOL {
			data = append(data, '\n')
		}
		r.writes <- write{data: data}
		r.add(frame.Frame{Dir: frame.In, Raw: st.frame.Raw, NoEOL: st.frame.NoEOL, Cut: st.frame.Cut})
	case closeStdin:
		if !r.closed {
			r.closed = true
			r.writes <- write{close: true}
			r.add(frame.Frame{Event: frame.EventEOF, Dir: frame.In})
		}
	case sendAnswer:
		c := st.call
		c.done = true
		if !c.used {
			r.note("the plugin never made the request that the host answered at seq %d (%s); the answer was not sent", st.frame.Seq, c.method)
			return
		}
		r.send(answerFor(c.answer, c.liveID))
	case sendSignal:
		r.writes <- write{signal: syscall.Signal(st.signal)}
		r.add(frame.Frame{Event: frame.EventSignal, Signal: st.frame.Signal})
	}
}

// handle takes one event into the live timeline and answers the plugin's
// requests.
func (r *runner) handle(ev event, outR, errR *os.File) {
	switch ev.kind {
	case evLine:
		f := frame.Frame{Dir: ev.dir, Raw: ev.raw, NoEOL: !ev.eol}
		r.addAt(f, ev.at)
		if ev.dir != frame.Out {
			return
		}
		r.out++
		r.lastOut = ev.at
		if !mayBeRequest(ev.raw) {
			return
		}
		if m := message.Parse(ev.raw); m.Kind == message.Request {
			r.answer(&m)
		}
	case evEOF:
		r.readers--
		if ev.dir == frame.Out {
			r.addAt(frame.Frame{Event: frame.EventClosed, Dir: frame.Out}, ev.at)
		}
		if r.readers == 0 && r.exitFrame != nil {
			r.addAt(*r.exitFrame, ev.at)
			r.exited = true
		}
	case evExit:
		// What the plugin wrote is in the pipes; a grandchild may keep them
		// open, so read on only briefly.
		deadline := time.Now().Add(250 * time.Millisecond)
		outR.SetReadDeadline(deadline)
		errR.SetReadDeadline(deadline)
		f := frame.Frame{Event: frame.EventExit}
		if ws, ok := ev.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			f.Signal = frame.SignalName(int(ws.Signal()))
		} else {
			code := ev.state.ExitCode()
			f.Code = &code
		}
		r.exitFrame = &f
		if r.readers == 0 {
			r.addAt(f, ev.at)
			r.exited = true
		}
	}
}

// answer takes a live plugin request: it is matched to a recorded call,
// whose answer goes out at its recorded place among the host frames (or at
// once, when that place has passed). A request the recording has no call
// for gets an error at once.
func (r *runner) answer(m *message.Message) {
	c, differs := r.plan.match(m.Method, m.Params)
	switch {
	case c == nil:
		r.res.Unmatched = append(r.res.Unmatched, fmt.Sprintf("%s (replay seq %d)", m.Method, r.seq))
		r.send(unmatchedAnswer(m.Method, m.ID))
		return
	case differs:
		r.note("%s (replay seq %d) answered from a recorded call whose params differed", m.Method, r.seq)
	}
	c.liveID = append(json.RawMessage(nil), m.ID...)
	if c.done && c.answer != nil {
		r.send(answerFor(c.answer, c.liveID))
	}
}

// mayBeRequest is a cheap test that rules out most lines that cannot be
// requests (which need both members), before the full parse. A line with
// \u escapes may spell a member name escaped, so it is always parsed.
func mayBeRequest(raw []byte) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	return bytes.Contains(raw, []byte(`"method"`)) && bytes.Contains(raw, []byte(`"id"`))
}

// send writes a host answer line.
func (r *runner) send(reply []byte) {
	if r.closed {
		return
	}
	r.writes <- write{data: append(reply, '\n')}
	r.add(frame.Frame{Dir: frame.In, Raw: reply})
}

func (r *runner) add(f frame.Frame) { r.addAt(f, time.Now()) }

func (r *runner) addAt(f frame.Frame, at time.Time) {
	r.seq++
	f.Seq = r.seq
	f.At = int64(at.Sub(r.start))
	r.res.Live = append(r.res.Live, f)
}

func (r *runner) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

// read sends every line of one of the plugin's pipes to the main loop.
func (r *runner) read(src io.Reader, dir frame.Dir) {
	br := bufio.NewReaderSize(src, 64<<10)
	var acc []byte
	for {
		chunk, err := br.ReadSlice('\n')
		acc = append(acc, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(acc) > 0 {
			eol := acc[len(acc)-1] == '\n'
			line := acc
			if eol {
				line = acc[:len(acc)-1]
			}
			r.events <- event{kind: evLine, dir: dir, raw: line, eol: eol, at: time.Now()}
			acc = nil
		}
		if err != nil {
			r.events <- event{kind: evEOF, dir: dir, at: time.Now()}
			return
		}
	}
}

// writeLoop writes the queued host frames and signals in order; after a
// failed write it only drains the queue.
func (r *runner) writeLoop(stdin io.WriteCloser) {
	ok := true
	for w := range r.writes {
		switch {
		case w.close:
			stdin.Close()
			ok = false
		case w.signal != 0:
			r.proc.Signal(w.signal)
		case ok:
			if _, err := stdin.Write(w.data); err != nil {
				ok = false
			}
		}
	}
	stdin.Close()
}

// quiet reports whether the plugin has gone quiet, beyond having said
// nothing for a while (which the caller checked): it has read everything
// sent to it and is not running on a CPU. A plugin still starting up, or
// still working through its input, is not quiet however long it is silent.
func (r *runner) quiet() bool {
	if len(r.writes) > 0 || unread(r.stdin) > 0 {
		return false
	}
	return idle(r.proc.Pid)
}

// idle reports whether the process is not running on a CPU right now (Linux:
// its state in /proc is not R). Elsewhere it is always true.
func idle(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return true
	}
	return s[i+2] != 'R'
}
