package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/spool"
)

func lineFrames(n int) []frame.Frame {
	frames := make([]frame.Frame, n)
	for i := range frames {
		frames[i] = frame.Frame{Seq: uint64(i + 1), At: int64(i) * 1000, Dir: frame.Dir(1 + i%2),
			Raw: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"tick","params":{"n":%d}}`, i)}
	}
	return frames
}

func newStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDamageBeforeTheTailIsStoredAndKept is the audit's attack: one flipped
// byte a third of the way into a finished spool. What reads cleanly is
// stored (every frame but the damaged one, with the exit status from the
// end record), the session says damaged and how many bytes were lost, the
// spool is kept aside, and the one message names the session.
func TestDamageBeforeTheTailIsStoredAndKept(t *testing.T) {
	st := newStore(t)
	meta := newMeta("01damaged")
	frames := lineFrames(3000)
	code := 4
	w := writeSpool(t, st, meta, frames, &frame.End{Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}})
	w.Close()
	path := st.SpoolPath(meta.ID)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x04
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	err = st.Recover()
	if !errors.Is(err, ErrSpoolDamaged) || !strings.Contains(err.Error(), meta.ID) {
		t.Fatalf("Recover = %v; want ErrSpoolDamaged naming the session", err)
	}
	m, err := st.Session(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != frame.StatusDamaged || m.Unreadable <= 0 || m.Exit.Code == nil || *m.Exit.Code != 4 {
		t.Errorf("session: status %s, unreadable %d, exit %+v; want damaged, >0, 4", m.Status, m.Unreadable, m.Exit)
	}
	got := collect(t, st, meta.ID)
	if len(got) != len(frames)-1 {
		t.Fatalf("%d frames stored, want %d (all but the damaged one)", len(got), len(frames)-1)
	}
	for _, g := range got {
		if want := frames[g.Seq-1]; !bytes.Equal(g.Raw, want.Raw) {
			t.Fatalf("frame %d misread: %q", g.Seq, g.Raw)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged spool is still in the spool folder: %v", err)
	}
	if kept, _ := filepath.Glob(filepath.Join(st.Dir(), "spool", "damaged", meta.ID+".spool*")); len(kept) != 1 {
		t.Errorf("spool/damaged holds %v, want the spool", kept)
	}
	if err := st.Recover(); err != nil {
		t.Errorf("second Recover: %v; the damage is told once", err)
	}
}

// TestTornTailIsSilent: a spool cut in the middle of its last record (a
// recorder killed while writing) is stored without it, interrupted, with no
// message and nothing kept aside.
func TestTornTailIsSilent(t *testing.T) {
	st := newStore(t)
	meta := newMeta("01torn")
	w := writeSpool(t, st, meta, lineFrames(100), nil)
	size := w.Size()
	w.Close()
	os.Truncate(st.SpoolPath(meta.ID), size-7)
	if err := st.Recover(); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	m, err := st.Session(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != frame.StatusInterrupted || m.Unreadable != 0 || m.Frames.In+m.Frames.Out != 99 {
		t.Errorf("status %s, unreadable %d, frames %+v", m.Status, m.Unreadable, m.Frames)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "spool", "damaged")); err == nil {
		t.Error("a torn tail was kept aside as damage")
	}
}

// TestUnreadableSpoolIsSetAside: a file in the spool folder that is no
// spool stops no command: Recover moves it to spool/damaged/ and says so
// once, and the other sessions are listed and stored.
func TestUnreadableSpoolIsSetAside(t *testing.T) {
	st := newStore(t)
	good := newMeta("01good")
	writeSpool(t, st, good, lineFrames(10), nil).Close()
	for name, body := range map[string]string{
		"01garbage.spool":  "this is not a spool at all",
		"01headless.spool": spool.Magic + "\x01\x02\x03\x04",
		"01empty.spool":    "",
	} {
		os.WriteFile(filepath.Join(st.Dir(), "spool", name), []byte(body), 0o600)
	}
	// Listing before any recovery does not fail either.
	if _, err := st.List(nil); err != nil {
		t.Fatalf("List with unreadable spools: %v", err)
	}
	err := st.Recover()
	if !errors.Is(err, ErrSpoolDamaged) || strings.Count(err.Error(), "moved to") != 3 {
		t.Fatalf("Recover = %v; want the three unreadable files named as moved aside", err)
	}
	list, err := st.List(nil)
	if err != nil || len(list) != 1 || list[0].ID != good.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if kept, _ := filepath.Glob(filepath.Join(st.Dir(), "spool", "damaged", "*")); len(kept) != 3 {
		t.Errorf("spool/damaged holds %v", kept)
	}
	if err := st.Recover(); err != nil {
		t.Errorf("second Recover: %v; it is told once", err)
	}
}

// writePieces appends a long line's pieces (and, when tail is set, its
// tail) as the recorder does.
func writePieces(t testing.TB, w *spool.Writer, f frame.Frame, line []byte, piece int, tail bool) {
	t.Helper()
	end := len(line)
	if tail {
		end = len(line) - 10
	}
	for off := 0; off < end; off += piece {
		if _, err := w.AddPiece(byte(f.Dir), int64(off), f.At, line[off:min(off+piece, end)]); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if tail {
		g := f
		g.Raw = nil
		if err := w.AddTail(int64(end), frame.AppendHeader(nil, &g), line[end:]); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// appendLines writes the whole lines of one read as one record, as the
// recorder does.
func appendLines(t testing.TB, w *spool.Writer, d frame.Dir, seq uint64, at int64, lines string) {
	t.Helper()
	if err := w.AddLines(byte(d), seq, at, []byte(lines)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestLongLinesInPieces: pieces and tails are joined into the line; a
// recorder killed in the middle of a long line leaves what came of it
// readable, stored as a frame cut at what came; a piece lost to damage
// leaves the clean beginning of its line, cut, and a damaged session.
func TestLongLinesInPieces(t *testing.T) {
	line := bytes.Repeat([]byte("0123456789"), 50000)
	t.Run("joined", func(t *testing.T) {
		st := newStore(t)
		meta := newMeta("01joined")
		w := writeSpool(t, st, meta, lineFrames(2), nil)
		writePieces(t, w, frame.Frame{Seq: 3, At: 5000, Dir: frame.Out}, line, 40000, true)
		appendFrame(t, w, &frame.Frame{Seq: 4, At: 6000, Dir: frame.In, Raw: []byte("after")})
		w.Close()
		if err := st.Recover(); err != nil {
			t.Fatal(err)
		}
		got := collect(t, st, meta.ID)
		if len(got) != 4 || !bytes.Equal(got[2].Raw, line) || got[2].Cut != nil || string(got[3].Raw) != "after" {
			t.Fatalf("%d frames; the long one %d bytes", len(got), len(got[2].Raw))
		}
	})
	t.Run("the lines of a read in one record", func(t *testing.T) {
		st := newStore(t)
		meta := newMeta("01lines")
		w := writeSpool(t, st, meta, lineFrames(2), nil)
		appendLines(t, w, frame.Out, 3, 7000, "a\n\nc\n")
		appendFrame(t, w, &frame.Frame{Seq: 6, At: 8000, Dir: frame.In, Raw: []byte("d")})
		w.Close()
		if err := st.Recover(); err != nil {
			t.Fatal(err)
		}
		got := collect(t, st, meta.ID)
		var seqs, raws []string
		for _, f := range got[2:] {
			seqs = append(seqs, fmt.Sprintf("%d%s@%d", f.Seq, f.Dir, f.At))
			raws = append(raws, string(f.Raw))
		}
		if strings.Join(seqs, " ") != "3out@7000 4out@7000 5out@7000 6in@8000" || strings.Join(raws, "|") != "a||c|d" {
			t.Fatalf("frames %v %q", seqs, raws)
		}
		if m, _ := st.Session(meta.ID); m.Frames.Out != 4 || m.Frames.In != 2 {
			t.Errorf("counts %+v", m.Frames)
		}
	})
	t.Run("killed in the middle of it", func(t *testing.T) {
		st := newStore(t)
		meta := newMeta("01killed")
		w := writeSpool(t, st, meta, lineFrames(2), nil)
		writePieces(t, w, frame.Frame{Seq: 3, At: 5000, Dir: frame.Out}, line[:120000], 40000, false)
		w.Close()
		if err := st.Recover(); err != nil {
			t.Fatal(err)
		}
		m, _ := st.Session(meta.ID)
		got := collect(t, st, meta.ID)
		if len(got) != 3 || m.Status != frame.StatusInterrupted {
			t.Fatalf("%d frames, status %s; want 3, interrupted", len(got), m.Status)
		}
		f := got[2]
		if f.Seq != 3 || f.Dir != frame.Out || !f.NoEOL || !bytes.Equal(f.Raw, line[:120000]) ||
			f.Cut == nil || f.Cut.Len != 120000 || f.Cut.SHA256 != sha256.Sum256(line[:120000]) {
			t.Fatalf("the unfinished line: seq %d, %d bytes, cut %+v", f.Seq, len(f.Raw), f.Cut)
		}
	})
	t.Run("a piece damaged", func(t *testing.T) {
		st := newStore(t)
		meta := newMeta("01piece")
		w := writeSpool(t, st, meta, lineFrames(2), nil)
		before := w.Size()
		writePieces(t, w, frame.Frame{Seq: 3, At: 5000, Dir: frame.Out}, line, 40000, true)
		appendFrame(t, w, &frame.Frame{Seq: 4, Dir: frame.In, Raw: []byte("after")})
		w.Close()
		b, _ := os.ReadFile(st.SpoolPath(meta.ID))
		b[before+100000] ^= 1 // in the third piece
		os.WriteFile(st.SpoolPath(meta.ID), b, 0o600)
		if err := st.Recover(); !errors.Is(err, ErrSpoolDamaged) {
			t.Fatalf("Recover = %v, want ErrSpoolDamaged", err)
		}
		m, _ := st.Session(meta.ID)
		got := collect(t, st, meta.ID)
		if m.Status != frame.StatusDamaged || len(got) != 4 {
			t.Fatalf("status %s, %d frames", m.Status, len(got))
		}
		f := got[2]
		if !bytes.Equal(f.Raw, line[:80000]) || f.Cut == nil || f.Cut.Len != int64(len(line)) {
			t.Fatalf("the damaged line: %d bytes kept, cut %+v; want its clean 80000 first bytes", len(f.Raw), f.Cut)
		}
		if string(got[3].Raw) != "after" {
			t.Errorf("the frame after: %q", got[3].Raw)
		}
	})
}

// FuzzSpoolScan: a spool of whole lines, a long line in pieces with its
// tail, and a long line cut short by a kill, is cut, flipped and followed
// by garbage; whatever comes of it, the scan never panics and never
// misreads: every frame it gives is a line that was written, whole, or, cut,
// the beginning of one.
func FuzzSpoolScan(f *testing.F) {
	dir := f.TempDir()
	st, err := Open(dir, nil)
	if err != nil {
		f.Fatal(err)
	}
	meta := newMeta("01fuzz")
	frames := lineFrames(6)
	w := writeSpool(f, st, meta, frames, nil)
	long := bytes.Repeat([]byte("0123456789"), 300)
	writePieces(f, w, frame.Frame{Seq: 7, At: 70, Dir: frame.Out}, long, 700, true)
	appendFrame(f, w, &frame.Frame{Seq: 8, At: 80, Dir: frame.In, Raw: []byte("after")})
	appendLines(f, w, frame.Out, 9, 90, "one\n\nthree\n")
	writePieces(f, w, frame.Frame{Seq: 12, At: 120, Dir: frame.In}, long[:1500], 500, false)
	w.Close()
	seed, err := os.ReadFile(st.SpoolPath(meta.ID))
	if err != nil {
		f.Fatal(err)
	}
	lines := map[frame.Dir][][]byte{frame.Out: {long, []byte("one"), []byte(""), []byte("three")}, frame.In: {[]byte("after"), long}}
	for _, fr := range frames {
		lines[fr.Dir] = append(lines[fr.Dir], fr.Raw)
	}
	f.Add([]byte{}, len(seed), 0, byte(0))
	f.Add([]byte("junk"), len(seed)-3, len(seed)/2, byte(1))
	f.Fuzz(func(t *testing.T, tail []byte, cut, flip int, mask byte) {
		cut = max(cut, -cut) % (len(seed) + 1)
		in := append(bytes.Clone(seed[:cut]), tail...)
		if len(in) > 0 {
			in[max(flip, -flip)%len(in)] ^= mask
		}
		path := filepath.Join(t.TempDir(), "x.spool")
		os.WriteFile(path, in, 0o600)
		sc, err := openScan(path)
		if err != nil {
			return
		}
		defer sc.close()
		for n := 0; ; n++ {
			fr, err := sc.next()
			if err != nil {
				break
			}
			if n > 20 || fr.IsEvent() {
				t.Fatalf("frame %d: %+v was never written", n, fr)
			}
			ok := false
			for _, l := range lines[fr.Dir] {
				if fr.Cut == nil && bytes.Equal(fr.Raw, l) || fr.Cut != nil && bytes.HasPrefix(l, fr.Raw) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("misread: %s frame %d, %d bytes, cut %v: %.40q", fr.Dir, fr.Seq, len(fr.Raw), fr.Cut != nil, fr.Raw)
			}
		}
	})
}

// TestOldSpoolReads: a spool the recorder wrote before the record format
// moved into the spool package (../spool/testdata/v2.spool: one record of
// every type, long lines in pieces under and over the cap, every event)
// reads the same from the spool and once ingested.
func TestOldSpoolReads(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("..", "spool", "testdata", "v2.spool"))
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	cutLine := bytes.Repeat([]byte("x"), 100)
	cutPieces := []byte(strings.Repeat("e", 40) + strings.Repeat("f", 40) + "gg")
	want := []string{
		fmt.Sprintf(`1 in %d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}" <nil> `, 1*ms),
		fmt.Sprintf(`2 out %d "{\"id\":1,\"result\":{}}" <nil> `, 2*ms),
		fmt.Sprintf(`3 out %d "a" <nil> `, 2*ms),
		fmt.Sprintf(`4 out %d "" <nil> `, 2*ms),
		fmt.Sprintf(`5 out %d "c" <nil> `, 2*ms),
		fmt.Sprintf(`6 out %d "0123456789abcdefghijABCDEFGHIJKLMNOPQRSTend" <nil> `, 5*ms),
		fmt.Sprintf(`7 in %d %q &{100 %x} `, 6*ms, cutLine[:64], sha256.Sum256(cutLine)),
		fmt.Sprintf(`8 err %d %q &{82 %x} `, 9*ms, cutPieces[:64], sha256.Sum256(cutPieces)),
		fmt.Sprintf(`9 err %d "warn\r\x00\xff" <nil> noeol`, 10*ms),
		`10 in eof`, `11 dir(0) signal SIGTERM`, `12 out closed`, `13 dir(0) exit 3`,
	}
	show := func(f *frame.Frame) string {
		if f.IsEvent() {
			s := fmt.Sprintf("%d %s %s", f.Seq, f.Dir, f.Event)
			if f.Signal() != "" {
				s += " " + f.Signal()
			}
			if f.Code() != nil {
				s += fmt.Sprintf(" %d", *f.Code())
			}
			return s
		}
		cut := "<nil>"
		if f.Cut != nil {
			cut = fmt.Sprintf("&{%d %x}", f.Cut.Len, f.Cut.SHA256)
		}
		eol := ""
		if f.NoEOL {
			eol = "noeol"
		}
		return fmt.Sprintf("%d %s %d %q %s %s", f.Seq, f.Dir, f.At, f.Raw, cut, eol)
	}
	st := newStore(t)
	const id = "01golden"
	if err := os.WriteFile(st.SpoolPath(id), old, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(from string) {
		t.Helper()
		got := collect(t, st, id)
		if len(got) != len(want) {
			t.Fatalf("from the %s: %d frames, want %d", from, len(got), len(want))
		}
		for i := range got {
			if s := show(&got[i]); s != want[i] {
				t.Errorf("from the %s: frame %d is\n\t%s\nwant\n\t%s", from, i+1, s, want[i])
			}
		}
		m, err := st.Session(id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != frame.StatusComplete || m.Exit.Code == nil || *m.Exit.Code != 3 || m.Name != "golden" {
			t.Errorf("from the %s: session %s, status %s, exit %+v", from, m.Name, m.Status, m.Exit)
		}
		if notes, err := st.Notes(id); err != nil || string(notes) != `{"findings":[]}` {
			t.Errorf("from the %s: notes %q, %v", from, notes, err)
		}
	}
	check("spool")
	if err := st.Recover(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.SpoolPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the spool is still there after Recover: %v", err)
	}
	check("database")
}

// TestReadyIsOpenHealthRecover: Ready refuses what cannot be read (no
// store where one must be, a damaged database), opens a 0-byte database
// with a warning and ingests nothing into it, and otherwise ingests what
// a dead recorder left, as every command's open does.
func TestReadyIsOpenHealthRecover(t *testing.T) {
	if st, warning, err := Ready(filepath.Join(t.TempDir(), "none"), &Options{MustExist: true}); st != nil || warning != nil || !errors.Is(err, ErrNoStore) {
		t.Errorf("no store: %v, %v, %v; want ErrNoStore", st, warning, err)
	}

	st := newStore(t)
	meta := newMeta("01ready")
	w := writeSpool(t, st, meta, lineFrames(3), &frame.End{Status: frame.StatusComplete})
	w.Close()
	os.WriteFile(st.dbPath(), nil, 0o600)
	got, warning, err := Ready(st.Dir(), &Options{NoSync: true})
	if err != nil || got == nil || !errors.Is(warning, ErrEmpty) {
		t.Fatalf("a 0-byte database: %v, %v, %v; want the store and ErrEmpty", got, warning, err)
	}
	if _, err := os.Stat(st.SpoolPath(meta.ID)); err != nil {
		t.Errorf("the spool went into a 0-byte database: %v", err)
	}

	os.Remove(st.dbPath())
	got, warning, err = Ready(st.Dir(), &Options{NoSync: true})
	if err != nil || warning != nil || got == nil {
		t.Fatalf("a sound store: %v, %v, %v", got, warning, err)
	}
	if m, err := got.Session(meta.ID); err != nil || m == nil {
		t.Errorf("the dead recorder's spool was not ingested: %v, %v", m, err)
	}

	good, err := os.ReadFile(st.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(st.dbPath(), good[:4096], 0o600)
	if got, warning, err := Ready(st.Dir(), nil); got != nil || warning != nil || !errors.Is(err, ErrDamaged) {
		t.Errorf("a damaged database: %v, %v, %v; want ErrDamaged", got, warning, err)
	}
}
