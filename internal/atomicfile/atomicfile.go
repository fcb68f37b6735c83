// Package atomicfile writes a file whole or not at all: through a
// temporary file in the same folder, renamed into place.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write writes path through a temporary file in the same folder
// and renames it into place, so readers see the old file or the new one.
// Missing parent folders are made (0755). A file that is replaced keeps
// its permissions; a new one gets 0644. An error names path, never the
// temporary file.
func Write(path string, write func(io.Writer) error) (err error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	prefix := "." + filepath.Base(path) + ".tmp-"
	f, err := os.CreateTemp(filepath.Dir(path), prefix+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	return nil
}

// bare is err without the temporary file's name (its base starts with
// prefix), which would only puzzle: "no space left on device".
func bare(err error, prefix string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.HasPrefix(filepath.Base(pe.Path), prefix) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) && strings.HasPrefix(filepath.Base(le.Old), prefix) {
		return le.Err
	}
	return err
}
