package playback

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/datafolder"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/tape"
)

// Recording is a recording to replay, check or compare: a tape file or a
// stored session, its frames read whole. A tape's lines are not kept: an
// update that rewrites them reads them then (WritePending).
type Recording struct {
	Name     string // the tape's path or the session's id
	TapePath string // "" for a stored session
	Meta     *frame.Session
	Frames   []frame.Frame
}

// LoadOptions say where Load finds what is not a tape file.
type LoadOptions struct {
	// Store opens the store a session reference is resolved in; nil
	// resolves tape files only.
	Store func() (*store.Store, error)
}

// Load reads ref as a tape when it names a file, else as a session
// reference (id, prefix, name or last) in the store. A reference that
// looks like a path (a folder in it, a tape's extension) and does not
// exist is a missing file.
func Load(ref string, opt *LoadOptions) (*Recording, error) {
	st, err := locate(ref, opt)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return ReadTape(ref)
	}
	return FromStore(st, ref)
}

// FromStore reads the session ref names in st.
func FromStore(st *store.Store, ref string) (*Recording, error) {
	s, err := storeStream(st, ref)
	if err != nil {
		return nil, err
	}
	rec := &Recording{Name: s.Meta.ID, Meta: s.Meta}
	err = s.Each(func(f *frame.Frame) error {
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		rec.Frames = append(rec.Frames, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// ReadTape reads a tape file's frames. The tape is streamed, never held:
// a recording costs its frames and their bytes (a tape line's JSON
// member, not the line).
func ReadTape(path string) (*Recording, error) {
	f, err := smallfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("open tape: %w", err)
	}
	defer f.Close()
	lines, err := countLines(f)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return nil, fmt.Errorf("read tape %s: %w", path, err)
	}
	tf, err := tape.ReadFramesFrom(bufio.NewReaderSize(f, 256<<10), lines)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Recording{Name: path, TapePath: path, Meta: tf.Session, Frames: tf.Frames}, nil
}

// countLines counts the lines r holds that start with "{", as every line
// of a tape but a blank one does: a tape followed by a flood of blank
// lines (which a tape may end with) then costs no room for frames it
// does not hold.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 256<<10)
	n, prev := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if prev == '\n' && buf[0] == '{' {
				n++
			}
			n += bytes.Count(buf[:k], []byte("\n{"))
			prev = buf[k-1]
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// MissingFile is the error for a reference that names a file (it has a
// folder in it, or a tape's extension) that does not exist, given what
// os.Stat said of it: a missing file, not a session that is not stored.
// It is nil for anything else.
func MissingFile(ref string, statErr error) error {
	if !errors.Is(statErr, os.ErrNotExist) || !looksLikePath(ref) {
		return nil
	}
	return fmt.Errorf("%s: no such file", ref)
}

// looksLikePath reports whether ref names a file rather than a session:
// it has a folder in it or a tape's extension.
func looksLikePath(ref string) bool {
	return strings.ContainsRune(ref, '/') || strings.ContainsRune(ref, filepath.Separator) ||
		strings.HasSuffix(ref, ".jsonl") || strings.HasSuffix(ref, ".tape")
}

// isTape reports whether path starts like a tape.
func isTape(path string) bool {
	f, err := smallfile.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t"), []byte(`{"tapedeck"`))
}

// FindTapes lists the tapes under paths (a path may name a tape), sorted;
// node_modules and hidden folders are passed over.
func FindTapes(paths []string) ([]string, error) {
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
		err = eachFile(p, func(path string) {
			if strings.HasSuffix(path, ".jsonl") && isTape(path) {
				tapes = append(tapes, path)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("find tapes in %s: %w", p, err)
		}
	}
	sort.Strings(tapes)
	return tapes, nil
}

// eachFile calls fn with every file under root, passing over node_modules,
// hidden folders (root itself may be one) and tapes' data (NAME.data).
func eachFile(root string, fn func(path string)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() && path != root && strings.HasSuffix(d.Name(), ".data") && isFile(filepath.Join(path, datafolder.StartFile)) {
			return filepath.SkipDir // a tape's data: what its plugin started from, not tapes
		}
		if !d.IsDir() {
			fn(path)
		}
		return nil
	})
}

// isFile reports whether path is a regular file (no link followed).
func isFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
