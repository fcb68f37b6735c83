package host

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/window"
)

// TestBoundOfARecording: the bound is liveFactor × the recorded lines and
// bytes plus the margins, and the line cap twice the longest line, at
// least 1 MiB, at most the host's limit + 1, never below the longest.
func TestBoundOfARecording(t *testing.T) {
	t.Parallel()
	rec := []frame.Frame{
		{Dir: frame.Out, Raw: []byte("12345")},
		{Dir: frame.Out, Raw: []byte("1"), Cut: &frame.Cut{Len: 40 << 20}},
		{Dir: frame.In, Raw: []byte("not counted")},
		{Event: frame.EventExit},
	}
	b := boundOf(rec, frame.Out)
	if want := (bound{Frames: 2*liveFactor + liveMarginFrames, Bytes: liveFactor*(5+40<<20) + 40<<20 + liveMarginBytes, Line: 40 << 20, Recorded: 5 + 40<<20}); b != want {
		t.Errorf("bound %+v, want %+v", b, want)
	}
	if got := b.BufSize(readBufMin, readBufMax); got != readBufMax {
		t.Errorf("read buffer %d for 40 MiB recorded, want %d", got, readBufMax)
	}
	if got := boundOf(rec[:1], frame.Out).BufSize(readBufMin, readBufMax); got != readBufMin {
		t.Errorf("read buffer %d for 5 bytes recorded, want %d", got, readBufMin)
	}
	if b := boundOf(rec[:1], frame.Out); b.Line != minLineCap {
		t.Errorf("line cap %d for 5-byte lines, want %d", b.Line, minLineCap)
	}
	if b := boundOf([]frame.Frame{{Dir: frame.Err, Raw: bytes.Repeat([]byte("x"), 10<<20)}}, frame.Err); b.Line != HostLineLimit+1 {
		t.Errorf("line cap %d for 10 MiB lines, want the host's limit + 1", b.Line)
	}
}

// infinite is an endless run of one byte.
type infinite byte

func (c infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestReadKeepsWhatTheBoundAllows: lines past the frame bound reach the
// main loop marked unkept; a line over the cap is kept cut, its length
// counted; an endless one never holds more than the cap.
func TestReadKeepsWhatTheBoundAllows(t *testing.T) {
	t.Parallel()
	k := &window.Keeper{Bound: bound{Frames: 2, Bytes: 1 << 30, Line: 1 << 20}}
	long := io.LimitReader(infinite('a'), 5<<20)
	src := io.MultiReader(strings.NewReader("one\n"), long, strings.NewReader("\nthree\nfour\n"))
	r := &runner{events: make(chan event, 16)}
	r.read(src, frame.Out, k)
	close(r.events)
	var got []event
	for ev := range r.events {
		got = append(got, ev)
	}
	if len(got) != 5 || got[4].kind != evEOF {
		t.Fatalf("%d events, want 4 lines and EOF", len(got))
	}
	if string(got[0].raw) != "one" || got[0].unkept || got[0].cut != nil {
		t.Errorf("first line %q unkept %v cut %v", got[0].raw, got[0].unkept, got[0].cut)
	}
	if len(got[1].raw) != 1<<20 || got[1].cut == nil || got[1].cut.Len != 5<<20 || got[1].unkept {
		t.Errorf("long line: %d bytes kept, cut %+v", len(got[1].raw), got[1].cut)
	}
	if !got[2].unkept || !got[3].unkept || string(got[3].raw) != "four" {
		t.Errorf("lines past the bound: %q %v, %q %v", got[2].raw, got[2].unkept, got[3].raw, got[3].unkept)
	}
	want := Unkept{Frames: 2, Bytes: 5<<20 - 1<<20 + 5 + 4, Cut: 1, CutAt: 1 << 20, KeptFrames: 2, KeptBytes: 3 + 1<<20}
	if k.Count() != want {
		t.Errorf("counted %+v, want %+v", k.Count(), want)
	}
	if n := unkeptNote(k.Count(), "stdout"); !strings.Contains(n, "1 line cut at 1048576 bytes, and 2 lines more after the first 2") {
		t.Errorf("note %q", n)
	}

	endless := &window.Keeper{Bound: bound{Frames: 10, Bytes: 1 << 30, Line: 1 << 20}}
	r = &runner{events: make(chan event, 4)}
	r.read(io.LimitReader(infinite('b'), 64<<20), frame.Out, endless)
	if ev := <-r.events; len(ev.raw) != 1<<20 || cap(ev.raw) > 2<<20 || ev.cut.Len != 64<<20 || ev.eol {
		t.Errorf("endless line: kept %d bytes (cap %d), cut %+v", len(ev.raw), cap(ev.raw), ev.cut)
	}
}

// TestCancelEndsAWaitInTheRead: the main loop waits for the plugin's
// stdout in the read itself (see runner.next); cancelling the context
// interrupts that read, and a plugin that writes only on stderr is heard
// while the main loop waits there (its lines are in the timeline).
func TestCancelEndsAWaitInTheRead(t *testing.T) {
	t.Parallel()
	rec := []frame.Frame{
		{Seq: 1, At: 1, Dir: frame.In, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{Seq: 2, At: 2, Dir: frame.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan struct{})
	opts := Options{
		Command: []string{"sh", "-c", `echo one >&2; read line; echo two >&2; exec sleep 60`},
		MinWait: time.Minute, // the wait for the reply lasts
		Waiting: func(string, time.Duration) { close(heard) },
	}
	done := make(chan error, 1)
	var res *Result
	go func() {
		var err error
		res, err = Run(ctx, rec, opts)
		done <- err
	}()
	select {
	case <-heard: // a wait of 2 s is under way, in the read
	case <-time.After(20 * time.Second):
		t.Fatal("no wait began")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the replay")
	}
	var stderr []string
	for _, f := range res.Live {
		if f.Dir == frame.Err {
			stderr = append(stderr, string(f.Raw))
		}
	}
	if strings.Join(stderr, ",") != "one,two" {
		t.Errorf("stderr lines %q, want one, two", stderr)
	}
}
