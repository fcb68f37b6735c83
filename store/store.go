// Package store owns tapedeck's database: a bbolt file of sessions and their
// frames, the folder of per-session spools beside it, the ingest of finished
// and orphaned spools, and the queries the commands make. It reads spools
// with the spool package, which owns their record format (the store turns
// records into frames: spool.go); the frame values it keeps in bbolt are its
// own layout around the frame package's encoding (checksum.go). It knows
// nothing of processes. No caller keeps the database open: every operation takes the
// store's lock file, opens bbolt, does one short piece of work and closes it,
// so many recorders and readers share one store.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Schema is the database layout version this package writes. It reads
// every older one: schema 2 added a checksum to every frame and chunk
// (checksum.go), and frames stored without one read as before. A database
// is marked 2 at its first read-write open by this version, so an older
// tapedeck refuses it (it could not read the new frames) instead of
// calling them damaged.
const Schema = 2

// File names inside the store folder.
const (
	dbName    = "tapedeck.db"
	lockName  = "tapedeck.lock"
	spoolDir  = "spool"
	chunkSize = 4000
)

var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketFrames   = []byte("frames")
	bucketChunks   = []byte("chunks")
	keySchema      = []byte("schema")
	bucketNotes    = []byte("notes") // session id → JSON notes (check findings)
	bucketTally    = []byte("tally") // session id → how many frames were stored (checksum.go)
)

// Sentinel errors.
var (
	ErrBusy        = errors.New("store is busy")
	ErrNewerSchema = errors.New("store was written by a newer tapedeck")
	ErrDamaged     = errors.New("database damaged")
	// ErrEmpty: the database file has 0 bytes (see Health).
	ErrEmpty     = errors.New("database file is empty (0 bytes)")
	ErrNotFound  = errors.New("no such session")
	ErrAmbiguous = errors.New("ambiguous session reference")
	ErrExists    = errors.New("session already stored")
	// ErrRecording: the operation would disturb a session being recorded.
	ErrRecording = errors.New("session is recording")
	// ErrWouldGrow: Compact kept the old file, the copy being larger.
	ErrWouldGrow = errors.New("compacting would grow the file")
	// ErrRemoved: Frames found the session removed while it read it.
	ErrRemoved = errors.New("session was removed while it was read")
	// ErrNoStore: Open with MustExist found no store folder.
	ErrNoStore = errors.New("no store")
)

// Options tunes a Store. A nil *Options means the defaults.
type Options struct {
	// LockTimeout bounds how long an operation waits for the database.
	// Zero means 10 s.
	LockTimeout time.Duration
	// NoSync skips fsync on commit: what is committed survives the death of
	// the process but not of the machine. For tests and bulk loads.
	NoSync bool
	// MustExist makes Open fail with ErrNoStore, creating nothing, when the
	// folder does not exist: for commands that only read.
	MustExist bool
}

// Store is a store folder. It holds no open files between calls and is safe
// for concurrent use, including from several processes.
type Store struct {
	dir         string
	lockTimeout time.Duration
	noSync      bool
}

// Open prepares the store in dir, creating the folder (0700) and its spool
// folder when missing (unless opts.MustExist: then a missing folder is
// ErrNoStore). It does not open the database.
func Open(dir string, opts *Options) (*Store, error) {
	if opts != nil && opts.MustExist {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoStore, dir)
		}
	}
	s := &Store{dir: dir, lockTimeout: 10 * time.Second}
	if opts != nil && opts.LockTimeout > 0 {
		s.lockTimeout = opts.LockTimeout
	}
	if opts != nil {
		s.noSync = opts.NoSync
	}
	if err := os.MkdirAll(filepath.Join(dir, spoolDir), 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return s, nil
}

// Dir is the store folder.
func (s *Store) Dir() string { return s.dir }

// SpoolPath is where the spool of session id lives while it records.
func (s *Store) SpoolPath(id string) string {
	return filepath.Join(s.dir, spoolDir, id+".spool")
}

func (s *Store) dbPath() string { return filepath.Join(s.dir, dbName) }

// lock takes the store's lock file: shared for readers, exclusive for
// writers. bbolt polls its own flock every 50 ms, unfairly; this lock polls
// briefly and keeps every holder short.
func (s *Store) lock(exclusive bool, timeout time.Duration) (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock store %s: %w", s.dir, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	wait := 500 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock store %s: %w", s.dir, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s stayed locked for %v; another tapedeck is writing, try again", ErrBusy, s.dir, timeout)
		}
		time.Sleep(wait)
		wait = min(wait*2, 10*time.Millisecond)
	}
}

// db opens the database under the store lock. write asks for a read-write
// handle; a read-only call on a store without a database returns (nil, nil).
// The returned close func releases both.
func (s *Store) db(write bool, timeout time.Duration) (*bolt.DB, func(), error) {
	if timeout <= 0 {
		timeout = s.lockTimeout
	}
	start := time.Now()
	unlock, err := s.lock(write, timeout)
	if err != nil {
		return nil, nil, err
	}
	// bbolt maps the file and reads it through the mapping: a file shorter
	// than its meta page says would fault. Check it first; a writer never
	// touches a damaged file, and a reader takes a 0-byte one for none.
	switch err := checkFile(s.dbPath(), write); {
	case err == nil:
	case errors.Is(err, os.ErrNotExist), errors.Is(err, ErrEmpty):
		if !write {
			unlock()
			return nil, nil, nil
		}
	case errors.Is(err, ErrDamaged):
		unlock()
		return nil, nil, err // it names the file
	default:
		unlock()
		return nil, nil, fmt.Errorf("open %s: %w", s.dbPath(), err)
	}
	opts := &bolt.Options{
		Timeout:         max(timeout-time.Since(start), 10*time.Millisecond),
		ReadOnly:        !write,
		InitialMmapSize: 0,
	}
	var db *bolt.DB
	err = safely(func() error {
		var err error
		db, err = bolt.Open(s.dbPath(), 0o600, opts)
		return err
	})
	if err != nil {
		unlock()
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, nil, fmt.Errorf("%w: %s is locked by another process; try again", ErrBusy, s.dbPath())
		}
		if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
			return nil, nil, fmt.Errorf("open %s: %w", s.dbPath(), damaged("%v", err))
		}
		return nil, nil, fmt.Errorf("open %s: %w", s.dbPath(), err)
	}
	db.NoSync = s.noSync && write
	closeFn := func() {
		db.Close()
		unlock()
	}
	if err := checkSchema(db, write); err != nil {
		closeFn()
		return nil, nil, err
	}
	return db, closeFn, nil
}

func checkSchema(db *bolt.DB, write bool) error {
	check := func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return nil
		}
		v := b.Get(keySchema)
		var n int
		if _, err := fmt.Sscanf(string(v), "%d", &n); err != nil {
			return damaged("schema version %q unreadable", v)
		}
		if n > Schema {
			return fmt.Errorf("%w: %s has schema %d, this tapedeck reads up to %d: upgrade tapedeck", ErrNewerSchema, db.Path(), n, Schema)
		}
		return nil
	}
	if !write {
		return safely(func() error { return db.View(check) })
	}
	return safely(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := check(tx); err != nil {
				return err
			}
			b, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if !bytes.Equal(b.Get(keySchema), []byte(fmt.Sprint(Schema))) {
				if err := b.Put(keySchema, []byte(fmt.Sprint(Schema))); err != nil {
					return err
				}
			}
			for _, name := range [][]byte{bucketSessions, bucketFrames, bucketChunks, bucketIndex, bucketNotes, bucketTally} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return buildIndex(tx)
		})
	})
}

// safely turns a panic inside bbolt (it panics on some damaged pages) and a
// memory fault in its mapping of the file (a page that is not there) into
// an error wrapping ErrDamaged, so a damaged file is reported, not crashed
// on. bbolt runs on the calling goroutine, which is the one the fault
// setting covers.
func safely(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged("%v", r)
		}
	}()
	return fn()
}

// view runs fn in a read transaction; fn is not called when there is no
// database yet.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	db, closeDB, err := s.db(false, 0)
	if err != nil || db == nil {
		return err
	}
	defer closeDB()
	return safely(func() error { return db.View(fn) })
}
