package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	bolt "go.etcd.io/bbolt"
)

// cycleShapes damage a sound database file in the ways that sent bbolt's
// cursors round for ever: the sessions bucket's root (a branch page)
// whose first child is itself (a cursor's descent to the first key never
// ends, its stack growing without bound), a session's frames bucket whose
// last child is its own root (a walk by Next starts over for ever), and
// the index bucket's child page past the end of the file.
func cycleShapes(t *testing.T, path, id string) map[string][]byte {
	t.Helper()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var sessions, frames, hw uint64
	db.View(func(tx *bolt.Tx) error {
		sessions = uint64(tx.Bucket(bucketSessions).Root())
		frames = uint64(tx.Bucket(bucketFrames).Bucket([]byte(id)).Root())
		hw = uint64(tx.Size()) / uint64(db.Info().PageSize)
		return nil
	})
	db.Close()
	const ps = 4096
	branch := func(p uint64) int {
		page := good[p*ps:]
		if binary.LittleEndian.Uint64(page) != p || binary.LittleEndian.Uint16(page[8:]) != branchPage {
			t.Fatalf("page %d is not a branch page: the test store is too small", p)
		}
		return int(binary.LittleEndian.Uint16(page[10:]))
	}
	child := func(p uint64, i int) int { return int(p)*ps + pageHeaderSize + i*16 + 8 }
	shapes := map[string][]byte{}
	branch(sessions)
	self := bytes.Clone(good)
	binary.LittleEndian.PutUint64(self[child(sessions, 0):], sessions)
	shapes["sessions: first child is itself"] = self
	n := branch(frames)
	back := bytes.Clone(good)
	binary.LittleEndian.PutUint64(back[child(frames, n-1):], frames)
	shapes["frames: last child is the root"] = back
	out := bytes.Clone(good)
	for i := range branch(sessions) {
		binary.LittleEndian.PutUint64(out[child(sessions, i):], hw+1000+uint64(i))
	}
	shapes["sessions: children past the end"] = out
	return shapes
}

// endsWithin runs fn on a goroutine of its own and fails the test when it
// has not returned within d (it is left running: the test binary ends).
func endsWithin(t *testing.T, what string, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not end within %v: it loops on the damaged pages", what, d)
		return nil
	}
}

// TestPageCycleEndsEveryRead is the audit's page cycle: bbolt's cursors
// loop for ever on it (the descent to a first key grows its stack without
// bound), so ls, show, export, check and ingest hung, only Verify walked
// the pages itself. Now every open walks the tree's shape first, with a
// visited set bounded by the file's page count, and each read, write,
// compaction and verification ends with ErrDamaged naming the page.
func TestPageCycleEndsEveryRead(t *testing.T) {
	st, _ := damageStore(t)
	const victim = "01000000000000000000000005"
	const bound = 20 * time.Second // each call; a sound one takes milliseconds
	for name, bad := range cycleShapes(t, st.dbPath(), victim) {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(st.dbPath(), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			wantDamaged := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "page ") {
					t.Errorf("%s = %v, want ErrDamaged naming the page", what, err)
				}
			}
			wantDamaged("List", endsWithin(t, "List", bound, func() error { _, err := st.List(nil); return err }))
			wantDamaged("Resolve", endsWithin(t, "Resolve", bound, func() error { _, err := st.Resolve("last"); return err }))
			wantDamaged("Frames", endsWithin(t, "Frames", bound, func() error {
				return st.Frames(victim, func(*frame.Frame) error { return nil })
			}))
			wantDamaged("Put", endsWithin(t, "Put", bound, func() error {
				return st.Put(*newMeta("01zzzzzzzzzzzzzzzzzzzzzzzz"), func() (*frame.Frame, error) { return nil, io.EOF })
			}))
			meta := newMeta("01yyyyyyyyyyyyyyyyyyyyyyyy")
			w := writeSpool(t, st, meta, []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{}`)}}, &frame.End{Status: frame.StatusComplete})
			w.Close()
			wantDamaged("Ingest", endsWithin(t, "Ingest", bound, func() error { return st.Ingest(st.SpoolPath(meta.ID), 0, nil) }))
			if _, err := os.Stat(st.SpoolPath(meta.ID)); err != nil {
				t.Errorf("the spool that could not be ingested is gone: %v", err)
			}
			os.Remove(st.SpoolPath(meta.ID))
			wantDamaged("Compact", endsWithin(t, "Compact", bound, func() error { _, _, err := st.Compact(); return err }))
			v, err := st.Verify()
			if err != nil || len(v.Problems) == 0 || !strings.HasPrefix(v.Problems[0], "page ") {
				t.Errorf("Verify = %+v, %v; want the page named", v, err)
			}
			if got, _ := os.ReadFile(st.dbPath()); !bytes.Equal(got, bad) {
				t.Error("a call changed the damaged file")
			}
			t.Logf("every call ended in %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestEmptyDatabaseIsNeverWrittenOver is the audit's 0-byte database: a
// write took it for no database and bbolt started it anew, silently. Now
// Put and Ingest refuse it with ErrEmpty saying what to do, the file stays
// as it was, and the session stays in its spool.
func TestEmptyDatabaseIsNeverWrittenOver(t *testing.T) {
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.dbPath(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = st.Put(*newMeta("01aaaaaaaaaaaaaaaaaaaaaaaa"), func() (*frame.Frame, error) { return nil, io.EOF })
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("Put = %v, want ErrEmpty saying what to do", err)
	}
	meta := newMeta("01bbbbbbbbbbbbbbbbbbbbbbbb")
	w := writeSpool(t, st, meta, []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{}`)}}, &frame.End{Status: frame.StatusComplete})
	w.Close()
	if err := st.Ingest(st.SpoolPath(meta.ID), 0, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("Ingest = %v, want ErrEmpty", err)
	}
	if err := st.Recover(); !errors.Is(err, ErrEmpty) {
		t.Errorf("Recover = %v, want ErrEmpty", err)
	}
	if fi, err := os.Stat(st.dbPath()); err != nil || fi.Size() != 0 {
		t.Errorf("the 0-byte database was written over: %v, %v", fi.Size(), err)
	}
	if _, err := os.Stat(st.SpoolPath(meta.ID)); err != nil {
		t.Errorf("the session's spool is gone: %v", err)
	}
	// Moved aside, the next write starts a new database with the session.
	os.Rename(st.dbPath(), st.dbPath()+".empty")
	if err := st.Recover(); err != nil {
		t.Fatalf("Recover after moving it aside: %v", err)
	}
	if list, err := st.List(nil); err != nil || len(list) != 1 || list[0].ID != meta.ID {
		t.Errorf("List = %+v, %v; want the spooled session", list, err)
	}
}

// TestCompactRefusesADamagedFrame is the audit's gc: bbolt's compaction
// copied a frame whose checksum does not match into the new file and gc
// said all was well. Now Compact checks every frame first and refuses
// with ErrDamaged naming the session and the frame, changing nothing.
func TestCompactRefusesADamagedFrame(t *testing.T) {
	st, _ := damageStore(t)
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := binary.BigEndian.AppendUint64(nil, 7)
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFrames).Bucket([]byte("01000000000000000000000003"))
		v := bytes.Clone(b.Get(key))
		v[len(v)-3] ^= 0x20
		return b.Put(key, v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := os.ReadFile(st.dbPath())
	_, _, err = st.Compact()
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "session 01000000000000000000000003 frame 7: checksum mismatch") ||
		!strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("Compact = %v, want ErrDamaged naming the session and frame", err)
	}
	if got, _ := os.ReadFile(st.dbPath()); !bytes.Equal(got, bad) {
		t.Error("Compact replaced the file")
	}
}

// TestListSaysWhatWasLost: a session that lost frames (its spool filled
// the disk) is complete, and List said no more. Now its summary carries
// what was lost, from the index as from a spool, and an index written
// before entries said it is read from the records until the next write
// brings it up to date.
func TestListSaysWhatWasLost(t *testing.T) {
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	lost := &frame.Lost{Frames: 12, Bytes: 3400, Reason: "write spool: no space left on device"}
	m := *newMeta("01cccccccccccccccccccccccc")
	m.Status, m.Lost = frame.StatusComplete, lost
	putFrames(t, st, m, []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{}`)}})
	spooled := newMeta("01dddddddddddddddddddddddd")
	spooled.Started = spooled.Started.Add(time.Minute)
	w := writeSpool(t, st, spooled, nil, &frame.End{Status: frame.StatusComplete, Lost: lost})
	defer w.Close()
	check := func(when string) {
		t.Helper()
		list, err := st.List(nil)
		if err != nil || len(list) != 2 {
			t.Fatalf("%s: List = %+v, %v", when, list, err)
		}
		for _, s := range list {
			if s.Lost == nil || *s.Lost != *lost {
				t.Errorf("%s: session %s: Lost = %+v, want %+v", when, s.ID, s.Lost, lost)
			}
		}
	}
	check("stored and spooled")
	// An index of the first kind: entries without what was lost.
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		old := m
		old.Lost = nil
		tx.Bucket(bucketIndex).Put([]byte(m.ID), appendSummary(nil, &old))
		return tx.Bucket(bucketMeta).Put(keyIndexed, []byte("1"))
	})
	db.Close()
	check("an old index")
	putFrames(t, st, *newMeta("01eeeeeeeeeeeeeeeeeeeeeeee"), nil)
	db, _ = bolt.Open(st.dbPath(), 0o600, &bolt.Options{ReadOnly: true})
	db.View(func(tx *bolt.Tx) error {
		s, err := decodeSummary([]byte(m.ID), tx.Bucket(bucketIndex).Get([]byte(m.ID)))
		if err != nil || s.Lost == nil || string(tx.Bucket(bucketMeta).Get(keyIndexed)) != string(indexComplete) {
			t.Errorf("after a write: entry %+v, %v; indexed %q", s, err, tx.Bucket(bucketMeta).Get(keyIndexed))
		}
		return nil
	})
	db.Close()
}
