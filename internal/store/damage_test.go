package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
)

// damageSessions is how many sessions the damage tests store: as many as
// the audit's store had.
const damageSessions = 31

// damageStore stores damageSessions sessions of varied frames (one of them
// chunked) and returns the store and every session's frames.
func damageStore(t *testing.T) (*Store, map[string][]frame.Frame) {
	t.Helper()
	st, err := Open(t.TempDir(), &Options{NoSync: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]frame.Frame{}
	for i := range damageSessions {
		m := *newMeta(fmt.Sprintf("01%024d", i))
		m.Status = frame.StatusComplete
		var frames []frame.Frame
		for j := range 40 {
			raw := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"session":%d,"pad":%q}}`, j, i, strings.Repeat("x", 20+j*7))
			frames = append(frames, frame.Frame{Seq: uint64(j + 1), At: int64(j), Dir: frame.Dir(1 + j%3), Raw: raw})
		}
		if i%10 == 0 {
			frames = append(frames, frame.Frame{Seq: 41, At: 41, Dir: frame.Out, Raw: bytes.Repeat([]byte{'a' + byte(i%26)}, 3*chunkSize+17)})
		}
		putFrames(t, st, m, frames)
		all[m.ID] = frames
	}
	return st, all
}

// readAll reads every session's frames; a session that reads with an error
// is absent from the result, and its error is returned beside it.
func readAll(st *Store, ids map[string][]frame.Frame) (map[string][]frame.Frame, map[string]error) {
	got, errs := map[string][]frame.Frame{}, map[string]error{}
	for id := range ids {
		var frames []frame.Frame
		err := st.Frames(id, func(f *frame.Frame) error {
			c := *f
			c.Raw = bytes.Clone(f.Raw)
			frames = append(frames, c)
			return nil
		})
		if err != nil {
			errs[id] = err
			continue
		}
		got[id] = frames
	}
	return got, errs
}

func sameFrames(a, b []frame.Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].At != b[i].At || a[i].Dir != b[i].Dir || !bytes.Equal(a[i].Raw, b[i].Raw) {
			return false
		}
	}
	return true
}

// TestTruncatedDatabaseIsAnError is the audit's truncation: bbolt maps the
// file, so a page past the end of a shortened file was a SIGBUS that
// killed every command. Now each length is ErrDamaged, with the words that
// say what to do, from Health, List, Frames and Verify alike.
func TestTruncatedDatabaseIsAnError(t *testing.T) {
	st, all := damageStore(t)
	good, err := os.ReadFile(st.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	m0, _ := parseMeta(good)
	m1, _ := parseMeta(good[m0.pageSize:])
	used := int(max(m0.hw, m1.hw)) * int(m0.pageSize) // the file may be longer: bbolt grows it ahead
	for _, size := range []int{4096, 8192, 16384, used / 2, used - 4096, used - 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			if err := os.WriteFile(st.dbPath(), good[:size], 0o600); err != nil {
				t.Fatal(err)
			}
			if err := st.Health(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), damagedHint) {
				t.Errorf("Health = %v, want ErrDamaged and the hint", err)
			}
			if _, err := st.List(nil); !errors.Is(err, ErrDamaged) {
				t.Errorf("List = %v, want ErrDamaged", err)
			}
			if _, errs := readAll(st, map[string][]frame.Frame{"01000000000000000000000000": nil}); !errors.Is(errs["01000000000000000000000000"], ErrDamaged) {
				t.Errorf("Frames = %v, want ErrDamaged", errs)
			}
			v, err := st.Verify()
			if err != nil || len(v.Problems) == 0 {
				t.Errorf("Verify = %+v, %v; want problems", v, err)
			}
			if got, _ := os.ReadFile(st.dbPath()); !bytes.Equal(got, good[:size]) {
				t.Error("reading a damaged database changed it")
			}
		})
	}
	os.WriteFile(st.dbPath(), good, 0o600)
	if got, errs := readAll(st, all); len(errs) > 0 || len(got) != damageSessions {
		t.Fatalf("the sound file reads with errors: %v", errs)
	}
}

// TestRandomPageDamageIsFound is the audit's random page damage: bytes
// overwritten inside data pages used to come back as changed frames, exit
// 0. Now no read returns a changed frame: it is an error naming the
// session and the frame, and Verify lists the damage.
func TestRandomPageDamageIsFound(t *testing.T) {
	st, all := damageStore(t)
	good, err := os.ReadFile(st.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	pages := len(good) / pageSize
	detected := 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		bad := bytes.Clone(good)
		for range 1 + r.IntN(3) {
			p := 2 + r.IntN(pages-2) // the meta pages are checked on their own
			off := p*pageSize + 16 + r.IntN(pageSize-16)
			n := min(1+r.IntN(64), len(bad)-off)
			for i := range n {
				bad[off+i] = byte(r.Uint32())
			}
		}
		if err := os.WriteFile(st.dbPath(), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		got, errs := readAll(st, all)
		for id, frames := range got {
			if !sameFrames(frames, all[id]) {
				t.Errorf("seed %d: session %s read back changed, without an error: %d frames, want %d; %s", seed, id, len(frames), len(all[id]), firstDiff(frames, all[id]))
			}
		}
		for id, err := range errs {
			if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrNotFound) {
				t.Errorf("seed %d: session %s: %v, want ErrDamaged", seed, id, err)
			}
		}
		v, err := st.Verify()
		if err != nil {
			t.Fatalf("seed %d: Verify: %v", seed, err)
		}
		if len(errs) > 0 {
			detected++
			if len(v.Problems) == 0 {
				t.Errorf("seed %d: reads failed (%v) but Verify found nothing", seed, errs)
			}
		}
	}
	if detected == 0 {
		t.Error("no damage was ever detected: the test damages nothing")
	}
	t.Logf("%d of 40 damaged files gave read errors", detected)
}

// TestChecksumNamesTheFrame flips one byte of one stored frame and of one
// chunk: the read fails naming the session and the frame, and Verify lists
// both.
func TestChecksumNamesTheFrame(t *testing.T) {
	st, _ := damageStore(t)
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := binary.BigEndian.AppendUint64(nil, 7)
	ck := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, 41), 2)
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFrames).Bucket([]byte("01000000000000000000000003"))
		v := bytes.Clone(b.Get(key))
		v[len(v)-3] ^= 0x20 // a letter's case: still valid JSON
		if err := b.Put(key, v); err != nil {
			return err
		}
		c := tx.Bucket(bucketChunks).Bucket([]byte("01000000000000000000000010"))
		v = bytes.Clone(c.Get(ck))
		v[100] ^= 1
		return c.Put(ck, v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, errs := readAll(st, map[string][]frame.Frame{"01000000000000000000000003": nil, "01000000000000000000000010": nil})
	for id, want := range map[string]string{"01000000000000000000000003": "frame 7: checksum mismatch", "01000000000000000000000010": "frame 41: chunk 2: checksum mismatch"} {
		if err := errs[id]; !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "session "+id+" "+want) {
			t.Errorf("Frames(%s) = %v, want ErrDamaged naming %q", id, err, want)
		}
	}
	v, err := st.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Problems) != 2 || v.Sessions != damageSessions || v.Unsummed != 0 {
		t.Errorf("Verify = %+v, want the 2 problems in %d sessions", v, damageSessions)
	}
}

// TestSchema1FramesReadAsBefore: a store written before checksums (frames
// 'i' and 'c', schema 1) reads as it did, verifies with its frames counted
// as unsummed, and is marked schema 2 at its next write.
func TestSchema1FramesReadAsBefore(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	putFrames(t, st, *newMeta("01ffffffffffffffffffffffff"), nil) // creates the buckets
	big := bytes.Repeat([]byte("0123456789"), 900)
	frames := []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","method":"x"}`)}, {Seq: 2, At: 5, Dir: frame.Out, Raw: big}}
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := []byte("01gggggggggggggggggggggggg")
	err = db.Update(func(tx *bolt.Tx) error {
		tx.Bucket(bucketMeta).Put(keySchema, []byte("1"))
		m := newMeta(string(id))
		m.Status = frame.StatusComplete
		tx.Bucket(bucketSessions).Put(id, mustJSON(t, m))
		tx.Bucket(bucketIndex).Put(id, appendSummary(nil, m))
		fb, _ := tx.Bucket(bucketFrames).CreateBucket(id)
		cb, _ := tx.Bucket(bucketChunks).CreateBucket(id)
		fb.Put(binary.BigEndian.AppendUint64(nil, 1), frame.Append([]byte{valInline}, &frames[0]))
		key := binary.BigEndian.AppendUint64(nil, 2)
		val := frame.AppendHeader([]byte{valChunked}, &frames[1])
		fb.Put(key, binary.AppendUvarint(val, uint64(len(big))))
		for i := 0; i*chunkSize < len(big); i++ {
			cb.Put(binary.BigEndian.AppendUint32(bytes.Clone(key), uint32(i)), big[i*chunkSize:min((i+1)*chunkSize, len(big))])
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, st, string(id)); !sameFrames(got, frames) {
		t.Errorf("schema 1 frames read back as %+v", got)
	}
	v, err := st.Verify()
	if err != nil || len(v.Problems) > 0 || v.Unsummed != 2 || v.Frames != 2 {
		t.Errorf("Verify = %+v, %v; want 2 frames, both unsummed, no problem", v, err)
	}
	putFrames(t, st, *newMeta("01hhhhhhhhhhhhhhhhhhhhhhhh"), frames)
	db, _ = bolt.Open(st.dbPath(), 0o600, &bolt.Options{ReadOnly: true})
	db.View(func(tx *bolt.Tx) error {
		if s := tx.Bucket(bucketMeta).Get(keySchema); string(s) != fmt.Sprint(Schema) {
			t.Errorf("schema %q after a write, want %d", s, Schema)
		}
		return nil
	})
	db.Close()
}

// TestEmptyDatabaseIsNamed: a 0-byte file reads as no sessions, and Health
// says the sessions it held are gone.
func TestEmptyDatabaseIsNamed(t *testing.T) {
	dir := t.TempDir()
	st, _ := Open(dir, nil)
	os.WriteFile(filepath.Join(dir, dbName), nil, 0o600)
	os.WriteFile(st.SpoolPath("01iiiiiiiiiiiiiiiiiiiiiiii"), nil, 0o600)
	if err := st.Health(); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "1 not yet ingested") {
		t.Errorf("Health = %v, want ErrEmpty naming the waiting spool", err)
	}
}

func firstDiff(a, b []frame.Frame) string {
	for i := range min(len(a), len(b)) {
		if a[i].Seq != b[i].Seq || a[i].At != b[i].At || a[i].Dir != b[i].Dir || !bytes.Equal(a[i].Raw, b[i].Raw) {
			return fmt.Sprintf("#%d: %+v vs %+v", i, a[i], b[i])
		}
	}
	return "a prefix"
}

// TestCompactThatWouldGrowKeepsTheFile: a file holding just its used pages
// (bbolt grows files ahead, in steps, and a copy gets the step) compacts
// into a larger copy; Compact says so and keeps the old file.
func TestCompactThatWouldGrowKeepsTheFile(t *testing.T) {
	st, all := damageStore(t)
	good, _ := os.ReadFile(st.dbPath())
	m0, _ := parseMeta(good)
	m1, _ := parseMeta(good[m0.pageSize:])
	tight := good[:int(max(m0.hw, m1.hw))*int(m0.pageSize)]
	os.WriteFile(st.dbPath(), tight, 0o600)
	before, after, err := st.Compact()
	if !errors.Is(err, ErrWouldGrow) || before != int64(len(tight)) || after <= before {
		t.Fatalf("Compact = %d, %d, %v; want ErrWouldGrow and a larger copy", before, after, err)
	}
	if got, _ := os.ReadFile(st.dbPath()); !bytes.Equal(got, tight) {
		t.Error("the old file was replaced")
	}
	if _, err := os.Stat(st.dbPath() + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy was left behind: %v", err)
	}
	if got, errs := readAll(st, all); len(errs) > 0 || len(got) != damageSessions {
		t.Errorf("reads after the kept compaction: %v", errs)
	}
}

// TestDamagedFreelistStopsWriters: page ids out of range in the freelist
// made a writer write at negative offsets into the file. The freelist is
// checked before a read-write open: the write is refused as damage, and
// the file is left as it was.
func TestDamagedFreelistStopsWriters(t *testing.T) {
	st, _ := damageStore(t)
	good, _ := os.ReadFile(st.dbPath())
	m0, _ := parseMeta(good)
	m1, _ := parseMeta(good[m0.pageSize:])
	m := m0
	if m1.txid > m0.txid {
		m = m1
	}
	bad := bytes.Clone(good)
	off := int(m.freelist)*int(m.pageSize) + pageHeaderSize
	for i := range 64 {
		bad[off+i] = 0xff
	}
	os.WriteFile(st.dbPath(), bad, 0o600)
	if err := st.Health(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "freelist") {
		t.Errorf("Health = %v, want the freelist named", err)
	}
	err := st.Put(*newMeta("01jjjjjjjjjjjjjjjjjjjjjjjj"), func() (*frame.Frame, error) { return nil, io.EOF })
	if !errors.Is(err, ErrDamaged) {
		t.Errorf("Put = %v, want ErrDamaged", err)
	}
	if got, _ := os.ReadFile(st.dbPath()); !bytes.Equal(got, bad) {
		t.Error("a writer changed the damaged file")
	}
}

// FuzzDamagedFile: whatever bytes are written over a sound database file,
// and wherever it is cut short, Health, List, Frames and Verify return (an
// error or sound data) and never crash: no fault in bbolt's mapping, no
// panic, no changed frame read back as sound.
func FuzzDamagedFile(f *testing.F) {
	good, frames := fuzzFile(f)
	f.Add(uint32(0), []byte{}, uint32(0))
	f.Add(uint32(0), []byte{}, uint32(8192))
	f.Add(uint32(3*4096+100), []byte{0xff, 0xff}, uint32(0))
	f.Add(uint32(16), []byte{1}, uint32(0))
	f.Fuzz(func(t *testing.T, at uint32, patch []byte, cut uint32) {
		s := fuzzDamage(t, good, at, patch, cut)
		s.Health()
		// Verify and every read must end whatever the damage: bbolt's
		// cursors loop for ever on a cycle of pages, which every open
		// now finds first (inspectFile).
		if _, err := s.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		s.List(nil)
		var got []frame.Frame
		err := s.Frames(fuzzID, func(fr *frame.Frame) error {
			c := *fr
			c.Raw = bytes.Clone(fr.Raw)
			got = append(got, c)
			return nil
		})
		if err == nil && !sameFrames(got, frames) {
			t.Errorf("frames read back changed without an error")
		}
	})
}

// fuzzID is the session of FuzzDamagedFile's database.
const fuzzID = "01kkkkkkkkkkkkkkkkkkkkkkkk"

// fuzzFile is FuzzDamagedFile's sound database file and the frames of its
// session: one kept whole, one in two chunks.
func fuzzFile(t testing.TB) ([]byte, []frame.Frame) {
	t.Helper()
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	frames := []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","method":"x"}`)}, {Seq: 2, Dir: frame.Out, Raw: bytes.Repeat([]byte("y"), chunkSize+10)}}
	putFrames(t, st, *newMeta(fuzzID), frames)
	good, err := os.ReadFile(st.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	return good, frames
}

// fuzzDamage is a store whose database is good with patch written at at
// (modulo its length) and then, when cut > 0, cut at cut (modulo).
func fuzzDamage(t *testing.T, good []byte, at uint32, patch []byte, cut uint32) *Store {
	db := bytes.Clone(good)
	if len(patch) > 0 {
		copy(db[int(at)%len(db):], patch)
	}
	if cut > 0 {
		db = db[:int(cut)%len(db)]
	}
	s, err := Open(t.TempDir(), &Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.dbPath(), db, 0o600)
	return s
}

// TestVerifyFindsACycle: a branch page whose child is itself sends bbolt's
// cursors and its consistency check round for ever; Verify's own walk of
// the pages finds it and ends.
func TestVerifyFindsACycle(t *testing.T) {
	st, _ := damageStore(t)
	db, _ := os.ReadFile(st.dbPath())
	const ps = 4096
	branch := -1
	for p := 2; p*ps < len(db); p++ {
		page := db[p*ps:]
		if binary.LittleEndian.Uint64(page) == uint64(p) && binary.LittleEndian.Uint16(page[8:]) == branchPage {
			branch = p
			break
		}
	}
	if branch < 0 {
		t.Fatal("the test store has no branch page")
	}
	binary.LittleEndian.PutUint64(db[branch*ps+pageHeaderSize+8:], uint64(branch)) // its first child: itself
	os.WriteFile(st.dbPath(), db, 0o600)
	v, err := st.Verify()
	if err != nil || len(v.Problems) == 0 || !strings.Contains(v.Problems[0], fmt.Sprintf("page %d: referenced twice", branch)) {
		t.Errorf("Verify = %+v, %v; want the cycle at page %d", v, err, branch)
	}
}
