package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
)

func putFrames(t testing.TB, st *Store, meta frame.Session, frames []frame.Frame) {
	t.Helper()
	i := 0
	err := st.Put(meta, func() (*frame.Frame, error) {
		if i == len(frames) {
			return nil, io.EOF
		}
		i++
		return &frames[i-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestListIndexAndMigration(t *testing.T) {
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	code := 3
	for i := range 5 {
		m := *newMeta(fmt.Sprintf("01%024d", i))
		m.Started = m.Started.Add(time.Duration(i) * time.Minute)
		m.Status, m.Exit.Code, m.Name = frame.StatusComplete, &code, fmt.Sprintf("n%d", i)
		m.Plugin.ID = []string{"a", "b"}[i%2]
		putFrames(t, st, m, []frame.Frame{{Seq: 1, Dir: frame.Out, Raw: []byte("x")}})
	}
	check := func(what string) {
		t.Helper()
		list, err := st.List(&Query{Plugin: "a", Limit: 2})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(list) != 2 || list[0].Name != "n4" || list[1].Name != "n2" || *list[0].Exit.Code != 3 || list[0].Frames.Out != 1 || list[0].Plugin.ID != "a" {
			t.Errorf("%s: List = %+v", what, list)
		}
	}
	check("with the index")

	// A database from before the index: read without it, indexed at the
	// next read-write open.
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		tx.Bucket(bucketMeta).Delete(keyIndexed)
		return tx.DeleteBucket(bucketIndex)
	})
	db.Close()
	check("without the index")
	if err := st.Delete("01000000000000000000000000"); err != nil {
		t.Fatal(err)
	}
	check("after reindexing")
	all, _ := st.List(nil)
	if len(all) != 4 {
		t.Errorf("%d sessions after a delete, want 4", len(all))
	}
	checkDB(t, st)
}

func TestFramesInBatches(t *testing.T) {
	st, _ := Open(t.TempDir(), &Options{NoSync: true})
	var frames []frame.Frame
	for i := range 3*readBatchFrames + 7 {
		raw := []byte(fmt.Sprintf("frame %d", i))
		if i == readBatchFrames-1 || i == readBatchFrames {
			raw = bytes.Repeat([]byte{byte(i)}, 3*chunkSize+5) // chunked, at a batch edge
		}
		frames = append(frames, frame.Frame{Seq: uint64(i + 1), Dir: frame.Out, Raw: raw})
	}
	m := *newMeta("01ffffffffffffffffffffffff")
	putFrames(t, st, m, frames)
	got := collect(t, st, m.ID)
	if len(got) != len(frames) {
		t.Fatalf("%d frames, want %d", len(got), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i].Raw, frames[i].Raw) || got[i].Seq != frames[i].Seq {
			t.Fatalf("frame %d differs", i)
		}
	}
	// Removed in the middle of a read: the walk says so.
	n := 0
	err := st.Frames(m.ID, func(*frame.Frame) error {
		if n++; n == 10 {
			return st.Delete(m.ID)
		}
		return nil
	})
	if !errors.Is(err, ErrRemoved) {
		t.Errorf("Frames over a removal = %v, want ErrRemoved", err)
	}
}

func TestFollowALiveSpool(t *testing.T) {
	st, _ := Open(t.TempDir(), nil)
	m := newMeta("01gggggggggggggggggggggggg")
	w := writeSpool(t, st, m, []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte("one")}}, nil)
	got := make(chan string, 10)
	idle := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() {
		done <- st.Follow(context.Background(), m.ID, time.Millisecond, func() error {
			select {
			case idle <- struct{}{}:
			default:
			}
			return nil
		}, func(f *frame.Frame) error {
			got <- string(f.Raw)
			return nil
		})
	}()
	if s := <-got; s != "one" {
		t.Fatalf("first frame %q", s)
	}
	<-idle // caught up and waiting
	appendFrame(t, w, &frame.Frame{Seq: 2, Dir: frame.Out, Raw: []byte("two")})
	if s := <-got; s != "two" {
		t.Fatalf("second frame %q", s)
	}
	w.AppendEnd(mustJSON(t, &frame.End{Status: frame.StatusComplete}))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return at the end record")
	}
	w.Close()

	// A recorder that dies without an end record ends the follow too.
	m2 := newMeta("01hhhhhhhhhhhhhhhhhhhhhhhh")
	w2 := writeSpool(t, st, m2, nil, nil)
	go func() {
		done <- st.Follow(context.Background(), m2.ID, time.Millisecond, nil, func(*frame.Frame) error { return nil })
	}()
	w2.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// And a cancelled context.
	m3 := newMeta("01jjjjjjjjjjjjjjjjjjjjjjjj")
	w3 := writeSpool(t, st, m3, nil, nil)
	defer w3.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- st.Follow(ctx, m3.ID, time.Millisecond, nil, func(*frame.Frame) error { return nil }) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel = %v", err)
	}
	// Compaction and removal refuse while it records.
	if _, _, err := st.Compact(); !errors.Is(err, ErrRecording) {
		t.Errorf("Compact while recording = %v", err)
	}
	if err := st.Delete(m3.ID); !errors.Is(err, ErrRecording) {
		t.Errorf("Delete of a live session = %v", err)
	}
}

// TestSortNewestFirst: the key sort and the cycle-following move give the
// order of a plain sort by start time (newest first), ties by id.
func TestSortNewestFirst(t *testing.T) {
	base := time.Unix(1700000000, 0)
	var list []Summary
	for i := range 500 {
		list = append(list, Summary{ID: fmt.Sprintf("%04d", (i*7919)%500), Started: base.Add(time.Duration((i*31)%17) * time.Second), Name: fmt.Sprint(i)})
	}
	want := slices.Clone(list)
	sort.SliceStable(want, func(i, j int) bool {
		if !want[i].Started.Equal(want[j].Started) {
			return want[i].Started.After(want[j].Started)
		}
		return want[i].ID > want[j].ID
	})
	sortNewestFirst(list)
	for i := range want {
		if list[i].ID != want[i].ID || list[i].Name != want[i].Name {
			t.Fatalf("position %d: %s (%s), want %s (%s)", i, list[i].ID, list[i].Name, want[i].ID, want[i].Name)
		}
	}
}

// BenchmarkSortNewestFirst sorts 10,000 summaries, as ls does.
func BenchmarkSortNewestFirst(b *testing.B) {
	base := time.Unix(1700000000, 0)
	orig := make([]Summary, 10000)
	for i := range orig {
		orig[i] = Summary{ID: fmt.Sprintf("%026d", (i*7919)%10000), Started: base.Add(time.Duration((i*7919)%10000) * time.Millisecond)}
	}
	list := make([]Summary, len(orig))
	b.ReportAllocs()
	for b.Loop() {
		copy(list, orig)
		sortNewestFirst(list)
	}
}

// TestListSaysTheServer: a server's session (MCP, LSP) has its profile,
// protocol and client in the index (with and without what was lost); a
// plugin's has none there and its entry keeps the first form; an index
// written before entries said the server is brought up to date at the
// next write.
func TestListSaysTheServer(t *testing.T) {
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	server := func(m *frame.Session) {
		m.Profile, m.Protocol, m.HostName, m.HostVersion = "mcp", "2025-06-18", "claude-ai", "0.1.0"
	}
	plain := *newMeta("01aaaaaaaaaaaaaaaaaaaaaaaa")
	plain.Profile, plain.HostVersion = "agentty", "0.9.0"
	mcp := *newMeta("01bbbbbbbbbbbbbbbbbbbbbbbb")
	mcp.Started = mcp.Started.Add(time.Minute)
	server(&mcp)
	lostToo := *newMeta("01cccccccccccccccccccccccc")
	lostToo.Started = lostToo.Started.Add(2 * time.Minute)
	server(&lostToo)
	lostToo.Profile = "lsp"
	lostToo.Lost = &frame.Lost{Frames: 2, Bytes: 30, Reason: "full"}
	for _, m := range []frame.Session{plain, mcp, lostToo} {
		putFrames(t, st, m, []frame.Frame{{Seq: 1, Dir: frame.In, Raw: []byte(`{}`)}})
	}
	want := map[string]*Server{
		plain.ID:   nil,
		mcp.ID:     {"mcp", "2025-06-18", "claude-ai", "0.1.0"},
		lostToo.ID: {"lsp", "2025-06-18", "claude-ai", "0.1.0"},
	}
	check := func(when string) {
		t.Helper()
		list, err := st.List(nil)
		if err != nil || len(list) != 3 {
			t.Fatalf("%s: List = %+v, %v", when, list, err)
		}
		for _, got := range list {
			if w := want[got.ID]; (got.Server == nil) != (w == nil) || w != nil && *got.Server != *w || (got.Lost != nil) != (got.ID == lostToo.ID) {
				t.Errorf("%s: session %s: server %+v, lost %+v; want %+v", when, got.ID, got.Server, got.Lost, w)
			}
		}
	}
	check("stored")
	first := plain
	first.Profile, first.HostVersion = "", ""
	if !bytes.Equal(appendSummary(nil, &plain), appendSummary(nil, &first)) {
		t.Errorf("a plugin's entry is not of the first form")
	}
	// An index of the second kind: entries without the server.
	db, err := bolt.Open(st.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		for _, m := range []frame.Session{mcp, lostToo} {
			old := m
			old.Profile = ""
			tx.Bucket(bucketIndex).Put([]byte(m.ID), appendSummary(nil, &old))
		}
		return tx.Bucket(bucketMeta).Put(keyIndexed, []byte("2"))
	})
	db.Close()
	check("an index of the second kind, read from the records")
	putFrames(t, st, *newMeta("01dddddddddddddddddddddddd"), nil)
	db, _ = bolt.Open(st.dbPath(), 0o600, &bolt.Options{ReadOnly: true})
	db.View(func(tx *bolt.Tx) error {
		s, err := decodeSummary([]byte(mcp.ID), tx.Bucket(bucketIndex).Get([]byte(mcp.ID)))
		if err != nil || s.Server == nil || s.Server.HostName != "claude-ai" || !bytes.Equal(tx.Bucket(bucketMeta).Get(keyIndexed), indexComplete) {
			t.Errorf("after a write: entry %+v, %v; indexed %q", s, err, tx.Bucket(bucketMeta).Get(keyIndexed))
		}
		return nil
	})
	db.Close()
	// A flag 0 with no server after it is damage, not a plugin's entry.
	bad := append(appendSummary(nil, &plain), 0)
	if _, err := decodeSummary([]byte(plain.ID), bad); !errors.Is(err, ErrDamaged) {
		t.Errorf("decode an entry that ends after flag 0: %v, want damaged", err)
	}
}
