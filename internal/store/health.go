package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Damage: what a command says when the database cannot be trusted. The
// words are the same wherever it is found (the file's meta pages, a page
// that faults or panics when read, a frame whose checksum does not match).
const damagedHint = "move it aside; sessions not yet ingested stay in their spools"

// damage is an error wrapping ErrDamaged: what was found, and what to do.
type damage struct{ what string }

func (d *damage) Error() string        { return fmt.Sprintf("%v (%s): %s", ErrDamaged, d.what, damagedHint) }
func (d *damage) Is(target error) bool { return target == ErrDamaged }

// damaged returns a *damage saying what was found.
func damaged(format string, args ...any) error {
	return &damage{what: fmt.Sprintf(format, args...)}
}

// Damaged returns an error wrapping ErrDamaged, in the words the store
// uses for damage, for a caller that finds what the store handed it
// unreadable (a session's metadata that is not JSON, say): what is what
// was found.
func Damaged(what string) error { return &damage{what: what} }

// bbolt's file format (go.etcd.io/bbolt, internal/common): a page starts
// with a 16-byte header; pages 0 and 1 hold a meta record each, whose
// checksum is the FNV-64a of the 56 bytes before it.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 64
	noFreelist     = ^uint64(0)
)

type boltMeta struct {
	pageSize           uint32
	root, freelist, hw uint64 // hw: the high water mark, in pages
	txid               uint64
}

// parseMeta reads the meta record of a page held in b; ok is false when it
// is not a valid one.
func parseMeta(b []byte) (m boltMeta, ok bool) {
	if len(b) < pageHeaderSize+metaSize {
		return m, false
	}
	r := b[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.LittleEndian
	if le.Uint32(r[0:]) != boltMagic || le.Uint32(r[4:]) != boltVersion {
		return m, false
	}
	h := fnv.New64a()
	h.Write(r[:56])
	if h.Sum64() != le.Uint64(r[56:]) {
		return m, false
	}
	m = boltMeta{pageSize: le.Uint32(r[8:]), root: le.Uint64(r[16:]), freelist: le.Uint64(r[32:]), hw: le.Uint64(r[40:]), txid: le.Uint64(r[48:])}
	if m.pageSize < 512 || m.pageSize > 1<<24 || m.pageSize&(m.pageSize-1) != 0 ||
		m.hw < 4 || m.root >= m.hw || (m.freelist >= m.hw && m.freelist != noFreelist) {
		return m, false
	}
	return m, true
}

// checkFile checks the database file at path against its meta pages before
// bbolt maps it: bbolt reads every page through a memory map, and a page
// past the end of a shortened file is a SIGBUS, not an error. It returns
// an error wrapping os.ErrNotExist when there is no file, ErrEmpty for a
// 0-byte one, and one wrapping ErrDamaged when no meta page is valid, the
// file is shorter than the newest valid meta page says, or the root page is
// not one. freelist asks to check the freelist too: bbolt reads it only for
// a read-write open, and it can be long.
func checkFile(path string, freelist bool) error {
	_, err := inspectFile(path, freelist, nil)
	return err
}

// fileStamp is one state of the database file: which file, its size and
// modification time, and the transaction its newest meta page names. A
// commit changes the transaction; bytes written over the file by anything
// else change its time.
type fileStamp struct {
	dev, ino    uint64
	size, mtime int64
	txid        uint64
}

func stampOf(fi os.FileInfo, m boltMeta) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), txid: m.txid}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), uint64(sys.Ino)
	}
	return st
}

// inspectFile does checkFile and, when sound is set, also walks the shape
// of every B+tree of the file (checkTree), unless the file is still in the
// state *sound names, which walked clean. bbolt's cursors loop for ever on
// a cycle of pages (a descent to a first key growing its stack until the
// process dies, a walk by Next starting over), and its reads follow a page
// id outside the file into memory that is not there: only a tree whose
// shape holds is handed to it. The returned stamp is the file's state.
func inspectFile(path string, freelist bool, sound *fileStamp) (fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileStamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileStamp{}, err
	}
	size := fi.Size()
	if size == 0 {
		return fileStamp{}, fmt.Errorf("%w: %s", ErrEmpty, path)
	}
	best, err := newestMeta(f)
	if err != nil {
		return fileStamp{}, err
	}
	if want := int64(best.hw) * int64(best.pageSize); size < want {
		return fileStamp{}, damaged("%s: %d bytes, but its meta page says %d: the file was cut short", path, size, want)
	}
	if err := checkPages(f, best, freelist); err != nil {
		return fileStamp{}, damaged("%s: %v", path, err)
	}
	stamp := stampOf(fi, best)
	if sound == nil || stamp == *sound {
		return stamp, nil
	}
	if problems := checkTree(f, best); len(problems) > 0 {
		return fileStamp{}, firstProblem(path, problems)
	}
	return stamp, nil
}

// Page flags (bbolt internal/common/page.go).
const (
	branchPage   = 0x01
	leafPage     = 0x02
	metaPage     = 0x04
	freelistPage = 0x10
)

// checkPages checks the two pages bbolt reads as it opens a file: the root
// bucket's page (its header) and, when freelist is set, the freelist (its
// header and every page id in it). A writer trusts the freelist: ids out of range there made it
// write at negative offsets.
func checkPages(f *os.File, m boltMeta, freelist bool) error {
	ps := int64(m.pageSize)
	hdr := make([]byte, pageHeaderSize)
	if _, err := f.ReadAt(hdr, int64(m.root)*ps); err != nil {
		return fmt.Errorf("root page %d: %w", m.root, err)
	}
	le := binary.LittleEndian
	if id, flags := le.Uint64(hdr), le.Uint16(hdr[8:]); id != m.root || flags&(branchPage|leafPage) == 0 {
		return fmt.Errorf("root page %d is not a bucket page (id %d, flags %#x)", m.root, id, flags)
	}
	if !freelist || m.freelist == noFreelist {
		return nil
	}
	// bbolt's consistency check asserts, on a goroutine where the panic
	// cannot be caught, that the meta pages and the freelist say who they
	// are.
	for _, p := range [][2]uint64{{0, metaPage}, {1, metaPage}, {m.freelist, freelistPage}} {
		if _, err := f.ReadAt(hdr, int64(p[0])*ps); err != nil {
			return fmt.Errorf("page %d: %w", p[0], err)
		}
		if id, flags := le.Uint64(hdr), le.Uint16(hdr[8:]); id != p[0] || uint64(flags) != p[1] {
			return fmt.Errorf("page %d has the header of page %d, flags %#x", p[0], id, flags)
		}
	}
	if _, err := f.ReadAt(hdr, int64(m.freelist)*ps); err != nil {
		return fmt.Errorf("freelist page %d: %w", m.freelist, err)
	}
	id, flags, count, overflow := le.Uint64(hdr), le.Uint16(hdr[8:]), uint64(le.Uint16(hdr[10:])), int64(le.Uint32(hdr[12:]))
	if id != m.freelist || flags != freelistPage || m.freelist+uint64(overflow) >= m.hw {
		return fmt.Errorf("freelist page %d is not a freelist (id %d, flags %#x, overflow %d)", m.freelist, id, flags, overflow)
	}
	body := make([]byte, (overflow+1)*ps-pageHeaderSize)
	if _, err := f.ReadAt(body, int64(m.freelist)*ps+pageHeaderSize); err != nil {
		return fmt.Errorf("freelist page %d: %w", m.freelist, err)
	}
	if count == 0xFFFF { // the count overflowed into the first element
		count, body = le.Uint64(body), body[8:]
	}
	if count > uint64(len(body)/8) {
		return fmt.Errorf("freelist page %d says %d free pages, more than it holds", m.freelist, count)
	}
	for i := range count {
		if p := le.Uint64(body[i*8:]); p < 2 || p >= m.hw {
			return fmt.Errorf("freelist page %d names page %d, outside the file's %d", m.freelist, p, m.hw)
		}
	}
	return nil
}

// Health checks the database file's meta pages against the file, cheaply
// and without opening it with bbolt. It returns nil for a sound file or a
// store with no database yet, an error wrapping ErrEmpty for a 0-byte file
// (which no write touches: tapedeck makes a database only where there is
// no file), and one wrapping
// ErrDamaged when the file cannot be opened safely. Damage inside pages
// shows only when they are read (Verify reads them all). It holds the
// store's shared lock while it reads: a writer's commit between its reads
// of the meta page and the freelist had made a sound file look damaged
// (a freelist naming a page past the older meta page's end).
func (s *Store) Health() error {
	unlock, err := s.lock(false, s.lockTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	err = checkFile(s.dbPath(), true)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if errors.Is(err, ErrEmpty) {
		spools, _ := filepath.Glob(filepath.Join(s.dir, spoolDir, "*.spool"))
		return fmt.Errorf("%w: any sessions it held are gone, and tapedeck writes nothing over it (%d not yet ingested wait in %s): move it aside to record again",
			err, len(spools), filepath.Join(s.dir, spoolDir))
	}
	return err
}

// newestMeta reads the valid meta page of f with the higher transaction id,
// as bbolt picks it; an error wraps ErrDamaged when neither is valid.
func newestMeta(f *os.File) (boltMeta, error) {
	var best boltMeta
	fi, err := f.Stat()
	if err != nil {
		return best, err
	}
	size := fi.Size()
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return best, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	head = head[:n]
	found := false
	m0, ok0 := parseMeta(head)
	if ok0 {
		best, found = m0, true
	}
	// The second meta page sits one page in; without a valid first one,
	// try the page sizes bbolt would.
	sizes := []int64{int64(m0.pageSize)}
	if !ok0 {
		sizes = sizes[:0]
		for ps := int64(1024); ps <= 1<<24; ps <<= 1 {
			sizes = append(sizes, ps)
		}
	}
	page := make([]byte, pageHeaderSize+metaSize)
	for _, ps := range sizes {
		if ps+int64(len(page)) > size {
			break
		}
		if _, err := f.ReadAt(page, ps); err != nil {
			return best, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if m1, ok := parseMeta(page); ok && int64(m1.pageSize) == ps {
			if !found || m1.txid > best.txid {
				best, found = m1, true
			}
			break
		}
	}
	if !found {
		return best, damaged("%s: %d bytes and no valid meta page: not a bbolt file, or its first pages were overwritten", f.Name(), size)
	}
	return best, nil
}

// Ready opens the store in dir the one way every command that reads or
// adds to it does: Open (opts as Open takes them), the database's Health,
// then Recover, which ingests what dead recorders left. err is what keeps
// the store from being read, st nil then: Open's errors (ErrNoStore with
// opts.MustExist, ErrUnsafe, …), a damaged database, or a damaged spool
// (ErrDamaged: the first one, so that one line is said, not one per
// spool). warning is what does not, st usable: a 0-byte database
// (ErrEmpty; nothing is recovered into it, as nothing is written over it,
// and it reads as empty) or a recovery that failed otherwise (a look at
// what is already stored goes on).
func Ready(dir string, opts *Options) (st *Store, warning, err error) {
	st, err = Open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	switch err := st.Health(); {
	case errors.Is(err, ErrEmpty):
		return st, err, nil
	case err != nil:
		return nil, nil, err
	}
	if err := st.Recover(); errors.Is(err, ErrDamaged) {
		return nil, nil, firstDamage(err)
	} else if err != nil {
		return st, err, nil
	}
	return st, nil, nil
}

// firstDamage picks, from errors joined by errors.Join, the first that
// wraps ErrDamaged.
func firstDamage(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if errors.Is(e, ErrDamaged) {
				return e
			}
		}
	}
	return err
}
