package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tapedeck/tapedeck/internal/spool"
)

// Delete removes the sessions with these ids and their frames. Each session
// goes in its own transaction, in order; the first failure stops the rest
// (those before it are gone). A session that is still recording is refused
// with ErrRecording; one that is unknown with ErrNotFound. A finished
// session whose spool was not ingested yet is removed with its spool.
func (s *Store) Delete(ids ...string) error {
	for _, id := range ids {
		if err := s.delete(id); err != nil {
			return fmt.Errorf("remove %s: %w", id, err)
		}
	}
	return nil
}

func (s *Store) delete(id string) error {
	path := s.SpoolPath(id)
	spooled := false
	if _, err := os.Stat(path); err == nil {
		l, err := spool.TryLock(path)
		if errors.Is(err, spool.ErrLocked) {
			return fmt.Errorf("%w: stop its plugin first (or wait for it to end)", ErrRecording)
		}
		if err == nil {
			defer l.Release()
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			spooled = true
		}
	}
	db, closeDB, err := s.db(true, 0)
	if err != nil {
		return err
	}
	defer closeDB()
	key := []byte(id)
	stored := false
	err = safely(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			stored = tx.Bucket(bucketSessions).Get(key) != nil
			for _, name := range [][]byte{bucketSessions, bucketIndex, bucketNotes, bucketTally} {
				if err := tx.Bucket(name).Delete(key); err != nil {
					return err
				}
			}
			for _, name := range [][]byte{bucketFrames, bucketChunks} {
				if err := tx.Bucket(name).DeleteBucket(key); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !stored && !spooled {
		return ErrNotFound
	}
	return nil
}

// Compact rewrites the database into a new file without the free space that
// removed sessions left (bbolt files never shrink), checks the copy, and
// renames it over the old file, so a crash leaves one or the other, never a
// mix. It holds the store's lock throughout, so readers and ingests wait
// (or, for a recorder, leave their spool for later), and it refuses with
// ErrRecording while any session records, and with ErrDamaged (naming the
// session and the frame) when a frame's checksum does not match, or the
// file's pages do not hold, changing nothing. It returns the file's size
// before and after.
func (s *Store) Compact() (before, after int64, err error) {
	unlock, err := s.lock(true, s.lockTimeout)
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	paths, err := s.spools()
	if err != nil {
		return 0, 0, err
	}
	var live []string
	for _, p := range paths {
		l, err := spool.TryLock(p)
		if errors.Is(err, spool.ErrLocked) {
			live = append(live, strings.TrimSuffix(filepath.Base(p), ".spool"))
			continue
		}
		if err == nil {
			l.Release()
		}
	}
	if len(live) > 0 {
		return 0, 0, fmt.Errorf("compact: %w: %s; try again when it has ended", ErrRecording, strings.Join(live, ", "))
	}
	fi, err := os.Stat(s.dbPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("compact: %w", err)
	}
	before = fi.Size()
	if err := s.checkFile(true); err != nil {
		return before, 0, fmt.Errorf("compact: %w", err)
	}
	var src *bolt.DB
	err = safely(func() error {
		var err error
		src, err = bolt.Open(s.dbPath(), 0o600, &bolt.Options{ReadOnly: true, Timeout: s.lockTimeout})
		return err
	})
	if err != nil {
		return before, 0, fmt.Errorf("compact: open %s: %w", s.dbPath(), err)
	}
	defer src.Close()
	if err := checkSchema(src, false); err != nil {
		return before, 0, fmt.Errorf("compact: %w", err)
	}
	// bbolt copies values as they are: a frame whose checksum does not
	// match would go into the new file as if it were sound, and gc say
	// all is well. Every frame is checked first; damage stops it.
	v := &Verified{}
	if err := safely(func() error { return src.View(v.sessions) }); err != nil {
		v.note(err)
	}
	if len(v.Problems) > 0 {
		return before, 0, fmt.Errorf("compact %s: %w; nothing was changed", s.dbPath(), firstProblem("", v.Problems))
	}
	tmp := s.dbPath() + ".compact"
	os.Remove(tmp) // a leftover of a compaction that died
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: s.lockTimeout})
	if err != nil {
		return before, 0, fmt.Errorf("compact: create %s: %w", tmp, err)
	}
	fail := func(err error) (int64, int64, error) {
		dst.Close()
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compact %s: %w", s.dbPath(), err)
	}
	if err := safely(func() error { return bolt.Compact(dst, src, 4<<20) }); err != nil {
		return fail(err)
	}
	var problems []string
	err = dst.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			problems = append(problems, err.Error())
		}
		return nil
	})
	if err == nil && len(problems) > 0 {
		err = fmt.Errorf("the copy does not check out: %s", strings.Join(problems, "; "))
	}
	if err != nil {
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compact: %w", err)
	}
	src.Close()
	if fi, err := os.Stat(tmp); err == nil && fi.Size() > before {
		os.Remove(tmp)
		return before, fi.Size(), fmt.Errorf("%w: the compacted copy would be %d bytes, the file is %d", ErrWouldGrow, fi.Size(), before)
	}
	if err := os.Rename(tmp, s.dbPath()); err != nil {
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compact: %w", err)
	}
	if d, err := os.Open(s.dir); err == nil {
		d.Sync()
		d.Close()
	}
	if fi, err := os.Stat(s.dbPath()); err == nil {
		after = fi.Size()
	}
	return before, after, nil
}

// RedactKeyFile is the name of the redaction key's file in the store folder.
const RedactKeyFile = "redact.key"

// RedactKey returns the store's key for redaction placeholders: 32 random
// bytes in the file redact.key (0600), made on first use, so the same value
// gets the same placeholder in every recording and export of this store.
func (s *Store) RedactKey() ([]byte, error) {
	path := filepath.Join(s.dir, RedactKeyFile)
	if b, err := os.ReadFile(path); err == nil && len(b) >= 16 {
		return b, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make redaction key: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".redact.key-*")
	if err != nil {
		return nil, fmt.Errorf("make redaction key: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(key)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("make redaction key: %w", err)
	}
	// Link fails when another process made the key first; then use theirs.
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make redaction key: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read redaction key: %w", err)
	}
	return b, nil
}
