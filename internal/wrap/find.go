package wrap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/internal/shellword"
)

// DefaultShellTimeout bounds the login shell a Finder runs: a profile that
// hangs (waits for input, a slow network mount) must not hang wrap.
const DefaultShellTimeout = 5 * time.Second

// Finder finds programs the way the Agentty host does: on the login shell's
// PATH first, then in fixed folders, and for node in Volta's and nvm's
// folders. The zero value has no home and no shell, so it searches only
// the fixed folders; NewFinder fills it in from the environment. A Finder is safe for concurrent use if nobody
// changes its fields.
type Finder struct {
	// Home is the user's home folder, for ~/.volta/bin and ~/.nvm; "" skips
	// both. It is also HOME for the login shell.
	Home string
	// Shell is run as `Shell -lc 'command -v NAME'` to read the login PATH;
	// "" skips that step.
	Shell string
	// Dirs are the fixed folders searched after the login PATH; nil means
	// the host's: /opt/homebrew/bin, /usr/local/bin, /usr/bin.
	Dirs []string
	// Timeout bounds the login shell; zero means DefaultShellTimeout.
	Timeout time.Duration
}

// NewFinder is a Finder for this user: HOME and SHELL from the environment.
func NewFinder() *Finder {
	home, _ := os.UserHomeDir()
	return &Finder{Home: home, Shell: os.Getenv("SHELL")}
}

// Found is a program a Finder found, and the place that yielded it, in
// words ("the login-shell PATH", "/usr/bin", "~/.nvm (v20.3.1)").
type Found struct {
	Path  string
	Where string
}

func (f *Finder) dirs() []string {
	if f.Dirs != nil {
		return f.Dirs
	}
	return []string{"/opt/homebrew/bin", "/usr/local/bin", "/usr/bin"}
}

// Node finds node as the host does: the login-shell PATH, then Dirs, then
// ~/.volta/bin, then the newest (by version number) ~/.nvm/versions/node/*/bin/node.
// It blocks for at most Timeout on the login shell. When nothing is found
// the error wraps ErrNodeNotFound and names every place it looked.
func (f *Finder) Node(ctx context.Context) (Found, error) {
	var looked []string
	if f.Shell != "" {
		p, err := f.LoginPath(ctx, "node")
		if err == nil {
			return Found{Path: p, Where: "the login-shell PATH"}, nil
		}
		how := fmt.Sprintf("%s -lc 'command -v node'", f.Shell)
		if errors.Is(err, context.DeadlineExceeded) {
			how += ", which gave no answer in time"
		}
		looked = append(looked, "the login-shell PATH ("+how+")")
	}
	dirs := slices.Clone(f.dirs())
	if f.Home != "" {
		dirs = append(dirs, filepath.Join(f.Home, ".volta", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "node")
		if isExecutable(p) == nil {
			return Found{Path: p, Where: f.tilde(d)}, nil
		}
		looked = append(looked, f.tilde(d))
	}
	if f.Home != "" {
		nvm := filepath.Join(f.Home, ".nvm", "versions", "node")
		if p, v, ok := newestNVM(nvm); ok {
			return Found{Path: p, Where: fmt.Sprintf("~/.nvm (%s)", v)}, nil
		}
		looked = append(looked, f.tilde(nvm)+"/*/bin")
	}
	return Found{}, fmt.Errorf("%w: looked in %s", ErrNodeNotFound, strings.Join(looked, ", "))
}

// LoginPath runs `Shell -lc 'command -v NAME'` with HOME set to Home and
// stdin empty, and returns the absolute path it prints (the last line, so
// that a chatty profile does not matter) if that names an executable file.
// It blocks for at most Timeout.
func (f *Finder) LoginPath(ctx context.Context, name string) (string, error) {
	if f.Shell == "" {
		return "", fmt.Errorf("find %s on the login PATH: no login shell", name)
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultShellTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.Shell, "-lc", "command -v "+shellword.Quote(name))
	cmd.Env = os.Environ()
	if f.Home != "" {
		cmd.Env = append(cmd.Env, "HOME="+f.Home)
	}
	cmd.WaitDelay = 500 * time.Millisecond // a background job of the profile may hold stdout
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("find %s with %s -lc: gave no answer within %v: %w", name, f.Shell, timeout, context.DeadlineExceeded)
	}
	if err != nil {
		return "", fmt.Errorf("find %s with %s -lc: %w", name, f.Shell, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	p := strings.TrimSpace(lines[len(lines)-1])
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("find %s with %s -lc: not found (got %q)", name, f.Shell, p)
	}
	if err := isExecutable(p); err != nil {
		return "", fmt.Errorf("find %s with %s -lc: %s: %w", name, f.Shell, p, err)
	}
	return p, nil
}

// tilde writes a path under Home as ~/….
func (f *Finder) tilde(p string) string {
	if f.Home != "" {
		if rel, err := filepath.Rel(f.Home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}

// newestNVM is the node of the highest version under dir (nvm's
// versions/node), comparing versions as numbers: v20.10.0 beats v20.9.1
// and v9.11.2. Folders that are not versions or hold no executable
// bin/node are passed over.
func newestNVM(dir string) (path, version string, ok bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", false
	}
	type cand struct {
		name string
		v    [3]int
		pre  bool
	}
	var cands []cand
	for _, e := range entries {
		if v, pre, ok := parseVersion(e.Name()); ok {
			cands = append(cands, cand{e.Name(), v, pre})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		for i := range a.v {
			if a.v[i] != b.v[i] {
				return b.v[i] - a.v[i]
			}
		}
		switch {
		case a.pre == b.pre:
			return strings.Compare(b.name, a.name)
		case a.pre:
			return 1 // a release beats its pre-release
		}
		return -1
	})
	for _, c := range cands {
		p := filepath.Join(dir, c.name, "bin", "node")
		if isExecutable(p) == nil {
			return p, c.name, true
		}
	}
	return "", "", false
}

// parseVersion reads vMAJOR.MINOR.PATCH with an optional -pre or +build.
func parseVersion(s string) (v [3]int, pre bool, ok bool) {
	s, found := strings.CutPrefix(s, "v")
	if !found {
		return v, false, false
	}
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		pre = s[i] == '-'
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false, false
		}
		v[i] = n
	}
	return v, pre, true
}

// isExecutable says why p is not a regular file with an exec bit, or nil.
// It follows symlinks. The error does not repeat the path.
func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return bare(err)
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not executable (no exec bit)")
	}
	return nil
}

// bare is err without the path an *fs.PathError adds, for messages that
// name the path themselves.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lookPath finds name as the host's environment would: on the login-shell
// PATH, else on this process's PATH (the host's own PATH follows the login
// PATH in the plugin's environment).
func (f *Finder) lookPath(ctx context.Context, name string) (Found, error) {
	if f.Shell != "" {
		if p, err := f.LoginPath(ctx, name); err == nil {
			return Found{Path: p, Where: "the login-shell PATH"}, nil
		}
	}
	p, err := exec.LookPath(name)
	if err == nil {
		p, err = filepath.Abs(p)
	}
	if err != nil {
		where := "PATH"
		if f.Shell != "" {
			where = "the login-shell PATH or PATH"
		}
		return Found{}, fmt.Errorf("not found on %s", where)
	}
	return Found{Path: p, Where: "PATH"}, nil
}
