package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/spool"
)

// How frames are stored: see checksum.go.
const (
	batchFrames = 1000
	batchBytes  = 8 << 20
)

// FrameSource yields a session's frames in order; io.EOF ends it. The frame
// and its Raw may be reused after the next call.
type FrameSource func() (*frame.Frame, error)

// Put stores a whole session: meta (counts, byte totals and the plugin's
// identity are derived from the frames) and its frames. It fails with
// ErrExists when a session with that id is stored already.
func (s *Store) Put(meta frame.Session, next FrameSource) error {
	return s.put(&meta, next, nil, 0)
}

// put writes frames in short transactions and the session record last, so a
// session is visible only once all its frames are in; leftovers of an
// interrupted put are cleared first. finish, when set, completes the metadata
// after the last frame.
func (s *Store) put(meta *frame.Session, next FrameSource, finish func(*frame.Session, int64), timeout time.Duration) error {
	return s.putNotes(meta, next, finish, nil, timeout)
}

// putNotes is put that also stores notes with the session (nil: none); notes
// is read after the last frame, so a source may fill it as it goes.
func (s *Store) putNotes(meta *frame.Session, next FrameSource, finish func(*frame.Session, int64), notes *[]byte, timeout time.Duration) error {
	db, closeDB, err := s.db(true, timeout)
	if err != nil {
		return err
	}
	defer closeDB()
	id := []byte(meta.ID)
	err = safely(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if tx.Bucket(bucketSessions).Get(id) != nil {
				return fmt.Errorf("%w: %s", ErrExists, meta.ID)
			}
			for _, name := range [][]byte{bucketFrames, bucketChunks} {
				if err := tx.Bucket(name).DeleteBucket(id); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store %s: %w", meta.ID, err)
	}

	d := deriver{meta: meta}
	meta.Frames, meta.Bytes = frame.Counts{}, frame.Counts{}
	var lastAt int64
	var tl tally
	done := false
	for !done {
		err := safely(func() error {
			return db.Update(func(tx *bolt.Tx) error {
				frames, err := tx.Bucket(bucketFrames).CreateBucketIfNotExists(id)
				if err != nil {
					return err
				}
				frames.FillPercent = 1.0
				var chunks *bolt.Bucket
				n, size := 0, 0
				for n < batchFrames && size < batchBytes {
					f, err := next()
					if err == io.EOF {
						done = true
						return nil
					}
					if err != nil {
						return err
					}
					d.see(f)
					lastAt = f.At
					tl.add(f.Seq)
					key := binary.BigEndian.AppendUint64(nil, f.Seq)
					if len(f.Raw) <= chunkSize {
						val := inlineValue(key, f)
						if err := frames.Put(key, val); err != nil {
							return err
						}
						n, size = n+1, size+len(val)
						continue
					}
					// A large frame goes in chunks, and its transaction
					// commits before next() may reuse f.Raw.
					if chunks == nil {
						if chunks, err = tx.Bucket(bucketChunks).CreateBucketIfNotExists(id); err != nil {
							return err
						}
						chunks.FillPercent = 1.0
					}
					if err := frames.Put(key, chunkedValue(key, f)); err != nil {
						return err
					}
					return putChunks(chunks, key, f.Raw)
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("store frames of %s: %w", meta.ID, err)
		}
	}
	if finish != nil {
		finish(meta, lastAt)
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("store %s: %w", meta.ID, err)
	}
	err = safely(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketIndex).Put(id, appendSummary(nil, meta)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketTally).Put(id, tl.encode()); err != nil {
				return err
			}
			if notes != nil && len(*notes) > 0 {
				if err := tx.Bucket(bucketNotes).Put(id, *notes); err != nil {
					return err
				}
			}
			return tx.Bucket(bucketSessions).Put(id, js)
		})
	})
	if err != nil {
		return fmt.Errorf("store session %s: %w", meta.ID, err)
	}
	return nil
}

// deriver fills in what the frames tell about a session: counts, bytes and,
// from the host's initialize request, the plugin's identity and API version.
type deriver struct {
	meta    *frame.Session
	sawInit bool
}

func (d *deriver) see(f *frame.Frame) {
	if f.IsEvent() {
		return
	}
	d.meta.Frames.Add(f.Dir, 1)
	size := int64(len(f.Raw))
	if f.Cut != nil {
		size = f.Cut.Len
	}
	d.meta.Bytes.Add(f.Dir, size)
	if d.sawInit || f.Dir != frame.In || f.Cut != nil || !bytes.Contains(f.Raw, []byte(`"initialize"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			APIVersion int `json:"apiVersion"`
			Agentty    struct {
				Version string `json:"version"`
			} `json:"agentty"`
			Plugin frame.Plugin `json:"plugin"`
		} `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSuffix(f.Raw, []byte("\r")), &msg) != nil || msg.Method != "initialize" {
		return
	}
	d.sawInit = true
	if d.meta.Plugin.ID == "" {
		d.meta.Plugin = msg.Params.Plugin
	}
	if d.meta.APIVersion == 0 {
		d.meta.APIVersion = msg.Params.APIVersion
	}
	if d.meta.HostVersion == "" {
		d.meta.HostVersion = msg.Params.Agentty.Version
	}
}

// Ingest stores the finished or orphaned spool at path and removes it. The
// caller holds the spool's lock (as its writer, or through spool.TryLock).
// A spool whose session is stored already is just removed. timeout bounds
// the wait for the database (zero: the store's default). end, when not nil,
// stands in for an end record the spool lacks: the recorder passes it when
// it could not append one (a full disk), so the session still says how it
// ended and what was lost.
func (s *Store) Ingest(path string, timeout time.Duration, fallback *frame.End) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", path, err)
	}
	defer f.Close()
	r, err := spool.NewReader(f)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", path, err)
	}
	meta, err := readSpoolMeta(r)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", path, err)
	}
	var end *frame.End
	var fr frame.Frame
	var notes []byte
	next := func() (*frame.Frame, error) {
		for {
			typ, p, err := r.Next()
			if err != nil {
				return nil, err
			}
			switch typ {
			case spool.TypeNotes:
				notes = bytes.Clone(p)
			case spool.TypeFrame:
				if fr, err = frame.Decode(p); err != nil {
					return nil, fmt.Errorf("spool frame: %w", err)
				}
				return &fr, nil
			case spool.TypeEnd:
				end = new(frame.End)
				if err := json.Unmarshal(p, end); err != nil {
					return nil, fmt.Errorf("spool end record: %w", err)
				}
			}
		}
	}
	finish := func(m *frame.Session, lastAt int64) {
		if end == nil {
			end = fallback
		}
		applyEnd(m, end, lastAt)
	}
	err = s.putNotes(meta, next, finish, &notes, timeout)
	if err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("ingest %s: %w", meta.ID, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ingest %s: %w", meta.ID, err)
	}
	return nil
}

func readSpoolMeta(r *spool.Reader) (*frame.Session, error) {
	typ, p, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("spool has no session record: %w", err)
	}
	if typ != spool.TypeSession {
		return nil, fmt.Errorf("spool starts with record type %q, want session", typ)
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
}

// Recover ingests every spool whose recorder is gone: finished sessions whose
// ingest did not happen, and interrupted ones. Live spools are left alone.
// Every command calls it first, so a killed recorder's frames reach the
// database at the next look.
func (s *Store) Recover() error {
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

func (s *Store) spools() ([]string, error) {
	entries, err := os.ReadDir(s.dir + "/" + spoolDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list spools: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".spool") {
			paths = append(paths, s.dir+"/"+spoolDir+"/"+e.Name())
		}
	}
	return paths, nil
}

// Notes returns the notes stored with session id (JSON, as the recorder
// wrote them), or nil when it has none.
func (s *Store) Notes(id string) ([]byte, error) {
	var notes []byte
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketNotes); b != nil {
			notes = bytes.Clone(b.Get([]byte(id)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", id, err)
	}
	if notes == nil {
		notes, err = s.spoolNotes(id)
	}
	return notes, err
}

// spoolNotes reads the notes of a session still in its spool.
func (s *Store) spoolNotes(id string) ([]byte, error) {
	f, r, _, err := openSpool(s.SpoolPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", id, err)
	}
	defer f.Close()
	var notes []byte
	for {
		typ, p, err := r.Next()
		if err != nil {
			return notes, nil
		}
		if typ == spool.TypeNotes {
			notes = bytes.Clone(p)
		}
	}
}
