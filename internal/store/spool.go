package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/spool"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// Reading spools: the frames of a session that is recording, or whose
// recorder finished or died before the store took it in. Everything that
// reads a spool goes through spoolScan, so ingest, listing, show and follow
// agree on what a spool says, on a long line that came in pieces, and on
// damage. The records and their payloads are the spool package's to read
// and decode; what they mean as frames is decided here.

// damagedDir is where spools that could not be read whole are kept, inside
// the spool folder.
const damagedDir = "damaged"

// ErrSpoolDamaged: a spool could not be read whole. Its session was stored
// as far as it could be read, or, for a file that is no spool at all, not
// at all; the file was moved into spool/damaged/ either way. The error
// says which, once; the command goes on.
var ErrSpoolDamaged = errors.New("spool is damaged")

// spoolScan turns a spool's records into frames. A long line that came in
// pieces is joined; a line whose pieces are in the spool but whose end is
// not (its recorder was killed in the middle of it) becomes a frame stored
// cut, at the end; damage is skipped and counted.
type spoolScan struct {
	f     *os.File
	r     *spool.Reader
	meta  *frame.Session
	end   *frame.End
	notes []byte
	// live: the recorder still appends, so the end of what is readable now
	// is not the end of the session.
	live    bool
	fr      frame.Frame
	lines   [4]partial // by frame.Dir: the line whose pieces came so far
	lastSeq uint64
	lastAt  int64
	bad     int64 // bytes of records that read but did not decode
	// batch is what is left of a record of whole lines.
	batch struct {
		dir  frame.Dir
		seq  uint64
		at   int64
		rest []byte
	}
}

// partial is the beginning of a line that came in pieces.
type partial struct {
	buf   []byte
	at    int64 // when its last piece came
	gap   bool  // a piece is missing: buf is only the clean beginning
	order int64 // where its first piece was in the spool
}

// openScan opens the spool at path and reads its session record. A missing
// spool gives an error wrapping os.ErrNotExist; one that is no spool (or
// has no readable session record) an error wrapping spool.ErrNotSpool.
func openScan(path string) (*spoolScan, error) {
	f, r, err := spool.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read spool %s: %w", path, err)
	}
	meta, err := readSpoolMeta(r)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read spool %s: %w: %v", path, spool.ErrNotSpool, err)
	}
	return &spoolScan{f: f, r: r, meta: meta}, nil
}

func (s *spoolScan) close() { s.f.Close() }

func readSpoolMeta(r *spool.Reader) (*frame.Session, error) {
	p, err := r.Session()
	if err != nil {
		return nil, err
	}
	meta := new(frame.Session)
	if err := json.Unmarshal(p, meta); err != nil {
		return nil, fmt.Errorf("spool session record: %w", err)
	}
	if meta.ID == "" || strings.ContainsAny(meta.ID, "/\x00") {
		return nil, fmt.Errorf("spool session record has a bad id %q", meta.ID)
	}
	return meta, nil
}

// setLive sets live mode (see spoolScan.live).
func (s *spoolScan) setLive(live bool) {
	s.live = live
	s.r.SetLive(live)
}

// resume goes on after next returned io.EOF, reading what was appended
// since.
func (s *spoolScan) resume() error {
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("read spool %s: %w", s.f.Name(), err)
	}
	s.r.Resume(fi.Size())
	return nil
}

// unreadable is the number of bytes of the spool that could not be read.
func (s *spoolScan) unreadable() int64 { return s.r.Damaged() + s.bad }

// next returns the next frame; io.EOF at the end (in live mode: the end of
// what is readable now). The frame and its Raw are valid until the next
// call. Notes and the end record are kept as they pass.
func (s *spoolScan) next() (*frame.Frame, error) {
	for {
		if b := &s.batch; len(b.rest) > 0 {
			i := wire.LineEnd(b.rest)
			s.fr = frame.Frame{Seq: b.seq, At: b.at, Dir: b.dir, Raw: b.rest[:i]}
			b.rest, b.seq = b.rest[i+1:], b.seq+1
			s.lines[b.dir].reset()
			return s.seen(&s.fr), nil
		}
		typ, p, err := s.r.Next()
		if err == io.EOF {
			if s.live {
				return nil, io.EOF
			}
			return s.unfinished()
		}
		if err != nil {
			return nil, fmt.Errorf("read spool %s: %w", s.f.Name(), err)
		}
		switch typ {
		case spool.TypeNotes:
			s.notes = bytes.Clone(p)
		case spool.TypeEnd:
			end := new(frame.End)
			if err := json.Unmarshal(p, end); err != nil {
				s.bad += int64(len(p))
				continue
			}
			s.end = end
		case spool.TypeFrame:
			if s.fr, err = frame.Decode(p); err != nil {
				s.bad += int64(len(p))
				continue
			}
			if !s.fr.IsEvent() {
				// Pieces before a whole line of the same stream belong to a
				// line the recorder could not finish storing (and counted
				// as lost).
				s.lines[s.fr.Dir].reset()
			}
			return s.seen(&s.fr), nil
		case spool.TypeLines:
			b := &s.batch
			d, seq, at, rest, err := spool.DecodeLines(p)
			if err != nil {
				s.bad += int64(len(p))
				continue
			}
			b.dir, b.seq, b.at, b.rest = frame.Dir(d), seq, at, rest
		case spool.TypePiece:
			d, off, at, b, err := spool.DecodePiece(p)
			if err != nil {
				s.bad += int64(len(p))
				continue
			}
			l := &s.lines[d]
			if off == 0 {
				l.reset()
				l.order = s.r.Offset()
			}
			if l.gap || off != int64(len(l.buf)) {
				l.gap = true
				continue
			}
			l.buf = append(l.buf, b...)
			l.at = at
		case spool.TypeTail:
			prefix, enc, err := spool.DecodeTail(p)
			if err != nil {
				s.bad += int64(len(p))
				continue
			}
			fr, err := frame.Decode(enc)
			if err != nil || fr.IsEvent() { // an event has no pieces
				s.bad += int64(len(p))
				continue
			}
			s.fr = fr
			l := &s.lines[fr.Dir]
			if !l.gap && prefix == int64(len(l.buf)) {
				l.buf = append(l.buf, fr.Raw...)
				s.fr.Raw = l.buf
			} else {
				// A piece is missing: keep the clean beginning, cut.
				full := prefix + int64(len(fr.Raw))
				cut := &frame.Cut{Len: full}
				if fr.Cut != nil {
					*cut = *fr.Cut
				}
				s.fr.Raw, s.fr.Cut = l.buf[:min(int64(len(l.buf)), prefix)], cut
			}
			l.reset()
			return s.seen(&s.fr), nil
		}
	}
}

func (l *partial) reset() { l.buf, l.gap = l.buf[:0], false }

func (s *spoolScan) seen(f *frame.Frame) *frame.Frame {
	s.lastSeq = max(s.lastSeq, f.Seq)
	s.lastAt = f.At
	return f
}

// unfinished returns, after the last record, the lines whose pieces came
// but whose end did not, one at a time in the order they began, each as a
// frame stored cut (Raw, Len and hash are what came); then io.EOF. A
// session that ended has none: a line it could not finish storing was
// counted as lost.
func (s *spoolScan) unfinished() (*frame.Frame, error) {
	if s.end != nil {
		return nil, io.EOF
	}
	var l *partial
	var d frame.Dir
	for i := range s.lines {
		c := &s.lines[i]
		if len(c.buf) > 0 && (l == nil || c.order < l.order) {
			l, d = c, frame.Dir(i)
		}
	}
	if l == nil {
		return nil, io.EOF
	}
	s.fr = frame.Frame{Seq: s.lastSeq + 1, At: l.at, Dir: d, Raw: l.buf, NoEOL: true,
		Cut: &frame.Cut{Len: int64(len(l.buf)), SHA256: sha256.Sum256(l.buf)}}
	l.reset()
	return s.seen(&s.fr), nil
}

// finish completes m from what the scan found after its last frame: the end
// record (or fallback when there is none), and damage.
func (s *spoolScan) finish(m *frame.Session, fallback *frame.End) {
	end := s.end
	if end == nil {
		end = fallback
	}
	applyEnd(m, end, s.lastAt)
	if n := s.unreadable(); n > 0 {
		m.Status, m.Unreadable = frame.StatusDamaged, n
	}
}

// applyEnd completes a session's metadata from its end record, or marks it
// interrupted when its recorder died before writing one.
func applyEnd(m *frame.Session, end *frame.End, lastAt int64) {
	if end == nil {
		m.Status = frame.StatusInterrupted
		ended := m.Started.Add(time.Duration(lastAt))
		m.Ended = &ended
		return
	}
	m.Status = end.Status
	ended := end.Ended
	m.Ended = &ended
	m.Exit = end.Exit
	m.Lost = end.Lost
	m.Error = end.Error
	m.Fingerprint = end.Fingerprint
	if end.ClockMissed && m.Clock != nil {
		m.Clock.Missed = true
	}
}

// Ingest stores the finished or orphaned spool at path and removes it. The
// caller holds the spool's lock (as its writer, or through spool.TryLock).
// A spool whose session is stored already is just removed. timeout bounds
// the wait for the database (zero: the store's default). end, when not nil,
// stands in for an end record the spool lacks: the recorder passes it when
// it could not append one (a full disk), so the session still says how it
// ended and what was lost.
//
// A spool damaged before its tail is stored as far as it reads (status
// damaged, with the count of unreadable bytes), moved into spool/damaged/
// instead of being removed, and reported with an error wrapping
// ErrSpoolDamaged. A file that is no spool at all is moved there too.
func (s *Store) Ingest(path string, timeout time.Duration, fallback *frame.End) error {
	sc, err := openScan(path)
	if errors.Is(err, spool.ErrNotSpool) {
		return s.setAside(path, err)
	}
	if err != nil {
		return fmt.Errorf("ingest %s: %w", path, err)
	}
	defer sc.close()
	meta := sc.meta
	finish := func(m *frame.Session, _ int64) { sc.finish(m, fallback) }
	err = s.putNotes(meta, sc.next, finish, &sc.notes, timeout)
	if err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("ingest %s: %w", meta.ID, err)
	}
	if n := sc.unreadable(); n > 0 {
		kept, merr := s.moveAside(path)
		if merr != nil {
			return fmt.Errorf("%w: session %s: %d bytes of its spool could not be read; stored what could be (status %s); %v",
				ErrSpoolDamaged, meta.ID, n, frame.StatusDamaged, merr)
		}
		return fmt.Errorf("%w: session %s: %d bytes of its spool could not be read; stored what could be (status %s), the spool is kept as %s",
			ErrSpoolDamaged, meta.ID, n, frame.StatusDamaged, kept)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ingest %s: %w", meta.ID, err)
	}
	return nil
}

// setAside moves a file that is no spool out of the way and says so.
func (s *Store) setAside(path string, why error) error {
	kept, err := s.moveAside(path)
	if err != nil {
		return fmt.Errorf("%w: %v; and it could not be moved aside: %v", ErrSpoolDamaged, why, err)
	}
	return fmt.Errorf("%w: %v; moved to %s", ErrSpoolDamaged, why, kept)
}

// moveAside moves the spool at path into spool/damaged/, under a name no
// other file there has, and returns where it went.
func (s *Store) moveAside(path string) (string, error) {
	dir := filepath.Join(s.dir, spoolDir, damagedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	base := filepath.Base(path)
	for i := 0; ; i++ {
		dst := filepath.Join(dir, base)
		if i > 0 {
			dst = filepath.Join(dir, fmt.Sprintf("%s.%d", base, i))
		}
		// Link, not rename, so that an existing file is never replaced.
		err := os.Link(path, dst)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("move %s aside: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("move %s aside: %w", path, err)
		}
		return dst, nil
	}
}

// Recover ingests every spool whose recorder is gone: finished sessions whose
// ingest did not happen, and interrupted ones. Live spools are left alone.
// Every command calls it first, so a killed recorder's frames reach the
// database at the next look. A damaged spool does not stop it: it is stored
// as far as it reads (or, when it is no spool at all, not) and moved into
// spool/damaged/; the returned error says so, once, with the other
// failures. A store that cannot be written is left as it is.
func (s *Store) Recover() error {
	if s.readOnly {
		return nil // the spools are read where they are
	}
	paths, err := s.spools()
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range paths {
		l, err := spool.TryLock(path)
		if errors.Is(err, spool.ErrLocked) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Stat(path); err == nil { // not ingested by another process meanwhile
			if err := s.Ingest(path, 0, nil); err != nil {
				errs = append(errs, fmt.Errorf("recover: %w", err))
			}
		}
		l.Release()
	}
	return errors.Join(errs...)
}

// spools lists the spool files, oldest session first.
func (s *Store) spools() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, spoolDir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list spools: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".spool") && e.Type().IsRegular() {
			paths = append(paths, filepath.Join(s.dir, spoolDir, e.Name()))
		}
	}
	return paths, nil
}

// spoolSession reads a spool's metadata and counts, streaming its frames to
// fn when fn is set. A spool whose writer holds its lock is recording; one
// with an end record is finished; one without, whose writer is gone, is
// interrupted; one with unreadable bytes is damaged.
func (s *Store) spoolSession(path string, fn func(*frame.Frame) error) (*frame.Session, error) {
	sc, err := openScan(path)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	live := spoolLive(path)
	sc.setLive(live)
	meta := sc.meta
	d := deriver{meta: meta}
	for {
		f, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		d.see(f)
		if fn != nil {
			if err := fn(f); err != nil {
				return nil, err
			}
		}
	}
	d.finish()
	if sc.end == nil && live && spoolLive(path) {
		meta.Status = frame.StatusRecording
		return meta, nil
	}
	sc.finish(meta, nil)
	return meta, nil
}

// spoolLive reports whether a recorder holds the spool at path.
func spoolLive(path string) bool {
	l, err := spool.TryLock(path)
	if err == nil {
		l.Release()
	}
	return errors.Is(err, spool.ErrLocked)
}

// spoolHeader reads only a spool's session record.
func spoolHeader(path string) (*frame.Session, error) {
	sc, err := openScan(path)
	if err != nil {
		return nil, err
	}
	sc.close()
	sc.meta.Status = frame.StatusRecording
	return sc.meta, nil
}

// spoolNotes reads the notes of a session still in its spool.
func (s *Store) spoolNotes(id string) ([]byte, error) {
	sc, err := openScan(s.SpoolPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", id, err)
	}
	defer sc.close()
	for {
		if _, err := sc.next(); err != nil {
			return sc.notes, nil
		}
	}
}

// Follow is Frames for a session that may still be recording: it calls fn
// with every frame so far and then with each new frame as the recorder
// appends it, and returns when the session ends (its end record is
// written, or its recorder is gone), when ctx is done (with ctx's error) or
// when fn fails. Before each wait for new frames it calls idle (when set),
// so a caller can flush its output. For a session that is not recording,
// Follow is Frames. poll is how often a live spool is checked (zero: 25 ms).
func (s *Store) Follow(ctx context.Context, id string, poll time.Duration, idle func() error, fn func(*frame.Frame) error) error {
	if poll <= 0 {
		poll = 25 * time.Millisecond
	}
	path := s.SpoolPath(id)
	sc, err := openScan(path)
	if errors.Is(err, os.ErrNotExist) {
		return s.Frames(id, fn)
	}
	if err != nil {
		return fmt.Errorf("follow %s: %w", id, err)
	}
	defer sc.close()
	sc.setLive(spoolLive(path))
	for {
		f, err := sc.next()
		if err == nil {
			if err := fn(f); err != nil {
				return err
			}
			continue
		}
		if err != io.EOF {
			return fmt.Errorf("follow %s: %w", id, err)
		}
		if sc.end != nil || !sc.live {
			return nil
		}
		if !spoolLive(path) {
			// The recorder is gone: read what it wrote last, to the end.
			sc.setLive(false)
		} else {
			if idle != nil {
				if err := idle(); err != nil {
					return err
				}
			}
			timer := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
		}
		if err := sc.resume(); err != nil {
			return fmt.Errorf("follow %s: %w", id, err)
		}
	}
}
