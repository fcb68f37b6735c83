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

	"github.com/tapedeck/tapedeck/internal/shellword"
	"github.com/tapedeck/tapedeck/internal/smallfile"
)

// checkTimeout bounds each program Doctor runs (sh -n, which only parses).
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
// tapedeck, a store and a command; that tapedeck is an executable outside
// the folder, owned by root or this user (looked at, never run: Doctor
// executes nothing a plugin folder names); the store
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
	d := &doctor{
		r:        &Report{Dir: abs, Cwd: abs},
		abs:      abs,
		launcher: filepath.Join(abs, filepath.FromSlash(LauncherFile)),
		origPath: filepath.Join(abs, filepath.FromSlash(OrigFile)),
		redo:     fmt.Sprintf("run tapedeck unwrap %s, then tapedeck wrap %[1]s", shellword.Quote(abs)),
	}
	d.r.HostArgv = []string{d.launcher}
	w, err := d.readWrapped()
	if err != nil {
		return nil, err
	}
	d.manifest(w)
	d.r.Launch = d.launcherScript(ctx)
	if d.r.Launch == nil {
		return d.r, nil
	}
	d.launched(ctx, f, d.r.Launch)
	return d.r, nil
}

// doctor is what Doctor knows of the folder it checks.
type doctor struct {
	r                       *Report
	abs, launcher, origPath string
	redo                    string // what to do to wrap it again
}

// add adds a check to the report.
func (d *doctor) add(what, detail, problem string) {
	d.r.Checks = append(d.r.Checks, Check{What: what, Detail: detail, Problem: problem})
}

// wrapping is what Doctor reads of the manifest and the original first.
type wrapping struct {
	raw              []byte    // the manifest as read
	m                *Manifest // nil when merr
	merr             error     // reading or parsing the manifest
	origErr          error     // the original manifest's Lstat
	pointsAtLauncher bool      // the manifest runs the launcher
}

// readWrapped reads the manifest; an error when the folder is not a
// plugin's, or not wrapped (no sign of wrap at all).
func (d *doctor) readWrapped() (wrapping, error) {
	var w wrapping
	w.raw, w.merr = smallfile.Read(filepath.Join(d.abs, ManifestFile), smallfile.JSONCap)
	if w.merr == nil {
		w.m, w.merr = ParseManifest(w.raw)
	}
	_, lerr := os.Lstat(d.launcher)
	_, w.origErr = os.Lstat(d.origPath)
	w.pointsAtLauncher = w.m != nil && w.m.Runtime == RuntimeExecutable && w.m.Main == LauncherFile
	if !w.pointsAtLauncher && lerr != nil && w.origErr != nil {
		if w.merr != nil && errors.Is(w.merr, fs.ErrNotExist) {
			return w, fmt.Errorf("doctor %s: %w: give the plugin folder, the one that holds %s", d.abs, ErrNoManifest, ManifestFile)
		}
		return w, fmt.Errorf("doctor %s: %w: run tapedeck wrap %s first", d.abs, ErrNotWrapped, shellword.Quote(d.abs))
	}
	return w, nil
}

// manifest checks that the manifest runs the launcher, that the plugin's
// id is its folder's name, and that the original is kept.
func (d *doctor) manifest(w wrapping) {
	m := w.m
	switch {
	case w.merr != nil:
		d.add("manifest", ManifestFile, fmt.Sprintf("%v: the host cannot load the plugin", bare(w.merr)))
	case !w.pointsAtLauncher:
		// unwrap puts the original back as it is; a manifest changed
		// since wrap it only overwrites with --force.
		redo := d.redo
		if orig, err := smallfile.Read(d.origPath, smallfile.JSONCap); err == nil && !bytes.Equal(orig, w.raw) {
			redo = fmt.Sprintf("compare it with %s, then run tapedeck unwrap --force %s (it puts that back: the changes are lost), then tapedeck wrap %[2]s", OrigFile, shellword.Quote(d.abs))
		}
		d.add("manifest", ManifestFile, fmt.Sprintf("runtime %q and main %q do not point at %s: the host runs the plugin unrecorded; %s",
			m.Runtime, m.Main, LauncherFile, redo))
	default:
		d.add("manifest", fmt.Sprintf("runtime %q, main %q", m.Runtime, m.Main), "")
	}
	// The host's rule decides, as in wrap (host-behaviour.md, "Starting":
	// the manifest's id must equal the folder name).
	if m != nil {
		if problem := idFolderProblem(m.ID, d.abs); problem != "" {
			d.add("plugin id", m.ID, problem)
		}
	}
	if w.origErr != nil {
		d.add("original", OrigFile, "missing: unwrap cannot restore the manifest; restore it by hand")
	} else {
		d.add("original", OrigFile, "")
	}
}

// launcherScript checks the launcher (executable, what wrap writes, sh
// parses it) and returns what it runs; nil when it could not be read or
// sh cannot parse it.
func (d *doctor) launcherScript(ctx context.Context) *Launch {
	script, err := smallfile.Read(d.launcher, smallfile.JSONCap)
	if err != nil {
		d.add("launcher", d.launcher, fmt.Sprintf("%v: %s", bare(err), d.redo))
		return nil
	}
	var problems []string
	if err := isExecutable(d.launcher); err != nil {
		problems = append(problems, fmt.Sprintf("%v, and the host runs it directly: chmod 755 %s", err, shellword.Quote(d.launcher)))
	}
	var launch *Launch
	l, err := ParseLauncher(script)
	if err != nil {
		problems = append(problems, fmt.Sprintf("%v: %s", err, d.redo))
	} else if out, err := run(ctx, "/bin/sh", "-n", d.launcher); err != nil {
		problems = append(problems, fmt.Sprintf("/bin/sh -n: %v %s", err, out))
	} else {
		launch = l // read it even when it cannot run: the rest can still be checked
	}
	d.add("launcher", d.launcher, strings.Join(problems, "; "))
	return launch
}

// launched checks what the launcher l names: tapedeck (looked at, never
// run: a cloned folder names it), the store, and what tapedeck runs.
func (d *doctor) launched(ctx context.Context, f *Finder, l *Launch) {
	detail, problem := tapedeckCheck(l.Tapedeck, d.abs)
	if problem != "" {
		problem += ": " + d.redo
	}
	d.add("tapedeck", detail, problem)
	detail, problem = storeCheck(l.Store)
	d.add("store", detail, problem)
	d.command(ctx, f, l)
}

// command checks what tapedeck runs: the interpreter (or the main
// alone), the folder put first on PATH, and the plugin's main.
func (d *doctor) command(ctx context.Context, f *Finder, l *Launch) {
	name := l.Command[0]
	what := "interpreter"
	if len(l.Command) == 1 {
		what = "main"
	}
	if strings.Contains(name, "/") {
		if err := isExecutable(name); err != nil {
			d.add(what, name, fmt.Sprintf("%v: the plugin cannot start; %s", err, d.redo))
		} else {
			d.add(what, name, "")
		}
	} else if found, err := f.lookPath(ctx, name); err != nil {
		d.add(what, name, fmt.Sprintf("%v: the plugin cannot start; install %s", err, name))
	} else {
		d.add(what, fmt.Sprintf("%s = %s (%s)", name, found.Path, found.Where), "")
	}
	if l.PathFirst != "" {
		if fi, err := os.Stat(l.PathFirst); err != nil || !fi.IsDir() {
			d.add("PATH first", l.PathFirst, "not a folder: the plugin would not find node's folder on PATH, as the host gives it; "+d.redo)
		} else {
			d.add("PATH first", l.PathFirst, "")
		}
	}
	if len(l.Command) > 1 {
		main := l.Command[len(l.Command)-1]
		if fi, err := os.Stat(main); err != nil {
			d.add("main", main, fmt.Sprintf("%v: the plugin cannot start", bare(err)))
		} else if !fi.Mode().IsRegular() {
			d.add("main", main, "not a file: the plugin cannot start")
		} else {
			d.add("main", main, "")
		}
	}
}

// idFolderProblem is what is wrong when a plugin's id differs from the
// name of its folder dir, "" when they are the same. The host's rule
// decides, for wrap and doctor alike: /work/shared/protocol/
// host-behaviour.md, "Starting": the manifest's `id` "must equal the
// folder name"; the host does not start a plugin that breaks it.
func idFolderProblem(id, dir string) string {
	base := filepath.Base(dir)
	if id == base {
		return ""
	}
	return fmt.Sprintf("the plugin id %q differs from its folder name %q, and the host starts a plugin only when its id equals its folder name (Agentty's host behaviour, \"Starting\"): rename the folder to %s, or set \"id\" to %q in %s",
		id, base, shellword.Quote(filepath.Join(filepath.Dir(dir), id)), base, ManifestFile)
}

// tapedeckCheck says whether the tapedeck a launcher names is one the
// host may run, by looking at it only: Doctor never executes what a
// plugin folder names, since the folder may be someone else's clone. It
// must be an absolute path outside /proc (a /proc/self/… path resolves
// in whichever process reads it: in the host's, whose working folder is
// the plugin's), that neither lies nor, through links, resolves inside
// the plugin folder; a regular executable file owned by root or by this
// user and writable by no one else.
func tapedeckCheck(path, pluginDir string) (detail, problem string) {
	if !filepath.IsAbs(path) {
		return path, "not an absolute path, and the host's PATH may not find it"
	}
	if throughProc(path) {
		return path, "a /proc path resolves in the process that runs it (for the host, into the plugin folder): doctor does not run it"
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, fmt.Sprintf("%v: put tapedeck back there", bare(err))
	}
	for _, dir := range []string{pluginDir, evalOr(pluginDir)} {
		if within(filepath.Clean(path), dir) || within(resolved, dir) {
			return path, fmt.Sprintf("is inside the plugin folder %s (resolves to %s): a plugin folder cannot bring the tapedeck the host runs, and doctor does not run it", dir, resolved)
		}
	}
	if err := isExecutable(resolved); err != nil {
		return path, fmt.Sprintf("%v: put tapedeck back there", err)
	}
	if p := foreignOwner(resolved); p != "" {
		return path, p + ": doctor does not run it"
	}
	detail = path
	if resolved != path {
		detail += " = " + resolved
	}
	if self, err := os.Executable(); err == nil && evalOr(self) == resolved {
		return detail + " (this tapedeck; not run)", ""
	}
	return detail + " (an executable file; not run)", ""
}

// throughProc reports whether path is in /proc or reaches it through a
// link (a link to /proc/self/cwd is resolved by each reader in its own
// process). It follows at most 40 links, as the kernel does.
func throughProc(path string) bool {
	p := filepath.Clean(path)
	for range 40 {
		if within(p, "/proc") {
			return true
		}
		link, rest, ok := firstLink(p)
		if !ok {
			return false
		}
		target, err := os.Readlink(link)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(link), target)
		}
		p = filepath.Join(target, rest)
	}
	return true // a loop of links: nothing the host could run either
}

// firstLink is the shortest prefix of the clean absolute path p that is a
// symbolic link, and the rest of p after it.
func firstLink(p string) (link, rest string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	for i := range parts {
		prefix := string(filepath.Separator) + filepath.Join(parts[:i+1]...)
		fi, err := os.Lstat(prefix)
		if err != nil {
			return "", "", false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return prefix, filepath.Join(parts[i+1:]...), true
		}
	}
	return "", "", false
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// evalOr is p with its links resolved, or p when they cannot be.
func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
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
