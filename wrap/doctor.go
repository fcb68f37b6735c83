package wrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// checkTimeout bounds each program Doctor runs (sh -n, tapedeck --version).
const checkTimeout = 5 * time.Second

// Check is one thing Doctor looked at.
type Check struct {
	What    string // "manifest", "launcher", "tapedeck", "store", "python3", …
	Detail  string // what it found: a path, a version, where a program lives
	Problem string // "" when all is well; else one line: what is wrong, what to do
}

// Report is what Doctor found about a wrapped plugin folder.
type Report struct {
	Dir string
	// HostArgv and Cwd are what the host spawns: the launcher, no
	// arguments, in the plugin folder.
	HostArgv []string
	Cwd      string
	// Launch is what the launcher runs; nil when it could not be read.
	Launch *Launch
	Checks []Check
}

// Problems lists the problems found, one line each; none means the host
// will start the plugin through tapedeck.
func (r *Report) Problems() []string {
	var ps []string
	for _, c := range r.Checks {
		if c.Problem != "" {
			ps = append(ps, c.What+" "+c.Detail+": "+c.Problem)
		}
	}
	return ps
}

// Doctor checks a wrapped plugin folder without starting the plugin: the
// manifest points at the launcher; the original manifest is kept; the
// launcher is an executable sh script that sh can parse and that names
// tapedeck, a store and a command; tapedeck runs (`--version`); the store
// can be written (a temporary file is created and removed); the
// interpreter and the plugin's main exist. Names without a slash
// (python3) are looked up with f (nil means NewFinder()) as the host would.
// It blocks for at most a few seconds per program it runs. The error is
// non-nil only when dir is not a wrapped plugin (ErrNotWrapped) or cannot
// be read; problems are in the report.
func Doctor(ctx context.Context, dir string, f *Finder) (*Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("doctor %s: %w", dir, err)
	}
	if f == nil {
		f = NewFinder()
	}
	launcher := filepath.Join(abs, filepath.FromSlash(LauncherFile))
	origPath := filepath.Join(abs, filepath.FromSlash(OrigFile))
	raw, merr := os.ReadFile(filepath.Join(abs, ManifestFile))
	var m *Manifest
	if merr == nil {
		m, merr = ParseManifest(raw)
	}
	_, lerr := os.Lstat(launcher)
	_, oerr := os.Lstat(origPath)
	pointsAtLauncher := m != nil && m.Runtime == RuntimeExecutable && m.Main == LauncherFile
	if !pointsAtLauncher && lerr != nil && oerr != nil {
		if merr != nil && errors.Is(merr, fs.ErrNotExist) {
			return nil, fmt.Errorf("doctor %s: %w: give the plugin folder, the one that holds %s", abs, ErrNoManifest, ManifestFile)
		}
		return nil, fmt.Errorf("doctor %s: %w: run tapedeck wrap %s first", abs, ErrNotWrapped, Quote(abs))
	}
	r := &Report{Dir: abs, HostArgv: []string{launcher}, Cwd: abs}
	add := func(what, detail, problem string) {
		r.Checks = append(r.Checks, Check{What: what, Detail: detail, Problem: problem})
	}

	// The manifest.
	switch {
	case merr != nil:
		add("manifest", ManifestFile, fmt.Sprintf("%v: the host cannot load the plugin", bare(merr)))
	case !pointsAtLauncher:
		add("manifest", ManifestFile, fmt.Sprintf("runtime %q and main %q do not point at %s: the host runs the plugin unrecorded; run tapedeck unwrap, then wrap",
			m.Runtime, m.Main, LauncherFile))
	default:
		add("manifest", fmt.Sprintf("runtime %q, main %q", m.Runtime, m.Main), "")
	}
	if m != nil && m.ID != filepath.Base(abs) {
		add("plugin id", m.ID, fmt.Sprintf("differs from the folder name %q: the host loads a plugin only when they match", filepath.Base(abs)))
	}
	if oerr != nil {
		add("original", OrigFile, "missing: unwrap cannot restore the manifest; restore it by hand")
	} else {
		add("original", OrigFile, "")
	}

	// The launcher.
	redo := "run tapedeck unwrap, then tapedeck wrap"
	if script, err := os.ReadFile(launcher); err != nil {
		add("launcher", launcher, fmt.Sprintf("%v: %s", bare(err), redo))
	} else {
		var problems []string
		if err := isExecutable(launcher); err != nil {
			problems = append(problems, fmt.Sprintf("%v, and the host runs it directly: chmod 755 %s", err, Quote(launcher)))
		}
		l, err := ParseLauncher(script)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%v: %s", err, redo))
		} else if out, err := run(ctx, "/bin/sh", "-n", launcher); err != nil {
			problems = append(problems, fmt.Sprintf("/bin/sh -n: %v %s", err, out))
		} else {
			r.Launch = l // read it even when it cannot run: the rest can still be checked
		}
		add("launcher", launcher, strings.Join(problems, "; "))
	}
	if r.Launch == nil {
		return r, nil
	}
	l := r.Launch

	// tapedeck.
	switch {
	case !filepath.IsAbs(l.Tapedeck):
		add("tapedeck", l.Tapedeck, "not an absolute path, and the host's PATH may not find it: "+redo)
	case isExecutable(l.Tapedeck) != nil:
		add("tapedeck", l.Tapedeck, fmt.Sprintf("%v: put tapedeck back there, or %s", isExecutable(l.Tapedeck), redo))
	default:
		if out, err := run(ctx, l.Tapedeck, "--version"); err != nil {
			add("tapedeck", l.Tapedeck, fmt.Sprintf("does not run (%v): %s", err, out))
		} else {
			add("tapedeck", l.Tapedeck+" ("+out+")", "")
		}
	}

	// The store.
	detail, problem := storeCheck(l.Store)
	add("store", detail, problem)

	// What tapedeck runs: the interpreter and the plugin's main.
	name := l.Command[0]
	what := "interpreter"
	if len(l.Command) == 1 {
		what = "main"
	}
	switch {
	case strings.Contains(name, "/"):
		if err := isExecutable(name); err != nil {
			add(what, name, fmt.Sprintf("%v: the plugin cannot start; %s", err, redo))
		} else {
			add(what, name, "")
		}
	default:
		if found, err := f.lookPath(ctx, name); err != nil {
			add(what, name, fmt.Sprintf("%v: the plugin cannot start; install %s", err, name))
		} else {
			add(what, fmt.Sprintf("%s = %s (%s)", name, found.Path, found.Where), "")
		}
	}
	if l.PathFirst != "" {
		if fi, err := os.Stat(l.PathFirst); err != nil || !fi.IsDir() {
			add("PATH first", l.PathFirst, "not a folder: the plugin would not find node's folder on PATH, as the host gives it; "+redo)
		} else {
			add("PATH first", l.PathFirst, "")
		}
	}
	if len(l.Command) > 1 {
		main := l.Command[len(l.Command)-1]
		if fi, err := os.Stat(main); err != nil {
			add("main", main, fmt.Sprintf("%v: the plugin cannot start", bare(err)))
		} else if !fi.Mode().IsRegular() {
			add("main", main, "not a file: the plugin cannot start")
		} else {
			add("main", main, "")
		}
	}
	return r, nil
}

// storeCheck says whether a store folder can take sessions: it creates
// and removes a file in it, or, when the store does not exist yet (the
// first recording creates it), in the nearest folder above it that does.
func storeCheck(dir string) (detail, problem string) {
	if !filepath.IsAbs(dir) {
		return dir, "not an absolute path: it would depend on the plugin's working folder"
	}
	d := dir
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return dir, fmt.Sprintf("%s is not a folder: give wrap another --store", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return dir, bare(err).Error()
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, "no folder above it exists"
		}
		d = parent
	}
	f, err := os.CreateTemp(d, ".tapedeck-doctor-*")
	if err != nil {
		return dir, fmt.Sprintf("cannot write in %s: %v", d, bare(err))
	}
	f.Close()
	os.Remove(f.Name())
	if d != dir {
		return dir + " (created by the first session)", ""
	}
	return dir + " (writable)", ""
}

// run runs a program with no input and returns its trimmed output. It
// blocks for at most checkTimeout.
func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 500 * time.Millisecond
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}
