// Package host owns playing the host: it starts the plugin, sends the
// recorded host frames in order, answers the plugin's own requests from the
// recorded answers, reproduces the host's closing of stdin, its signals and
// its grace periods, and collects everything the plugin says as a live
// timeline.
//
// The waiting rule: before each host frame, replay waits until the live
// plugin has produced the frames that came before that frame in the
// recording, matched by identity: a reply by the id of the host request it
// answers, a request or a notification by its method and its occurrence
// among frames of that method. It never counts lines and never takes
// silence for readiness, so a plugin that awaits a timer, a child process
// or a file is never overtaken, and one extra frame delays nothing. The
// host's answer to a plugin request goes out at its recorded place once the
// live plugin has made that request. A frame that never comes is given up
// after the bound the recording sets (10 × how long it took there, at least
// 2 s, at most the step timeout; see Options.WaitFactor), or at once when
// the plugin has exited or closed its stdout, and the diff reports it
// missing; an answer given up on is still sent if the request comes later,
// and a request given up on is not waited for again. Stray output and
// stderr cause nothing: the host ignores them.
//
// A value the plugin chose itself (a task id, a cursor, a progress token)
// that the host sends back is carried: the live value goes where the
// recording has the recorded one, in host frames and answers alike (see
// carry.go). The plugin's chatter (Reading.Chatter: reports on its own
// work whose number depends on timing) is not waited for.
//
// It takes frames, never a database, and never sleeps for a fixed time:
// every wait ends on an event or a bound.
package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/child"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/window"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// Options tunes a replay. Zero values mean the defaults.
type Options struct {
	Command []string // argv of the plugin; Command[0] is looked up in PATH
	Dir     string   // its working directory
	Env     []string // its environment (nil: ours)

	// StepTimeout caps the wait for the plugin's frames before each host
	// frame. Default 30 s. A recording's waits are bounded sooner, by what
	// the recording shows (see WaitFactor); a host script's, which has no
	// times, by StepTimeout alone.
	StepTimeout time.Duration
	// WaitFactor and MinWait bound each wait of a replay by the recording:
	// before a host frame, the live plugin is given
	//
	//	min(StepTimeout, max(MinWait, WaitFactor × recorded wait))
	//
	// to say what it said before that frame, where the recorded wait is
	// the time the recording shows from the previous host frame to the
	// last of those frames. The live wait is measured alike: from when the
	// previous host frame was sent. The plugin's start is not held to the
	// recording (how long a program takes to start says more about the
	// machine than about the plugin): until the plugin's first line on
	// stdout a wait is bounded by StepTimeout alone, and the wait that
	// includes the start is counted, live and in the recording, from that
	// line. Defaults: WaitFactor 10, MinWait 2 s; a MinWait of StepTimeout
	// or more waits StepTimeout each time. A recording without times
	// (every frame at 0) is waited for StepTimeout.
	WaitFactor float64
	MinWait    time.Duration
	// Waiting, when set, is called once by a wait that has lasted 2 s and
	// goes on, from the replay's own goroutine (the one that called Run or
	// Play), with what it waits for (the frames, the host frame or script
	// line that waits, and how long it may wait) and how long it has
	// waited: for a front-end to say, on a terminal, why nothing happens.
	Waiting func(what string, waited time.Duration)
	// Quiet, when set, makes each host frame also wait, once the frames
	// before it have come, until the plugin has said nothing (stdout or
	// stderr) for this long: for plugins whose readiness shows in no frame.
	// Zero (the default) waits for frames only.
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
	// Timeout bounds the whole replay: past it the plugin (and every
	// process of its group) is killed and the result says TimedOut.
	// Default 3 minutes.
	Timeout time.Duration
	// Delivering, when set, is told the recorded time of each recorded
	// host line just before it is written to the plugin (see clockhook.go).
	Delivering func(recordedAt int64)
	// Framing is how the plugin's stdin and stdout are framed (package
	// wire): what the replay writes, and how it cuts what the plugin says.
	// The zero value is newline framing.
	Framing wire.Framing
	// Reading is what Run's plan is told beyond the recording: the places
	// of values the plugin chooses itself, its chatter. A Plan has its own
	// (NewPlan), and Plan.Run does not read this one.
	Reading Reading
	// Moved maps the path of each folder of Reading.Moved to this run's:
	// the host frames that say the recorded one say this run's instead,
	// and the plugin's requests are matched with this run's put back (see
	// moved.go). Nil moves nothing.
	Moved map[string]string
}

func (o *Options) defaults() {
	if o.StepTimeout <= 0 {
		o.StepTimeout = 30 * time.Second
	}
	if o.WaitFactor <= 0 {
		o.WaitFactor = 10
	}
	if o.MinWait <= 0 {
		o.MinWait = 2 * time.Second
	}
	if o.MaxGap <= 0 {
		o.MaxGap = 2 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 1500 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
}

// Result is what happened in one replay.
type Result struct {
	// Live is the replay's timeline: host frames sent (in), the plugin's
	// stdout (out) and stderr (err) lines, and lifecycle events.
	Live []frame.Frame
	// Pairs maps the seq of each live plugin request that was matched to a
	// recorded one to the seq of that recorded request: the live id stands
	// for the recorded id.
	Pairs map[uint64]uint64
	// Sent maps the seq of each host frame sent from the recording (host
	// frames and answers, with the live id) to the recorded frame's seq.
	Sent map[uint64]uint64
	// Unmatched lists the plugin's requests the recording had no answer
	// for; each got a JSON-RPC error.
	Unmatched []string
	// Notes says what did not go as recorded: frames waited for in vain,
	// requests answered from a recorded call with other params or later
	// than recorded, the host's grace periods running out.
	Notes []note.Note
	// GaveUp lists the host steps sent although what they waited for had
	// not come, in order (a note says each too).
	GaveUp []GaveUp
	// TimedOut reports that the replay ran past Options.Timeout and the
	// plugin was killed.
	TimedOut bool
	Elapsed  time.Duration
	// UnkeptOut and UnkeptErr count what the plugin said on stdout and
	// stderr past what the recording can explain: it was read, but it is
	// not in Live (a note says so). Unsent counts the answers to such
	// frames that were not sent because the plugin did not read its
	// stdin.
	UnkeptOut, UnkeptErr Unkept
	Unsent               int64
	// Survivors are processes the plugin started that outlived the
	// replay's end of them (a note names them).
	Survivors []int
	// Carried are the values the plugin chose itself that came back other
	// than recorded, in the order they came: the host sent each live one
	// where the recording had the recorded one (see carry.go), and the
	// comparison takes the one for the other (Uncarry).
	Carried []Carried
}

// GaveUp is a host step sent once its wait was given up on.
type GaveUp struct {
	// Seq is the step's recorded host frame, or for a host script its
	// line number.
	Seq uint64
	// Waited is how long it waited (rounded as the notes say it), and
	// StepTimeout whether that wait ran into Options.StepTimeout rather
	// than the recording's time for it or the end of the plugin's stdout.
	Waited      time.Duration
	StepTimeout bool
}

// ErrStart wraps the reason a plugin could not be started.
var ErrStart = errors.New("plugin did not start")

// errTimedOut ends play when the whole replay's time is up.
var errTimedOut = errors.New("replay timed out")

// event is what the main loop hears from its goroutines.
type event struct {
	kind eventKind
	dir  frame.Dir
	raw  []byte
	head []byte // a header-framed message's header block
	eol  bool
	at   time.Time
	exit Exit
	// unkept marks a line past its pipe's bound; cut, a line kept cut.
	unkept bool
	cut    *frame.Cut
	// view marks raw as a view of r.outLines' input, valid while the
	// event is handled (see window.Splitter).
	view bool
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
	opts     Options
	plan     *plan
	start    time.Time
	deadline time.Time // of the whole replay
	plugin   Plugin
	events   chan event
	writes   writeQueue
	res      Result
	seq      uint64
	readers  int // readers still running
	exited   bool
	closed   bool      // stdin closed
	outEOF   bool      // the plugin's stdout is closed: no more frames can come
	outEOFAt time.Time // when
	lastSaid time.Time
	firstOut time.Time // the plugin's first line on stdout
	// need and have count, per cause, the frames the steps so far require
	// and the frames the live plugin has produced; unmet holds the causes
	// with have < need. required counts what the steps so far required,
	// given up on or not.
	need, have, required map[string]int
	unmet                map[string]struct{}
	// causesTo is how many recorded stdout lines (plan.expect) came before
	// the step under way, forgivenTo how many before the last step that
	// gave up on the causes unmet: the frames still owed are among those
	// between (see owedSeqs). lostTo is, per method, how many of its calls
	// a give-up has looked at (see forgiveCauses).
	causesTo, forgivenTo int
	lostTo               map[string]int
	// ended says how the last wait that was given up ended; timedOutIn,
	// what a wait the replay's time limit ended was waiting for.
	ended      waitEnd
	timedOutIn string
	// owed are requests whose answers were given up on while the plugin
	// waited for a later answer: the next host frame waits for them.
	owed []*call
	// ahead knows which answer steps have their request made, for the
	// main loop's look past a step given up on (laterAnswerWaiting).
	ahead answersAhead
	// direct writes to the plugin's stdin from the main loop when nothing
	// is queued for the writer (queued counts what is); failed is set once
	// a write failed.
	direct syscall.RawConn
	queued atomic.Int64
	failed atomic.Bool
	// exitFrame is the plugin's exit, held back until its pipes are read
	// to the end so that it stands after its last line.
	exitFrame *frame.Frame
	// expectAt is the next recorded stdout line a live one is compared
	// with (see expected).
	expectAt int
	// pending is what the steps wrote since the main loop last waited:
	// consecutive host frames go to the plugin in one write.
	pending []byte
	// carry is what this replay learned of the values carried back;
	// back and backTo are this run's folders (Options.Moved) and the
	// recorded paths they stand for.
	carry  carryState
	back   []movedPath
	backTo map[string][]byte

	// When the plugin's stdout is a pipe (an *os.File), the main loop
	// reads it itself, waiting in the read with a deadline (no hand-over
	// from a reader goroutine per line); the other goroutines' events
	// interrupt that read by moving its deadline (kick). out is nil
	// otherwise, and once stdout has ended.
	out      *os.File
	outRaw   io.Reader // out, read raw (see rawFile)
	outBuf   []byte
	outLines *window.Splitter
	outArmed time.Time // the read deadline set
	drainBy  time.Time // after the plugin's exit: stdout is read until then
	kick     func()
	timer    *time.Timer
	armed    time.Time // the timer's wake
}

// Plugin is a running plugin as the host sees it.
type Plugin struct {
	Stdin  io.WriteCloser // the host writes here; closed when the host closes it
	Stdout io.Reader      // read to its end: by the replay's own goroutine when it is a pipe (*os.File)
	Stderr io.Reader      // read to its end; nil when not read
	// Signal passes a signal to the plugin.
	Signal func(os.Signal) error
	// Wait blocks until the plugin has exited and says how.
	Wait func() Exit
	// Drain, when set, is called once the plugin has exited: what it wrote
	// is in its pipes, but a grandchild may hold them open, so it bounds
	// the reading that is left (for pipes, a read deadline).
	Drain func(time.Duration)
	// Kill ends the plugin and whatever it started; it is called when the
	// replay ends it early and once it is over. It returns the processes
	// it could not end.
	Kill func() (survivors []int)
}

// Exit is how a plugin ended: a signal's name, or else its exit code.
type Exit struct {
	Code   int
	Signal string
}

// Run replays recorded against a fresh plugin process and returns the live
// timeline. It blocks until the plugin has exited and its output is read.
// The error is non-nil only when the plugin could not be started (wrapping
// ErrStart) or ctx was cancelled; a replay that ran out of time is a result
// with TimedOut set.
func Run(ctx context.Context, recorded []frame.Frame, opts Options) (*Result, error) {
	if len(opts.Command) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrStart)
	}
	// The plan is made while the plugin starts.
	plans := make(chan *plan, 1)
	go func() { plans <- makePlan(recorded, opts.Reading) }()
	p, err := start(opts)
	pl := <-plans
	if err != nil {
		return nil, err
	}
	return play(ctx, pl, p, opts)
}

// Plan is a recording read for replaying it. Made once, it serves any
// number of replays, one after another or at once: a further run of the
// same recording (replay --runs) skips reading it again.
type Plan struct{ p *plan }

// NewPlan reads recorded, as rd says, for replays of it; recorded must not
// change while the plan is in use.
func NewPlan(recorded []frame.Frame, rd Reading) *Plan { return &Plan{makePlan(recorded, rd)} }

// Run is Run of the plan's recording.
func (pl *Plan) Run(ctx context.Context, opts Options) (*Result, error) {
	if len(opts.Command) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrStart)
	}
	p, err := start(opts)
	if err != nil {
		return nil, err
	}
	return play(ctx, pl.p.fresh(), p, opts)
}

// start starts the plugin of opts in a process group of its own, with pipes.
func start(opts Options) (Plugin, error) {
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	cmd.SysProcAttr = sysProcAttr()
	pipes, err := child.Pipes()
	if err != nil {
		return Plugin{}, fmt.Errorf("%w: %v", ErrStart, err)
	}
	stdin, outR, errR := pipes.In, pipes.Out, pipes.Err
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes.ChildIn, pipes.ChildOut, pipes.ChildErr
	started := time.Now()
	// Forked from a thread held for as long as the plugin lives: the
	// parent-death signal (sysProcAttr) fires when the forking thread ends,
	// and one process may run several plugins at once (replay --runs, the
	// playground, in-process tests).
	proc, exited, err := child.Start(cmd)
	if err != nil {
		pipes.Close()
		return Plugin{}, fmt.Errorf("%w: %s: %v", ErrStart, opts.Command[0], err)
	}
	pipes.CloseChild()
	wait := sync.OnceValue(func() *os.ProcessState { return <-exited })
	return Plugin{
		Stdin: stdin, Stdout: outR, Stderr: errR,
		Signal: proc.Signal,
		Wait: func() Exit {
			state := wait()
			if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return Exit{Signal: frame.SignalName(int(ws.Signal()))}
			}
			return Exit{Code: state.ExitCode()}
		},
		Drain: func(d time.Duration) {
			deadline := time.Now().Add(d)
			outR.SetReadDeadline(deadline)
			errR.SetReadDeadline(deadline)
		},
		Kill: func() []int {
			proc.Kill()
			return child.EndGroup(proc.Pid, started)
		},
	}, nil
}

// play plays the host of plan to the plugin p until it has exited and its
// output is read.
func play(ctx context.Context, pl *plan, p Plugin, opts Options) (*Result, error) {
	opts.defaults()
	r := &runner{
		opts:     opts,
		plan:     pl,
		plugin:   p,
		need:     map[string]int{},
		have:     map[string]int{},
		required: map[string]int{},
		unmet:    map[string]struct{}{},
		lostTo:   map[string]int{},
		// The timeline and the map of what was sent are made to the
		// recording's size: grown by doubling, they would cost twice that
		// and copies on the way.
		res: Result{Live: make([]frame.Frame, 0, pl.frames+8), Pairs: map[uint64]uint64{}, Sent: make(map[uint64]uint64, pl.answers)},
	}
	r.ahead = newAnswersAhead(pl)
	r.moveIn()
	r.back, r.backTo = backPaths(opts.Moved)
	r.start = time.Now()
	r.deadline = r.start.Add(opts.Timeout)
	r.lastSaid = r.start
	r.events = make(chan event, 64)
	r.writes.wake = make(chan struct{}, 1)
	r.timer = time.NewTimer(time.Hour)
	defer r.timer.Stop()
	var wg sync.WaitGroup
	readers := []struct {
		src  io.Reader
		dir  frame.Dir
		keep *window.Keeper
	}{{p.Stdout, frame.Out, &window.Keeper{Bound: pl.out}}, {p.Stderr, frame.Err, &window.Keeper{Bound: pl.err}}}
	if f, ok := p.Stdout.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		r.out, r.outRaw, r.outBuf = f, rawOr(f), make([]byte, pl.out.BufSize(readBufMin, readBufMax))
		r.outLines = &window.Splitter{Keep: readers[0].keep, Scan: r.scanner(frame.Out)}
		r.readers++
		r.kick = func() { f.SetReadDeadline(time.Now()) }
		stop := context.AfterFunc(ctx, r.kick)
		defer stop()
		readers[0].src = nil // read here
	}
	for _, rd := range readers {
		if rd.src == nil {
			continue
		}
		src := rd.src
		if f, ok := src.(*os.File); ok {
			src = rawOr(f)
		}
		r.readers++
		wg.Add(1)
		go func() { defer wg.Done(); r.read(src, rd.dir, rd.keep) }()
	}
	if f, ok := p.Stdin.(*os.File); ok {
		if rc, err := f.SyscallConn(); err == nil && nonblocking(rc) {
			r.direct = rc // written raw: it never blocks
		}
	}
	wg.Add(2)
	go func() { defer wg.Done(); r.writeLoop(p.Stdin) }()
	go func() {
		defer wg.Done()
		exit := p.Wait()
		r.post(event{kind: evExit, exit: exit, at: time.Now()})
	}()

	runErr := r.play(ctx)
	if errors.Is(runErr, errTimedOut) {
		r.res.TimedOut = true
		if r.timedOutIn != "" {
			r.note("the replay ran longer than its time limit (%v, --timeout) %s: the plugin was killed", opts.Timeout, r.timedOutIn)
		} else {
			r.note("the replay ran longer than its time limit (%v, --timeout): the plugin was killed", opts.Timeout)
		}
		runErr = nil
		r.kill()
	}
	if !r.closed {
		r.closed = true
		r.enqueue(write{close: true})
	}
	r.writes.finish()
	if runErr != nil {
		r.kill()
	}
	wg.Wait()
	r.res.UnkeptOut, r.res.UnkeptErr = readers[0].keep.Count(), readers[1].keep.Count()
	for _, src := range []io.Reader{p.Stdout, p.Stderr} {
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
	}
	// Whatever the plugin started itself goes with it.
	if p.Kill != nil {
		r.res.Survivors = append(r.res.Survivors, p.Kill()...)
	}
	if len(r.res.Survivors) > 0 {
		slices.Sort(r.res.Survivors)
		r.res.Survivors = slices.Compact(r.res.Survivors)
		r.note("processes the plugin started outlived the replay (they could not be killed): pids %v", r.res.Survivors)
	}
	r.lateNotes()
	for i, name := range []string{"stdout", "stderr"} {
		if n := unkeptNote(readers[i].keep.Count(), name); n != "" {
			r.note("%s", n)
		}
	}
	if r.res.Unsent > 0 {
		r.note("%d answers to requests past what the recording can explain were not sent: the plugin did not read its stdin", r.res.Unsent)
	}
	r.res.Elapsed = time.Since(r.start)
	// A copy: the runner, and the plan it holds, go once the replay is
	// over, while the result lives on to be compared.
	res := r.res
	return &res, runErr
}

// kill ends the plugin and handles events until it has exited.
func (r *runner) kill() {
	if r.plugin.Kill != nil {
		r.res.Survivors = append(r.res.Survivors, r.plugin.Kill()...)
	} else {
		r.plugin.Signal(syscall.SIGKILL)
	}
	for !r.exited {
		r.next(context.Background(), time.Now().Add(time.Hour))
	}
}

// play runs the steps and the ending; it returns once the plugin has exited
// and its pipes are drained.
func (r *runner) play(ctx context.Context) error {
	var lastStep time.Time
	var lastAt int64
	performed := false
	for i := range r.plan.steps {
		st := &r.plan.steps[i]
		r.require(st.causes)
		r.reach(st.frame.Seq)
		if st.kind == sendAnswer && !st.call.used && (st.call.lost || r.plan.isChatter(st.call.method)) {
			// A wait gave up on the request this answers, or it is
			// chatter, whose number depends on timing: it is not waited
			// for (it is answered if it comes), and what the plugin said
			// before this answer is waited for by the next step.
			st.call.late = true
			continue
		}
		ready, err := r.waitFor(ctx, st)
		if err != nil {
			return err
		}
		if r.exited {
			r.addNote(note.Note{Kind: note.Exited, Step: r.plan.step(st)})
			return nil
		}
		if !ready {
			if st.kind == sendAnswer && !st.call.used {
				st.call.gaveUp = r.why("it") // said if it never comes (lateNotes)
				// The request may still come: it is answered then. When the
				// plugin made a request answered later in the recording, it
				// may be waiting for that answer before it makes this one
				// (it asks one at a time now): the host frames after these
				// answers wait for this request too.
				st.call.late = true
				if r.laterAnswerWaiting(i) {
					r.owed = append(r.owed, st.call)
				}
				r.forgiveCauses()
				continue
			}
			e := r.ended
			r.res.GaveUp = append(r.res.GaveUp, GaveUp{Seq: st.frame.Seq, Waited: short(e.waited), StepTimeout: !e.eof && (!e.recorded || e.capped)})
			r.addNote(note.Note{Kind: note.GaveUp, Step: r.plan.step(st), Text: r.why("what the plugin had said before it in the recording") + ": " + r.forgive()})
		}
		if r.opts.Pace > 0 && performed {
			gap := time.Duration(float64(st.frame.At-lastAt) / r.opts.Pace)
			gap = min(max(gap, 0), r.opts.MaxGap)
			if err := r.idleUntil(ctx, lastStep.Add(gap)); err != nil {
				return err
			}
		}
		if pause := st.pause(); pause > 0 {
			if err := r.idleUntil(ctx, time.Now().Add(pause)); err != nil {
				return err
			}
		}
		lastStep, lastAt, performed = time.Now(), st.frame.At, true
		r.perform(st)
	}
	// Let the plugin say what it said after the last host frame.
	r.require(r.plan.tail)
	r.reach(^uint64(0))
	ready, err := r.waitFor(ctx, nil)
	if err != nil {
		return err
	}
	if !ready && !r.exited {
		r.note("the plugin's last frames were given up %s: %s", r.why("them"), r.forgive())
	}
	// The host's ending: stdin closed, then its grace periods.
	if !r.closed {
		r.closed = true
		r.enqueue(write{close: true})
		r.add(frame.Frame{Event: frame.EventEOF, Dir: frame.In})
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := r.idleUntil(ctx, time.Now().Add(r.opts.Grace)); err != nil {
			return err
		}
		if r.exited {
			return nil
		}
		r.note("the plugin was still running %v after stdin closed: %s, as the host does", r.opts.Grace, frame.SignalName(int(sig)))
		r.plugin.Signal(sig)
		r.add(frame.Frame{Event: frame.EventSignal}.WithEnd(frame.SignalName(int(sig)), nil))
	}
	for !r.exited {
		if err := r.next(ctx, time.Now().Add(time.Hour)); err != nil {
			return err
		}
	}
	return nil
}

// require adds causes to what the live plugin must have produced.
func (r *runner) require(causes []string) {
	for _, c := range causes {
		r.required[c]++
		n := r.need[c] + 1
		r.need[c] = n
		if n == r.have[c]+1 {
			r.unmet[c] = struct{}{}
		}
	}
}

// reach moves causesTo to the recorded stdout lines before recorded seq:
// those the steps so far required.
func (r *runner) reach(seq uint64) {
	ex := r.plan.expect
	for r.causesTo < len(ex) && ex[r.causesTo].frame.Seq < seq {
		r.causesTo++
	}
}

// saw counts one frame the live plugin produced.
func (r *runner) saw(cause string) {
	n := r.have[cause] + 1
	r.have[cause] = n
	if n == r.need[cause] {
		delete(r.unmet, cause)
	}
}

// waitEnd is how a wait that was given up ended.
type waitEnd struct {
	eof      bool          // the plugin closed its stdout
	waited   time.Duration // how long it waited
	recorded bool          // it was bounded by the recording
	capped   bool          // by StepTimeout
	took     time.Duration // the recorded wait
}

// why says why a wait ended before the plugin said what it was waited for
// (what names that).
func (r *runner) why(what string) string {
	e := r.ended
	switch {
	case e.eof:
		return fmt.Sprintf("without %s, as the plugin closed its stdout", what)
	case e.recorded && !e.capped:
		return fmt.Sprintf("after waiting %v for %s, which took %v in the recording (a wait is bounded by %g × its recorded time, at least %v)",
			short(e.waited), what, short(e.took), r.opts.WaitFactor, short(r.opts.MinWait))
	case e.recorded:
		return fmt.Sprintf("after waiting %v (--step-timeout) for %s, which took %v in the recording", short(e.waited), what, short(e.took))
	}
	return fmt.Sprintf("after waiting %v (--step-timeout) for %s", short(e.waited), what)
}

// short rounds d for a note.
func short(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// laterAnswerWaiting reports whether an answer step right after step i
// (before the next host frame of the host's own) has its request made.
func (r *runner) laterAnswerWaiting(i int) bool { return r.ahead.waiting(r.plan.steps, i) }

// forgive gives up on every cause still unmet and every request owed, so
// that no later step waits for them again, and describes what was given up.
func (r *runner) forgive() string {
	missing := r.unmetCauses()
	r.forgiveCauses()
	for _, c := range r.owed {
		if !c.used {
			missing = append(missing, c.method+" request")
		}
	}
	r.owed = nil
	return strings.Join(missing, ", ")
}

// forgiveCauses gives up on the causes still unmet. The recorded requests
// among them are lost: their answers' steps do not wait for them again.
// A method's calls are in recorded order, and what the steps required of
// it only grows, so each call is looked at by one give-up at most (lostTo):
// a replay that gives up at every step takes time in step with its length,
// where it took the square of it (20,000 give-ups: 30 s).
func (r *runner) forgiveCauses() {
	for c := range r.unmet {
		r.need[c] = r.have[c]
		if method, ok := strings.CutPrefix(c, "call "); ok {
			calls, req := r.plan.calls[method], r.required[c]
			i := r.lostTo[method]
			for ; i < len(calls) && calls[i].occ <= req; i++ {
				if !calls[i].used {
					calls[i].lost = true
				}
			}
			r.lostTo[method] = i
		}
	}
	clear(r.unmet)
	r.forgivenTo = r.causesTo
}

// unmetCauses lists the causes still unmet, sorted, each with the
// recorded frames it stands for: "ui/setPanel (recorded seq 4)".
func (r *runner) unmetCauses() []string {
	seqs := r.owedSeqs()
	missing := make([]string, 0, len(r.unmet))
	for c := range r.unmet {
		n, h := r.need[c], r.have[c]
		what := strings.Replace(strings.Replace(c, "call ", "", 1), "reply ", "reply to id ", 1)
		if n-h > 1 {
			what = fmt.Sprintf("%d × %s", n-h, what)
		}
		missing = append(missing, what+seqs[c].String())
	}
	sort.Strings(missing)
	return missing
}

// owed is what a cause still owes: the first of its recorded frames (at
// most three) and how many it owes in all.
type owed struct {
	seqs []uint64
	n    int
}

// owedSeqs finds the recorded frames each unmet cause stands for: the
// last need − have of its frames that the steps so far required, which
// are among the recorded lines since the last give-up (every cause was
// met then). One pass back over those lines serves every cause.
func (r *runner) owedSeqs() map[string]owed {
	out := make(map[string]owed, len(r.unmet))
	left := make(map[string]int, len(r.unmet))
	for c := range r.unmet {
		left[c] = r.need[c] - r.have[c]
	}
	ex := r.plan.expect
	for i := min(r.causesTo, len(ex)) - 1; i >= r.forgivenTo && len(left) > 0; i-- {
		e := &ex[i]
		if !e.ok {
			continue
		}
		k, ok := left[e.cause]
		if !ok {
			continue
		}
		o := out[e.cause]
		o.n++
		// Back to front: the first three are the last found.
		if len(o.seqs) == 3 {
			copy(o.seqs[1:], o.seqs[:2])
			o.seqs[0] = e.frame.Seq
		} else {
			o.seqs = append([]uint64{e.frame.Seq}, o.seqs...)
		}
		out[e.cause] = o
		if k == 1 {
			delete(left, e.cause)
		} else {
			left[e.cause] = k - 1
		}
	}
	return out
}

// String names the frames, " (recorded seq 4)" or " (recorded seq 7, 9
// and 11)", at most three and how many more; "" when the plan knows none
// (a host script records no plugin frame).
func (o owed) String() string {
	seqs := make([]string, len(o.seqs))
	for i, s := range o.seqs {
		seqs[i] = strconv.FormatUint(s, 10)
	}
	switch more := o.n - len(seqs); {
	case len(seqs) == 0:
		return ""
	case more > 0:
		return fmt.Sprintf(" (recorded seq %s and %d more)", strings.Join(seqs, ", "), more)
	case len(seqs) == 1:
		return " (recorded seq " + seqs[0] + ")"
	}
	return fmt.Sprintf(" (recorded seq %s and %s)", strings.Join(seqs[:len(seqs)-1], ", "), seqs[len(seqs)-1])
}

// awaited says what a wait for step st (nil: the end of the recording)
// still waits for, and until when, for Options.Waiting.
func (r *runner) awaited(st *step, quiet, bound time.Duration) string {
	what := r.unmetCauses()
	if st != nil && st.kind == sendAnswer && !st.call.used {
		if c := "call " + st.call.method; r.have[c] >= r.need[c] { // (else listed)
			what = append(what, st.call.method+" request")
		}
	}
	if st == nil || st.kind != sendAnswer {
		for _, c := range r.owed {
			if !c.used {
				what = append(what, c.method+" request")
			}
		}
	}
	if len(what) == 0 {
		what = append(what, fmt.Sprintf("%v of silence", short(quiet)))
	}
	where := "the end of the replay"
	if st != nil {
		where = r.plan.where(st)
	}
	return fmt.Sprintf("%s before %s (given up after %v)", strings.Join(what, ", "), where, short(bound))
}

// ready reports whether step st may go (nil: the end of the recording): the
// plugin has produced its causes; an answer's request was made; before a
// host frame of the host's own, every request owed was made.
func (r *runner) ready(st *step) bool {
	if len(r.unmet) > 0 {
		return false
	}
	if st != nil && st.kind == sendAnswer {
		return st.call.used
	}
	for _, c := range r.owed {
		if !c.used {
			return false
		}
	}
	return true
}

// waitFor handles events until step st may go (true), or it cannot
// (false): its bound passed (see Options.WaitFactor), or the plugin closed
// its stdout (after a moment for its exit to arrive: a plugin that closes
// stdout is usually exiting), or it has exited. With Quiet set, a ready
// step also waits for that much silence, for StepTimeout at most. A wait
// given up on sets r.ended.
func (r *runner) waitFor(ctx context.Context, st *step) (bool, error) {
	begin := time.Now()
	quietLimit := begin.Add(r.opts.StepTimeout) // for silence
	tell := begin.Add(waitingAfter)             // for Options.Waiting
	told := r.opts.Waiting == nil
	quiet := r.opts.Quiet
	if st != nil {
		quiet = max(quiet, st.quiet())
	}
	for {
		if r.exited {
			return false, nil
		}
		now := time.Now()
		from, bound, end := r.bound(st, begin) // (the plugin's first line moves it)
		limit := from.Add(bound)               // for the frames waited for
		ready := r.ready(st)
		var settled time.Time
		if ready {
			if quiet <= 0 {
				return true, nil
			}
			if settled = r.lastSaid.Add(quiet); !now.Before(settled) {
				return true, nil
			}
		}
		if !now.Before(r.deadline) {
			// Said with the note of the time limit: what it waited for.
			r.timedOutIn = fmt.Sprintf("while it waited %v for %s", short(now.Sub(begin)), r.awaited(st, quiet, bound))
			return false, errTimedOut
		}
		var wake time.Time
		switch {
		case ready && !now.Before(quietLimit):
			r.ended = waitEnd{waited: now.Sub(begin)}
			return false, nil
		case ready:
			wake = earlier(settled, quietLimit)
		case r.outEOF && !now.Before(r.outEOFAt.Add(drain)):
			r.ended = waitEnd{eof: true}
			return false, nil
		case !now.Before(limit):
			end.waited = now.Sub(from)
			r.ended = end
			return false, nil
		case r.outEOF:
			wake = earlier(limit, r.outEOFAt.Add(drain))
		default:
			wake = limit
		}
		if !told && !now.Before(tell) {
			told = true
			until := limit
			if ready {
				until = quietLimit
			}
			r.opts.Waiting(r.awaited(st, quiet, until.Sub(begin)), now.Sub(begin))
			continue
		}
		if !told {
			wake = earlier(wake, tell)
		}
		if err := r.next(ctx, earlier(wake, r.deadline)); err != nil {
			return false, err
		}
	}
}

// waitingAfter is how long a wait lasts before Options.Waiting hears of it.
const waitingAfter = 2 * time.Second

// bound is how long the wait for step st (nil: the end of the recording)
// that began at begin may last, counted from from: by the recording's time
// for it when the recording has times, capped by StepTimeout. end
// describes it for the notes.
func (r *runner) bound(st *step, begin time.Time) (from time.Time, bound time.Duration, end waitEnd) {
	t := r.plan.tailTook
	if st != nil {
		t = st.tookOf()
	}
	if !r.plan.timed || t.fromStart && r.firstOut.IsZero() {
		return begin, r.opts.StepTimeout, waitEnd{}
	}
	from = begin
	if t.fromStart {
		from = r.firstOut
	}
	end = waitEnd{recorded: true, took: t.d}
	allowed := r.opts.StepTimeout + begin.Sub(from) // the cap, counted from from
	if f := r.opts.WaitFactor * float64(t.d); f < float64(allowed) {
		bound = max(r.opts.MinWait, time.Duration(f))
	} else {
		bound = allowed
	}
	if bound >= allowed {
		bound, end.capped = allowed, true
	}
	return from, bound, end
}

// drain is how long the plugin's pipes are read after its exit (a
// grandchild may hold them open), and how long a plugin that closed its
// stdout is given for its exit to arrive.
const drain = 250 * time.Millisecond

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// idleUntil handles events until t (or until the plugin has exited).
func (r *runner) idleUntil(ctx context.Context, t time.Time) error {
	for !r.exited {
		now := time.Now()
		if !now.Before(r.deadline) {
			return errTimedOut
		}
		if !now.Before(t) {
			return nil
		}
		if err := r.next(ctx, earlier(t, r.deadline)); err != nil {
			return err
		}
	}
	return nil
}

// post hands an event from another goroutine to the main loop, and
// interrupts the main loop's read of stdout for it.
func (r *runner) post(ev event) {
	r.events <- ev
	if r.kick != nil {
		r.kick()
	}
}

// next handles what comes next, an event or what the plugin says on
// stdout, or waits until wake, whichever is first; it returns ctx's error
// once ctx is done. What the steps wrote goes out first.
func (r *runner) next(ctx context.Context, wake time.Time) error {
	r.flush()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case ev := <-r.events:
		r.handle(ev)
		return nil
	default:
	}
	if r.out == nil {
		if !wake.Equal(r.armed) {
			r.timer.Reset(time.Until(wake))
			r.armed = wake
		}
		select {
		case ev := <-r.events:
			r.handle(ev)
		case <-r.timer.C:
			r.armed = time.Time{}
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	until := wake
	if !r.drainBy.IsZero() {
		until = earlier(until, r.drainBy)
	}
	if !until.Equal(r.outArmed) {
		r.out.SetReadDeadline(until)
		r.outArmed = until
	}
	// An event posted before the deadline was set is seen here; one
	// posted after it moves the deadline, and the read returns at once.
	select {
	case ev := <-r.events:
		r.handle(ev)
		return nil
	default:
	}
	n, err := r.outRaw.Read(r.outBuf)
	at := time.Now()
	if n > 0 {
		r.outLines.Feed(r.outBuf[:n], func(l window.Line) { r.outLine(l, at) })
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded) && (r.drainBy.IsZero() || at.Before(r.drainBy)):
		r.outArmed = time.Time{} // a kick may have moved it
	default: // the end of stdout, or of the reading left after the exit
		r.outLines.End(func(l window.Line) { r.outLine(l, at) })
		r.out = nil
		r.handle(event{kind: evEOF, dir: frame.Out, at: at})
	}
	return nil
}

// outLine handles a line the main loop read from stdout.
func (r *runner) outLine(l window.Line, at time.Time) {
	r.handle(event{kind: evLine, dir: frame.Out, raw: l.Raw, head: l.Head, eol: l.EOL, cut: l.Cut, unkept: l.Unkept, view: l.View, at: at})
}

// perform carries out one host step.
func (r *runner) perform(st *step) {
	switch st.kind {
	case sendFrame:
		head := st.frame.Head()
		if head == nil && r.plan.script && r.opts.Framing == wire.Headers {
			head = wire.HeadFor(len(st.frame.Raw)) // a script line has no head of its own
		}
		raw := st.frame.Raw
		if r.plan.carry != nil {
			if raw = r.rewrite(raw, r.plan.carry.host[st.frame.Seq]); len(raw) != len(st.frame.Raw) {
				head = wire.Reframe(head, len(raw))
			}
		}
		data := wire.Append(make([]byte, 0, len(head)+len(raw)+1), head, raw, !st.frame.NoEOL)
		r.delivering(st.frame)
		r.write(data)
		f := frame.Frame{Dir: frame.In, Raw: raw, NoEOL: st.frame.NoEOL, Cut: st.frame.Cut}
		f.SetHead(head)
		r.add(f)
		r.res.Sent[r.seq] = st.frame.Seq
	case closeStdin:
		if !r.closed {
			r.closed = true
			r.enqueue(write{close: true})
			r.add(frame.Frame{Event: frame.EventEOF, Dir: frame.In})
		}
	case sendAnswer:
		r.sendAnswer(st.call)
	case sendSignal:
		r.enqueue(write{signal: syscall.Signal(st.signal)})
		r.add(frame.Frame{Event: frame.EventSignal}.WithEnd(st.frame.Signal(), nil))
	}
}

// handle takes one event into the live timeline and answers the plugin's
// requests.
func (r *runner) handle(ev event) {
	switch ev.kind {
	case evLine:
		var same *expected
		if ev.dir == frame.Out {
			same = r.expected(ev.raw, ev.cut)
		}
		if !ev.unkept {
			// A line the same as the recorded one it is compared with
			// keeps the recorded bytes: a replay that goes as recorded
			// holds the plugin's lines once.
			switch {
			case same != nil:
				ev.raw = same.frame.Raw
			case ev.view:
				ev.raw = r.outLines.CopyOut(ev.raw)
			}
			f := frame.Frame{Dir: ev.dir, Raw: ev.raw, NoEOL: !ev.eol, Cut: ev.cut}
			if ev.head != nil {
				f.SetHead(bytes.Clone(ev.head))
			}
			r.addAt(f, ev.at)
		}
		r.lastSaid = ev.at
		if ev.dir != frame.Out {
			return
		}
		if r.firstOut.IsZero() {
			r.firstOut = ev.at
		}
		if same != nil && !same.request {
			if same.ok {
				r.saw(same.cause)
			}
			return
		}
		// Of a line its envelope says the cause, and of a request what
		// answers it. A line that is not the recorded one may hold values
		// the plugin chose itself (see carry.go).
		carry := r.plan.carry != nil && same == nil
		switch e := message.ReadEnvelope(ev.raw); e.Kind {
		case message.Request:
			r.saw("call " + string(e.Method))
			if c := r.answer(&e, !ev.unkept, same); c != nil && carry {
				r.learnFrom(c.seq, ev.raw, r.seq)
			}
		case message.Notification:
			cause := "call " + string(e.Method)
			r.saw(cause)
			if carry {
				r.learn(cause, ev.raw, r.seq)
			}
		case message.Response, message.ErrorReply:
			cause := "reply " + message.IDKey(e.ID)
			r.saw(cause)
			if carry {
				r.learn(cause, ev.raw, r.seq)
			}
		}
	case evEOF:
		r.readers--
		if ev.dir == frame.Out {
			r.outEOF, r.outEOFAt = true, ev.at
			r.addAt(frame.Frame{Event: frame.EventClosed, Dir: frame.Out}, ev.at)
		}
		if r.readers == 0 && r.exitFrame != nil {
			r.addAt(*r.exitFrame, ev.at)
			r.exited = true
		}
	case evExit:
		// What the plugin wrote is in the pipes; a grandchild may keep them
		// open, so read on only briefly.
		if r.plugin.Drain != nil {
			r.plugin.Drain(drain)
		}
		if r.out != nil {
			r.drainBy = time.Now().Add(drain)
			r.outArmed = time.Time{} // Drain moved it
		}
		f := frame.Frame{Event: frame.EventExit}
		if ev.exit.Signal == "" {
			code := ev.exit.Code
			f.SetEnd("", &code)
		} else {
			f.SetEnd(ev.exit.Signal, nil)
		}
		r.exitFrame = &f
		if r.readers == 0 {
			r.addAt(f, ev.at)
			r.exited = true
		}
	}
}

// expectWindow is how many recorded lines past the last one matched a live
// line is compared with (see expected).
const expectWindow = 4

// expected returns the recorded line of the plugin's stdout, among the
// next few after the last one matched, whose bytes are raw's: a live line
// the same as a recorded one has its cause, and parsing is a function of
// the bytes (but for a request, which is read again to be answered). nil when
// none is, or raw is cut.
func (r *runner) expected(raw []byte, cut *frame.Cut) *expected {
	if cut != nil {
		return nil
	}
	ex := r.plan.expect
	for i := r.expectAt; i < len(ex) && i < r.expectAt+expectWindow; i++ {
		if e := &ex[i]; bytes.Equal(e.frame.Raw, raw) {
			r.expectAt = i + 1
			return e
		}
	}
	return nil
}

// answer takes a live plugin request (the frame just added, when kept): it
// is matched to a recorded call, whose answer goes out at its recorded
// place among the host frames, or at once when that place was given up on.
// A request the recording has no call for gets an error at once. The
// answer to a request that was not kept is not kept either.
func (r *runner) answer(e *message.Envelope, kept bool, same *expected) *call {
	method := string(e.Method)
	params := e.Params
	if same == nil && len(r.back) > 0 {
		params = unmoved(params, r.back, r.backTo) // this run's folders stand for the recorded ones
	}
	c, differs := r.plan.match(e.ID, method, params, same)
	switch {
	case c == nil && r.plan.script:
		r.send(nil, r.plan.defaultAnswer(method, e.ID), kept)
		return nil
	case c == nil && r.plan.isChatter(method):
		// One more report on the plugin's work than recorded: it gets
		// the recorded answer of its method.
		if like := r.plan.lastAnswered(method); like != nil {
			r.send(like.answer, answerWith(like.tail, e.ID), kept)
			return nil
		}
		fallthrough
	case c == nil && !kept:
		r.send(nil, unmatchedAnswer(method, e.ID), kept)
		if kept {
			r.res.Unmatched = append(r.res.Unmatched, fmt.Sprintf("%s (replay seq %d)", method, r.seq))
		}
		return nil
	case c == nil:
		r.res.Unmatched = append(r.res.Unmatched, fmt.Sprintf("%s (replay seq %d)", method, r.seq))
		r.send(nil, unmatchedAnswer(method, e.ID), true)
		return nil
	case differs && kept:
		r.addNote(note.Note{Kind: note.Answered, Method: method, Seq: r.seq})
	case differs:
		r.addNote(note.Note{Kind: note.AnsweredUnkept, Method: method})
	}
	if kept {
		r.res.Pairs[r.seq] = c.seq
	}
	r.ahead.requested(c)
	c.liveID = append(json.RawMessage(nil), e.ID...)
	c.unkept = !kept
	if c.late && c.answer != nil {
		r.sendAnswer(c)
	}
	return c
}

// lateNotes says, once the replay is over, which recorded answers went out
// late and which were never sent because their request never came.
func (r *runner) lateNotes() {
	for i := range r.plan.steps {
		st := &r.plan.steps[i]
		if st.kind != sendAnswer || !st.call.late || r.plan.isChatter(st.call.method) {
			continue // (chatter comes when it comes)
		}
		switch {
		case r.plan.script && st.call.sent:
			r.addNote(note.Note{Kind: note.ScriptLate, Method: st.call.method, Step: r.plan.step(st)})
		case r.plan.script:
			r.addNote(note.Note{Kind: note.ScriptUnasked, Step: r.plan.step(st)})
		case st.call.sent:
			r.addNote(note.Note{Kind: note.Late, Method: st.call.method, Seq: st.call.seq})
		default:
			r.addNote(note.Note{Kind: note.Unasked, Method: st.call.method, Seq: st.call.seq, Answer: st.frame.Seq, Text: st.call.gaveUp})
		}
	}
}

// sendAnswer sends the recorded answer of c with its live id.
func (r *runner) sendAnswer(c *call) {
	c.sent = true
	r.delivering(c.answer)
	tail := c.tail
	if r.plan.carry != nil {
		tail = r.rewrite(tail, r.plan.carry.tails[c.index])
	}
	if r.send(c.answer, answerWith(tail, c.liveID), !c.unkept) && !c.unkept {
		r.res.Sent[r.seq] = c.answer.Seq
	}
}

// maxUnkeptQueue is how many bytes may wait for the plugin's stdin before
// the answers to requests that were not kept are dropped (and counted).
const maxUnkeptQueue = 4 << 20

// send writes a host answer line, kept in the live timeline or not; false
// when it was not sent: stdin is closed already, or, for an answer not
// kept, the plugin has not read what waits for its stdin.
func (r *runner) send(like *frame.Frame, reply []byte, kept bool) bool {
	if r.closed {
		return false
	}
	if !kept && r.writes.waiting() > maxUnkeptQueue {
		r.res.Unsent++
		return false
	}
	head := r.headFor(like, reply)
	r.write(wire.Append(nil, head, reply, true))
	if kept {
		f := frame.Frame{Dir: frame.In, Raw: reply}
		f.SetHead(head)
		r.add(f)
	}
	return true
}

// scanner is what cuts the plugin's pipe dir into frames: stderr is cut
// into lines, stdout as the session is framed.
func (r *runner) scanner(dir frame.Dir) *wire.Scanner {
	if dir == frame.Err {
		return wire.NewScanner(wire.Lines)
	}
	return wire.NewScanner(r.opts.Framing)
}

// headFor is the header block of a reply tapedeck writes: the recorded
// frame's it stands for (like; nil for none), its Content-Length made
// the reply's, or under header framing the plain one; nil under newline
// framing.
func (r *runner) headFor(like *frame.Frame, reply []byte) []byte {
	if like != nil && like.Head() != nil {
		return wire.Reframe(like.Head(), len(reply))
	}
	if r.opts.Framing == wire.Headers {
		return wire.HeadFor(len(reply))
	}
	return nil
}

func (r *runner) add(f frame.Frame) { r.addAt(f, time.Now()) }

func (r *runner) addAt(f frame.Frame, at time.Time) {
	r.seq++
	f.Seq = r.seq
	f.At = int64(at.Sub(r.start))
	r.res.Live = append(r.res.Live, f)
}

// note adds a note its words say whole; addNote, one of another kind.
func (r *runner) note(format string, args ...any) { r.addNote(note.Textf(format, args...)) }

func (r *runner) addNote(n note.Note) { r.res.Notes = append(r.res.Notes, n) }

// write sends data to the plugin's stdin: it is pending until the main
// loop next waits (next), so that host frames sent one after another go
// in one write, unless Options.Delivering is set (each line then goes at
// once). See flush.
func (r *runner) write(data []byte) {
	r.pending = append(r.pending, data...)
	if r.opts.Delivering != nil {
		r.flush() // each line goes out with the time Delivering was told
	}
}

// flush writes what is pending (see write). When nothing is queued before
// it, it is written at once, without blocking, from the main loop (a
// round trip then costs no hand-over to the writer); what the pipe does
// not take at once goes to the writer, which may wait.
func (r *runner) flush() {
	if len(r.pending) == 0 {
		return
	}
	data := r.pending
	r.pending = r.pending[:0]
	if r.direct != nil && r.queued.Load() == 0 && !r.failed.Load() {
		var n int
		var err error
		r.direct.Write(func(fd uintptr) bool {
			var errno syscall.Errno
			if n, errno = rawWrite(fd, data); errno != 0 {
				err = errno
			}
			return true // never wait here: the writer waits
		})
		switch {
		case err == nil && n == len(data):
			return
		case err == syscall.EAGAIN || err == syscall.EINTR || err == nil:
			data = data[max(n, 0):]
		default:
			r.failed.Store(true) // the plugin is gone or closed its stdin
			return
		}
	}
	r.queue(write{data: bytes.Clone(data)})
}

// enqueue hands w to the writer, after everything queued before it. It
// never blocks: a plugin that does not read its stdin cannot stop the
// main loop (and its bounds).
func (r *runner) enqueue(w write) {
	r.flush()
	r.queue(w)
}

// queue hands w to the writer as it is.
func (r *runner) queue(w write) {
	r.queued.Add(1)
	r.writes.push(w)
}

// writeQueue is the stdin writer's queue.
type writeQueue struct {
	mu       sync.Mutex
	items    []write
	bytes    int  // data queued, for waiting
	finished bool // nothing more comes
	wake     chan struct{}
}

func (q *writeQueue) push(w write) {
	q.mu.Lock()
	q.items = append(q.items, w)
	q.bytes += len(w.data)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// finish says that nothing more is queued: the writer ends once it has
// written what is.
func (q *writeQueue) finish() {
	q.mu.Lock()
	q.finished = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waiting is how many bytes wait to be written.
func (q *writeQueue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

// take waits for queued items and takes them all, swapping in spare;
// false once the queue is finished and empty.
func (q *writeQueue) take(spare []write) ([]write, bool) {
	for {
		q.mu.Lock()
		items, finished := q.items, q.finished
		if len(items) > 0 {
			q.items = spare[:0]
		}
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		if finished {
			return nil, false
		}
		<-q.wake
	}
}

// done says that n bytes of the queue were written (or dropped).
func (q *writeQueue) done(n int) {
	q.mu.Lock()
	q.bytes -= n
	q.mu.Unlock()
}

// writeLoop writes the queued host frames and signals in order, the data
// of consecutive frames in one write; after a failed write it only drains
// the queue.
func (r *runner) writeLoop(stdin io.WriteCloser) {
	ok := true
	defer stdin.Close()
	var items, spare []write
	var buf []byte
	for {
		var more bool
		if items, more = r.writes.take(spare); !more {
			return
		}
		for i := 0; i < len(items); {
			w := items[i]
			ok = ok && !r.failed.Load()
			switch {
			case w.close:
				stdin.Close()
				ok = false
			case w.signal != 0:
				r.plugin.Signal(w.signal)
			}
			if w.close || w.signal != 0 {
				r.queued.Add(-1)
				i++
				continue
			}
			// The data of this and the following frames, in one write.
			j, size := i, 0
			for ; j < len(items) && !items[j].close && items[j].signal == 0; j++ {
				size += len(items[j].data)
			}
			data := w.data
			if j > i+1 {
				buf = buf[:0]
				for _, x := range items[i:j] {
					buf = append(buf, x.data...)
				}
				data = buf
			}
			if ok {
				if _, err := stdin.Write(data); err != nil {
					ok = false
					r.failed.Store(true)
				}
			}
			r.writes.done(size)
			r.queued.Add(-int64(j - i))
			i = j
		}
		clear(items)
		spare = items
	}
}
