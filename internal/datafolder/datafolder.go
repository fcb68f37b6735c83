// Package datafolder owns the data a session started from: a copy of each
// folder the plugin keeps its state in, taken as a session starts (Copy),
// carried beside its golden tape (NAME.data/ beside NAME.jsonl: Beside,
// Start), and copied again for each replay, so that every run starts from
// what the recording started from and no two runs share a folder; and
// whether a run used a folder it was given (Watch). It copies folders and
// regular files only, never through a link, bounded (Limits). It knows no
// host: which folder is a plugin's data folder is its profile's to say,
// what is done with a copy is the caller's. The standard library alone.
//
// A tape's data is the folder NAME.data beside it:
//
//	NAME.data/folders.json   which folders it carries, and the paths the recording gave them
//	NAME.data/data/          the data folder the host named (Agentty's dataDir)
//	NAME.data/env/VAR/       the folder of variable VAR (play and replay --fresh-dir VAR)
//
// A folder folders.json names whose files are not there (git keeps no
// empty folder) started empty.
package datafolder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// StartFile is the file in a tape's data folder that says what it holds.
const StartFile = "folders.json"

// Limits bound a copy: its bytes (the sum of its files' sizes) and its
// files and folders.
type Limits struct {
	Bytes int64
	Files int
}

// Carried are the limits of the data a tape carries into git, and of a
// copy a replay makes of a folder that is not carried: far more than a
// plugin's settings and state, far less than a cache.
var Carried = Limits{Bytes: 16 << 20, Files: 2000}

// String says the limits as an error says them.
func (l Limits) String() string {
	return fmt.Sprintf("%d MiB or %d files", l.Bytes>>20, l.Files)
}

// Errors.
var (
	// ErrTooLarge: the folder holds more than the limits.
	ErrTooLarge = errors.New("larger than a copy may be")
	// ErrLink: a tape's data folder, or a folder of it, is a symbolic link.
	ErrLink = errors.New("a symbolic link, not a folder")
)

// Copied is what a copy took, and what it left out.
type Copied struct {
	Files int   // files and folders copied
	Bytes int64 // their bytes
	// Left are the entries left out, relative to the source (links, named
	// pipes, devices, sockets): a copy holds folders and regular files.
	Left []string
}

// Copy copies the folder src into dst, which it makes (0700; it must not
// exist): its folders and regular files with their modes and times, never
// following a link inside it (src itself may be one). Past lim it stops
// and returns an error wrapping ErrTooLarge that says how far it got; on
// any error dst is removed.
func Copy(dst, src string, lim Limits) (c Copied, err error) {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return c, fmt.Errorf("copy %s: %w", src, err)
	}
	if fi, err := os.Stat(root); err != nil {
		return c, fmt.Errorf("copy %s: %w", src, err)
	} else if !fi.IsDir() {
		return c, fmt.Errorf("copy %s: not a folder", src)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return c, fmt.Errorf("copy %s: %w", src, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dst)
		}
	}()
	type dirTime struct {
		path string
		fi   fs.FileInfo
	}
	var dirs []dirTime
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			c.Files++
			if err := c.within(lim, src); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{to, fi})
			return os.Mkdir(to, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			c.Files++
			c.Bytes += fi.Size()
			if err := c.within(lim, src); err != nil {
				return err
			}
			return copyFile(to, path, fi)
		}
		c.Left = append(c.Left, rel)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return c, err
		}
		return c, fmt.Errorf("copy %s: %w", src, err)
	}
	// Folders' times last: a file made in one moves its time.
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chmod(dirs[i].path, dirs[i].fi.Mode().Perm()|0o700)
		os.Chtimes(dirs[i].path, dirs[i].fi.ModTime(), dirs[i].fi.ModTime())
	}
	return c, nil
}

// within says whether a copy that has taken c is still within lim.
func (c *Copied) within(lim Limits, src string) error {
	if lim.Bytes > 0 && c.Bytes > lim.Bytes || lim.Files > 0 && c.Files > lim.Files {
		return fmt.Errorf("%s holds more than %s: %w", src, lim, ErrTooLarge)
	}
	return nil
}

// copyFile copies the regular file src (as fi describes it) to the new
// file dst, with its mode and time.
func copyFile(dst, src string, fi fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, fi.Size())); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	os.Chmod(dst, fi.Mode().Perm())
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// Beside is the folder a tape's data travels in: NAME.data beside
// NAME.jsonl (or beside the tape's name, whatever its extension).
func Beside(tape string) string {
	return strings.TrimSuffix(tape, filepath.Ext(tape)) + ".data"
}

// Start says what a tape's data folder holds: the folders the recording
// started from, each by the path the recording gave it.
type Start struct {
	// Data is the path of the data folder the host named (its files in
	// data/); "" when the tape carries none.
	Data string `json:"data,omitempty"`
	// Env maps each variable whose folder the tape carries (its files in
	// env/VAR/) to the path the recording gave it.
	Env map[string]string `json:"env,omitempty"`
}

// VarName reports whether name may name a variable whose folder a tape's
// data carries: it is a folder's name in the tape's data (env/NAME), and
// a variable of the plugin's: [A-Za-z_][A-Za-z0-9_]*.
func VarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Vars are the variables of Env, sorted.
func (s *Start) Vars() []string {
	var out []string
	for k := range s.Env {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DataDir is where the data folder's files are in the tape's data folder
// dir; EnvDir, the folder of variable name's.
func DataDir(dir string) string      { return filepath.Join(dir, "data") }
func EnvDir(dir, name string) string { return filepath.Join(dir, "env", name) }

// Read reads the data the tape at path carries: the folder beside it and
// what it holds. It returns "", nil, nil when the tape carries none, and
// an error for a data folder that cannot be read, or that is a link or
// holds one where a folder is named (a tape is a file anyone can write).
func Read(tape string) (dir string, s *Start, err error) {
	dir = Beside(tape)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("the tape's data %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", nil, fmt.Errorf("the tape's data %s: %w", dir, ErrLink)
	case !fi.IsDir():
		return "", nil, fmt.Errorf("the tape's data %s: not a folder", dir)
	}
	f, err := os.Open(filepath.Join(dir, StartFile))
	if err != nil {
		return "", nil, fmt.Errorf("the tape's data %s: %w (tapedeck play's Keep it writes it)", dir, err)
	}
	defer f.Close()
	s = &Start{}
	dec := json.NewDecoder(io.LimitReader(f, 1<<20))
	if err := dec.Decode(s); err != nil {
		return "", nil, fmt.Errorf("the tape's data %s: %s: %w", dir, StartFile, err)
	}
	for k := range s.Env {
		if !VarName(k) {
			return "", nil, fmt.Errorf("the tape's data %s: %s names the variable %q: want a name such as COSMICA_HOME", dir, StartFile, k)
		}
	}
	for _, sub := range append([]string{filepath.Join(dir, "env"), DataDir(dir)}, envDirs(dir, s)...) {
		if fi, err := os.Lstat(sub); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", nil, fmt.Errorf("the tape's data %s: %w", sub, ErrLink)
		}
	}
	return dir, s, nil
}

func envDirs(dir string, s *Start) []string {
	var out []string
	for _, k := range s.Vars() {
		out = append(out, EnvDir(dir, k))
	}
	return out
}

// Fill makes dst (it must not exist) a copy of the folder src of a tape's
// data (within Carried), or an empty folder when src is not there (git
// keeps no empty folder).
func Fill(dst, src string) (Copied, error) {
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		return Copied{}, os.Mkdir(dst, 0o700)
	}
	return Copy(dst, src, Carried)
}

// Write writes s as the data folder dir's StartFile (dir must exist).
func (s *Start) Write(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, StartFile), append(b, '\n'), 0o644)
}
