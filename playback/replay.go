package playback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/fingerprint"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Options say how to replay a recording and compare. The zero value is
// the command line's defaults: the recorded command in the recorded folder,
// each wait bounded by 10 × its recorded time (at least 2 s, at most 30 s),
// 3 minutes in all, the clock as recorded.
type Options struct {
	// Command replaces the recorded one; it runs in Dir, or the current
	// folder.
	Command []string
	// Dir runs the plugin there instead of its recorded working directory.
	Dir string
	// Env is the environment the plugin starts from (nil: ours); the
	// variables recorded with the session (those its host profile holds
	// to belong to it, and those record --env kept) are added to it.
	Env []string
	// SetEnv are NAME=VALUE settings over the recording's variables
	// (replay --env).
	SetEnv []string

	// Ignore are METHOD:PATH rules left out when comparing, beside those
	// of the tapedeck.json next to a tape.
	Ignore []string
	// Strict compares bytes: member order and white space matter.
	Strict bool
	// CompareStderr compares the plugin's stderr lines too.
	CompareStderr bool

	// StepTimeout caps the wait for the frames the plugin said before a
	// host frame (default 30 s); Timeout bounds the whole replay (default
	// 3 min); Quiet, when set, also waits for that much silence before
	// each host frame.
	StepTimeout, Timeout, Quiet time.Duration
	// WaitFactor and MinWait bound each wait by the recording: at most
	// max(MinWait, WaitFactor × the recorded wait), capped by StepTimeout
	// (defaults 10 and 2 s; see host.Options).
	WaitFactor float64
	MinWait    time.Duration
	// Waiting, when set, is told once of each wait that lasts more than
	// 2 s: what it waits for and how long it has waited (see
	// host.Options). It is called from the goroutine that called Replay.
	Waiting func(what string, waited time.Duration)
	// Pace scales the recorded gaps: 0 as soon as possible, 1 real time, N
	// divided by N; MaxGap clamps each (default 2 s).
	Pace   float64
	MaxGap time.Duration

	// PinClock overrides the recording's clock: nil pins it as recorded;
	// false runs on the real clock; true on a recording without a pin pins
	// the clock to its recorded start.
	PinClock *bool
	// FreshDirs name variables that each get a folder of the run's own
	// (removed after it): the data folder of a plugin that keeps state,
	// so that runs share nothing and none writes the real one. It starts
	// as a copy of the folder the tape carries for the variable (its
	// NAME.data/env/VAR, which tapedeck play's Keep it writes), else
	// empty; the variables the tape's data carries get one without being
	// named. A note says when the plugin did not use one. The data folder
	// the host named (Agentty's dataDir) is always the run's own: see
	// package datafolder.
	FreshDirs []string

	// RedactKey is this machine's redaction key; nil reads the key file of
	// the store in StoreDir, if any. A replay never makes a key.
	RedactKey []byte
	StoreDir  string

	// AlwaysDrift takes the drift of the plugin's surroundings even when
	// the replay is the same (a drift is taken for one that differs).
	AlwaysDrift bool
	// OnStart, when set, is told what is about to run.
	OnStart func(Start)

	// Filters replace noise inside string values with placeholders on
	// both sides before comparing, before those of the tapedeck.json next
	// to a tape (see Filter).
	Filters []Filter
}

// Start is what a replay is about to run.
type Start struct {
	Recording *Recording
	Command   []string
	Dir       string
	Added     []string     // the recording's variables added to the environment
	Clock     *frame.Clock // the pinned clock, or nil
}

// Outcome is one replay (or one comparison of two recordings), compared.
type Outcome struct {
	Recording *Recording
	// Against is what Recording was compared with when nothing ran
	// (Compare); Run is nil then.
	Against *Recording
	Run     *host.Result
	Diff    diff.Result
	// Notes say what tapedeck did that the recording did not say (a
	// program found elsewhere, variables not applied, filters applied);
	// Run.Notes what the replay did not do as recorded.
	Notes []note.Note
	// ConfigPath is the tapedeck.json the comparison read ("" for a
	// session).
	ConfigPath string
	// DiffOptions is how it was compared.
	DiffOptions diff.Options
	// Err says why it could not run; the rest is empty then.
	Err error
	// Drift is what changed in the plugin's surroundings since the
	// recording, taken when the replay differs (or with AlwaysDrift).
	Drift *fingerprint.Drift
	// Fingerprint is the replay's own, taken with the drift: an update
	// (WritePending, StoreLive) stores it.
	Fingerprint *frame.Fingerprint

	// filters are the filters it compared under (nil: none).
	filters *filter.Set
	// takeFingerprint says how to fingerprint the replay's run, for an
	// update of a replay whose drift was not taken (see LiveFingerprint).
	takeFingerprint fingerprint.Options
	// prepared is what it was replayed under, for further runs (Again).
	prepared *prepared
	// moved are the run's folders, by the recorded paths they stand for:
	// what the plugin says of them is compared as the recorded ones.
	moved map[string]string
	// streamed is set for a comparison of streams (CompareStreams), whose
	// recordings hold no frames; tail is the last lines of B's stderr.
	streamed bool
	tail     []frame.Frame
}

// Same reports whether it ran and nothing differs: a replay that timed out
// or whose plugin said more on stdout than the recording can explain (see
// host.Unkept) is not the same.
func (o *Outcome) Same() bool {
	return o.Err == nil && o.Diff.Same() && (o.Run == nil || !o.Run.TimedOut && !o.Run.UnkeptOut.Any())
}

// Live is what the plugin said this time: the replay's timeline, or for a
// comparison the other recording's frames.
func (o *Outcome) Live() []frame.Frame {
	switch {
	case o.Run != nil:
		return o.Run.Live
	case o.Against != nil:
		return o.Against.Frames
	}
	return nil
}

// Again returns what replays o's recording once more on each call, as o
// was replayed: the same command, the tapedeck.json as o read it, the same
// redaction key (so that a redacted value reads the same in every run),
// under opt (nil: the options o ran under), which must say what o's say
// but for the callbacks (OnStart, Waiting). A call does not compare: its
// Outcome holds the live run (Run) or why it could not run (Err). The
// recording is read once for every call, and calls may run at once (each
// on a goroutine of its own; the callbacks are then called from those).
// Again is nil for an Outcome that was not replayed (Compare's) or could
// not start.
func (o *Outcome) Again(opt *Options) func(context.Context) *Outcome {
	if o.prepared == nil {
		return nil
	}
	p := o.prepared.with(opt)
	var once sync.Once
	return func(ctx context.Context) *Outcome {
		once.Do(p.keepPlan)
		return p.run(ctx, false)
	}
}

// LiveFingerprint is the replay's own fingerprint (Fingerprint), taken now
// when the replay did not take it (it was the same, and AlwaysDrift was
// not set): an update of the recording stores it. nil when the recording
// has none (it was recorded with --no-fingerprint) or nothing ran.
func (o *Outcome) LiveFingerprint() *frame.Fingerprint {
	if o.Fingerprint == nil && o.Run != nil && o.Recording.Meta.Fingerprint != nil && len(o.takeFingerprint.Command) > 0 {
		o.Fingerprint, _ = fingerprint.Take(context.Background(), o.takeFingerprint)
	}
	return o.Fingerprint
}

// Replay plays rec's host side to its plugin and compares what the plugin
// says with the recording. opt nil is the defaults. An Outcome is always
// returned; its Err says why it could not run.
func Replay(ctx context.Context, rec *Recording, opt *Options) *Outcome {
	p, failed := prepare(rec, opt)
	if failed != nil {
		return failed
	}
	return p.run(ctx, true)
}

// prepared is what every replay of one recording under one Options
// shares, worked out once: the tapedeck.json's rules and filters, the
// command, the live redaction and, for further runs, the plan.
type prepared struct {
	rec     *Recording
	opt     *Options
	cfgPath string
	rules   []jsonpath.Rule
	filters *filter.Set
	cmd     []string
	dir     string
	notes   []note.Note
	redact  liveRedaction
	// plan, when set, is the recording read once for every run (see
	// keepPlan); nil: each run reads it while its plugin starts.
	plan *host.Plan
	// profile is the recording's host profile: its grace periods, its
	// panels.
	profile profile.Profile
	// reading is what the engine is told beyond the recording: the carry
	// rules of the profile and of tapedeck.json, the profile's chatter.
	reading host.Reading
	// timing is what the comparison does not hold the plugin to (the
	// profile's), and keepEnv the variables tapedeck.json lists.
	timing  timing
	keepEnv []string
	// folders are the folders each run is given of its own; foldersErr
	// says why there are none for the options of a further run (with).
	folders    *folders
	foldersErr error
}

// prepare works out what replays of rec under opt (nil: the defaults)
// share. When it cannot, the Outcome says why.
func prepare(rec *Recording, opt *Options) (*prepared, *Outcome) {
	if opt == nil {
		opt = &Options{}
	}
	p := &prepared{rec: rec, opt: opt, profile: profile.Of(rec.Meta)}
	failed := func(err error) (*prepared, *Outcome) {
		return nil, &Outcome{Recording: rec, ConfigPath: p.cfgPath, Notes: p.notes, Err: err}
	}
	cfgPath, cfg, err := configBeside(rec)
	p.cfgPath = cfgPath
	if err != nil {
		return failed(err)
	}
	if p.rules, err = ignoreRules(opt.Ignore, cfg, cfgPath); err != nil {
		return failed(err)
	}
	if p.filters, err = filter.Compile(opt.Filters, cfg, cfgPath); err != nil {
		return failed(err)
	}
	carry, err := filter.CarryRules(cfg.Carry, cfgPath)
	if err != nil {
		return failed(err)
	}
	more, err := filter.CarryRules(p.profile.Carried(), "the "+p.profile.Name()+" profile")
	if err != nil {
		return failed(err)
	}
	if p.timing, err = timingOf(p.profile); err != nil {
		return failed(err)
	}
	if p.folders, err = foldersOf(rec, p.profile, opt); err != nil {
		return failed(err)
	}
	p.reading = host.Reading{Carry: ignoreFunc(append(carry, more...)), Chatter: p.timing.chatterFunc(), Moved: p.folders.recorded}
	p.keepEnv = cfg.Env
	if p.cmd, p.dir, p.notes, err = command(rec, opt.Command, opt.Dir); err != nil {
		return failed(err)
	}
	if p.redact, err = redactionFor(rec.Meta.Redaction, opt.RedactKey, opt.StoreDir); err != nil {
		return failed(fmt.Errorf("%s: %w", rec.Name, err))
	}
	return p, nil
}

// with is p under opt (nil: the defaults), which must say the same as
// p's own but for its callbacks: its own copy, so that keepPlan leaves p
// alone.
func (p *prepared) with(opt *Options) *prepared {
	q := *p
	if opt != nil {
		q.opt = opt
		// The folders of its runs as opt names them (its FreshDirs).
		q.folders, q.foldersErr = foldersOf(p.rec, p.profile, opt)
		if q.foldersErr == nil {
			q.reading.Moved = q.folders.recorded
		}
	}
	return &q
}

// keepPlan reads the recording once for all of p's further runs.
func (p *prepared) keepPlan() { p.plan = host.NewPlan(p.rec.Frames, p.reading) }

// run replays the recording once and compares. With compare false it
// stops once the live run is redacted: no comparison with the recording
// (Diff and DiffOptions stay empty) and no drift taken. The further runs
// of replay --runs (Again) need only their live run.
func (p *prepared) run(ctx context.Context, compare bool) *Outcome {
	rec, opt := p.rec, p.opt
	o := &Outcome{Recording: rec, ConfigPath: p.cfgPath, Notes: slices.Clone(p.notes), prepared: p}
	if p.foldersErr != nil {
		o.Err = p.foldersErr
		return o
	}
	re, err := prepareEnv(rec, opt, p.keepEnv, p.folders)
	if err != nil {
		o.Err = err
		return o
	}
	defer re.Close()
	env, added, clk := re.env, re.added, re.clock
	o.Notes = append(o.Notes, re.notes...)
	if opt.OnStart != nil {
		opt.OnStart(Start{Recording: rec, Command: p.cmd, Dir: p.dir, Added: added, Clock: clk})
	}
	red, err := p.redact.redactor()
	if err != nil {
		o.Err = fmt.Errorf("%s: %w", rec.Name, err)
		return o
	}
	ro := host.Options{
		Command:     p.cmd,
		Dir:         p.dir,
		Env:         env,
		StepTimeout: opt.StepTimeout,
		WaitFactor:  opt.WaitFactor,
		MinWait:     opt.MinWait,
		Waiting:     opt.Waiting,
		Timeout:     opt.Timeout,
		Quiet:       opt.Quiet,
		Pace:        opt.Pace,
		MaxGap:      opt.MaxGap,
		Delivering:  re.delivering(),
		Grace:       p.profile.Grace(),
		Reading:     p.reading,
		Moved:       re.folders.moved,
	}
	o.moved = re.folders.moved
	re.folders.startWatch()
	ro.Framing, _ = wire.Parse(rec.Meta.Framing)
	if p.plan != nil {
		o.Run, err = p.plan.Run(ctx, ro)
	} else {
		o.Run, err = host.Run(ctx, rec.Frames, ro)
	}
	if err != nil {
		o.Err = err
		return o
	}
	o.Notes = append(o.Notes, re.folders.unused()...)
	if re.pin != nil && !re.pin.Loaded() {
		o.Notes = append(o.Notes, note.Text("the plugin never loaded the pinned clock (only Node and Python plugins can be pinned, and a launcher that sets its own NODE_OPTIONS or PYTHONPATH drops the pin): this replay ran with the real clock"))
	}
	if red != nil {
		redactLive(red, o.Run.Live)
	}
	if !compare {
		return o
	}
	pairs := o.Run.Pairs
	o.DiffOptions = diff.Options{
		Strict:        opt.Strict,
		CompareStderr: opt.CompareStderr,
		Ignore:        ignoreFunc(p.rules),
		Mask:          p.redact.mask,
		Pair:          func(seq uint64) (uint64, bool) { r, ok := pairs[seq]; return r, ok },
		Panel:         p.profile.PanelMethod(),
	}
	live, moved := o.comparedMoved()
	o.compareFiltered(p.filters, rec.Frames, live)
	o.Diff, o.Notes = p.timing.relax(o.Diff, rec.Frames, live, o.Notes)
	if n := p.timing.arrangedNote(moved); n != "" {
		o.Notes = append(o.Notes, note.Text(n))
	}
	if n := carriedNote(o.Run.Carried); n != "" {
		o.Notes = append(o.Notes, note.Text(n))
	}
	o.takeFingerprint = fingerprint.Options{Command: p.cmd, Dir: p.dir, Env: env, DataDirs: re.folders.made}
	if rec.Meta.Fingerprint != nil && (!o.Same() || opt.AlwaysDrift) {
		live, err := fingerprint.Take(ctx, o.takeFingerprint)
		if err == nil {
			o.Drift, o.Fingerprint = fingerprint.Compare(rec.Meta.Fingerprint, live), live
		}
	}
	return o
}

// CompareOptions say how Compare compares.
type CompareOptions struct {
	Ignore        []string // METHOD:PATH rules, beside A's tapedeck.json
	Strict        bool
	CompareStderr bool
	Names         [2]string // what the two are called in the differences; default A and B
	Filters       []Filter  // beside those of A's tapedeck.json
}

// Compare compares what the plugin said in b with what it said in a, with
// the rules of a replay, without running anything.
func Compare(a, b *Recording, opt *CompareOptions) (*Outcome, error) {
	o, filters, err := compareSetup(a, b, opt)
	if err != nil {
		return nil, err
	}
	o.compareFiltered(filters, a.Frames, b.Frames)
	return o, nil
}

// compareSetup is the Outcome of comparing a with b under opt, before it
// compares: the options and tapedeck.json read, and the filters they name.
func compareSetup(a, b *Recording, opt *CompareOptions) (*Outcome, *filter.Set, error) {
	if opt == nil {
		opt = &CompareOptions{}
	}
	o := &Outcome{Recording: a, Against: b}
	cfgPath, cfg, err := configBeside(a)
	o.ConfigPath = cfgPath
	if err != nil {
		return nil, nil, err
	}
	rules, err := ignoreRules(opt.Ignore, cfg, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	filters, err := filter.Compile(opt.Filters, cfg, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	o.DiffOptions = diff.Options{
		Strict:        opt.Strict,
		CompareStderr: opt.CompareStderr,
		Ignore:        ignoreFunc(rules),
		Names:         opt.Names,
		Panel:         profile.Of(a.Meta).PanelMethod(),
	}
	if o.DiffOptions.Names == [2]string{} {
		o.DiffOptions.Names = [2]string{"A", "B"}
	}
	return o, filters, nil
}

// command works out what to run: argv in the current directory (or cwd),
// else the recorded command in the recorded working directory; a relative
// recorded directory is taken from the tape's folder, and an absolute
// program that is missing here is looked up by name.
func command(rec *Recording, argv []string, cwd string) (cmd []string, dir string, notes []note.Note, err error) {
	if len(argv) > 0 {
		dir = cwd
		if dir == "" {
			dir, _ = os.Getwd()
		}
		return argv, dir, nil, nil
	}
	if len(rec.Meta.Command) == 0 {
		return nil, "", nil, fmt.Errorf("%s has no recorded command: give one after --", rec.Name)
	}
	cmd = append([]string(nil), rec.Meta.Command...)
	dir = rec.Meta.Cwd
	if cwd != "" {
		dir = cwd
	} else if dir != "" && !filepath.IsAbs(dir) && rec.TapePath != "" {
		dir = filepath.Join(filepath.Dir(rec.TapePath), dir)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, "", nil, fmt.Errorf("the recorded working directory %s does not exist here: give --cwd DIR (replay and shrink also take a command after --)", dir)
		}
	}
	if filepath.IsAbs(cmd[0]) {
		if _, err := os.Stat(cmd[0]); errors.Is(err, os.ErrNotExist) {
			if p, err := exec.LookPath(filepath.Base(cmd[0])); err == nil {
				notes = append(notes, note.Textf("%s is not here; using %s", cmd[0], p))
				cmd[0] = p
			}
		}
	}
	return cmd, dir, notes, nil
}

// environment is the plugin's environment: base (nil: ours) plus the
// recorded variables (those a host profile holds to belong to a session,
// and those record --env kept). A tape is a file anyone can write: a name
// that is not a variable's, one that changes how programs are loaded
// (unsafeEnv), or a value holding NUL is never applied, and ignored spells
// each, quoted. A value redacted (it holds a redaction placeholder) is not
// the recorded one: it is not applied either, and redacted names it.
func environment(rec *Recording, base []string) (env, added, ignored, redacted []string) {
	env = base
	if env == nil {
		env = os.Environ()
	}
	keys := make([]string, 0, len(rec.Meta.Env))
	for k := range rec.Meta.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := rec.Meta.Env[k]
		switch {
		case !tapeEnvKey.MatchString(k) || unsafeEnv(k):
			ignored = append(ignored, spellKey(k))
		case strings.ContainsRune(v, 0):
			ignored = append(ignored, spellKey(k)+" to a value holding NUL")
		case redact.Mask(v) != v:
			redacted = append(redacted, k)
		default:
			added = append(added, k+"="+v)
		}
	}
	return append(env[:len(env):len(env)], added...), added, ignored, redacted
}

// clockFor is the clock a replay pins: the recording's, unless pin says
// otherwise (false: never; true on a recording without one: its recorded
// start, unseeded, so that only the clock is pinned and random numbers
// stay as random as they were when it was recorded).
func clockFor(meta *frame.Session, pin *bool) *frame.Clock {
	switch {
	case pin != nil && !*pin:
		return nil
	case meta.Clock != nil && !meta.Clock.Missed:
		return meta.Clock
	case pin != nil && *pin:
		return &frame.Clock{Origin: meta.Started, Unseeded: true}
	}
	return nil
}
