// Package wrap makes tapedeck a plugin's main and takes it out again.
//
// It owns the plugin folder's side of capture: reading agentty-plugin.json,
// working out the command the Agentty host would run for the plugin (node
// found the way the host finds it, python3, or the executable main),
// writing a launcher that execs `tapedeck record` around that command,
// pointing the manifest's runtime and main at the launcher with a
// byte-level edit, keeping the original manifest bytes so that Unwrap
// restores them exactly, and checking a wrapped folder (Doctor).
//
// It owns the MCP client's side too (mcp.go, mcpwrap.go): reading the
// configuration files of Claude Desktop, VS Code and Cursor, pointing a
// server's command at `tapedeck record --profile mcp -- ITS COMMAND` with
// a byte-level edit, keeping the original bytes for UnwrapMCP, and
// checking the result (DoctorMCP).
//
// Everything it writes lives in the plugin folder (the launcher and the
// original manifest in .tapedeck/, and the edited manifest) or beside the
// configuration file (the original in .tapedeck/, and the edited file).
// It never runs the plugin or the server, never opens the store (Doctor
// only creates and removes a probe file in its folder) and never prints:
// callers report. It imports only the standard library and the JSON
// scanner (internal/jsonscan); the command glue is in package cli.
package wrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

// Files inside the plugin folder. LauncherFile is also the manifest's new
// main, so it is written with forward slashes, as the manifest wants.
const (
	ManifestFile = "agentty-plugin.json"
	StateDir     = ".tapedeck"
	LauncherFile = ".tapedeck/launch"
	OrigFile     = ".tapedeck/agentty-plugin.json.orig"
)

// Errors, each wrapped with the folder and what to do.
var (
	ErrNoManifest   = errors.New("no " + ManifestFile)
	ErrManifest     = errors.New("bad " + ManifestFile)
	ErrWasm         = errors.New("wasm plugin")
	ErrRuntime      = errors.New("unknown runtime")
	ErrNoMain       = errors.New("no main")
	ErrWrapped      = errors.New("already wrapped")
	ErrNotWrapped   = errors.New("not wrapped")
	ErrChanged      = errors.New(ManifestFile + " changed since wrap")
	ErrNodeNotFound = errors.New("node not found")
	ErrLauncher     = errors.New("not a launcher written by tapedeck wrap")
	// ErrSymlink: a path wrap or unwrap would write, read back or remove
	// is a symbolic link it did not make. They never follow one: a cloned
	// plugin folder could aim it at any file of the user's.
	ErrSymlink = errors.New("symbolic link")
)

// Options says what a launcher runs.
type Options struct {
	// Tapedeck is the absolute path of the tapedeck binary to exec.
	Tapedeck string
	// Store is the absolute store folder the launcher passes as --store.
	Store string
	// Finder finds node for a node plugin; nil means NewFinder().
	Finder *Finder
	// PinClock makes the launcher record with --pin-clock.
	PinClock bool
}

// Plan is a wrap worked out and checked but not yet written: Prepare makes
// it, Apply writes it. Printing a Plan is a dry run.
type Plan struct {
	Dir      string // the plugin folder, absolute
	Manifest *Manifest
	Launch   Launch
	// Node says where node was found, for a node plugin.
	Node *Found
	// Original and Wrapped are the manifest's bytes before and after.
	Original, Wrapped []byte
	// Warnings are things the host will mind that wrap does not refuse.
	Warnings []string

	mode fs.FileMode // the manifest's permissions
}

// LauncherPath is the launcher's absolute path: what the host will spawn.
func (p *Plan) LauncherPath() string { return filepath.Join(p.Dir, filepath.FromSlash(LauncherFile)) }

// Prepare reads the plugin folder dir and works out the wrap without
// writing anything. It refuses, with an error naming the folder, the reason
// and what to do: a folder without a manifest or with a bad one (ErrNoManifest,
// ErrManifest), a wasm plugin (ErrWasm), an unknown runtime (ErrRuntime), a
// main that is missing or not inside the folder or, for an executable
// plugin, not executable (ErrNoMain, ErrManifest), a plugin already wrapped
// (ErrWrapped), and a node plugin when node cannot be found
// (ErrNodeNotFound). For node it runs the login shell (bounded by the
// Finder's timeout).
func Prepare(ctx context.Context, dir string, opts Options) (*Plan, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("wrap %s: %w", dir, err)
	}
	p, err := prepare(ctx, abs, opts)
	if err != nil {
		return nil, fmt.Errorf("wrap %s: %w", abs, err)
	}
	return p, nil
}

// prepare is Prepare for the absolute folder abs; its errors do not name
// the folder.
func prepare(ctx context.Context, abs string, opts Options) (*Plan, error) {
	if !filepath.IsAbs(opts.Tapedeck) || !filepath.IsAbs(opts.Store) {
		return nil, fmt.Errorf("the tapedeck path (%q) and the store (%q) must be absolute", opts.Tapedeck, opts.Store)
	}
	raw, mode, err := readUnwrapped(abs)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, err
	}
	mainPath, mfi, err := wrappable(abs, m)
	if err != nil {
		return nil, err
	}
	p := &Plan{Dir: abs, Manifest: m, Original: raw, mode: mode}
	command, pathFirst, err := p.command(ctx, opts.Finder, mainPath, mfi)
	if err != nil {
		return nil, err
	}
	p.Launch = Launch{Tapedeck: opts.Tapedeck, Store: opts.Store, Name: m.ID, Command: command, PathFirst: pathFirst, PinClock: opts.PinClock}
	if p.Wrapped, err = m.Splice(RuntimeExecutable, LauncherFile); err != nil {
		return nil, err
	}
	// The host's rule decides, as in Doctor: a manifest's id must equal
	// the folder name (host-behaviour.md, "Starting"), else the host never
	// starts the plugin and there is nothing to record.
	if problem := idFolderProblem(m.ID, abs); problem != "" {
		return nil, fmt.Errorf("%w: %s", ErrManifest, problem)
	}
	return p, nil
}

// readUnwrapped reads the manifest of the folder abs, a file and no
// link, and its permissions; an error when the folder is wrapped (its
// original kept) or in a state wrap leaves alone.
func readUnwrapped(abs string) (raw []byte, mode fs.FileMode, err error) {
	manifestPath := filepath.Join(abs, ManifestFile)
	fi, err := os.Lstat(manifestPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: give the plugin folder, the one that holds %s", ErrNoManifest, ManifestFile)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read manifest: %w", err)
	}
	if err := notLink(manifestPath, fi, ManifestFile, "wrap edits the manifest in place"); err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%w: %s is not a file", ErrManifest, ManifestFile)
	}
	raw, err = readNoFollow(manifestPath)
	if err != nil {
		return nil, 0, fmt.Errorf("read manifest: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(abs, OrigFile)); err == nil {
		return nil, 0, fmt.Errorf("%w (%s exists): run tapedeck unwrap %s first", ErrWrapped, OrigFile, shellword.Quote(abs))
	}
	if err := checkState(abs, true); err != nil {
		return nil, 0, err
	}
	return raw, fi.Mode().Perm(), nil
}

// wrappable checks that the manifest m of the folder abs names a plugin
// wrap can record (not wrapped already, a runtime with a process, an id,
// a main file inside the folder), and returns its main's path and info.
func wrappable(abs string, m *Manifest) (mainPath string, mfi fs.FileInfo, err error) {
	if m.Runtime == RuntimeExecutable && m.Main == LauncherFile {
		return "", nil, fmt.Errorf("%w: main is already %s, but the original manifest (%s) is gone: restore %s by hand",
			ErrWrapped, LauncherFile, OrigFile, ManifestFile)
	}
	switch m.EffectiveRuntime() {
	case RuntimeNode, RuntimePython, RuntimeExecutable:
	case RuntimeWasm:
		return "", nil, fmt.Errorf("%w: it runs inside the host, so there is no process for tapedeck to record", ErrWasm)
	default:
		return "", nil, fmt.Errorf("%w %q in %s: tapedeck wraps node, python and executable plugins", ErrRuntime, m.Runtime, ManifestFile)
	}
	if m.Main == "" {
		return "", nil, fmt.Errorf("%w: %s names no \"main\" to run", ErrNoMain, ManifestFile)
	}
	if !filepath.IsLocal(filepath.FromSlash(m.Main)) {
		return "", nil, fmt.Errorf("%w: main %q is not a relative path inside the plugin folder", ErrManifest, m.Main)
	}
	if m.ID == "" {
		return "", nil, fmt.Errorf("%w: no \"id\" (tapedeck names the sessions after it)", ErrManifest)
	}
	mainPath = filepath.Join(abs, filepath.FromSlash(m.Main))
	mfi, err = os.Stat(mainPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, fmt.Errorf("%w: main %s does not exist: fix \"main\" in %s", ErrNoMain, m.Main, ManifestFile)
	case err != nil:
		return "", nil, fmt.Errorf("%w: main %s: %w", ErrNoMain, m.Main, err)
	case !mfi.Mode().IsRegular():
		return "", nil, fmt.Errorf("%w: main %s is not a file", ErrNoMain, m.Main)
	}
	return mainPath, mfi, nil
}

// command is what the launcher runs for the plan's runtime, main at
// mainPath (mfi), and the folder it puts first on PATH (node's); for
// node it finds node with f (nil means NewFinder()) and sets p.Node.
func (p *Plan) command(ctx context.Context, f *Finder, mainPath string, mfi fs.FileInfo) (command []string, pathFirst string, err error) {
	switch p.Manifest.EffectiveRuntime() {
	case RuntimeNode:
		if f == nil {
			f = NewFinder()
		}
		found, err := f.Node(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("%w: install node, or put it on your login shell's PATH", err)
		}
		p.Node = &found
		return []string{found.Path, mainPath}, filepath.Dir(found.Path), nil
	case RuntimePython:
		// The host runs python3 by name, on the PATH it gives the plugin
		// (login PATH first), and so does the launcher: the same python3.
		return []string{"python3", mainPath}, "", nil
	case RuntimeExecutable:
		if mfi.Mode().Perm()&0o111 == 0 {
			return nil, "", fmt.Errorf("%w: main %s is not executable, and the host runs it directly: chmod +x %s", ErrNoMain, p.Manifest.Main, shellword.Quote(mainPath))
		}
		return []string{mainPath}, "", nil
	}
	return nil, "", nil
}

// Apply writes the plan: the original manifest to OrigFile and the launcher
// (mode 0755), each created exclusively and without following a symlink
// (so two wraps cannot both win, and a link planted in the folder is
// refused, never written through), then the edited manifest through a
// temporary file and a rename in the plugin folder. On failure it removes
// what it wrote and the manifest is as it was. It fails with ErrWrapped if
// the folder was wrapped since Prepare, with ErrSymlink if a link stands
// where it writes, and with ErrChanged if the manifest changed since.
func (p *Plan) Apply() (err error) {
	state := filepath.Join(p.Dir, StateDir)
	if err := checkState(p.Dir, true); err != nil {
		return fmt.Errorf("wrap %s: %w", p.Dir, err)
	}
	// Mkdir, not MkdirAll: it neither follows a link in StateDir's place
	// nor lets one appear unnoticed (checkState ran just before).
	madeState := true
	if err := os.Mkdir(state, 0o755); errors.Is(err, fs.ErrExist) {
		madeState = false
		if err := checkState(p.Dir, true); err != nil {
			return fmt.Errorf("wrap %s: %w", p.Dir, err)
		}
	} else if err != nil {
		return fmt.Errorf("wrap %s: %w", p.Dir, err)
	}
	var written []string
	defer func() {
		if err != nil {
			for _, f := range written {
				os.Remove(f)
			}
			if madeState {
				os.Remove(state)
			}
		}
	}()

	origPath := filepath.Join(p.Dir, filepath.FromSlash(OrigFile))
	err = createNew(origPath, p.Original, p.mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("wrap %s: %w (%s exists): run tapedeck unwrap %s first", p.Dir, ErrWrapped, OrigFile, shellword.Quote(p.Dir))
	}
	if err != nil {
		return fmt.Errorf("wrap %s: keep the original manifest in %s: %w", p.Dir, origPath, err)
	}
	written = append(written, origPath)

	launcher := p.LauncherPath()
	err = createNew(launcher, p.Launch.Script(), 0o755)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("wrap %s: %s exists and tapedeck did not write it (%s): move it away, then wrap again",
			p.Dir, LauncherFile, describe(launcher))
	}
	if err != nil {
		return fmt.Errorf("wrap %s: write the launcher: %w", p.Dir, err)
	}
	written = append(written, launcher)

	manifestPath := filepath.Join(p.Dir, ManifestFile)
	now, err := readNoFollow(manifestPath)
	if err != nil {
		return fmt.Errorf("wrap %s: %w", p.Dir, err)
	}
	if !bytes.Equal(now, p.Original) {
		return fmt.Errorf("wrap %s: %s changed while wrapping: run wrap again", p.Dir, ManifestFile)
	}
	if err := writeFile(manifestPath, p.Wrapped, p.mode); err != nil {
		return fmt.Errorf("wrap %s: edit the manifest: %w", p.Dir, err)
	}
	return nil
}

// Undone says what Unwrap did.
type Undone struct {
	Dir string
	// Restored is false when the manifest was already the original.
	Restored bool
	// Overwrote is true when --force put the original back over a manifest
	// that had changed since wrap.
	Overwrote bool
	// StateKept is true when .tapedeck/ held other files and was left.
	StateKept bool
}

// Unwrap puts back the manifest bytes kept by wrap and removes the launcher
// and the kept copy (and .tapedeck/ when that leaves it empty). If the
// manifest is neither what wrap wrote nor the original, someone edited it
// since: Unwrap refuses (ErrChanged) unless force, which restores the
// original anyway. A folder that was never wrapped gives ErrNotWrapped.
// It never follows a symlink: one in place of .tapedeck/, the kept
// original or the manifest is refused (ErrSymlink), and one in the
// launcher's place is removed, its target untouched.
func Unwrap(dir string, force bool) (*Undone, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("unwrap %s: %w", dir, err)
	}
	refuse := func(format string, args ...any) (*Undone, error) {
		return nil, fmt.Errorf("unwrap %s: "+format, append([]any{abs}, args...)...)
	}
	if err := checkState(abs, false); err != nil {
		return refuse("%w", err)
	}
	origPath := filepath.Join(abs, filepath.FromSlash(OrigFile))
	ofi, err := os.Lstat(origPath)
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("%w (no %s): nothing to undo", ErrNotWrapped, OrigFile)
	}
	if err != nil {
		return refuse("%w", err)
	}
	if err := notLink(origPath, ofi, OrigFile, "wrap keeps the original there as a file"); err != nil {
		return refuse("%w", err)
	}
	orig, err := readNoFollow(origPath)
	if err != nil {
		return refuse("%w", err)
	}
	u := &Undone{Dir: abs}
	manifestPath := filepath.Join(abs, ManifestFile)
	if mfi, err := os.Lstat(manifestPath); err == nil {
		if err := notLink(manifestPath, mfi, ManifestFile, "unwrap restores the manifest in place"); err != nil {
			return refuse("%w", err)
		}
	}
	now, err := readNoFollow(manifestPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return refuse("%w", err)
	}
	if err != nil || !bytes.Equal(now, orig) {
		if err == nil && !isWrapOf(now, orig) {
			if !force {
				return refuse("%w: compare it with %s, or run tapedeck unwrap --force %s to put the original back and lose the changes",
					ErrChanged, OrigFile, shellword.Quote(abs))
			}
			u.Overwrote = true
		}
		if err := writeFile(manifestPath, orig, ofi.Mode().Perm()); err != nil {
			return refuse("restore the manifest: %w", err)
		}
		u.Restored = true
	}
	// Removing a name never follows it: a link in the launcher's place goes,
	// its target stays.
	launcher := filepath.Join(abs, filepath.FromSlash(LauncherFile))
	if err := os.Remove(launcher); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return refuse("remove the launcher: %w", err)
	}
	if err := os.Remove(origPath); err != nil {
		return refuse("remove %s: %w", OrigFile, err)
	}
	if err := os.Remove(filepath.Join(abs, StateDir)); err != nil {
		u.StateKept = true // not empty: somebody else's files
	}
	return u, nil
}

// isWrapOf reports whether manifest is exactly what wrap makes of orig.
func isWrapOf(manifest, orig []byte) bool {
	m, err := ParseManifest(orig)
	if err != nil {
		return false
	}
	w, err := m.Splice(RuntimeExecutable, LauncherFile)
	return err == nil && bytes.Equal(w, manifest)
}

// writeFile replaces path with data through a temporary file in the same
// folder and a rename, so that a reader (the host) sees the old file or
// the new one, never half of one. A symlink at path is not followed: the
// rename replaces the name itself (callers refuse links before).
func writeFile(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// createNew creates path with data and perm; it fails with fs.ErrExist when
// anything is there already, a symlink (even a dangling one) included, so it
// never writes through a link.
func createNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask may have taken bits away
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readNoFollow reads the file at path, refusing a symlink there (ELOOP).
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: %s (%s)", ErrSymlink, path, describe(path))
		}
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// notLink refuses fi (the Lstat of path, which name spells for the user)
// when it is a symbolic link, saying why in the words of because.
func notLink(path string, fi fs.FileInfo, name, because string) error {
	if fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; %s and never writes through a link: replace it with the real file", ErrSymlink, name, describe(path), because)
}

// checkState refuses a StateDir in dir that is anything but a real folder:
// wrap writes its files in there and unwrap removes them. For wrap
// (launcher set) it refuses a symlink in the launcher's place too.
func checkState(dir string, launcher bool) error {
	state := filepath.Join(dir, StateDir)
	fi, err := os.Lstat(state)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := notLink(state, fi, StateDir+"/", "wrap keeps its files in that folder"); err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder: move it away", StateDir)
	}
	path := filepath.Join(dir, filepath.FromSlash(LauncherFile))
	if fi, err := os.Lstat(path); err == nil && launcher {
		return notLink(path, fi, LauncherFile, "wrap writes the launcher there")
	}
	return nil
}

// describe says what is at path for an error message: "a symbolic link to
// TARGET", "a folder" or "a file".
func describe(path string) string {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return "unreadable"
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Sprintf("a symbolic link to %q", target)
	case fi.IsDir():
		return "a folder"
	}
	return "a file"
}
