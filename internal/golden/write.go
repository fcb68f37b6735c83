package golden

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/tape"
)

// WriteTape writes a recorded session as a golden tape at path, the way
// it goes into git: its working directory (and the arguments that are
// paths inside it) relative to the tape's folder, as export --relative
// writes it, so that it replays from any checkout; and export's default
// redactions, keyed by storeKey (the store's key, asked only when a
// value is redacted), so that credential-like
// net/fetch header values, environment variables, tags and --NAME=
// arguments become stable placeholders and the header says so (a replay
// redacts the live frames the same way). The header's byte counts are
// those of the frames as written. The file is replaced atomically.
func WriteTape(path string, meta frame.Session, frames []frame.Frame, storeKey func() ([]byte, error)) error {
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write tape %s: %w", path, err)
	}
	if err := relativeTo(&meta, abs); err != nil {
		return fmt.Errorf("write tape %s: %w", path, err)
	}
	frames, err = redactForGit(&meta, frames, storeKey)
	if err != nil {
		return fmt.Errorf("write tape %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := tape.WriteAll(bw, &meta, frames); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// relativeTo writes meta's working directory relative to the tapes
// folder, and arguments that are paths inside it relative to it.
func relativeTo(meta *frame.Session, tapes string) error {
	if meta.Cwd == "" || !filepath.IsAbs(meta.Cwd) {
		return nil
	}
	rel, err := filepath.Rel(tapes, meta.Cwd)
	if err != nil {
		return fmt.Errorf("relative working directory: %w", err)
	}
	cmd := append([]string(nil), meta.Command...)
	for i, a := range cmd {
		if r, err := filepath.Rel(meta.Cwd, a); err == nil && filepath.IsAbs(a) && !strings.HasPrefix(r, "..") {
			if i == 0 {
				r = "./" + r
			}
			cmd[i] = r
		}
	}
	meta.Cwd, meta.Command = rel, cmd
	return nil
}

// redactForGit applies export's default redactions to frames and meta.
func redactForGit(meta *frame.Session, frames []frame.Frame, storeKey func() ([]byte, error)) ([]frame.Frame, error) {
	red, err := redact.NewKeyed(redact.Config{Defaults: true}, nil, storeKey)
	if err != nil || red == nil {
		return frames, err
	}
	out := make([]frame.Frame, len(frames))
	var bytes frame.Counts
	for i, f := range frames {
		out[i] = f
		if f.IsEvent() {
			continue
		}
		red.Frame(&out[i])
		if f.Cut != nil {
			bytes.Add(f.Dir, f.Cut.Len)
		} else {
			bytes.Add(f.Dir, int64(len(out[i].Raw)))
		}
	}
	meta.Bytes = bytes
	red.Session(meta)
	meta.Redaction = redact.Merge(meta.Redaction, red.Description())
	return out, nil
}
