package recorder

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/proxy"
	"github.com/tapedeck/tapedeck/spool"
)

func readFrames(t *testing.T, path string) (meta, end []byte, frames []frame.Frame) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := spool.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for {
		typ, p, err := r.Next()
		if err == io.EOF {
			return
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
		}
	}
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
	r.Line(&proxy.Line{Stream: proxy.Stdin, Bytes: []byte("a"), EOL: true, Len: 1})
	r.Line(&proxy.Line{Stream: proxy.Stdout, Bytes: []byte("b"), EOL: false, Len: 1})
	if _, _, fs := readFrames(t, path); len(fs) != 0 {
		t.Fatalf("lines on disk before Flush: %d", len(fs))
	}
	r.Flush()
	r.Event(proxy.Event{Kind: proxy.EventExit, Code: 3}) // events are written at once
	code := 3
	if err := r.Finish(frame.End{Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}}); err != nil {
		t.Fatal(err)
	}
	m, end, fs := readFrames(t, path)
	if !strings.Contains(string(m), `"id":"01test"`) || !strings.Contains(string(end), `"complete"`) {
		t.Errorf("meta %s, end %s", m, end)
	}
	if len(fs) != 3 || fs[0].Seq != 1 || fs[0].Dir != frame.In || string(fs[0].Raw) != "a" ||
		fs[1].Seq != 2 || !fs[1].NoEOL || fs[2].Event != frame.EventExit || *fs[2].Code != 3 {
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
		r.Line(&proxy.Line{Stream: proxy.Stdout, Bytes: []byte("xyz"), EOL: true, Len: 3})
		r.Flush()
	}
	lost := r.Lost()
	if lost == nil || lost.Frames != 3 || lost.Bytes != 9 || lost.Reason == "" {
		t.Fatalf("lost %+v", lost)
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 {
		t.Errorf("%d warning lines, want exactly 1: %q", n, warn.String())
	}
}
