package capture

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/clock"
	"github.com/tapedeck/tapedeck/internal/fingerprint"
	"github.com/tapedeck/tapedeck/internal/relay"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// fingerprinter takes a recording's fingerprint off the relay's path: its
// goroutine waits until the first line or event that crosses after the
// plugin's first stdout line (by then that line has been passed on to the
// host: the first forwarded bytes never compete with it), or until the
// relay is over, whichever comes first.
type fingerprinter struct {
	start chan struct{}
	once  sync.Once
	done  chan struct{}
	fp    *frame.Fingerprint
}

// startFingerprint starts the goroutine that will fingerprint argv as it
// runs in dir with env; wait collects it.
func startFingerprint(ctx context.Context, argv []string, dir string, env []string) *fingerprinter {
	f := &fingerprinter{start: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		select {
		case <-f.start:
		case <-ctx.Done():
			return
		}
		f.fp, _ = fingerprint.Take(ctx, fingerprint.Options{Command: argv, Dir: dir, Env: env})
	}()
	return f
}

func (f *fingerprinter) begin() { f.once.Do(func() { close(f.start) }) }

// wait starts the fingerprint if the plugin never wrote to stdout, waits
// for it and returns it (nil when it was cancelled).
func (f *fingerprinter) wait() *frame.Fingerprint {
	f.begin()
	<-f.done
	return f.fp
}

// sink passes everything on to s and starts the fingerprint with the
// first line or event after the plugin's first stdout line: an atomic load
// and a sync.Once on the relay's path, nothing more.
func (f *fingerprinter) sink(s relay.Sink) relay.Sink {
	var sawOut atomic.Bool
	after := func(st relay.Stream, _ bool, _ time.Time) {
		if sawOut.Load() {
			f.begin()
		} else if st == relay.Stdout {
			sawOut.Store(true)
		}
	}
	event := func() {
		if sawOut.Load() {
			f.begin()
		}
	}
	return newTap(s, nil, after, event)
}

// pinnedSink publishes, before the relay writes a host line to the plugin
// (the relay hands a line to its sink first), the time the recorder stamps
// that line with to the pinned clock's now file, then passes everything on
// to s (nil: nothing recorded). A replay publishes the same time, read
// back from the frame, before it writes the line: the plugin's clock
// reads the same in both. The lines of one read share their time, so it
// is published once a read. Without a pinned clock it is s.
func pinnedSink(s relay.Sink, pin *clock.Preload, origin time.Time) relay.Sink {
	if pin == nil {
		return s
	}
	if s == nil {
		s = discard{}
	}
	var last time.Time
	before := func(st relay.Stream, done bool, at time.Time) {
		if st != relay.Stdin || !done {
			return
		}
		if at.IsZero() {
			at = time.Now()
		}
		if at.Equal(last) {
			return
		}
		last = at
		// Origin plus the monotonic elapsed time: what the recorder
		// stores as the frame's offset, and what a replay publishes.
		_ = pin.Publish(origin.Add(at.Sub(origin)))
	}
	return newTap(s, before, nil, nil)
}

// tap passes everything on to a sink and calls a hook for each line or
// block of lines, before and after passing it on: the one wrapper of the
// recording's taps on the relay's path. A block goes on whole to a sink
// that batches, line by line to one that does not. done says a line is
// whole (a block's always are).
type tap struct {
	relay.Sink
	fl            relay.Flusher
	b             relay.Batcher
	before, after func(st relay.Stream, done bool, at time.Time)
	event         func()
}

func newTap(s relay.Sink, before, after func(relay.Stream, bool, time.Time), event func()) *tap {
	fl, _ := s.(relay.Flusher)
	b, _ := s.(relay.Batcher)
	return &tap{Sink: s, fl: fl, b: b, before: before, after: after, event: event}
}

// Lines implements relay.Batcher.
func (t *tap) Lines(st relay.Stream, block []byte, n int, at time.Time) {
	if t.before != nil {
		t.before(st, true, at)
	}
	if t.b != nil {
		t.b.Lines(st, block, n, at)
	} else {
		l := relay.Line{Stream: st, Done: true, EOL: true, Time: at}
		for len(block) > 0 {
			i := wire.LineEnd(block)
			l.Bytes, block = block[:i], block[i+1:]
			t.Sink.Line(&l)
		}
	}
	if t.after != nil {
		t.after(st, true, at)
	}
}

func (t *tap) Line(l *relay.Line) {
	if t.before != nil {
		t.before(l.Stream, l.Done, l.Time)
	}
	t.Sink.Line(l)
	if t.after != nil {
		t.after(l.Stream, l.Done, l.Time)
	}
}

func (t *tap) Event(e relay.Event) {
	t.Sink.Event(e)
	if t.event != nil {
		t.event()
	}
}

// Flush implements relay.Flusher for a sink that batches.
func (t *tap) Flush() {
	if t.fl != nil {
		t.fl.Flush()
	}
}

type discard struct{}

func (discard) Line(*relay.Line)                           {}
func (discard) Lines(relay.Stream, []byte, int, time.Time) {}
func (discard) Event(relay.Event)                          {}
