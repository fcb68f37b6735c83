package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
)

// How frames are stored: see checksum.go.
const (
	batchFrames = 1000
	batchBytes  = 8 << 20
	// remapBytes is how many bytes of frames one write stores between two
	// openings of the database. bbolt reads the pages a transaction
	// changes through its memory map, and the pages it read stay resident
	// (and count in the process's RSS) until the map goes: without a new
	// map, a 10 M-frame import held 316 MB of it. Opening anew costs a
	// read of the meta and freelist pages; the store's lock is held
	// throughout, so no other process comes between.
	remapBytes = 32 << 20
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
	defer func() {
		if db != nil { // the last map's (closing the first twice is harmless)
			db.Close()
		}
	}()
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
	mapped := 0 // bytes stored since the database was opened
	for !done {
		if mapped >= s.remapEvery {
			db.Close()
			if db, err = s.openBolt(true, s.lockTimeout); err != nil {
				return fmt.Errorf("store frames of %s: %w", meta.ID, err)
			}
			mapped = 0
		}
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
						mapped += len(val)
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
					mapped += len(f.Raw)
					return putChunks(chunks, key, f.Raw)
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("store frames of %s: %w", meta.ID, err)
		}
	}
	d.finish()
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

// deriver fills in what the frames tell about a session: counts, bytes,
// and what its host profile reads from its handshake.
type deriver struct {
	meta *frame.Session
	hs   profile.Handshake
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
	d.hs.See(f)
}

// finish sets what the whole session tells.
func (d *deriver) finish() { d.hs.Finish(d.meta) }

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
