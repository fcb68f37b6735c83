package cli

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/tape"
)

func (e *env) importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "store tapes (JSONL) as sessions",
		ArgsUsage: "FILE… (- reads standard input)",
		Description: "Each tape becomes a session with the id, name and metadata of its header.\n" +
			"A tape whose session is stored already is refused (tapedeck rm it first).\n" +
			"A line longer than --max-frame is stored cut, as record stores it: its first\n" +
			"bytes, its length and its SHA-256.\n" +
			"The tapes that can be imported are; the exit status is 1 if any could not.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-frame", Value: capture.DefaultMaxLine, Usage: "store at most this many `bytes` of a line; longer lines are stored cut"},
		},
		Action: e.importTapes,
	}
}

func (e *env) importTapes(c *cli.Context) error {
	if c.NArg() == 0 {
		return fail(2, "import needs at least one FILE (a tape written by tapedeck export)")
	}
	st, err := e.openOrMakeStore(c.String("store"))
	if err != nil {
		return err
	}
	maxFrame := c.Int("max-frame")
	if maxFrame <= 0 {
		return fail(2, "import: --max-frame %d: want a positive number of bytes", maxFrame)
	}
	failed := 0
	for _, name := range c.Args().Slice() {
		meta, n, err := e.importTape(st, name, maxFrame)
		if err != nil {
			failed++
			fmt.Fprintf(e.stderr, "tapedeck: import %s: %v\n", name, err)
			continue
		}
		label := meta.ID
		if meta.Name != "" {
			label += " (" + escape.Text(meta.Name) + ")"
		}
		fmt.Fprintf(e.stdout, "imported %s: %d frames from %s\n", label, n, escape.Text(name))
	}
	if failed > 0 {
		return fail(1, "")
	}
	return nil
}

// importTape stores one tape and returns its session and frame count. A
// frame longer than maxFrame bytes is stored cut.
func (e *env) importTape(st *store.Store, name string, maxFrame int) (*frame.Session, int, error) {
	var in io.Reader = e.stdin
	if name != "-" {
		f, err := smallfile.OpenRegular(name)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		in = f
	}
	tr, err := tape.NewReader(in)
	if err != nil {
		return nil, 0, err
	}
	tr.CutLinesOver(maxFrame) // a longer line is read as it goes, never held whole
	meta := *tr.Session()
	if err := checkTapeID(&meta); err != nil {
		return nil, 0, err
	}
	if meta.Cwd != "" && !filepath.IsAbs(meta.Cwd) && name != "-" {
		// A tape exported --relative names its plugin's folder from the
		// tape's own; stored, the session is replayed from anywhere.
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(name), meta.Cwd))
		if err != nil {
			return nil, 0, fmt.Errorf("resolve the working directory %s: %w", meta.Cwd, err)
		}
		meta.Cwd = abs
	}
	if meta.Status == frame.StatusRecording || meta.Status == "" {
		// A snapshot of a live session: nothing will finish it here.
		meta.Status = frame.StatusInterrupted
	}
	n := 0
	err = st.Put(meta, func() (*frame.Frame, error) {
		f, err := tr.Next()
		if err == nil {
			n++
			cutFrame(f, maxFrame)
		}
		return f, err
	})
	switch {
	case errors.Is(err, store.ErrExists):
		return nil, 0, fmt.Errorf("session %s is stored already (tapedeck rm %s first, or keep it)", meta.ID, meta.ID)
	case err != nil && (errors.Is(err, tape.ErrMalformed) || errors.Is(err, tape.ErrNewer)):
		st.Delete(meta.ID) // what the interrupted put left behind
		return nil, 0, unwrapTape(err)
	case err != nil:
		st.Delete(meta.ID)
		return nil, 0, err
	}
	return &meta, n, nil
}

// unwrapTape returns the tape reader's own error from inside the store's
// wrapping, which names the line and what is wrong.
func unwrapTape(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "tape line ") {
			return e
		}
	}
	return err
}

// checkTapeID makes sure a tape's session id can be a store key: a tape
// written by hand may have none (then one is made from its start time).
func checkTapeID(m *frame.Session) error {
	if m.ID == "" {
		t := m.Started
		if t.IsZero() {
			t = time.Now()
		}
		m.ID = frame.NewID(t)
		return nil
	}
	if len(m.ID) > 200 || strings.ContainsAny(m.ID, "/\\\x00") || strings.ContainsFunc(m.ID, func(r rune) bool { return r < 0x20 || r == 0x7f }) || m.ID == "." || m.ID == ".." || m.ID == "last" {
		return fmt.Errorf("tape line 1: session id %q cannot name a session (want letters and digits)", m.ID)
	}
	return nil
}

// cutFrame cuts f to its first maxFrame bytes, as record stores a line longer
// than its --max-frame: Cut keeps the full length and the SHA-256 of the
// whole line (a frame that was cut already keeps its own).
func cutFrame(f *frame.Frame, maxFrame int) {
	if f.IsEvent() || len(f.Raw) <= maxFrame {
		return
	}
	if f.Cut == nil {
		f.Cut = &frame.Cut{Len: int64(len(f.Raw)), SHA256: sha256.Sum256(f.Raw)}
	}
	f.Raw = f.Raw[:maxFrame]
}
