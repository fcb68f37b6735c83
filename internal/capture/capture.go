// Package capture owns the capture use case: one run of a plugin
// through the relay with everything it says and hears recorded. Run starts
// the plugin through proxy with the recorder as its sink (or nothing, in
// relay-only mode), takes the environment fingerprint after the plugin's
// first output, off the relay's path, optionally pins its clock, checks the
// traffic live (lint), plays the host from a script instead of stdin and
// stdout, and when the plugin is gone finishes the session: the end record,
// the ingest into the store now or by the next tapedeck command, and the
// exit status the shim exits with. Front-ends (the record command, tests,
// a Go program) fill Options and call Run; they print and exit, nothing
// more.
package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/clock"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recorder"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// DefaultMaxLine is how many bytes of a line are stored when
// Options.MaxLine is zero; longer lines pass whole and are stored cut.
const DefaultMaxLine = recorder.DefaultMaxLine

// ingestWait bounds how long a finished shim waits for the database; past
// it the spool stays and the next tapedeck command ingests it.
const ingestWait = time.Second

// ingestInlineMax is the largest spool a finishing shim ingests itself
// (about a quarter of a second of work); larger ones wait for the next
// command.
const ingestInlineMax = 32 << 20

// Options says what to run and how to record it. A nil *Options is not
// allowed (Command is needed); every other zero field means the default.
type Options struct {
	// Command is the plugin's argv; Command[0] is looked up in PATH when it
	// has no slash. Required.
	Command []string
	// Dir is the plugin's working directory, recorded as the session's cwd;
	// "" means the current one.
	Dir string
	// Env is the plugin's environment; nil means ours. The variables a
	// host profile holds to belong to a session (profile.SessionEnv),
	// and those KeepEnv names, are stored with the session.
	Env     []string
	KeepEnv []string
	// Profile names the session's host profile ("": found from its first
	// host request when it is stored; see package profile). Framing is how
	// stdin and stdout are framed ("": found from the first bytes either
	// carries; "lines" or "headers" to say it).
	Profile string
	Framing string

	// Name and Tags are stored with the session.
	Name string
	Tags map[string]string
	// StoreDir is the store folder the session is recorded into (made when
	// missing). Like store.Open, a relative path is taken from the current
	// directory.
	StoreDir string
	// NoRecord runs the plugin through the relay only: no store is opened,
	// no spool is made, nothing is recorded.
	NoRecord bool
	// MaxLine is how many bytes of a line are stored (zero or less:
	// DefaultMaxLine).
	MaxLine int
	// Redact keeps values out of the store (what is relayed is never
	// changed); its zero value redacts nothing. RedactKey is the
	// placeholder key; nil means the store's own (made on first use). When
	// the key cannot be had, nothing is recorded, so that nothing is kept
	// unredacted.
	Redact    redact.Config
	RedactKey []byte
	// Lint, when set, is the file live findings are appended to (JSON
	// lines); they are stored with the session too.
	Lint string
	// Host, when set, plays the host from a script instead of Stdin and
	// Stdout; StepTimeout bounds each wait of a script line (zero: 30 s).
	Host        *HostScript
	StepTimeout time.Duration
	// PinClock starts a Node or Python plugin with its wall clock pinned to
	// the session's start plus the real elapsed time and its random numbers
	// seeded.
	PinClock bool
	// PinChildren pins the plugin's own child processes too (without it,
	// only the plugin's process is pinned).
	PinChildren bool
	// NoFingerprint stores no environment fingerprint.
	NoFingerprint bool

	// Stdin is the host's side of the plugin's stdin (nil: the null
	// device); Stdout and Stderr get the plugin's stdout and stderr byte
	// for byte (nil: discarded). Log gets tapedeck's own warnings, one
	// line each, starting "tapedeck: " (nil: Stderr).
	Stdin  *os.File
	Stdout io.Writer
	Stderr io.Writer
	Log    io.Writer
	// Signals are passed on to the plugin. Nil means Run relays the
	// SIGTERM, SIGINT and SIGHUP this process gets (signal.Notify, stopped
	// before Run returns). Either way Run catches SIGPIPE and SIGXFSZ while
	// it runs (caught, not ignored, which the plugin would inherit), so that
	// a closed stdout or a file size limit is an error, not the end of the
	// process.
	Signals <-chan os.Signal
	// Group runs the plugin in a process group of its own and ends what it
	// leaves behind once it has exited (relay.Config.Group): for a
	// front-end that is the host itself (play), not for the shim, whose
	// host ends the plugin's processes. Started, when set, is told the
	// plugin's pid once it has started.
	Group   bool
	Started func(pid int)
	// Version is the tapedeck version stored in the session header ("":
	// the main module's version, or "dev").
	Version string
}

// Result is how a run ended.
type Result struct {
	// Code is the exit status for the shim: the plugin's exit code,
	// 128+signal when a signal killed it, 127 when the command was not
	// found, 126 when it could not be started otherwise.
	Code int
	// Signal names the signal that killed the plugin ("SIGTERM"), or "".
	Signal string
	// StartFailure is the one line saying why the plugin could not start
	// ("x: command not found"); "" when it ran.
	StartFailure string
	// Session is the session's id (given even when nothing was recorded:
	// see Recorded).
	Session string
	// Recorded reports that the session was recorded: it is in the store,
	// or its spool waits there for the next tapedeck command to ingest it.
	Recorded bool
}

// Run runs the plugin of opt until it has exited and its output is
// drained, recording the session, and returns how it ended. A plugin that
// cannot start and a recording that fails are results, not errors: the
// plugin runs whatever happens to the recording, and what went wrong is
// said on opt.Log. The error is non-nil only for options that cannot be
// run (no command). Cancelling ctx kills the plugin.
//
// Run owns every goroutine it starts (the relay's, the fingerprint's, the
// host script's, the signal forwarder's) and has ended them when it
// returns, except the relay's read of a stdin that cannot be interrupted
// (see relay.Run).
func Run(ctx context.Context, opt *Options) (*Result, error) {
	if opt == nil || len(opt.Command) == 0 {
		return nil, errors.New("recording: no command to run")
	}
	s := newSession(opt)
	if s.preload != nil {
		defer s.preload.Close()
	}
	sigs, stop := watchSignals(opt.Signals)
	defer stop()
	if opt.NoRecord {
		res, err := s.relay(ctx, nil, sigs)
		return s.result(res, err), nil
	}
	r := s.startRecording(ctx)
	res, err := s.relay(ctx, r.sink(), sigs)
	out := s.result(res, err)
	out.Recorded = r.finish(s.end(out))
	return out, nil
}

// session is one Run: the options with their defaults, and the header.
type session struct {
	opt     Options
	log     io.Writer
	meta    *frame.Session
	env     []string       // the plugin's environment (nil: ours)
	preload *clock.Preload // the pinned clock's, or nil
	// framing is how stdin and stdout are framed, when detect is false:
	// the framing the options or the profile name.
	framing wire.Framing
	detect  bool
}

func newSession(opt *Options) *session {
	s := &session{opt: *opt, env: opt.Env}
	o := &s.opt
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	s.log = o.Log
	if s.log == nil {
		s.log = o.Stderr
	}
	if o.Version == "" {
		o.Version = version()
	}
	cwd := o.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	} else if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	started := time.Now()
	s.meta = &frame.Session{
		ID:       frame.NewID(started),
		Name:     o.Name,
		Command:  slices.Clone(o.Command),
		Cwd:      cwd,
		Env:      sessionEnv(o.Env, o.KeepEnv),
		Profile:  o.Profile,
		Started:  started,
		Status:   frame.StatusRecording,
		Tapedeck: o.Version,
	}
	if len(o.Tags) > 0 {
		s.meta.Tags = maps.Clone(o.Tags)
	}
	s.framing, s.detect = framingOf(o)
	if !s.detect && s.framing == wire.Headers {
		s.meta.Framing = s.framing.String()
	}
	// The pinned clock changes only the plugin's environment, never a byte
	// relayed.
	if o.PinClock {
		pin := clock.New(started)
		pin.Children = o.PinChildren
		env, preload, err := clock.Pin(o.Env, &pin)
		if err != nil {
			fmt.Fprintf(s.log, "tapedeck: --pin-clock: %v; the plugin runs with the real clock\n", err)
		} else {
			s.env, s.preload, s.meta.Clock = env, preload, &pin
		}
	}
	return s
}

// relay runs the plugin through the relay with sink (nil: nothing is
// recorded), with the host script on its host side when there is one.
func (s *session) relay(ctx context.Context, sink relay.Sink, sigs chan os.Signal) (relay.Result, error) {
	cfg := relay.Config{
		Command: s.opt.Command,
		Dir:     s.opt.Dir,
		Env:     s.env,
		Stdin:   s.opt.Stdin,
		Stdout:  s.opt.Stdout,
		Stderr:  s.opt.Stderr,
		Sink:    pinnedSink(sink, s.preload, s.meta.Started),
		Signals: sigs,
		Framing: s.framing,
		Detect:  s.detect,
		Group:   s.opt.Group,
		Started: s.opt.Started,
	}
	if s.opt.Host != nil {
		return s.playHost(ctx, cfg, sigs)
	}
	return relay.Run(ctx, cfg)
}

// result is how the relay's run ended, as the shim exits.
func (s *session) result(res relay.Result, err error) *Result {
	out := &Result{Session: s.meta.ID}
	out.Code, out.StartFailure = startFailure(s.opt.Command[0], err)
	if err == nil {
		out.Code = res.Code
		if res.Signal != 0 {
			out.Signal = frame.SignalName(int(res.Signal))
		}
	}
	return out
}

// end is the session's end record for the run that ended as r.
func (s *session) end(r *Result) frame.End {
	end := frame.End{Ended: time.Now(), Status: frame.StatusComplete}
	if s.preload != nil && r.StartFailure == "" && !s.preload.Loaded() {
		end.ClockMissed = true
		fmt.Fprintln(s.log, "tapedeck: --pin-clock: the plugin never loaded the pinned clock (only Node and Python plugins can be pinned, and a launcher that sets its own NODE_OPTIONS or PYTHONPATH drops the pin): the session ran with the real clock, and says so")
	}
	if s.opt.Host != nil {
		end.Error = s.opt.Host.Failure() // a script line that waited in vain (host.go)
	}
	switch {
	case r.StartFailure != "":
		end.Status, end.Error = frame.StatusFailedToStart, r.StartFailure
	case r.Signal != "":
		end.Exit.Signal = r.Signal
	default:
		code := r.Code
		end.Exit.Code = &code
	}
	return end
}

// watchSignals returns the channel the relay takes signals for the plugin
// from, fed by user or, when user is nil, by signal.Notify, and the func
// that stops it all.
func watchSignals(user <-chan os.Signal) (chan os.Signal, func()) {
	sigs := make(chan os.Signal, 8)
	quiet := make(chan os.Signal, 1)
	signal.Notify(quiet, syscall.SIGPIPE, syscall.SIGXFSZ)
	if user == nil {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		return sigs, func() {
			signal.Stop(sigs)
			signal.Stop(quiet)
		}
	}
	done := make(chan struct{})
	over := make(chan struct{})
	go func() {
		defer close(over)
		for {
			select {
			case sig, ok := <-user:
				if !ok {
					return
				}
				select {
				case sigs <- sig:
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	return sigs, func() {
		close(done)
		<-over
		signal.Stop(quiet)
	}
}

// framingOf is how a run's stdin and stdout are framed: as its options
// say, else as its profile says when the options name one, else found
// from the first bytes (detect).
func framingOf(o *Options) (f wire.Framing, detect bool) {
	if o.Framing != "" {
		f, _ = wire.Parse(o.Framing) // checked by the front-end
		return f, false
	}
	if o.Profile != "" {
		if p, err := profile.Get(o.Profile); err == nil {
			return p.Framing(), false
		}
	}
	return wire.Lines, true
}

// startFailure maps relay.Run's error to the shim's exit code and its one
// line, as a shell does: 127 not found, 126 not executable (or another
// reason it could not start). A nil error gives 0 and "".
func startFailure(name string, err error) (code int, msg string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, relay.ErrNotFound):
		return 127, fmt.Sprintf("%s: command not found", name)
	case errors.Is(err, relay.ErrNotExecutable):
		return 126, fmt.Sprintf("%s: permission denied (not executable)", name)
	}
	return 126, err.Error()
}

// sessionEnv collects the variables of env (nil: ours) that belong to a
// session: those a host profile claims, and those keep names.
func sessionEnv(env, keep []string) map[string]string {
	if env == nil {
		env = os.Environ()
	}
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (profile.SessionEnv(k) || slices.Contains(keep, k)) {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// version is the main module's version, or "dev".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
