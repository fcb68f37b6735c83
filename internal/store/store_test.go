package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/spool"
)

func newMeta(id string) *frame.Session {
	return &frame.Session{ID: id, Command: []string{"plugin"}, Started: time.Unix(1700000000, 0).UTC(), Status: frame.StatusRecording}
}

// writeSpool writes a spool as a recorder would and returns its writer (still
// holding the lock) after appending frames and, when end is set, an end record.
func writeSpool(t testing.TB, st *Store, meta *frame.Session, frames []frame.Frame, end *frame.End) *spool.Writer {
	t.Helper()
	js := mustJSON(t, meta)
	w, err := spool.Create(st.SpoolPath(meta.ID), js)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		appendFrame(t, w, &frames[i])
	}
	if end != nil {
		if err := w.AppendEnd(mustJSON(t, end)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// appendFrame writes a frame record of f to the spool at once, as the
// recorder does for a line.
func appendFrame(t testing.TB, w *spool.Writer, f *frame.Frame) {
	t.Helper()
	if err := w.AddFrame(frame.AppendHeader(nil, f), f.Raw); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func collect(t *testing.T, st *Store, id string) []frame.Frame {
	t.Helper()
	var got []frame.Frame
	err := st.Frames(id, func(f *frame.Frame) error {
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Frames(%s): %v", id, err)
	}
	return got
}

func TestIngestKeepsEveryByteAndDerivesMeta(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB: chunked
	code := 0
	frames := []frame.Frame{
		{Seq: 1, At: 10, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"apiVersion":2,"agentty":{"version":"0.9"},"plugin":{"id":"p","name":"P","version":"1.2"}}}`)},
		{Seq: 2, At: 20, Dir: frame.Out, Raw: big},
		{Seq: 3, At: 30, Dir: frame.Err, Raw: []byte("\xff\x00\r"), NoEOL: true},
		{Seq: 4, At: 40, Dir: frame.Out, Raw: big[:chunkSize]},
		{Seq: 5, At: 50, Dir: frame.Out, Raw: big[:chunkSize+1]},
		frame.Frame{Seq: 6, At: 60, Event: frame.EventExit}.WithEnd("", &code),
	}
	meta := newMeta("01aaaaaaaaaaaaaaaaaaaaaaaa")
	w := writeSpool(t, st, meta, frames, &frame.End{Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}, Ended: meta.Started.Add(time.Second)})
	if err := st.Ingest(w.Path(), 0, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(w.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spool still there after ingest: %v", err)
	}
	got := collect(t, st, meta.ID)
	if len(got) != len(frames) {
		t.Fatalf("got %d frames, want %d", len(got), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i].Raw, frames[i].Raw) || got[i].Seq != frames[i].Seq || got[i].NoEOL != frames[i].NoEOL || got[i].Event != frames[i].Event {
			t.Errorf("frame %d differs: got seq %d len %d, want seq %d len %d", i, got[i].Seq, len(got[i].Raw), frames[i].Seq, len(frames[i].Raw))
		}
	}
	m, err := st.Session(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != frame.StatusComplete || m.Plugin.ID != "p" || m.APIVersion != 2 || m.HostVersion != "0.9" {
		t.Errorf("meta = %+v", m)
	}
	if m.Frames != (frame.Counts{In: 1, Out: 3, Err: 1}) {
		t.Errorf("counts = %+v", m.Frames)
	}
	checkDB(t, st)
}

func checkDB(t *testing.T, st *Store) {
	t.Helper()
	db, err := bolt.Open(st.dbPath(), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("tx.Check: %v", err)
		}
		return nil
	})
}

func TestRecoverInterruptedAndSkipsLive(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dead := writeSpool(t, st, newMeta("01bbbbbbbbbbbbbbbbbbbbbbbb"), []frame.Frame{{Seq: 1, At: 5, Dir: frame.In, Raw: []byte("x")}}, nil)
	dead.Close() // the recorder died: lock released, no end record
	live := writeSpool(t, st, newMeta("01cccccccccccccccccccccccc"), []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: []byte("y")}}, nil)
	defer live.Close()
	// A torn tail on the dead spool is dropped.
	f, _ := os.OpenFile(dead.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2})
	f.Close()

	if err := st.Recover(); err != nil {
		t.Fatal(err)
	}
	list, err := st.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, s := range list {
		status[s.ID] = s.Status
	}
	if status["01bbbbbbbbbbbbbbbbbbbbbbbb"] != frame.StatusInterrupted || status["01cccccccccccccccccccccccc"] != frame.StatusRecording {
		t.Fatalf("statuses = %v", status)
	}
	if got := collect(t, st, "01cccccccccccccccccccccccc"); len(got) != 1 || string(got[0].Raw) != "y" {
		t.Fatalf("live frames = %+v", got)
	}
	if got := collect(t, st, "01bbbbbbbbbbbbbbbbbbbbbbbb"); len(got) != 1 || string(got[0].Raw) != "x" {
		t.Fatalf("recovered frames = %+v", got)
	}
}

func TestNewerSchemaAndDamagedFileAreRefused(t *testing.T) {
	dir := t.TempDir()
	st, _ := Open(dir, nil)
	w := writeSpool(t, st, newMeta("01dddddddddddddddddddddddd"), nil, &frame.End{Status: frame.StatusComplete})
	if err := st.Ingest(w.Path(), 0, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte(fmt.Sprint(Schema+1))) })
	db.Close()
	if _, err := st.List(nil); !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade tapedeck") {
		t.Fatalf("Sessions on a newer schema: %v", err)
	}

	os.WriteFile(st.dbPath(), bytes.Repeat([]byte("garbage!"), 4096), 0o600)
	if _, err := st.List(nil); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Sessions on garbage: %v", err)
	}
	// A spool that cannot be ingested stays where it is.
	w = writeSpool(t, st, newMeta("01eeeeeeeeeeeeeeeeeeeeeeee"), nil, &frame.End{Status: frame.StatusComplete})
	if err := st.Ingest(w.Path(), 0, nil); err == nil {
		t.Fatal("Ingest into a damaged database succeeded")
	}
	w.Close()
	if _, err := os.Stat(w.Path()); err != nil {
		t.Fatalf("spool lost after a failed ingest: %v", err)
	}
}

func TestResolve(t *testing.T) {
	list := []frame.Session{
		{ID: "01abc0000000000000000000a1", Name: "demo"},
		{ID: "01abd0000000000000000000b2", Name: "demo"},
		{ID: "01xyz0000000000000000000c3", Name: "solo"},
	}
	cases := []struct {
		ref, want string
		err       error
	}{
		{"last", "01abc0000000000000000000a1", nil},
		{"01xyz", "01xyz0000000000000000000c3", nil},
		{"solo", "01xyz0000000000000000000c3", nil},
		{"01ab", "", ErrAmbiguous},
		{"demo", "", ErrAmbiguous},
		{"nope", "", ErrNotFound},
		{"01abd0000000000000000000b2", "01abd0000000000000000000b2", nil},
	}
	for _, c := range cases {
		got, err := resolve(list, c.ref)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("resolve(%q) error = %v, want %v", c.ref, err, c.err)
			}
			continue
		}
		if err != nil || got.ID != c.want {
			t.Errorf("resolve(%q) = %v, %v; want %s", c.ref, got, err, c.want)
		}
	}
	_, err := resolve(list, "demo")
	if err == nil || !strings.Contains(err.Error(), "01abc0000000000000000000a1") || !strings.Contains(err.Error(), "01abd0000000000000000000b2") {
		t.Errorf("ambiguous error does not list the candidates: %v", err)
	}
}
