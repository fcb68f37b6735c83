package cli

// Sessions for the tests: made up and put in a store, or read back.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/tape"
)

// exported reads a session back through `tapedeck export`.
func exported(t *testing.T, store, ref string) (*frame.Session, []frame.Frame) {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "export", ref)
	if r.code != 0 {
		t.Fatalf("export %s: exit %d: %s", ref, r.code, r.stderr)
	}
	tr, err := tape.NewReader(bytes.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("read exported tape: %v", err)
	}
	var frames []frame.Frame
	for {
		f, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read exported tape: %v", err)
		}
		c := *f
		c.Raw = bytes.Clone(f.Raw)
		if f.Cut != nil { // the reader's, reused for the next cut frame
			cut := *f.Cut
			c.Cut = &cut
		}
		frames = append(frames, c)
	}
	return tr.Session(), frames
}

// stream joins the frames of one direction back into the bytes that crossed.
func stream(frames []frame.Frame, d frame.Dir) []byte {
	var b bytes.Buffer
	for _, f := range frames {
		if f.IsEvent() || f.Dir != d {
			continue
		}
		b.Write(f.Raw)
		if !f.NoEOL {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func events(frames []frame.Frame) []string {
	var ev []string
	for _, f := range frames {
		if f.IsEvent() {
			s := f.Event.String()
			if f.Signal() != "" {
				s += ":" + f.Signal()
			}
			if f.Code() != nil {
				s += fmt.Sprintf(":%d", *f.Code())
			}
			ev = append(ev, s)
		}
	}
	return ev
}

func lsJSON(t *testing.T, store string) []frame.Session {
	t.Helper()
	r := tapedeck(t, store, nil, nil, "ls", "--json")
	if r.code != 0 {
		t.Fatalf("ls --json: exit %d: %s", r.code, r.stderr)
	}
	var list []frame.Session
	if err := json.Unmarshal(r.stdout, &list); err != nil {
		t.Fatalf("ls --json output: %v\n%s", err, r.stdout)
	}
	return list
}

// initFrame is the host's initialize request for plugin id at version v.
func initFrame(seq uint64, id, v string) frame.Frame {
	return frame.Frame{Seq: seq, Dir: frame.In, Raw: fmt.Appendf(nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.4.0"},"plugin":{"id":%q,"name":"P","version":%q}}}`, id, v)}
}

// fakeSession is a stored session of plugin id that started at started.
func fakeSession(name, plugin string, started time.Time) (frame.Session, []frame.Frame) {
	code := 0
	ended := started.Add(1500 * time.Millisecond)
	meta := frame.Session{
		ID: frame.NewID(started), Name: name, Command: []string{"node", "main.mjs"}, Cwd: "/plugins/" + plugin,
		Started: started, Ended: &ended, Status: frame.StatusComplete, Exit: frame.Exit{Code: &code}, Tapedeck: "test",
	}
	frames := []frame.Frame{
		initFrame(1, plugin, "1.0.0"),
		{Seq: 2, At: 1000, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Seq: 3, At: 2000, Dir: frame.Err, Raw: []byte("ready")},
		frame.Frame{Seq: 4, At: 3000, Event: frame.EventExit}.WithEnd("", &code),
	}
	return meta, frames
}

// putSessions stores sessions directly (without fsync, for speed).
func putSessions(t testing.TB, dir string, n int, each func(i int) (frame.Session, []frame.Frame)) {
	t.Helper()
	st, err := store.Open(dir, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		meta, frames := each(i)
		k := 0
		err := st.Put(meta, func() (*frame.Frame, error) {
			if k == len(frames) {
				return nil, io.EOF
			}
			k++
			return &frames[k-1], nil
		})
		if err != nil {
			t.Fatalf("put session %d: %v", i, err)
		}
	}
}
