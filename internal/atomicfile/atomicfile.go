// Package atomicfile writes a file whole or not at all: through a
// temporary file in the same folder, renamed into place.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Write writes path through a temporary file in the same folder
// and renames it into place, so readers see the old file or the new one.
// Missing parent folders are made (0777 less the umask). A file that is
// replaced keeps its permissions; a new one gets 0666 less the process's
// umask, as any file a program creates (under umask 077 only its owner
// reads it). An error names path, never the temporary file.
func Write(path string, write func(io.Writer) error) (err error) {
	keep := os.FileMode(0)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		keep = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	prefix := "." + filepath.Base(path) + ".tmp-"
	f, err := createTemp(filepath.Dir(path), prefix)
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
	if keep != 0 {
		if err := f.Chmod(keep); err != nil {
			return fmt.Errorf("write %s: %w", path, bare(err, prefix))
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err, prefix))
	}
	return nil
}

// createTemp creates a new file in dir whose name starts with prefix, with
// mode 0666 for the kernel to take the umask from (os.CreateTemp makes
// 0600 whatever the umask).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
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
