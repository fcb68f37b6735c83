package playback

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/clock"
	"github.com/tapedeck/tapedeck/internal/environ"
	"github.com/tapedeck/tapedeck/internal/note"
)

// tapeEnvKey is what a variable of a tape's environment must be named to
// be applied: a tape is a file anyone can write, and a name such as
// "X\nLD_PRELOAD" must never reach the plugin's environment. Names that
// change how programs are loaded or started are refused too (unsafeEnv).
var tapeEnvKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// unsafeEnv reports whether a variable changes what runs rather than what
// the plugin is told: the dynamic loader's, the interpreters' start-up
// hooks, the shell's, the search path, and tapedeck's own.
func unsafeEnv(name string) bool {
	for _, p := range []string{"LD_", "DYLD_", "TAPEDECK_", "NODE_", "PYTHON", "PERL5", "RUBY", "GCONV_", "MALLOC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "PATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "PS4", "HOME", "TMPDIR":
		return true
	}
	return false
}

// envName is what a --fresh-dir variable must be named.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// runEnv is the environment one replay runs its plugin in, and what to
// undo once it is over: the pinned clock's preload, the run's folders.
type runEnv struct {
	env     []string
	added   []string // the recording's variables added
	notes   []note.Note
	clock   *frame.Clock
	folders *runFolders // the run's own folders (see datafolders.go)
	pin     *clock.Preload
}

// prepareEnv makes the environment of a replay of rec: opt.Env (nil:
// ours), the recording's variables (see environment; those it may not
// set are reported in notes, one line each, and skipped), opt.SetEnv over
// them, the run's own folders (fs: the data folder, and a folder for each
// variable named for a fresh start, copies of what the recording started
// from; see datafolders.go), and the pinned clock. A variable that keep (tapedeck.json's "env") names, or
// that the recording holds redacted, and that the replay could not take
// from the recording is said in a note: which, and whether the caller's
// value or none stood in. Close undoes it.
func prepareEnv(rec *Recording, opt *Options, keep []string, fs *folders) (*runEnv, error) {
	e := &runEnv{}
	var ignored, redacted []string
	e.env, e.added, ignored, redacted = environment(rec, opt.Env)
	for _, k := range ignored {
		e.notes = append(e.notes, note.Textf("the recording's environment sets %s: not applied (a replay applies only variables named [A-Za-z_][A-Za-z0-9_]*, without NUL, that do not change how programs are loaded)", k))
	}
	set := map[string]bool{}
	for _, kv := range opt.SetEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			e.Close()
			return nil, fmt.Errorf("--env %q: want NAME=VALUE", kv)
		}
		set[k] = true
		e.env = environ.Set(e.env, k, v)
		e.added = append(e.added, kv)
	}
	without := func(name, why string) {
		if set[name] {
			return
		}
		stood := "without it"
		if v, ok := environ.Lookup(e.env, name); ok {
			stood = fmt.Sprintf("with the caller's (%d bytes)", len(v))
		}
		e.notes = append(e.notes, note.Textf("ran without the recorded %s (%s): it ran %s; give it with --env %s=VALUE", name, why, stood, name))
	}
	for _, k := range redacted {
		without(k, "the recording holds it redacted")
	}
	for _, k := range keep {
		if _, ok := rec.Meta.Env[k]; !ok {
			without(k, "tapedeck.json's env lists it, but the recording has none: record it again where tapedeck.json is, or with --env "+k)
		}
	}
	rf, env, err := fs.make(e.env)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.folders, e.env = rf, env
	e.notes = append(e.notes, rf.notes...)
	e.clock = clockFor(rec.Meta, opt.PinClock)
	env, pin, err := clock.Pin(e.env, e.clock)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("%s: %w", rec.Name, err)
	}
	e.env, e.pin = env, pin
	return e, nil
}

// delivering is the replay engine's hook: told the recorded time of each
// host line just before it is written to the plugin, it publishes that
// time to the pinned clock. nil when the clock is not pinned.
func (e *runEnv) delivering() func(at int64) {
	if e.pin == nil {
		return nil
	}
	origin := e.clock.Origin
	return func(at int64) { _ = e.pin.Publish(origin.Add(time.Duration(at))) }
}

// Close removes the preload and the run's folders.
func (e *runEnv) Close() {
	if e.pin != nil {
		e.pin.Close()
	}
	if e.folders != nil {
		e.folders.Close()
	}
}

// spellKey quotes a tape's variable name for a note, at most 64 bytes of it.
func spellKey(k string) string {
	if len(k) > 64 {
		return fmt.Sprintf("%q… (%d bytes)", k[:64], len(k))
	}
	return fmt.Sprintf("%q", k)
}
