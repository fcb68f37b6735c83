package recorder

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/spool"
)

// readFrames reads a spool back as the store does: pieces joined to their
// tails, pieces of a line the recorder could not finish storing dropped. It
// fails the test on anything out of order.
func readFrames(t *testing.T, path string) (meta, end []byte, frames []frame.Frame) {
	t.Helper()
	f, r, err := spool.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pieces [4][]byte
	for {
		typ, p, err := r.Next()
		if err == io.EOF {
			if r.Torn() || r.Damaged() != 0 {
				t.Fatalf("spool torn %v, damaged %d", r.Torn(), r.Damaged())
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case spool.TypeSession:
			meta = bytes.Clone(p)
		case spool.TypeEnd:
			end = bytes.Clone(p)
		case spool.TypeFrame:
			fr, err := frame.Decode(p)
			if err != nil {
				t.Fatal(err)
			}
			fr.Raw = bytes.Clone(fr.Raw)
			frames = append(frames, fr)
			if !fr.IsEvent() {
				pieces[fr.Dir] = nil // of a line that could not be stored
			}
		case spool.TypeLines:
			d, seq, at, block, err := spool.DecodeLines(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range bytes.SplitAfter(block, []byte("\n")) {
				if len(l) > 0 {
					frames = append(frames, frame.Frame{Seq: seq, At: at, Dir: frame.Dir(d), Raw: bytes.Clone(l[:len(l)-1])})
					seq++
				}
			}
			pieces[d] = nil
		case spool.TypePiece:
			d, off, _, b, err := spool.DecodePiece(p)
			if err == nil && off == 0 {
				pieces[d] = nil // of a line that could not be stored
			}
			if err != nil || off != int64(len(pieces[d])) {
				t.Fatalf("piece at %d after %d bytes: %v", off, len(pieces[d]), err)
			}
			pieces[d] = append(pieces[d], b...)
		case spool.TypeTail:
			prefix, enc, err := spool.DecodeTail(p)
			if err != nil {
				t.Fatalf("tail: %v", err)
			}
			fr, err := frame.Decode(enc)
			if err != nil || fr.IsEvent() || prefix != int64(len(pieces[fr.Dir])) {
				t.Fatalf("tail after %d bytes of pieces, says %d: %v", len(pieces[fr.Dir]), prefix, err)
			}
			fr.Raw = append(pieces[fr.Dir], fr.Raw...)
			pieces[fr.Dir] = nil
			frames = append(frames, fr)
		}
	}
}

func start(t *testing.T) (*Recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.spool")
	r, err := Start(path, &frame.Session{ID: "01test", Started: time.Now()}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Spool().Close() })
	return r, path
}

func TestRecorderNumbersBatchesAndEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	meta := &frame.Session{ID: "01test", Started: time.Now()}
	var warn bytes.Buffer
	r, err := Start(path, meta, &warn)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Spool().Close()
	r.Line(&relay.Line{Stream: relay.Stdin, Bytes: []byte("a"), Done: true, EOL: true})
	r.Line(&relay.Line{Stream: relay.Stdout, Bytes: []byte("b"), Done: true, EOL: false})
	if _, _, fs := readFrames(t, path); len(fs) != 0 {
		t.Fatalf("lines on disk before Flush: %d", len(fs))
	}
	r.Flush()
	r.Lines(relay.Stdout, []byte("c\n\nd\n"), 3, time.Time{}) // one record
	r.Flush()
	r.Event(relay.Event{Kind: relay.EventExit, Code: 3}) // events are written at once
	code := 3
	if err := r.Finish(frame.End{Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}}); err != nil {
		t.Fatal(err)
	}
	m, end, fs := readFrames(t, path)
	if !strings.Contains(string(m), `"id":"01test"`) || !strings.Contains(string(end), `"complete"`) {
		t.Errorf("meta %s, end %s", m, end)
	}
	if len(fs) != 6 || fs[0].Seq != 1 || fs[0].Dir != frame.In || string(fs[0].Raw) != "a" ||
		fs[1].Seq != 2 || !fs[1].NoEOL || fs[2].Seq != 3 || string(fs[2].Raw) != "c" || fs[3].Seq != 4 || len(fs[3].Raw) != 0 ||
		fs[4].Seq != 5 || string(fs[4].Raw) != "d" || fs[4].Dir != frame.Out || fs[5].Seq != 6 || fs[5].Event != frame.EventExit || *fs[5].Code() != 3 {
		t.Errorf("frames %+v", fs)
	}
	if warn.Len() != 0 || r.Lost() != nil {
		t.Errorf("warned %q, lost %+v", warn.String(), r.Lost())
	}
}

func TestRecorderCountsWhatItCannotKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "s.spool")
	var warn bytes.Buffer
	r, err := Start(path, &frame.Session{ID: "01x", Started: time.Now()}, &warn)
	if err == nil {
		t.Fatal("Start in a missing folder succeeded")
	}
	for range 3 {
		r.Line(&relay.Line{Stream: relay.Stdout, Bytes: []byte("xyz"), Done: true, EOL: true})
		r.Flush()
	}
	// A long line in pieces counts once.
	r.Line(&relay.Line{Stream: relay.Stdout, Bytes: []byte("abc")})
	r.Line(&relay.Line{Stream: relay.Stdout, Bytes: []byte("de"), Off: 3, Done: true, EOL: true})
	lost := r.Lost()
	if lost == nil || lost.Frames != 4 || lost.Bytes != 14 || lost.Reason == "" {
		t.Fatalf("lost %+v", lost)
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "01x") || strings.Contains(warn.String(), ".tmp-") {
		t.Errorf("want exactly 1 warning line naming the session and no temporary file: %q", warn.String())
	}
}

// pieces hands line to r as the proxy does with a long line: in pieces of
// size bytes, each followed by a Flush, the last with Done.
func pieces(r *Recorder, s relay.Stream, line []byte, size int) {
	for off := 0; ; off += size {
		end := min(off+size, len(line))
		done := end == len(line)
		r.Line(&relay.Line{Stream: s, Bytes: line[off:end], Off: int64(off), Done: done, EOL: done})
		r.Flush()
		if done {
			return
		}
	}
}

// TestLongLinesGoInPieces: a long line reaches the spool as it arrives, in
// pieces and a tail that read back as the line, and the recorder keeps no
// copy of it.
func TestLongLinesGoInPieces(t *testing.T) {
	r, path := start(t)
	line := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	pieces(r, relay.Stdout, line, 48<<10)
	if c := cap(r.lines[relay.Stdout].whole); c != 0 {
		t.Errorf("the recorder held %d bytes of the line", c)
	}
	_, _, fs := readFrames(t, path)
	if len(fs) != 1 || !bytes.Equal(fs[0].Raw, line) || fs[0].Cut != nil || fs[0].Seq != 1 {
		t.Fatalf("%d frames; first: %d bytes, cut %v", len(fs), len(fs[0].Raw), fs[0].Cut)
	}
}

// TestLinesOverTheCap: a line longer than the cap keeps its first bytes,
// its length and the hash of all of it, whether it came whole, in pieces,
// or in pieces to a recorder that holds lines whole for an observer.
func TestLinesOverTheCap(t *testing.T) {
	line := bytes.Repeat([]byte("0123456789"), 30000)
	sum := sha256.Sum256(line)
	for _, c := range []struct {
		name    string
		piece   int
		observe bool
	}{
		{"whole", len(line), false},
		{"pieces", 40000, false},
		{"pieces under the cap, tail over it", 1000, false},
		{"held whole for an observer", 40000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, path := start(t)
			r.SetMaxLine(50000)
			var seen []frame.Frame
			if c.observe {
				r.SetObserver(func(f *frame.Frame) {
					g := *f
					g.Raw = bytes.Clone(f.Raw)
					seen = append(seen, g)
				})
			}
			if c.piece == 1000 {
				// The tail alone crosses the cap.
				r.Line(&relay.Line{Stream: relay.Stdin, Bytes: line[:1000]})
				r.Line(&relay.Line{Stream: relay.Stdin, Bytes: line[1000:], Off: 1000, Done: true, EOL: true})
				r.Flush()
			} else {
				pieces(r, relay.Stdin, line, c.piece)
			}
			r.Line(&relay.Line{Stream: relay.Stdin, Bytes: []byte("next"), Done: true, EOL: true})
			r.Flush()
			_, _, fs := readFrames(t, path)
			if len(fs) != 2 {
				t.Fatalf("%d frames, want 2", len(fs))
			}
			f := fs[0]
			if !bytes.Equal(f.Raw, line[:50000]) || f.Cut == nil || f.Cut.Len != int64(len(line)) || f.Cut.SHA256 != sum {
				t.Fatalf("cut frame: %d bytes kept, cut %+v", len(f.Raw), f.Cut)
			}
			if string(fs[1].Raw) != "next" || fs[1].Cut != nil {
				t.Errorf("the line after: %+v", fs[1])
			}
			if c.observe && (len(seen) != 2 || !bytes.Equal(seen[0].Raw, line[:50000]) || seen[0].Cut == nil || seen[0].Cut.SHA256 != sum) {
				t.Errorf("the observer saw %d frames", len(seen))
			}
		})
	}
}

// TestFailingWritesCountExactly: with a file size limit, the spool stops
// growing in the middle of a session of short lines and long ones. Every
// line is either in the spool, whole and in order, or counted as lost; the
// one warning names the session.
func TestFailingWritesCountExactly(t *testing.T) {
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 2 << 20 // below the ≈2.6 MB the lines take
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)

	path := filepath.Join(t.TempDir(), "s.spool")
	var warn bytes.Buffer
	r, err := Start(path, &frame.Session{ID: "01full", Started: time.Now()}, &warn)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Spool().Close()
	var sent [][]byte
	for i := range 600 {
		line := []byte(strings.Repeat(string(rune('a'+i%26)), 200))
		switch {
		case i%50 == 49:
			line = bytes.Repeat(line, 1000) // 200 KB, in pieces
			pieces(r, relay.Stdout, line, 64<<10)
		case i%7 == 3:
			// A read of three lines: one, then two at once.
			r.Line(&relay.Line{Stream: relay.Stdout, Bytes: line, Done: true, EOL: true})
			two := append(append(bytes.Clone(line), '\n'), append(bytes.Clone(line), '\n')...)
			r.Lines(relay.Stdout, two, 2, time.Time{})
			r.Flush()
			sent = append(sent, line, line)
		default:
			r.Line(&relay.Line{Stream: relay.Stdout, Bytes: line, Done: true, EOL: true})
			r.Flush()
		}
		sent = append(sent, line)
	}
	lost := r.Lost()
	if lost == nil || lost.Frames == 0 {
		t.Fatal("nothing was lost: the limit did not bite")
	}
	_, _, fs := readFrames(t, path)
	if int64(len(fs))+lost.Frames != int64(len(sent)) {
		t.Fatalf("%d stored + %d lost, want %d", len(fs), lost.Frames, len(sent))
	}
	var stored int64
	for i, f := range fs {
		if !bytes.Equal(f.Raw, sent[f.Seq-1]) {
			t.Fatalf("frame %d (seq %d) is not the line sent", i, f.Seq)
		}
		stored += int64(len(f.Raw))
	}
	var total int64
	for _, l := range sent {
		total += int64(len(l))
	}
	if stored+lost.Bytes != total {
		t.Errorf("%d bytes stored + %d lost, want %d", stored, lost.Bytes, total)
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "01full") {
		t.Errorf("want one warning naming the session: %q", warn.String())
	}
	if fi, err := os.Stat(path); err != nil || uint64(fi.Size()) > lim.Cur {
		t.Errorf("spool %v over the limit", fi.Size())
	}
}

// TestHookBufferAtTheBigRecordEdge: a BeforeSave hook may reuse its buffer
// for the next line, so a record that refers to it must be written before
// the hook runs again. The spool refers to a record's last part from
// exactly spool.BigRecord bytes of payload (its type byte included): lines
// of every length around that edge, two to a read, come back whole.
func TestHookBufferAtTheBigRecordEdge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	started := time.Now()
	r, err := Start(path, &frame.Session{ID: "01hook", Started: started}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Spool().Close()
	var buf []byte
	r.SetBeforeSave(func(_ frame.Dir, raw []byte, _ bool) []byte {
		buf = append(buf[:0], raw...)
		return buf
	})
	var want [][]byte
	for n := spool.BigRecord - 16; n <= spool.BigRecord; n++ {
		a, b := bytes.Repeat([]byte("a"), n), bytes.Repeat([]byte("b"), n)
		block := append(append(append(bytes.Clone(a), '\n'), b...), '\n')
		r.Lines(relay.Stdout, block, 2, started.Add(time.Second))
		r.Flush()
		want = append(want, a, b)
	}
	_, _, frames := readFrames(t, path) // fails on damage
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if !bytes.Equal(f.Raw, want[i]) {
			t.Fatalf("frame %d: %d bytes of %q, want %d of %q", f.Seq, len(f.Raw), f.Raw[:1], len(want[i]), want[i][:1])
		}
	}
}

// records reads every record of the spool at path: type and payload.
func records(t *testing.T, path string) (typs []byte, payloads [][]byte) {
	t.Helper()
	f, r, err := spool.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		typ, p, err := r.Next()
		if err == io.EOF {
			return typs, payloads
		}
		if err != nil {
			t.Fatal(err)
		}
		typs, payloads = append(typs, typ), append(payloads, bytes.Clone(p))
	}
}

// TestRecordsAsBefore: the recorder writes the records it wrote before the
// spool's record format moved into the spool package, payload for payload:
// ../spool/testdata/v2.spool was written by this very session at commit
// 88923e8. Only the events' times differ (they are the clock's).
func TestRecordsAsBefore(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return started.Add(time.Duration(ms) * time.Millisecond) }
	meta := &frame.Session{ID: "01golden", Name: "golden", Command: []string{"node", "main.mjs"}, Cwd: "/plugin", Started: started, Status: frame.StatusRecording, Tapedeck: "dev"}
	path := filepath.Join(t.TempDir(), "s.spool")
	r, err := Start(path, meta, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Spool().Close()
	r.SetMaxLine(64)
	for _, l := range []relay.Line{
		{Stream: relay.Stdin, Bytes: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), Done: true, EOL: true, Time: at(1)},
		{Stream: relay.Stdout, Bytes: []byte(`{"id":1,"result":{}}`), Done: true, EOL: true, Time: at(2)},
	} {
		r.Line(&l)
	}
	r.Lines(relay.Stdout, []byte("a\n\nc\n"), 3, at(2))
	r.Flush()
	for _, l := range []relay.Line{
		{Stream: relay.Stdout, Bytes: []byte("0123456789abcdefghij"), Off: 0, Time: at(3)},
		{Stream: relay.Stdout, Bytes: []byte("ABCDEFGHIJKLMNOPQRST"), Off: 20, Time: at(4)},
		{Stream: relay.Stdout, Bytes: []byte("end"), Off: 40, Done: true, EOL: true, Time: at(5)},
		{Stream: relay.Stdin, Bytes: bytes.Repeat([]byte("x"), 100), Done: true, EOL: true, Time: at(6)},
		{Stream: relay.Stderr, Bytes: bytes.Repeat([]byte("e"), 40), Off: 0, Time: at(7)},
		{Stream: relay.Stderr, Bytes: bytes.Repeat([]byte("f"), 40), Off: 40, Time: at(8)},
		{Stream: relay.Stderr, Bytes: []byte("gg"), Off: 80, Done: true, EOL: true, Time: at(9)},
		{Stream: relay.Stderr, Bytes: []byte("warn\r\x00\xff"), Done: true, EOL: false, Time: at(10)},
	} {
		r.Line(&l)
		r.Flush()
	}
	r.Event(relay.Event{Kind: relay.EventEOF})
	r.Event(relay.Event{Kind: relay.EventSignal, Signal: 15})
	r.Event(relay.Event{Kind: relay.EventClosed})
	r.Event(relay.Event{Kind: relay.EventExit, Code: 3})
	if err := r.Notes([]byte(`{"findings":[]}`)); err != nil {
		t.Fatal(err)
	}
	code := 3
	if err := r.Finish(frame.End{Ended: at(11), Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}}); err != nil {
		t.Fatal(err)
	}
	gotT, got := records(t, path)
	wantT, want := records(t, filepath.Join("..", "spool", "testdata", "v2.spool"))
	if string(gotT) != string(wantT) {
		t.Fatalf("record types %q, want %q", gotT, wantT)
	}
	for i := range got {
		g, w := got[i], want[i]
		if gotT[i] == spool.TypeFrame {
			gf, gerr := frame.Decode(g)
			wf, werr := frame.Decode(w)
			if gerr == nil && werr == nil && gf.IsEvent() && wf.IsEvent() {
				gf.At, wf.At = 0, 0
				g, w = frame.Append(nil, &gf), frame.Append(nil, &wf)
			}
		}
		if !bytes.Equal(g, w) {
			t.Errorf("record %d (%c): %q, want %q", i, gotT[i], g, w)
		}
	}
}
