package store

import (
	"bytes"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestFramesKeepHeaderBlocks: a header-framed session's blocks come back
// from Frames whole after the read transaction that found them has ended
// (they were once left pointing into the database's memory, and reading
// one faulted).
func TestFramesKeepHeaderBlocks(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Bodies big enough that the session's bucket is not inline (bbolt
	// copies a small inline bucket out of its mapping; a real session is
	// read straight from the mapping).
	body := bytes.Repeat([]byte("x"), 2000)
	heads := []string{"Content-Length: 2000\r\n\r\n", "X-Extra: y\ncontent-length: 2000\n\n", ""}
	frames := []frame.Frame{
		{Seq: 1, At: 10, Dir: frame.In, Raw: body},
		{Seq: 2, At: 20, Dir: frame.Out, Raw: body},
		{Seq: 3, At: 30, Dir: frame.Out, Raw: []byte(`bare line`)},
	}
	for i, h := range heads {
		if h != "" {
			frames[i].SetHead([]byte(h))
		}
	}
	code := 0
	meta := newMeta("01bbbbbbbbbbbbbbbbbbbbbbbb")
	meta.Framing = "headers"
	w := writeSpool(t, st, meta, frames, &frame.End{Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}, Ended: meta.Started.Add(time.Second)})
	if err := st.Ingest(w.Path(), 0, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var got []string
	err = st.Frames(meta.ID, func(f *frame.Frame) error {
		got = append(got, string(bytes.Clone(f.Head())))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(heads) {
		t.Fatalf("got %d frames, want %d", len(got), len(heads))
	}
	for i := range heads {
		if got[i] != heads[i] {
			t.Errorf("frame %d: head %q, want %q", i+1, got[i], heads[i])
		}
	}
}
