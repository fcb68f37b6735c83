// Package store owns tapedeck's database: a bbolt file of sessions and their
// frames, the folder of per-session spools beside it, the ingest of finished
// and orphaned spools, and the queries the commands make. It reads spools
// with the spool package, which owns their record format (the store turns
// records into frames: spool.go); the frame values it keeps in bbolt are its
// own layout around the frame package's encoding (checksum.go). It knows
// nothing of processes. No caller keeps the database open: every operation takes the
// store's lock file, opens bbolt, does one short piece of work and closes it,
// so many recorders and readers share one store. bbolt gets only a file
// whose meta pages and tree shape hold (health.go, pages.go): on anything
// else it faults, panics or loops.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/tapedeck/tapedeck/internal/shellword"
	"github.com/tapedeck/tapedeck/internal/trust"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Schema is the database layout version this package writes. It reads
// every older one: schema 2 added a checksum to every frame and chunk,
// schema 3 put the frame's kind byte under it too (checksum.go), and
// frames stored by either older one read as before. A database is marked
// with this version at its first read-write open, so an older tapedeck
// refuses it (it could not read the new frames) instead of calling them
// damaged.
const Schema = 3

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
	// ErrUnsafe: the store folder is not the user's alone (see Open).
	ErrUnsafe = errors.New("unsafe store folder")
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
	// remapEvery is how many bytes of frames a long write stores before it
	// opens the database anew (see putNotes); remapBytes unless a test
	// sets less.
	remapEvery int
	// readOnly: the folder cannot be written (a read-only file system, or
	// a folder this user may only read); reads need no lock file there.
	readOnly bool
	// sound is the last state of the database file whose trees walked
	// clean (inspectFile), so that the batches of one long read do not
	// walk them again while nothing writes.
	sound struct {
		sync.Mutex
		stamp fileStamp
		walks int // how many times the trees were walked
	}
}

// Open prepares the store in dir, creating the folder (0700) and its spool
// folder when missing (unless opts.MustExist: then a missing folder is
// ErrNoStore). It does not open the database.
//
// A store folder, or its spool folder, that others could write is refused
// with ErrUnsafe before anything is read or made in it: whoever can write
// there can put sessions in the store, or a database of their own, or
// take the place of its files. So is one owned by another user (but
// root). A folder that cannot be written (a read-only file system, one
// this user may only read) opens for reading when opts.MustExist is set:
// reads then take no lock file where none can be made, and nothing is
// ingested.
func Open(dir string, opts *Options) (*Store, error) {
	mustExist := opts != nil && opts.MustExist
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		if mustExist {
			return nil, fmt.Errorf("%w at %s", ErrNoStore, dir)
		}
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	default:
		if err := checkFolder(dir, fi); err != nil {
			return nil, err
		}
	}
	s := &Store{dir: dir, lockTimeout: 10 * time.Second, remapEvery: remapBytes}
	if opts != nil && opts.LockTimeout > 0 {
		s.lockTimeout = opts.LockTimeout
	}
	if opts != nil {
		s.noSync = opts.NoSync
	}
	spools := filepath.Join(dir, spoolDir)
	if err := os.MkdirAll(spools, 0o700); err != nil {
		if !mustExist || !cannotWrite(err) {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		s.readOnly = true
	}
	if fi, err := os.Stat(spools); err == nil {
		if err := checkFolder(spools, fi); err != nil {
			return nil, err
		}
	}
	if !s.readOnly && syscall.Access(dir, 2 /* W_OK */) != nil {
		s.readOnly = true
	}
	return s, nil
}

// checkFolder refuses, with ErrUnsafe, a folder of the store that others
// could write, or that another user (but root) owns.
func checkFolder(path string, fi os.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("open store %s: not a folder", path)
	}
	if trust.OthersCanWrite(fi) {
		return fmt.Errorf("%w: %s can be written by others (mode %04o), who could put sessions or a database of their own in it; make it yours alone (chmod go-w %s) or choose another (--store DIR)",
			ErrUnsafe, path, fi.Mode().Perm(), shellword.Quote(path))
	}
	if owner, me, foreign := trust.ForeignOwner(fi); foreign {
		return fmt.Errorf("%w: %s belongs to user %d, not to you (user %d), who could change what it holds; choose a store of your own (--store DIR)",
			ErrUnsafe, path, owner, me)
	}
	return nil
}

// cannotWrite reports whether err says a file or folder cannot be written
// or made: a read-only file system, or no permission.
func cannotWrite(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission)
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
//
// A reader of a store that cannot be written locks the lock file opened
// for reading, or, where there is none and none can be made, takes no
// lock of its own: bbolt's read-only open still locks the database file
// shared, which keeps writers out while it reads.
func (s *Store) lock(exclusive bool, timeout time.Duration) (func(), error) {
	path := filepath.Join(s.dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil && !exclusive && cannotWrite(err) {
		f, err = os.Open(path)
		if err != nil && (errors.Is(err, os.ErrNotExist) || cannotWrite(err)) {
			return func() {}, nil
		}
	}
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
			// Unlocked before it is closed: a child forked meanwhile holds
			// a copy of the descriptor, and with it the lock, until it
			// execs (see spool's unlockClose).
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
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
	switch err := s.checkFile(write); {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		if !write {
			unlock()
			return nil, nil, nil
		}
		if err := s.create(); err != nil {
			unlock()
			return nil, nil, err
		}
	case errors.Is(err, ErrEmpty):
		unlock()
		if !write {
			return nil, nil, nil
		}
		// bbolt would start it anew, silently: a file emptied by
		// something else keeps whatever a recovery tool could find.
		return nil, nil, fmt.Errorf("%w; tapedeck writes nothing over it: move it aside (the next command starts a new database and takes the sessions waiting in %s)",
			err, filepath.Join(s.dir, spoolDir))
	case errors.Is(err, ErrDamaged):
		unlock()
		return nil, nil, err // it names the file
	default:
		unlock()
		return nil, nil, fmt.Errorf("open %s: %w", s.dbPath(), err)
	}
	db, err := s.openBolt(write, max(timeout-time.Since(start), 10*time.Millisecond))
	if err != nil {
		unlock()
		return nil, nil, err
	}
	closeFn := func() {
		db.Close()
		if write {
			s.wrote()
		}
		unlock()
	}
	if err := checkSchema(db, write); err != nil {
		closeFn()
		return nil, nil, err
	}
	return db, closeFn, nil
}

// wrote takes the state a write of this store left the database in for
// sound, its lock still held: its trees walked clean when the write opened
// it, and bbolt wrote what changed, so the next opening in this process
// need not walk them again (a thousand puts in one process walked a
// growing file a thousand times).
func (s *Store) wrote() {
	stamp, err := inspectFile(s.dbPath(), true, nil)
	if err != nil {
		return // the next opening walks it, and says what is wrong
	}
	s.sound.Lock()
	s.sound.stamp = stamp
	s.sound.Unlock()
}

// openBolt opens the database file, its lock held and the file checked
// (see db).
func (s *Store) openBolt(write bool, timeout time.Duration) (*bolt.DB, error) {
	opts := &bolt.Options{Timeout: timeout, ReadOnly: !write, InitialMmapSize: 0}
	var db *bolt.DB
	err := safely(func() error {
		var err error
		db, err = bolt.Open(s.dbPath(), 0o600, opts)
		return err
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s is locked by another process; try again", ErrBusy, s.dbPath())
		}
		if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
			return nil, fmt.Errorf("open %s: %w", s.dbPath(), damaged("%v", err))
		}
		return nil, fmt.Errorf("open %s: %w", s.dbPath(), err)
	}
	db.NoSync = s.noSync && write
	return db, nil
}

// checkFile is inspectFile on the database, with its trees walked unless
// they walked clean in the state the file is still in.
func (s *Store) checkFile(freelist bool) error {
	s.sound.Lock()
	known := s.sound.stamp
	s.sound.Unlock()
	stamp, err := inspectFile(s.dbPath(), freelist, &known)
	if err == nil {
		s.sound.Lock()
		if stamp != known {
			s.sound.walks++
		}
		s.sound.stamp = stamp
		s.sound.Unlock()
	}
	return err
}

// create makes the database, under the store's exclusive lock, when there
// is none: bbolt writes its first pages into a file of its own, which is
// then linked into place, so that tapedeck.db is never a file that bbolt
// began and could not finish (a full disk leaves a 0-byte one), which the
// next write would take for one emptied by something else.
func (s *Store) create() error {
	tmp, err := os.CreateTemp(s.dir, ".tapedeck.db-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", s.dbPath(), err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	db, err := bolt.Open(tmp.Name(), 0o600, &bolt.Options{Timeout: time.Second})
	if err == nil {
		err = db.Close()
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", s.dbPath(), err)
	}
	if err := os.Link(tmp.Name(), s.dbPath()); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", s.dbPath(), err)
	}
	if !s.noSync {
		if d, err := os.Open(s.dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
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
