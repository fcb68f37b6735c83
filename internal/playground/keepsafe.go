package playground

// What Keep it checks before it writes: that the tapes folder does not
// lead out of the plugin folder through a link, and that it overwrites a
// kept session only when the page asked to.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/internal/datafolder"
)

// existsError is Keep's answer when NAME's tape, host script or data is there
// already and overwriting was not asked for: the page asks the person,
// and keeps again with the overwrite flag.
type existsError struct {
	Paths []string // as the page shows them: from the plugin folder when inside it
}

func (e *existsError) Error() string {
	verb := "exists"
	if len(e.Paths) > 1 {
		verb = "exist"
	}
	return fmt.Sprintf("%s %s already: keep the session under another name, or overwrite", joinAnd(e.Paths), verb)
}

// existing lists NAME's files that are there already (a link counts: it
// would be replaced).
func (s *server) existing(name string) error {
	tapePath, scriptPath := keepPaths(s.tapes, name)
	var there []string
	for _, p := range []string{tapePath, scriptPath, datafolder.Beside(tapePath)} {
		if _, err := os.Lstat(p); err == nil {
			there = append(there, relTo(s.plugin.Dir, p))
		}
	}
	if len(there) == 0 {
		return nil
	}
	return &existsError{Paths: there}
}

// tapesInside checks that the tapes folder, when its path is inside the
// plugin folder, is there once its links are followed (the part of it
// that exists): a tapes/ that is a link out of the folder, put there by
// whoever made the folder, would have Keep write where it leads. A tapes
// folder given outside the plugin folder (--tapes) is the person's.
func (s *server) tapesInside() error {
	if !within(s.plugin.Dir, s.tapes) {
		return nil
	}
	root := s.plugin.Dir
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	real, err := resolve(s.tapes)
	if err != nil {
		return fmt.Errorf("keep: the tapes folder %s: %w", relTo(s.plugin.Dir, s.tapes), err)
	}
	if !within(root, real) {
		return fmt.Errorf("keep: the tapes folder %s leads out of the plugin folder, to %s: Keep it writes only inside %s; make %s a folder of its own, or name another with --tapes", relTo(s.plugin.Dir, s.tapes), real, s.plugin.Dir, relTo(s.plugin.Dir, s.tapes))
	}
	return nil
}

// resolve is path with the links of its longest existing part followed,
// and the rest as it is.
func resolve(path string) (string, error) {
	var rest []string
	for p := filepath.Clean(path); ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within says whether path is dir or inside it (both absolute, clean).
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
