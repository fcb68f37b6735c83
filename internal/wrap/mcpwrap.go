package wrap

// Wrap, unwrap and doctor for an MCP client's configuration file: the
// servers named get tapedeck as their command, with `record --profile mcp
// -- THEIR COMMAND…` as its arguments; their "env", "cwd" and every other
// member stay, so the client starts tapedeck as it started the server, and
// tapedeck starts the server with what it was given. The original bytes
// are kept in .tapedeck/NAME.orig beside the file, for UnwrapMCP.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

// MCPOrigFile is where wrap keeps the original of the configuration file
// at path.
func MCPOrigFile(path string) string {
	return filepath.Join(filepath.Dir(path), StateDir, filepath.Base(path)+".orig")
}

// MCPPlan is a wrap of a configuration file worked out but not written:
// PrepareMCP makes it, Apply writes it.
type MCPPlan struct {
	Config *MCPConfig
	// Launches are the launches of the servers wrapped, in the file's order.
	Launches []*MCPLaunch
	// Original and Wrapped are the file's bytes before and after.
	Original, Wrapped []byte

	mode fs.FileMode
}

// readMCP reads and parses the configuration file at path, refusing a
// symbolic link (wrap and unwrap edit it in place and never write through
// one). The error names the file.
func readMCP(op, path string) (*MCPConfig, fs.FileMode, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, path, err)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, abs, bare(err))
	}
	if err := notLink(abs, fi, filepath.Base(abs), op+" edits it in place: give the file it points to"); err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, abs, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s %s: %w: not a file", op, abs, ErrMCPConfig)
	}
	raw, err := readNoFollow(abs)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, abs, err)
	}
	c, err := ParseMCPConfig(abs, raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, abs, err)
	}
	return c, fi.Mode().Perm(), nil
}

// PrepareMCP reads the configuration file at path and works out the wrap
// of the servers named (none: its one stdio server) without writing
// anything. It refuses, naming the file, the reason and what to do: a file
// it cannot read as a client's configuration (ErrMCPConfig), a server it
// does not configure (ErrNoServer), a remote one (ErrRemote), a file
// already wrapped or a server whose command is already tapedeck
// (ErrWrapped), and no name given when it configures several stdio
// servers.
func PrepareMCP(path string, names []string, opts Options) (*MCPPlan, error) {
	c, mode, err := readMCP("wrap", path)
	if err != nil {
		return nil, err
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("wrap %s: "+format, append([]any{c.Path}, args...)...)
	}
	if !filepath.IsAbs(opts.Tapedeck) || !filepath.IsAbs(opts.Store) {
		return nil, refuse("the tapedeck path (%q) and the store (%q) must be absolute", opts.Tapedeck, opts.Store)
	}
	if _, err := os.Lstat(MCPOrigFile(c.Path)); err == nil {
		return nil, refuse("%w (%s exists): run tapedeck unwrap --mcp %s first", ErrWrapped, MCPOrigFile(c.Path), shellword.Quote(c.Path))
	}
	if len(names) == 0 {
		var stdio []string
		for _, s := range c.Servers {
			if s.Remote == "" && s.Launch == nil {
				stdio = append(stdio, s.Name)
			}
		}
		switch len(stdio) {
		case 0:
			return nil, refuse("%w: no server the client starts as a process (of %d in %q)", ErrNoServer, len(c.Servers), c.Key)
		case 1:
			names = stdio
		default:
			return nil, refuse("it configures %d servers the client starts (%s): name those to wrap with --server NAME (repeatable)", len(stdio), strings.Join(stdio, ", "))
		}
	}
	p := &MCPPlan{Config: c, Original: c.raw, mode: mode}
	launches := map[string]*MCPLaunch{}
	for _, name := range names {
		s := c.Server(name)
		switch {
		case s == nil:
			var all []string
			for _, s := range c.Servers {
				all = append(all, s.Name)
			}
			return nil, refuse("%w %q in %q: it has %s", ErrNoServer, name, c.Key, orNone(strings.Join(all, ", ")))
		case s.Remote != "":
			return nil, refuse("%w %q: %s", ErrRemote, name, s.Remote)
		case s.Launch != nil:
			return nil, refuse("%w: server %q already runs %s", ErrWrapped, name, s.Launch.Tapedeck)
		case launches[name] != nil:
			continue
		}
		l := &MCPLaunch{Tapedeck: opts.Tapedeck, Store: opts.Store, Name: name, PinClock: opts.PinClock, Env: s.Env,
			Command: append([]string{s.Command}, s.Args...)}
		launches[name] = l
	}
	for _, s := range c.Servers {
		if l := launches[s.Name]; l != nil {
			p.Launches = append(p.Launches, l)
		}
	}
	p.Wrapped = c.spliceLaunches(launches)
	// What was written must read back as the launches and as nothing else.
	again, err := ParseMCPConfig(c.Path, p.Wrapped)
	if err != nil {
		return nil, refuse("the edit would not read back (%v): please report this", err)
	}
	for _, l := range p.Launches {
		if s := again.Server(l.Name); s == nil || s.Launch == nil || strings.Join(s.Launch.Argv(), "\x00") != strings.Join(l.Argv(), "\x00") {
			return nil, refuse("the edit of server %q would not read back: please report this", l.Name)
		}
	}
	return p, nil
}

// quoteAll spells argv as sh would read it back: plain words bare, the
// rest quoted.
func quoteAll(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = w
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") != "" {
			q[i] = shellword.Quote(w)
		}
	}
	return strings.Join(q, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Apply writes the plan: the original to MCPOrigFile (created exclusively,
// never through a link), then the edited file through a temporary file
// and a rename. On failure it removes what it wrote and the file is as it
// was; it fails with ErrWrapped if the file was wrapped since PrepareMCP
// and when the file changed since.
func (p *MCPPlan) Apply() (err error) {
	path := p.Config.Path
	dir := filepath.Dir(path)
	if err := checkState(dir, false); err != nil {
		return fmt.Errorf("wrap %s: %w", path, err)
	}
	state := filepath.Join(dir, StateDir)
	madeState := true
	if err := os.Mkdir(state, 0o755); errors.Is(err, fs.ErrExist) {
		madeState = false
		if err := checkState(dir, false); err != nil {
			return fmt.Errorf("wrap %s: %w", path, err)
		}
	} else if err != nil {
		return fmt.Errorf("wrap %s: %w", path, err)
	}
	orig := MCPOrigFile(path)
	defer func() {
		if err != nil && madeState {
			os.Remove(state)
		}
	}()
	err = createNew(orig, p.Original, p.mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("wrap %s: %w (%s exists): run tapedeck unwrap --mcp %s first", path, ErrWrapped, orig, shellword.Quote(path))
	}
	if err != nil {
		return fmt.Errorf("wrap %s: keep the original in %s: %w", path, orig, err)
	}
	defer func() {
		if err != nil {
			os.Remove(orig)
		}
	}()
	now, err := readNoFollow(path)
	if err != nil {
		return fmt.Errorf("wrap %s: %w", path, err)
	}
	if !bytes.Equal(now, p.Original) {
		return fmt.Errorf("wrap %s: it changed while wrapping: run wrap again", path)
	}
	if err := writeFile(path, p.Wrapped, p.mode); err != nil {
		return fmt.Errorf("wrap %s: %w", path, err)
	}
	return nil
}

// UnwrapMCP puts back the bytes of the configuration file at path that
// wrap kept, and removes the kept copy (and .tapedeck/ when that leaves it
// empty). A file that is neither what wrap wrote nor the original was
// edited since: it refuses (ErrChanged) unless force, which puts the
// original back anyway. A file never wrapped gives ErrNotWrapped. Undone's
// Dir is the file's path.
func UnwrapMCP(path string, force bool) (*Undone, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("unwrap %s: %w", path, err)
	}
	refuse := func(format string, args ...any) (*Undone, error) {
		return nil, fmt.Errorf("unwrap %s: "+format, append([]any{abs}, args...)...)
	}
	if err := checkState(filepath.Dir(abs), false); err != nil {
		return refuse("%w", err)
	}
	origPath := MCPOrigFile(abs)
	ofi, err := os.Lstat(origPath)
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("%w (no %s): nothing to undo", ErrNotWrapped, origPath)
	}
	if err != nil {
		return refuse("%w", err)
	}
	if err := notLink(origPath, ofi, origPath, "wrap keeps the original there as a file"); err != nil {
		return refuse("%w", err)
	}
	orig, err := readNoFollow(origPath)
	if err != nil {
		return refuse("%w", err)
	}
	if fi, err := os.Lstat(abs); err == nil {
		if err := notLink(abs, fi, filepath.Base(abs), "unwrap restores it in place"); err != nil {
			return refuse("%w", err)
		}
	}
	u := &Undone{Dir: abs}
	now, err := readNoFollow(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return refuse("%w", err)
	}
	if err != nil || !bytes.Equal(now, orig) {
		if err == nil && !isMCPWrapOf(abs, now, orig) {
			if !force {
				return refuse("%w: compare it with %s, or run tapedeck unwrap --force --mcp %s to put the original back and lose the changes",
					ErrChanged, origPath, shellword.Quote(abs))
			}
			u.Overwrote = true
		}
		if err := writeFile(abs, orig, ofi.Mode().Perm()); err != nil {
			return refuse("restore it: %w", err)
		}
		u.Restored = true
	}
	if err := os.Remove(origPath); err != nil {
		return refuse("remove %s: %w", origPath, err)
	}
	if err := os.Remove(filepath.Join(filepath.Dir(abs), StateDir)); err != nil {
		u.StateKept = true // not empty: somebody else's files
	}
	return u, nil
}

// isMCPWrapOf reports whether now is exactly what wrap makes of orig, with
// the tapedeck, store and clock now's launches name.
func isMCPWrapOf(path string, now, orig []byte) bool {
	cur, err := ParseMCPConfig(path, now)
	if err != nil {
		return false
	}
	var names []string
	var opts Options
	for _, s := range cur.Servers {
		if s.Launch != nil {
			names = append(names, s.Name)
			opts = Options{Tapedeck: s.Launch.Tapedeck, Store: s.Launch.Store, PinClock: s.Launch.PinClock}
		}
	}
	c, err := ParseMCPConfig(path, orig)
	if err != nil || len(names) == 0 {
		return false
	}
	launches := map[string]*MCPLaunch{}
	for _, n := range names {
		s := c.Server(n)
		if s == nil || s.Remote != "" || s.Launch != nil {
			return false
		}
		launches[n] = &MCPLaunch{Tapedeck: opts.Tapedeck, Store: opts.Store, Name: n, PinClock: opts.PinClock, Env: s.Env,
			Command: append([]string{s.Command}, s.Args...)}
	}
	return bytes.Equal(c.spliceLaunches(launches), now)
}

// MCPReport is what DoctorMCP found about a wrapped configuration file.
type MCPReport struct {
	Path, Client string
	// Launches are the wrapped servers' launches: what the client runs.
	Launches []*MCPLaunch
	Checks   []Check
}

// Problems lists the problems found, one line each.
func (r *MCPReport) Problems() []string {
	return (&Report{Checks: r.Checks}).Problems()
}

// DoctorMCP checks a wrapped configuration file without starting anything:
// it reads as the client's; the original is kept; for each wrapped server,
// the tapedeck it names is one the client may run (looked at, never run),
// its store can be written, and its own command exists (a name without a
// slash looked up with f, nil meaning NewFinder(), on the login PATH as
// the client may not). Servers not wrapped are listed. The error is
// non-nil only when the file cannot be read or is not wrapped.
func DoctorMCP(ctx context.Context, path string, f *Finder) (*MCPReport, error) {
	c, _, err := readMCP("doctor", path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = NewFinder()
	}
	r := &MCPReport{Path: c.Path, Client: c.Client}
	add := func(what, detail, problem string) {
		r.Checks = append(r.Checks, Check{What: what, Detail: detail, Problem: problem})
	}
	orig := MCPOrigFile(c.Path)
	_, oerr := os.Lstat(orig)
	wrapped := false
	for _, s := range c.Servers {
		wrapped = wrapped || s.Launch != nil
	}
	if !wrapped && oerr != nil {
		return nil, fmt.Errorf("doctor %s: %w: run tapedeck wrap --mcp %s first", c.Path, ErrNotWrapped, shellword.Quote(c.Path))
	}
	add("config", fmt.Sprintf("%s's, servers in %q", c.Client, c.Key), "")
	if oerr != nil {
		add("original", orig, "missing: unwrap cannot restore the file; restore it by hand")
	} else {
		add("original", orig, "")
	}
	if !wrapped {
		add("servers", fmt.Sprintf("%d", len(c.Servers)), fmt.Sprintf("none runs tapedeck: the client runs them unrecorded; run tapedeck unwrap --mcp %s, then tapedeck wrap --mcp %[1]s", shellword.Quote(c.Path)))
	}
	// A workspace's .vscode or .cursor folder is part of a project that may
	// be someone else's clone: the tapedeck it names must not lie in it.
	project := filepath.Dir(c.Path)
	if b := filepath.Base(project); b == ".vscode" || b == ".cursor" {
		project = filepath.Dir(project)
	}
	for _, s := range c.Servers {
		name := "server " + s.Name
		switch {
		case s.Remote != "":
			add(name, "remote, not recorded", "")
			continue
		case s.Launch == nil:
			add(name, "not wrapped: "+quoteAll(append([]string{s.Command}, s.Args...)), "")
			continue
		}
		l := s.Launch
		r.Launches = append(r.Launches, l)
		detail, problem := tapedeckCheck(l.Tapedeck, project)
		add(name+": tapedeck", detail, problem)
		detail, problem = storeCheck(l.Store)
		add(name+": store", detail, problem)
		cmd := l.Command[0]
		if strings.Contains(cmd, "/") {
			if err := isExecutable(cmd); err != nil {
				add(name+": command", cmd, fmt.Sprintf("%v: the server cannot start", err))
			} else {
				add(name+": command", cmd, "")
			}
		} else if found, err := f.lookPath(ctx, cmd); err != nil {
			add(name+": command", cmd, fmt.Sprintf("%v: the server cannot start unless the client's PATH has it", err))
		} else {
			add(name+": command", fmt.Sprintf("%s = %s (%s; the client's own PATH decides)", cmd, found.Path, found.Where), "")
		}
		if len(l.Env) > 0 {
			add(name+": env", strings.Join(l.Env, ", ")+" (kept with each session)", "")
		}
	}
	return r, nil
}
