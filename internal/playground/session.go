package playground

// One run of the plugin: its recording, the host's end of its streams,
// the host's view of the frames, the live check.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/internal/window"
	"github.com/tapedeck/tapedeck/message"
)

// The host's grace periods after shutdown (host-behaviour.md).
const (
	termAfter = 1500 * time.Millisecond
	killAfter = 1500 * time.Millisecond
)

// queueMax bounds the host frames waiting to be written to the plugin.
const queueMax = 4096

// run is one start of the plugin, recorded as one session. Its fields are
// the server's mutex's, but for the channels.
type run struct {
	n       int
	start   time.Time
	queue   chan []byte // host frames for the writer; closed when the host closes stdin
	closed  bool
	sigs    chan os.Signal
	done    chan struct{} // closed once the plugin has exited and the session is finished
	over    bool
	result  *capture.Result
	frames  []frame.Frame // as the host saw them
	entries []json.RawMessage
	finds   []findingData
	live    *htmlreport.Live
	checker *check.Checker
	nextID  int // the host's request ids
	stopped bool
	// have counts the plugin's frames by cause (host.CauseOf), for a
	// replay of actions; said is signalled on each.
	have map[string]int
	said chan struct{}
	// replayed is the replay of actions this run plays, or nil.
	replayed *replaying
	// keep is what the run keeps of its pipes for the page (bounded.go);
	// boot how far it has come in starting, for the watch (watchfiles.go).
	keep *keeping
	boot boot
	// start is the copy of the data the run started from, or why there
	// is none (startdata.go).
	from startCopy
	// pid is the plugin's once it has started (0 before); it leads the
	// plugin's process group, which capture ends at every exit.
	pid atomic.Int64
	wg  sync.WaitGroup // the writer, the grace periods, timers, the replay of actions
}

// findingData is a check finding as the page shows it: the report's
// shape, with the frame's index.
type findingData struct {
	Seq     uint64 `json:"seq"`
	Index   int    `json:"index"`
	Level   string `json:"level"`
	Rule    string `json:"rule"`
	Method  string `json:"method,omitempty"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// startLocked starts the plugin as run n+1, the current one: as the host starts it
// (initialize, then panel/open when it has a panel), or, with actions,
// playing them again (see replayActions).
func (s *server) startLocked(actions *replaying) *run {
	s.runs++
	r := &run{
		n: s.runs, start: time.Now(),
		queue: make(chan []byte, queueMax), sigs: make(chan os.Signal, 4), done: make(chan struct{}),
		live: htmlreport.NewLive(), nextID: 1, have: map[string]int{}, said: make(chan struct{}, 1),
		replayed: actions, keep: newKeeping(s.opt.pageFrames),
	}
	opts := check.Options{Manifest: s.plugin.Manifest, NoManifest: s.plugin.NoManifest}
	r.checker = check.New(opts)
	s.startCopyLocked(r)
	s.cur = r
	s.broadcastLocked(s.resetLocked())
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		s.failLocked(r, fmt.Sprintf("start the plugin: %v", err))
		return r
	}
	out, errw := s.newPipe(r, frame.Out), s.newPipe(r, frame.Err)
	r.wg.Add(1)
	go func() { // the writer: host frames to the plugin's stdin, in order
		defer r.wg.Done()
		for raw := range r.queue {
			stdinW.Write(append(raw, '\n')) // a plugin that has gone: its exit says so
		}
		stdinW.Close()
	}()
	ropt := &capture.Options{
		Command: s.command, Dir: s.plugin.Dir, Env: s.env, PinClock: s.opt.PinClock,
		Name: s.opt.Name + "-" + strconv.Itoa(r.n), StoreDir: s.opt.StoreDir,
		Stdin: stdinR, Stdout: out, Stderr: errw, Log: s.opt.Log,
		Signals: r.sigs, Version: s.opt.Version,
		Group: true, Started: func(pid int) { r.pid.Store(int64(pid)) },
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := capture.Run(s.ctx, ropt)
		stdinR.Close()
		out.flush()
		errw.flush()
		s.exited(r, res, err)
	}()
	if actions != nil {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			s.replayActions(r)
		}()
	} else {
		s.sendLocked(r, s.initializeFrame(r))
		if s.plugin.Panel {
			s.sendLocked(r, s.notification("panel/open", map[string]json.RawMessage{"context": s.hostCtx}))
		}
	}
	return r
}

// failLocked ends a run that could not start.
func (s *server) failLocked(r *run, why string) {
	fmt.Fprintf(s.opt.Log, "tapedeck: play: %s\n", why)
	r.over, r.closed = true, true
	r.result = &capture.Result{StartFailure: why, Code: 126}
	close(r.queue)
	close(r.done)
}

// initializeFrame is the host's initialize request, as Agentty writes it.
func (s *server) initializeFrame(r *run) []byte {
	p := s.plugin
	type pluginInfo struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Version string `json:"version"`
		Dir     string `json:"dir"`
		DataDir string `json:"dataDir"`
	}
	params := struct {
		APIVersion int             `json:"apiVersion"`
		Agentty    any             `json:"agentty"`
		Plugin     pluginInfo      `json:"plugin"`
		Language   string          `json:"language"`
		Context    json.RawMessage `json:"context"`
	}{p.APIVersion, map[string]string{"version": hostVersion}, pluginInfo{p.ID, p.Name, p.Version, p.Dir, s.dataDir}, "en", s.hostCtx}
	b, _ := json.Marshal(params)
	id := r.nextID
	r.nextID++
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":%s}`, id, b)
}

// notification is a host notification, compact, members in the host's
// order. params is marshalled as given (a struct keeps its order).
func (s *server) notification(method string, params any) []byte {
	m, _ := json.Marshal(method)
	p, err := json.Marshal(params)
	if err != nil {
		p = []byte("{}")
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%s,"params":%s}`, m, p)
}

// sendLocked writes a host frame to the plugin: it is the host's frame of
// the run, and goes to the writer.
func (s *server) sendLocked(r *run, raw []byte) error {
	if r.closed {
		return fmt.Errorf("the plugin's stdin is closed: restart it")
	}
	select {
	case r.queue <- raw:
	default:
		return fmt.Errorf("the plugin has not read its last %d host frames", queueMax)
	}
	s.hostFrameLocked(r, raw)
	return nil
}

// closeLocked closes the plugin's stdin, as the host does after shutdown.
func (s *server) closeLocked(r *run) {
	if r.closed {
		return
	}
	r.closed = true
	close(r.queue)
	s.addLocked(r, frame.Frame{Dir: frame.In, Event: frame.EventEOF})
}

// stopLocked stops the plugin the host's way: shutdown, stdin closed,
// then SIGTERM 1.5 s later and SIGKILL 1.5 s after that if it still runs.
func (s *server) stopLocked(r *run) {
	if r.over || r.stopped {
		return
	}
	r.stopped = true
	s.sendLocked(r, []byte(`{"jsonrpc":"2.0","method":"shutdown","params":{}}`))
	s.closeLocked(r)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			wait := termAfter
			if sig == syscall.SIGKILL {
				wait = killAfter
			}
			select {
			case <-r.done:
				return
			case <-time.After(wait):
				r.sigs <- sig
			}
		}
	}()
}

// addLocked adds a frame to the run's timeline (numbered, timed), checks
// it and tells the pages; it returns check's findings.
func (s *server) addLocked(r *run, f frame.Frame) []check.Finding {
	f.Seq = uint64(len(r.frames) + 1)
	f.At = int64(time.Since(r.start))
	r.frames = append(r.frames, f)
	i := len(r.frames) - 1
	entry, err := r.live.Entry(&r.frames[i])
	if err != nil {
		entry = json.RawMessage(`{}`)
	}
	r.entries = append(r.entries, entry)
	s.broadcastLocked(struct {
		T   string          `json:"t"`
		Run int             `json:"run"`
		F   json.RawMessage `json:"f"`
	}{"frame", r.n, entry})
	found := r.checker.Feed(&r.frames[i])
	s.findingsLocked(r, found, i)
	return found
}

func (s *server) findingsLocked(r *run, found []check.Finding, index int) {
	for _, f := range found {
		if !s.keepFindingLocked(r) {
			continue
		}
		d := findingData{Seq: f.Seq, Index: -1, Level: string(f.Level), Rule: f.Rule, Method: f.Method, Message: f.Message, Path: f.Path}
		if f.Seq > 0 && int(f.Seq) <= len(r.frames) {
			d.Index = int(f.Seq) - 1
		} else if index >= 0 && f.Seq == 0 {
			d.Index = -1
		}
		r.finds = append(r.finds, d)
		s.broadcastLocked(struct {
			T   string      `json:"t"`
			Run int         `json:"run"`
			X   findingData `json:"x"`
		}{"finding", r.n, d})
	}
}

// pluginSaid takes one line the plugin wrote (stdout or stderr): the
// host's view of it, and for a request the host's answer.
func (s *server) pluginSaid(r *run, dir frame.Dir, line window.Line) {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := s.takeLocked(r, dir, line)
	if dir != frame.Out {
		return
	}
	m := message.Parse(bytes.TrimSuffix(line.Raw, []byte("\r")))
	if c, ok := host.CauseOf(&m); ok {
		r.have[c]++
		select {
		case r.said <- struct{}{}:
		default:
		}
	}
	if m.Kind == message.Request {
		s.answerLocked(r, &m, found)
	}
}

// answerLocked answers the plugin's request m as the host would: refused
// when check says the host refuses it, else with the page's answer for
// its method (context/get: the context; storage: the playground's).
func (s *server) answerLocked(r *run, m *message.Message, found []check.Finding) {
	id := append(json.RawMessage(nil), m.ID...)
	if e := refusal(found, s.rules); e != nil {
		s.sendLocked(r, answerFrame(id, Answer{Error: e}))
		return
	}
	var a Answer
	switch res, fail, isStorage := s.storage.answer(m); {
	case m.Method == "context/get" && !s.edited[m.Method]:
		a.Result = s.hostCtx
	case isStorage && !s.edited[m.Method]:
		a.Result, a.Error = res, fail
	case m.Method == "host/timer" && !s.edited[m.Method]:
		a.Result = fmt.Appendf(nil, `{"elapsedMs":%d}`, timerDelay(m).Milliseconds())
	default:
		raw, ok := s.answers[m.Method]
		if !ok {
			a.Error = json.RawMessage(`{"code":-32601,"message":"unknown method"}`)
			break
		}
		a, _ = parseAnswer(raw)
	}
	reply := answerFrame(id, a)
	if m.Method == "host/timer" && len(a.Error) == 0 {
		d := timerDelay(m)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			select {
			case <-time.After(d):
				s.mu.Lock()
				if !r.over {
					s.sendLocked(r, reply)
				}
				s.mu.Unlock()
			case <-r.done:
			}
		}()
		return
	}
	s.sendLocked(r, reply)
}

// exited finishes a run whose plugin has exited: its exit in the
// timeline, check's last findings, the pages told.
func (s *server) exited(r *run, res *capture.Result, err error) {
	s.mu.Lock()
	if err != nil {
		res = &capture.Result{StartFailure: err.Error(), Code: 2}
	}
	r.result = res
	ev := frame.Frame{Event: frame.EventExit}
	switch {
	case res.StartFailure != "":
		fmt.Fprintf(s.opt.Log, "tapedeck: play: %s\n", res.StartFailure)
		s.addLocked(r, frame.Frame{Dir: frame.Err, Raw: []byte("tapedeck: " + res.StartFailure)})
	case res.Signal != "":
		ev.SetEnd(res.Signal, nil)
	default:
		code := res.Code
		ev.SetEnd("", &code)
	}
	s.addLocked(r, ev)
	s.findingsLocked(r, r.checker.Finish(), -1)
	if note := s.unkeptNoteLocked(r); note != "" {
		fmt.Fprintf(s.opt.Log, "tapedeck: play: %s\n", note)
	}
	if !r.closed {
		r.closed = true
		close(r.queue)
	}
	r.over = true
	close(r.done)
	s.broadcastLocked(s.stateLocked(r))
	s.mu.Unlock()
	r.wg.Wait()
}

// stateLocked says how run r stands.
func (s *server) stateLocked(r *run) any {
	st := struct {
		T        string `json:"t"`
		Run      int    `json:"run"`
		Running  bool   `json:"running"`
		Session  string `json:"session,omitempty"`
		Exit     string `json:"exit,omitempty"`
		Recorded bool   `json:"recorded"`
		// Stopped: the host stopped it (shutdown); an exit without it is
		// the plugin's own, which the page shows as a crash.
		Stopped bool `json:"stopped"`
	}{T: "state", Run: r.n, Running: !r.over, Stopped: r.stopped}
	if res := r.result; res != nil {
		st.Session, st.Recorded = res.Session, res.Recorded
		switch {
		case res.StartFailure != "":
			st.Exit = res.StartFailure
		case res.Signal != "":
			st.Exit = "killed by " + res.Signal
		default:
			st.Exit = "exit " + strconv.Itoa(res.Code)
		}
	}
	return st
}

// resetLocked is everything a page draws from: the plugin, the host's
// side, the current run's frames and findings.
func (s *server) resetLocked() any {
	r := s.cur
	type reset struct {
		T        string                     `json:"t"`
		Plugin   *Plugin                    `json:"plugin"`
		Command  []string                   `json:"command"`
		Tapes    string                     `json:"tapes"`
		Context  json.RawMessage            `json:"context"`
		Answers  map[string]json.RawMessage `json:"answers"`
		Edited   map[string]bool            `json:"edited"`
		Run      int                        `json:"run"`
		State    any                        `json:"state"`
		Frames   []json.RawMessage          `json:"frames"`
		Findings []findingData              `json:"findings"`
		Kept     []json.RawMessage          `json:"kept"`
		Watch    bool                       `json:"watch"`
		Watched  json.RawMessage            `json:"watched,omitempty"`
	}
	out := reset{T: "reset", Plugin: s.plugin, Command: s.command, Tapes: s.tapes, Context: s.hostCtx,
		Answers: s.answers, Edited: s.edited, Frames: []json.RawMessage{}, Findings: []findingData{},
		Kept: s.kept, Watch: s.opt.Watch, Watched: s.watched}
	if out.Kept == nil {
		out.Kept = []json.RawMessage{}
	}
	if r != nil {
		out.Run, out.State = r.n, s.stateLocked(r)
		out.Frames = append(out.Frames, r.entries...)
		out.Findings = append(out.Findings, r.finds...)
	}
	return out
}
