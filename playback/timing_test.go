package playback

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
)

// frames makes a timeline of the plugin's lines ("<") and the host's (">").
func frames(lines ...string) []frame.Frame {
	var fs []frame.Frame
	for i, l := range lines {
		f := frame.Frame{Seq: uint64(i + 1), Raw: []byte(l[2:]), Dir: frame.Out}
		if l[0] == '>' {
			f.Dir = frame.In
		}
		fs = append(fs, f)
	}
	return fs
}

func progress(token string, n int) string {
	return `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":` + string(rune('0'+n)) + `}}`
}

// compareTimed compares as a replay does under profile p: arranged, then
// relaxed.
func compareTimed(t *testing.T, p profile.Profile, rec, live []frame.Frame) (diff.Result, []string) {
	t.Helper()
	tm, err := timingOf(p)
	if err != nil {
		t.Fatal(err)
	}
	arranged, moved := tm.arrange(rec, live)
	res := tm.diff(rec, arranged, diff.Options{})
	var notes []note.Note
	if n := tm.arrangedNote(moved); n != "" {
		notes = append(notes, note.Text(n))
	}
	res, notes = tm.relax(res, rec, arranged, notes)
	return res, note.Strings(notes)
}

// TestStreamsInterleaveFreely: under the MCP profile two calls' progress
// and answers interleaved otherwise than recorded are the same replay,
// with a note; a reorder within one token's progress is still a
// difference; under the Agentty profile (no timing) the cross-stream
// reorder is one too.
func TestStreamsInterleaveFreely(t *testing.T) {
	rec := frames(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"a"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"b"}}}`,
		progress("a", 1), progress("b", 1), progress("a", 2), progress("b", 2),
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	across := frames(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"a"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"b"}}}`,
		progress("b", 1), progress("b", 2),
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		progress("a", 1), progress("a", 2),
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	within := frames(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"a"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"b"}}}`,
		progress("a", 2), progress("b", 1), progress("a", 1), progress("b", 2),
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	res, notes := compareTimed(t, profile.MCP{}, rec, across)
	if !res.Same() || len(notes) != 1 || !strings.Contains(notes[0], "another order across independent streams") {
		t.Errorf("across streams: %d differences %+v, notes %q; want none and a note", len(res.Differences), res.Differences, notes)
	}
	res, _ = compareTimed(t, profile.MCP{}, rec, within)
	if res.Same() {
		t.Error("a reorder within one token's progress passed")
	}
	res, notes = compareTimed(t, profile.Agentty{}, rec, across)
	if res.Same() || len(notes) != 0 {
		t.Errorf("agentty: %d differences, notes %q; want differences, no note", len(res.Differences), notes)
	}
}

// TestChatterComesAsOftenAsItComes: under the LSP profile one log line and
// one progress report fewer, and diagnostics of two documents in the other
// order, are notes; a changed diagnostic is a difference.
func TestChatterComesAsOftenAsItComes(t *testing.T) {
	diag := func(uri, msg string) string {
		return `< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"` + uri + `","diagnostics":[` + msg + `]}}`
	}
	log := func(s string) string {
		return `< {"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"` + s + `"}}`
	}
	prog := func(kind string) string {
		return `< {"jsonrpc":"2.0","method":"$/progress","params":{"token":"1","value":{"kind":"` + kind + `"}}}`
	}
	rec := frames(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		log("loading"), prog("begin"), prog("report"), prog("end"), log("loaded"),
		diag("file:///a", ""), diag("file:///b", `{"message":"x"}`),
	)
	live := frames(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		prog("begin"), prog("end"), log("loading"),
		diag("file:///b", `{"message":"x"}`), diag("file:///a", ""),
	)
	res, notes := compareTimed(t, profile.LSP{}, rec, live)
	if !res.Same() {
		t.Errorf("differences %+v, notes %q", res.Differences, notes)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"window/logMessage 1 recorded not said", "$/progress 1 recorded not said", "textDocument/publishDiagnostics by params.uri"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	live[5].Raw = []byte(diag("file:///b", `{"message":"y"}`)[2:])
	if res, _ := compareTimed(t, profile.LSP{}, rec, live); res.Same() {
		t.Error("a changed diagnostic passed")
	}
}

// TestAMessageCutByTheExitIsANote: a language server whose stdout ends in
// the middle of a message after the host's exit is the same replay, with
// a note, whether the replay or the recording holds the cut (gopls cut one
// recording in 4 to 12 in CI's soak, which no replay reproduced), and so is
// a replay that finished the recording's cut message; the same cut before
// the host asked it to go is a difference.
func TestAMessageCutByTheExitIsANote(t *testing.T) {
	framed := func(dir frame.Dir, seq uint64, body string, length int) frame.Frame {
		f := frame.Frame{Seq: seq, Dir: dir, Raw: []byte(body)}
		f.SetHead([]byte("Content-Length: " + strconv.Itoa(length) + "\r\n\r\n"))
		return f
	}
	shutdown := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	exit := `{"jsonrpc":"2.0","method":"exit"}`
	done := `{"jsonrpc":"2.0","id":2,"result":null}`
	rec := []frame.Frame{framed(frame.In, 1, shutdown, len(shutdown)), framed(frame.Out, 2, done, len(done)), framed(frame.In, 3, exit, len(exit))}
	live := append(append([]frame.Frame(nil), rec...), framed(frame.Out, 4, `{"jsonrpc":"2.0","meth`, 90))
	res, notes := compareTimed(t, profile.LSP{}, rec, live)
	if !res.Same() || len(notes) != 1 || !strings.Contains(notes[0], "ended in the middle of a message (22 of 90 bytes, replay seq 4) after the host's shutdown") {
		t.Errorf("differences %+v, notes %q", res.Differences, notes)
	}
	res, notes = compareTimed(t, profile.LSP{}, live, rec)
	if !res.Same() || len(notes) != 1 || !strings.Contains(notes[0], "ended in the middle of a message (22 of 90 bytes, recorded seq 4) after the host's shutdown") {
		t.Errorf("recorded cut: differences %+v, notes %q", res.Differences, notes)
	}
	// The replay finished the message the recording holds the start of:
	// a note; a whole message it does not start is a difference.
	whole := `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///a","diagnostics":[]}}`
	cut := append(append([]frame.Frame(nil), rec...), framed(frame.Out, 4, whole[:20], len(whole)))
	finished := append(append([]frame.Frame(nil), rec...), framed(frame.Out, 4, whole, len(whole)))
	res, notes = compareTimed(t, profile.LSP{}, cut, finished)
	if !res.Same() || len(notes) != 1 || !strings.Contains(notes[0], "(recorded seq 4) after the host's shutdown, and the replay finished it (replay seq 4)") {
		t.Errorf("finished: differences %+v, notes %q", res.Differences, notes)
	}
	other := strings.Replace(whole, "file:///a", "file:///b", 1)
	finished[3] = framed(frame.Out, 4, other, len(other))
	cut[3] = framed(frame.Out, 4, whole[:len(whole)-10], len(whole))
	if res, _ := compareTimed(t, profile.LSP{}, cut, finished); len(res.Differences) != 1 || res.Differences[0].Kind != diff.Extra {
		t.Errorf("another message than the cut one: differences %+v, want the extra one", res.Differences)
	}
	// The whole message before the host's shutdown finished nothing.
	before := []frame.Frame{framed(frame.Out, 1, whole, len(whole)), framed(frame.In, 2, shutdown, len(shutdown)), framed(frame.Out, 3, done, len(done)), framed(frame.In, 4, exit, len(exit))}
	if res, _ := compareTimed(t, profile.LSP{}, cut, before); len(res.Differences) != 1 || res.Differences[0].Kind != diff.Extra {
		t.Errorf("the whole message before the shutdown: differences %+v, want it extra", res.Differences)
	}
	early := []frame.Frame{framed(frame.Out, 1, `{"jsonrpc":"2.0","meth`, 90)}
	if res, _ := compareTimed(t, profile.LSP{}, nil, early); res.Same() {
		t.Error("a message cut before the host's shutdown passed")
	}
	if res, _ := compareTimed(t, profile.LSP{}, early, nil); res.Same() {
		t.Error("a recorded message cut before the host's shutdown passed")
	}
}

// TestStreamPlacesAreCountedOnce: a replay whose plugin swapped each pair
// of one token's progress notifications has a moved difference for each
// frame out of place; each one's place in its stream is looked up, and
// the stream is read once for all of them, not once for each (4,000
// notifications took 6.3 s, growing with the square of them). The swaps
// stay differences.
func TestStreamPlacesAreCountedOnce(t *testing.T) {
	t.Parallel()
	const n = 1000
	note := func(i int) string {
		return `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":` + strconv.Itoa(i) + `}}`
	}
	call := `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"a"}}}`
	rec, live := []string{call}, []string{call}
	for i := 0; i < n; i += 2 {
		rec = append(rec, note(i), note(i+1))
		live = append(live, note(i+1), note(i))
	}
	tm, err := timingOf(profile.MCP{})
	if err != nil {
		t.Fatal(err)
	}
	r, l := frames(rec...), frames(live...)
	res := tm.diff(r, l, diff.Options{})
	moved := 0
	ri, li := streamIndex{frames: r}, streamIndex{frames: l}
	for _, d := range res.Differences {
		if d.Kind == diff.Moved {
			moved++
			if why := tm.freeMove(d, &ri, &li); why != "" {
				t.Fatalf("a swap within one stream was let go (%s): %+v", why, d)
			}
		}
	}
	if moved < 40 {
		t.Fatalf("%d moved differences of %d swapped notifications; want at least 40", moved, n)
	}
	if ri.keysRead != n || li.keysRead != n {
		t.Errorf("stream keys read to place %d moved frames: %d recorded, %d live; want each of the %d notifications once", moved, ri.keysRead, li.keysRead, n)
	}
}

// TestTheClosingMessageIsFoundOnce: whether a message cut short came after
// the host's closing message is asked for each such message, and the
// timeline is read for the first closing message once (a crafted tape of
// 10,000 cut messages, each asking anew: 54 s).
func TestTheClosingMessageIsFoundOnce(t *testing.T) {
	t.Parallel()
	tm, err := timingOf(profile.LSP{})
	if err != nil {
		t.Fatal(err)
	}
	idx := streamIndex{frames: frames(
		`< {"jsonrpc":"2.0","method":"window/logMessage","params":{}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"shutdown"}`,
		`> {"jsonrpc":"2.0","method":"exit"}`,
	)}
	for _, c := range []struct {
		seq  uint64
		want string
	}{{1, ""}, {2, ""}, {3, "shutdown"}, {9, "shutdown"}} {
		if got := tm.closedBefore(&idx, c.seq); got != c.want {
			t.Errorf("closedBefore(%d) = %q, want %q", c.seq, got, c.want)
		}
		idx.frames = nil // read once: the answers stand without them
	}
}
