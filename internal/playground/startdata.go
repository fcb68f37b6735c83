package playground

// The data each run starts from: the plugin's data folder (the
// playground's, kept from run to run as the host keeps it) and the
// folder of each variable of Options.FreshDirs (the playground's copy of
// the one the variable names here) are copied as a run starts, so that
// Keep it can carry beside the tape what the kept session started from
// (package datafolder: NAME.data/), and every replay of it starts there.
// A run that --watch starts to play the actions so far again starts from
// what the run it plays again started from: it is the session clicked,
// with the plugin as it is now.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/internal/datafolder"
	"github.com/tapedeck/tapedeck/internal/environ"
	"github.com/tapedeck/tapedeck/internal/escape"
)

// home is the playground's folder of a variable of Options.FreshDirs.
type home struct {
	name string // the variable
	dir  string // the folder the plugin is given in it
	from string // the folder it was copied from ("": it started empty)
}

// makeHomes makes the playground's folder of each variable: a copy of the
// folder the variable names in env (nil: ours), within datafolder.Carried,
// else empty. What it made is returned with any error, for removeHomes.
func makeHomes(names []string, env []string) ([]home, error) {
	if env == nil {
		env = os.Environ()
	}
	var out []home
	seen := map[string]bool{}
	for _, name := range names {
		if !datafolder.VarName(name) || name == "PATH" || name == "HOME" || strings.HasPrefix(name, "TAPEDECK_") || strings.HasPrefix(name, "AGENTTY_") || name == "NODE_OPTIONS" || name == "PYTHONPATH" {
			return out, fmt.Errorf("--fresh-dir %q: want the name of the variable the plugin reads a folder of its state from, such as COSMICA_HOME", name)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		root, err := os.MkdirTemp("", "tapedeck-play-"+strings.ToLower(name)+"-")
		if err != nil {
			return out, fmt.Errorf("--fresh-dir %s: %w", name, err)
		}
		h := home{name: name, dir: filepath.Join(root, name)}
		out = append(out, h)
		from, _ := environ.Lookup(env, name)
		if fi, err := os.Stat(from); from != "" && err == nil && fi.IsDir() {
			if _, err := datafolder.Copy(h.dir, from, datafolder.Carried); err != nil {
				return out, fmt.Errorf("--fresh-dir %s: the playground starts the plugin from a copy of the folder %s names, which a tape carries beside it: %w; point %s at a folder that holds only what the plugin needs to start", name, name, err, name)
			}
			out[len(out)-1].from = from
			continue
		}
		if err := os.Mkdir(h.dir, 0o700); err != nil {
			return out, fmt.Errorf("--fresh-dir %s: %w", name, err)
		}
	}
	return out, nil
}

// removeHomes removes the playground's folders of the variables.
func removeHomes(homes []home) {
	for _, h := range homes {
		os.RemoveAll(filepath.Dir(h.dir))
	}
}

// startCopy is the copy of what a run started from: dir holds data/ and
// env/VAR/ as a tape's data does; err says why there is none.
type startCopy struct {
	dir string
	err error
}

// keepable says why a session whose start is c cannot be kept (nil: it
// can).
func (c startCopy) keepable() error {
	if c.err == nil {
		return nil
	}
	return fmt.Errorf("keep: what the session started from cannot be kept beside its tape: %w; a replay would not start where it did. Make the plugin's folders smaller (Restart starts a new session from them) and keep a new session", c.err)
}

// startCopyLocked copies what run r starts from (it is about to start; the
// run before it has ended), and lets go of the copy of the run two before
// (the one before may still be being kept). A folder past
// datafolder.Carried is said on the terminal: Keep it cannot carry it.
func (s *server) startCopyLocked(r *run) {
	if old := filepath.Join(s.snaps, strconv.Itoa(r.n-2)); r.n > 2 {
		os.RemoveAll(old)
	}
	if a := r.replayed; a != nil && a.from.dir != "" {
		if err := s.restoreLocked(a.from.dir); err != nil {
			fmt.Fprintf(s.opt.Log, "tapedeck: play: run %d: start from what run %d started from: %s\n", r.n, r.n-1, escape.Text(err.Error()))
		}
	}
	dir := filepath.Join(s.snaps, strconv.Itoa(r.n))
	err := os.Mkdir(dir, 0o700)
	if err == nil {
		_, err = datafolder.Copy(datafolder.DataDir(dir), s.dataDir, datafolder.Carried)
	}
	for _, h := range s.homes {
		if err != nil {
			break
		}
		if err = os.MkdirAll(filepath.Join(dir, "env"), 0o700); err == nil {
			_, err = datafolder.Copy(datafolder.EnvDir(dir, h.name), h.dir, datafolder.Carried)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		r.from = startCopy{err: err}
		if errors.Is(err, datafolder.ErrTooLarge) {
			fmt.Fprintf(s.opt.Log, "tapedeck: play: run %d: %s: Keep it cannot carry what this session starts from beside its tape (it carries at most %s)\n", r.n, escape.Text(err.Error()), datafolder.Carried)
		} else {
			fmt.Fprintf(s.opt.Log, "tapedeck: play: run %d: copy what it starts from: %s\n", r.n, escape.Text(err.Error()))
		}
		return
	}
	r.from = startCopy{dir: dir}
}

// restoreLocked puts the plugin's folders back as the copy dir holds
// them: a run that plays an earlier run's actions again starts where that
// run started.
func (s *server) restoreLocked(dir string) error {
	put := func(to, from string) error {
		if err := os.RemoveAll(to); err != nil {
			return err
		}
		_, err := datafolder.Copy(to, from, datafolder.Carried)
		return err
	}
	if err := put(s.dataDir, datafolder.DataDir(dir)); err != nil {
		return err
	}
	for _, h := range s.homes {
		if err := put(h.dir, datafolder.EnvDir(dir, h.name)); err != nil {
			return err
		}
	}
	return nil
}

// writeStart writes what run r started from beside the tape at tapePath
// (NAME.data), in place of what is there. It returns the folder written.
func (s *server) writeStart(r *run, tapePath string) (string, error) {
	if err := r.from.keepable(); err != nil {
		return "", err
	}
	dst := datafolder.Beside(tapePath)
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".new-")
	if err != nil {
		return "", fmt.Errorf("keep: %w", err)
	}
	defer os.RemoveAll(tmp)
	start := &datafolder.Start{Data: s.dataDir}
	copyIn := func(to, from string) error {
		if ents, err := os.ReadDir(from); err != nil || len(ents) == 0 {
			return err // an empty folder is kept as none: git keeps no empty folder
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		_, err := datafolder.Copy(to, from, datafolder.Carried)
		return err
	}
	if err := copyIn(datafolder.DataDir(tmp), datafolder.DataDir(r.from.dir)); err != nil {
		return "", fmt.Errorf("keep: %w", err)
	}
	for _, h := range s.homes {
		if start.Env == nil {
			start.Env = map[string]string{}
		}
		start.Env[h.name] = h.dir
		if err := copyIn(datafolder.EnvDir(tmp, h.name), datafolder.EnvDir(r.from.dir, h.name)); err != nil {
			return "", fmt.Errorf("keep: %w", err)
		}
	}
	if err := start.Write(tmp); err != nil {
		return "", fmt.Errorf("keep: %w", err)
	}
	// The copies are the person's files in git: readable as the tapes are.
	filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil {
			if d.IsDir() {
				os.Chmod(path, 0o755)
			} else if fi, err := d.Info(); err == nil {
				os.Chmod(path, fi.Mode().Perm()|0o644)
			}
		}
		return nil
	})
	if err := os.RemoveAll(dst); err != nil { // a link goes, not what it leads to
		return "", fmt.Errorf("keep: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("keep: %w", err)
	}
	return dst, nil
}
