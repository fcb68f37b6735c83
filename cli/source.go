package cli

// A recording to replay, check or compare, read from a tape file or the
// store; finding tapes under folders; what a replay runs and in which
// environment.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/tape"
)

// source is a recording to replay or check: a tape file or a stored session.
type source struct {
	name     string // the tape's path or the session's id
	tapePath string // "" for a stored session
	tape     *tape.File
	meta     *frame.Session
	frames   []frame.Frame
}

// loadSource reads ref as a tape when it names a file, else as a session
// reference in the store.
func (e *env) loadSource(c *cli.Context, ref string) (*source, error) {
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		return readTapeFile(ref)
	} else if err := missingFile(ref, err); err != nil {
		return nil, err
	}
	st, err := e.openStore(c)
	if err != nil {
		return nil, err
	}
	meta, err := st.Resolve(ref)
	if err != nil {
		return nil, fmt.Errorf("%v (a tape file or a session: id, prefix, name or last)", err)
	}
	src := &source{name: meta.ID, meta: meta}
	err = st.Frames(meta.ID, func(f *frame.Frame) error {
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		src.frames = append(src.frames, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", meta.ID, err)
	}
	return src, nil
}

// missingFile is the error for a reference that names a file (it has a
// folder in it, or a tape's extension) that does not exist, given what
// os.Stat said of it: a missing file, not a session that is not stored.
// It is nil for anything else.
func missingFile(ref string, statErr error) error {
	if !errors.Is(statErr, os.ErrNotExist) || !looksLikePath(ref) {
		return nil
	}
	return fmt.Errorf("%s: no such file", ref)
}

func looksLikePath(ref string) bool {
	return strings.ContainsRune(ref, '/') || strings.ContainsRune(ref, filepath.Separator) ||
		strings.HasSuffix(ref, ".jsonl") || strings.HasSuffix(ref, ".tape")
}

func readTapeFile(path string) (*source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open tape: %w", err)
	}
	tf, err := tape.ReadFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &source{name: path, tapePath: path, tape: tf, meta: tf.Session, frames: tf.Frames}, nil
}

// isTape reports whether path starts like a tape.
func isTape(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t"), []byte(`{"tapedeck"`))
}

// command works out what to run: the argv after "--" in the current
// directory (or --cwd), else the recorded command in the recorded working
// directory; a relative recorded directory is taken from the tape's folder,
// and an absolute program that is missing here is looked up by name.
func (s *source) command(argv []string, cwd string) (cmd []string, dir string, notes []string, err error) {
	if len(argv) > 0 {
		dir = cwd
		if dir == "" {
			dir, _ = os.Getwd()
		}
		return argv, dir, nil, nil
	}
	if len(s.meta.Command) == 0 {
		return nil, "", nil, fmt.Errorf("%s has no recorded command: give one after --", s.name)
	}
	cmd = append([]string(nil), s.meta.Command...)
	dir = s.meta.Cwd
	if cwd != "" {
		dir = cwd
	} else if dir != "" && !filepath.IsAbs(dir) && s.tapePath != "" {
		dir = filepath.Join(filepath.Dir(s.tapePath), dir)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, "", nil, fmt.Errorf("the recorded working directory %s does not exist here: give --cwd DIR (replay and shrink also take a command after --)", dir)
		}
	}
	if filepath.IsAbs(cmd[0]) {
		if _, err := os.Stat(cmd[0]); errors.Is(err, os.ErrNotExist) {
			if p, err := exec.LookPath(filepath.Base(cmd[0])); err == nil {
				notes = append(notes, fmt.Sprintf("%s is not here; using %s", cmd[0], p))
				cmd[0] = p
			}
		}
	}
	return cmd, dir, notes, nil
}

// env is the plugin's environment: ours plus the recorded AGENTTY_*
// variables. A tape's env may name others (a tape is a file anyone can
// write): those are never applied, and ignored names them.
func (s *source) env() (env, added, ignored []string) {
	env = os.Environ()
	keys := make([]string, 0, len(s.meta.Env))
	for k := range s.meta.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, "AGENTTY_") || strings.ContainsAny(k, "=\x00") {
			ignored = append(ignored, k)
			continue
		}
		added = append(added, k+"="+s.meta.Env[k])
	}
	return append(env, added...), added, ignored
}

// findTapes lists the tapes under paths, sorted.
func findTapes(paths []string) ([]string, error) {
	var tapes []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			tapes = append(tapes, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != p) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".jsonl") && isTape(path) {
				tapes = append(tapes, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find tapes in %s: %w", p, err)
		}
	}
	sort.Strings(tapes)
	return tapes, nil
}

// tapeFrames reads a tape's header and returns a function that streams its
// frames, reading the file again on each call (the HTML report reads twice).
func tapeFrames(path string) (*frame.Session, func(func(*frame.Frame) error) error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	tr, err := tape.NewReader(bufio.NewReaderSize(f, 64<<10))
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := tr.Session()
	return meta, func(fn func(*frame.Frame) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		tr, err := tape.NewReader(bufio.NewReaderSize(f, 64<<10))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for {
			fr, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := fn(fr); err != nil {
				return err
			}
		}
	}, nil
}
