// Package pending owns the changes to goldens that wait for review: test
// --update and replay --update write a replay's live run beside its tape
// as NAME.jsonl.new (Write; a stored session's live run is stored as a new
// session instead, see Update), and review finds them (Find), compares
// each with its tape (Compare, Summarise), and accepts or rejects it.
package pending

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/golden"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
	"github.com/tapedeck/tapedeck/tape"
)

// Suffix marks a tape's pending change, written by test --update
// and replay --update beside the tape and accepted or rejected by review.
const Suffix = ".new"

// Write writes the live run of a replay that differed beside its
// tape as NAME.jsonl.new (every line of a frame that did not change kept
// byte for byte; the header's counts, exit and fingerprint say the live
// run's, so that accepting the change makes the replay's surroundings the
// ones later drift is told against); "" when there is nothing to write.
func Write(o *playback.Outcome) (string, error) {
	if o.Recording.TapePath == "" || o.Run == nil {
		return "", nil
	}
	tf, err := readLines(o.Recording)
	if err != nil {
		return "", err
	}
	data, err := golden.Update(tf, golden.Replay{Live: o.Run.Live, Pairs: o.Run.Pairs, Sent: o.Run.Sent, Fingerprint: o.LiveFingerprint()}, o.Diff, golden.Options{Stderr: o.DiffOptions.CompareStderr})
	if err != nil || data == nil {
		return "", err
	}
	path := o.Recording.TapePath + Suffix
	err = atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(data); return err })
	return path, err
}

// readLines reads rec's tape again with its lines, for an update that
// rewrites them; it fails when the tape no longer holds the frames that
// were replayed.
func readLines(rec *playback.Recording) (*tape.File, error) {
	data, err := os.ReadFile(rec.TapePath)
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", rec.TapePath, err)
	}
	tf, err := tape.ReadFile(data)
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", rec.TapePath, err)
	}
	same := len(tf.Frames) == len(rec.Frames)
	for i := 0; same && i < len(tf.Frames); i++ {
		same = tf.Frames[i].Seq == rec.Frames[i].Seq && bytes.Equal(tf.Frames[i].Raw, rec.Frames[i].Raw)
	}
	if !same {
		return nil, fmt.Errorf("update %s: the tape changed while it was replayed; run the replay again", rec.TapePath)
	}
	return tf, nil
}

// Updated is what Update made of a replay's live run.
type Updated struct {
	Pending string         // the NAME.jsonl.new written beside a tape ("" when none)
	Stored  *frame.Session // the new session of a stored session's live run
}

// Update makes the live run of a replay the golden, to be reviewed: a
// tape's change is written beside it as NAME.jsonl.new (Write;
// nothing when it has no difference), a stored session's live run is
// stored as a new session of the store that open opens (StoreLive). A
// replay that could not run or timed out updates nothing: what a killed
// plugin said is no golden.
func Update(o *playback.Outcome, open func() (*store.Store, error)) (*Updated, error) {
	if o.Err != nil || o.Run == nil || o.Run.TimedOut {
		return &Updated{}, nil
	}
	if o.Recording.TapePath != "" {
		path, err := Write(o)
		return &Updated{Pending: path}, err
	}
	st, err := open()
	if err != nil {
		return nil, err
	}
	meta, err := StoreLive(st, o)
	if err != nil {
		return nil, err
	}
	return &Updated{Stored: meta}, nil
}

// StoreLive stores the live run of a replay of a stored session as a new
// session of st, tagged replay-of the recorded one, and returns it.
func StoreLive(st *store.Store, o *playback.Outcome) (*frame.Session, error) {
	meta := *o.Recording.Meta
	meta.Frames, meta.Bytes = frame.Counts{}, frame.Counts{}
	for _, f := range o.Run.Live {
		if f.IsEvent() {
			if f.Event == frame.EventExit {
				meta.Exit = frame.Exit{Code: f.Code(), Signal: f.Signal()}
			}
			continue
		}
		meta.Frames.Add(f.Dir, 1)
		meta.Bytes.Add(f.Dir, int64(len(f.Raw)))
	}
	now := time.Now()
	meta.ID = frame.NewID(now)
	meta.Started, meta.Ended = now.Add(-o.Run.Elapsed), &now
	meta.Status = frame.StatusComplete
	meta.Tags = map[string]string{"replay-of": o.Recording.Meta.ID}
	if fp := o.LiveFingerprint(); fp != nil {
		meta.Fingerprint = fp
	}
	i := 0
	err := st.Put(meta, func() (*frame.Frame, error) {
		if i == len(o.Run.Live) {
			return nil, io.EOF
		}
		i++
		return &o.Run.Live[i-1], nil
	})
	if err != nil {
		return nil, err
	}
	return &meta, nil
}

// Find lists the pending changes under paths (a path may also name a
// tape or its pending file), sorted.
func Find(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil && strings.HasSuffix(p, ".jsonl") {
			if _, err := os.Stat(p + Suffix); err == nil {
				add(p + Suffix)
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			switch {
			case strings.HasSuffix(p, ".jsonl"+Suffix):
				add(p)
			default:
				if _, err := os.Stat(p + Suffix); err == nil {
					add(p + Suffix)
				}
			}
			continue
		}
		err = eachFile(p, func(path string) {
			if strings.HasSuffix(path, ".jsonl"+Suffix) {
				add(path)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("find pending changes in %s: %w", p, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// NotAFile is the error of a pending change that is not a regular
// file: a symbolic link (in a cloned repository it could name any file of
// the user's, to be read, shown and renamed over the tape as if test
// --update had written it) or anything else but a file.
type NotAFile struct {
	Path string
	Link bool // a symbolic link
}

func (e *NotAFile) Error() string {
	if e.Link {
		return e.Path + " is a symbolic link, not a change test --update wrote"
	}
	return e.Path + " is not a regular file"
}

// Check refuses pending changes that are not regular files (see
// NotAFile), or that cannot be looked at.
func Check(pending []string) error {
	for _, p := range pending {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return &NotAFile{Path: p, Link: true}
		case !fi.Mode().IsRegular():
			return &NotAFile{Path: p}
		}
	}
	return nil
}

// Tape is the tape a pending change is beside.
func Tape(pending string) string { return strings.TrimSuffix(pending, Suffix) }

// Accept makes the pending change the tape beside it, and returns
// that tape's path.
func Accept(pending string) (string, error) {
	tapePath := Tape(pending)
	if err := os.Rename(pending, tapePath); err != nil {
		return "", fmt.Errorf("accept %s: %w", pending, err)
	}
	return tapePath, nil
}

// Reject removes the pending change, leaving its tape as it is.
func Reject(pending string) error {
	if err := os.Remove(pending); err != nil {
		return fmt.Errorf("reject %s: %w", pending, err)
	}
	return nil
}

// Compare compares the tape tapePath with its pending change
// pending, golden against pending, stderr included; the outcome is nil for
// a new tape (none at tapePath).
func Compare(tapePath, pending string) (*playback.Outcome, error) {
	golden, err := playback.ReadTape(tapePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	next, err := playback.ReadTape(pending)
	if err != nil {
		return nil, err
	}
	return playback.Compare(golden, next, &playback.CompareOptions{CompareStderr: true, Names: [2]string{"golden", "pending"}})
}

// Summary is what a pending change would change: review --list.
type Summary struct {
	Tape        string         `json:"tape"`
	Pending     string         `json:"pending"`
	New         bool           `json:"new"` // no tape yet: accepting makes it
	Differences int            `json:"differences"`
	Kinds       map[string]int `json:"kinds"` // differences by kind
	// Outcome is the comparison of the tape with its change; nil for a
	// new tape.
	Outcome *playback.Outcome `json:"-"`
}

// Summarise compares each pending change with its tape.
func Summarise(pending []string) ([]Summary, error) {
	out := make([]Summary, 0, len(pending))
	for _, p := range pending {
		tapePath := Tape(p)
		o, err := Compare(tapePath, p)
		if err != nil {
			return nil, err
		}
		s := Summary{Tape: tapePath, Pending: p, New: o == nil, Kinds: map[string]int{}, Outcome: o}
		if o != nil {
			s.Differences = o.Diff.Count()
			for _, d := range o.Diff.Differences {
				s.Kinds[string(d.Kind)]++
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// eachFile calls fn with every file under root, passing over node_modules
// and hidden folders (root itself may be one), as playback.FindTapes does.
func eachFile(root string, fn func(path string)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			fn(path)
		}
		return nil
	})
}
