package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// goldenID and goldenFrames are the session of testdata/schema2.db.
const goldenID = "01gold00000000000000000000"

func goldenFrames() []frame.Frame {
	code := 3
	var cut frame.Cut
	cut.Len = 9000
	copy(cut.SHA256[:], "0123456789abcdef0123456789abcdef")
	return []frame.Frame{
		{Seq: 1, At: 10, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)},
		{Seq: 2, At: 2000, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Seq: 3, At: 3000, Dir: frame.Err, Raw: []byte("a line on stderr")},
		{Seq: 4, At: 4000, Dir: frame.Out, Raw: append(append([]byte(`{"jsonrpc":"2.0","method":"big","params":"`), bytes.Repeat([]byte("0123456789"), 1000)...), `"}`...)},
		{Seq: 5, At: 5000, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","method":"cut","params":"`), Cut: &cut},
		{Seq: 6, At: 6000, Dir: frame.Out, Raw: []byte(fmt.Sprintf("%d bytes: exactly a chunk", chunkSize)), NoEOL: true},
		{Seq: 7, At: 6500, Dir: frame.Out, Raw: bytes.Repeat([]byte("c"), chunkSize)},
		{Seq: 8, At: 6600, Dir: frame.Out, Raw: bytes.Repeat([]byte("d"), chunkSize+1)},
		{Seq: 9, At: 7000, Event: frame.EventEOF, Dir: frame.In},
		(frame.Frame{Seq: 10, At: 8000, Event: frame.EventExit}).WithEnd("", &code),
	}
}

// TestSchema2StoreReadsAsBefore: testdata/schema2.db was written by the
// build of commit 2b5d590 (schema 2: frames 'I' and 'C', the kind byte
// outside the checksum) from goldenFrames, then cut to its used pages.
// It reads frame for frame, and verifies clean with every frame checked.
func TestSchema2StoreReadsAsBefore(t *testing.T) {
	st := goldenStore(t)
	got := collect(t, st, goldenID)
	want := goldenFrames()
	if len(got) != len(want) {
		t.Fatalf("read %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].At != want[i].At || !got[i].Same(&want[i]) {
			t.Errorf("frame %d: got %+v, want %+v", want[i].Seq, got[i], want[i])
		}
	}
	v, err := st.Verify()
	if err != nil || len(v.Problems) > 0 || v.Frames != int64(len(want)) || v.Unsummed != 0 {
		t.Errorf("Verify = %+v, %v; want %d frames, all checked, no problem", v, err, len(want))
	}
}

// goldenStore is a store holding a copy of testdata/schema2.db.
func goldenStore(t *testing.T) *Store {
	t.Helper()
	db, err := os.ReadFile(filepath.Join("testdata", "schema2.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(t.TempDir(), &Options{NoSync: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.dbPath(), db, 0o600); err != nil {
		t.Fatal(err)
	}
	return st
}
