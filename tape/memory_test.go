package tape

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// badgeFrames is n ui/setBadge notifications of the plugin, with room for
// extra more frames.
func badgeFrames(n, extra int) []frame.Frame {
	frames := make([]frame.Frame, 0, n+extra)
	for i := range n {
		frames = append(frames, frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out,
			Raw: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"%d"}}`, i)})
	}
	return frames
}

// skipAllocationsUnderRace skips a test of what is allocated under the
// race detector, which allocates beside it.
func skipAllocationsUnderRace(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("what is allocated is measured by the plain build; the race detector allocates beside it")
	}
}

// TestReadFileHoldsATapeOnce: a 100,000-frame tape read whole costs its
// frames and line slices, not a second copy of its bytes nor slices grown
// by doubling (it took 2.4 times as much), and the frames' bytes are the
// tape's own.
func TestReadFileHoldsATapeOnce(t *testing.T) {
	skipAllocationsUnderRace(t)
	const n = 100000
	frames := append(badgeFrames(n, 1), frame.Frame{Seq: n + 1, At: n, Dir: frame.Err, Raw: []byte("text \x01 line")})
	data := export(t, testSession(), frames)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := ReadFile(data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	compareFrames(t, f.Frames, frames)
	perFrame := unsafe.Sizeof(frame.Frame{}) + unsafe.Sizeof([]byte(nil)) + unsafe.Sizeof(uint64(0))
	budget := uint64(n+1)*uint64(perFrame) + 256<<10
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte tape: ReadFile allocated %d bytes, budget %d", len(data), got, budget)
	if got > budget {
		t.Errorf("ReadFile allocated %d bytes for %d frames (%d-byte tape): want at most %d, the frames and line slices", got, n+1, len(data), budget)
	}
	if raw := f.Frames[5].Raw; !bytes.Contains(f.Lines[5], raw) || &f.Lines[5][bytes.Index(f.Lines[5], raw)] != &raw[0] {
		t.Error("a json frame's bytes are a copy, want the tape's own")
	}
	if raw := f.Frames[n].Raw; string(raw) != "text \x01 line" {
		t.Errorf("a text frame's bytes = %q, want \"text \\x01 line\"", raw)
	}
	if cap(f.Frames[5].Raw) != len(f.Frames[5].Raw) {
		t.Error("a json frame's bytes can be appended to over the tape")
	}
}

// TestReadFramesFromHoldsTheFramesOnly: a 100,000-frame tape streamed by
// ReadFramesFrom costs its frames and their bytes, not the tape's lines
// (the JSON of a line here is 63 of its 109 bytes), with every frame the
// same as ReadFile's, an event's code its own, and no frame's bytes open
// to an append over the next one's.
func TestReadFramesFromHoldsTheFramesOnly(t *testing.T) {
	skipAllocationsUnderRace(t)
	const n = 100000
	frames := badgeFrames(n, 2)
	code := 3
	frames = append(frames, frame.Frame{Seq: n + 1, At: n, Dir: frame.Err, Raw: []byte("text \x01 line")},
		frame.Frame{Seq: n + 2, At: n + 1, Event: frame.EventExit}.WithEnd("", &code))
	data := export(t, testSession(), frames)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := ReadFramesFrom(bytes.NewReader(data), bytes.Count(data, []byte("\n"))+1)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	compareFrames(t, f.Frames, frames)
	if f.Lines != nil || f.Seqs != nil || f.Session == nil || f.Session.ID != testSession().ID {
		t.Errorf("lines %d, seqs %d, session %+v: want the session only", len(f.Lines), len(f.Seqs), f.Session)
	}
	var raw int
	for i := range f.Frames {
		raw += len(f.Frames[i].Raw)
	}
	budget := uint64(n+2)*uint64(unsafe.Sizeof(frame.Frame{})) + uint64(raw)*9/8 + 1<<20
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte tape, %d bytes of frames: ReadFramesFrom allocated %d bytes, budget %d", len(data), raw, got, budget)
	if got > budget {
		t.Errorf("ReadFramesFrom allocated %d bytes for %d frames (%d-byte tape, %d bytes of frames): want at most %d", got, n+2, len(data), raw, budget)
	}
	if r := f.Frames[5].Raw; cap(r) != len(r) {
		t.Error("a frame's bytes can be appended to over the next frame's")
	}
	if c := f.Frames[n+1].Code(); c == nil || *c != 3 {
		t.Errorf("exit code %v, want 3", c)
	}
}

// TestCutLinesOver: a "json" line longer than the bound comes out cut,
// with the whole frame's length and SHA-256, white space before its
// closing brace not counted; a "text" line too (see
// TestCutLinesOverStreamsTextAndB64); the lines after both read as ever.
func TestCutLinesOver(t *testing.T) {
	const maxFrame = 1000
	value := `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"` + strings.Repeat("x", 200000) + `"}}`
	text := strings.Repeat("y", 200000)
	data := `{"tapedeck":1,"session":{"id":"01cut0000000000000000000000"}}` + "\n" +
		`{"seq":1,"at":1,"dir":"out","json":` + value + " \t}\n" +
		`{"seq":2,"at":2,"dir":"err","text":"` + text + `"}` + "\n" +
		`{"seq":3,"at":3,"dir":"out","json":{"id":1,"result":{}}}` + "\n"
	tr, err := NewReader(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr.CutLinesOver(maxFrame)
	f, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Raw) != value[:maxFrame] || f.Cut == nil || f.Cut.Len != int64(len(value)) || f.Cut.SHA256 != sha256.Sum256([]byte(value)) || f.Seq != 1 || f.Dir != frame.Out {
		t.Errorf("long json line: seq %d, %d bytes, cut %+v; want its first %d bytes, length %d and SHA-256", f.Seq, len(f.Raw), f.Cut, maxFrame, len(value))
	}
	if f, err = tr.Next(); err != nil || string(f.Raw) != text[:maxFrame] || f.Cut == nil || f.Cut.Len != int64(len(text)) || f.Cut.SHA256 != sha256.Sum256([]byte(text)) || f.Dir != frame.Err {
		t.Errorf("long text line: %v, %d bytes, cut %+v; want its first %d bytes, length %d and SHA-256", err, len(f.Raw), f.Cut, maxFrame, len(text))
	}
	if f, err = tr.Next(); err != nil || string(f.Raw) != `{"id":1,"result":{}}` || f.Seq != 3 {
		t.Errorf("the line after: %v %+v", err, f)
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("then %v, want EOF", err)
	}
}
