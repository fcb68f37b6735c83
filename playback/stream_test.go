package playback

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestTapeStreamReadsAsLoadDoes: a tape streamed frame by frame, twice,
// gives the frames Load reads whole, and a stream's error from fn ends it.
func TestTapeStreamReadsAsLoadDoes(t *testing.T) {
	path := filepath.Join("..", "testdata", "tapes", "hello-go.jsonl")
	rec, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStream(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.TapePath != path || s.Meta.ID != rec.Meta.ID {
		t.Errorf("stream of %s, session %s; want %s, %s", s.TapePath, s.Meta.ID, path, rec.Meta.ID)
	}
	for round := range 2 {
		i := 0
		err := s.Each(func(f *frame.Frame) error {
			if i >= len(rec.Frames) || f.Seq != rec.Frames[i].Seq || string(f.Raw) != string(rec.Frames[i].Raw) || f.Event != rec.Frames[i].Event {
				t.Errorf("round %d: frame %d is %d %q, want %d %q", round, i, f.Seq, f.Raw, rec.Frames[i].Seq, rec.Frames[i].Raw)
			}
			i++
			return nil
		})
		if err != nil || i != len(rec.Frames) {
			t.Errorf("round %d: %d frames, %v; want %d", round, i, err, len(rec.Frames))
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Each(func(*frame.Frame) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d frames, want %v after 1", err, n, stop)
	}
	if _, err := OpenStream("no-such-session", nil); err == nil || !strings.Contains(err.Error(), "no such tape file") {
		t.Errorf("a session without a store: %v", err)
	}
}
