package recording

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tapedeck/tapedeck/clock"
	"github.com/tapedeck/tapedeck/fingerprint"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/proxy"
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
func (f *fingerprinter) sink(s proxy.Sink) proxy.Sink {
	fl, _ := s.(proxy.Flusher)
	b, _ := s.(proxy.Batcher)
	return &startAfterOut{Sink: s, fl: fl, b: b, f: f}
}

type startAfterOut struct {
	proxy.Sink
	fl     proxy.Flusher
	b      proxy.Batcher
	f      *fingerprinter
	sawOut atomic.Bool
}

// Lines implements proxy.Batcher: the lines of a read go on at once to a
// sink that batches, one by one to one that does not.
func (s *startAfterOut) Lines(st proxy.Stream, block []byte, n int, at time.Time) {
	if s.b != nil {
		s.b.Lines(st, block, n, at)
	} else {
		l := proxy.Line{Stream: st, Done: true, EOL: true, Time: at}
		for len(block) > 0 {
			i := bytes.IndexByte(block, '\n')
			l.Bytes, block = block[:i], block[i+1:]
			s.Sink.Line(&l)
		}
	}
	if s.sawOut.Load() {
		s.f.begin()
	} else if st == proxy.Stdout {
		s.sawOut.Store(true)
	}
}

func (s *startAfterOut) Line(l *proxy.Line) {
	s.Sink.Line(l)
	if s.sawOut.Load() {
		s.f.begin()
	} else if l.Stream == proxy.Stdout {
		s.sawOut.Store(true)
	}
}

func (s *startAfterOut) Event(e proxy.Event) {
	s.Sink.Event(e)
	if s.sawOut.Load() {
		s.f.begin()
	}
}

// Flush implements proxy.Flusher for a sink that batches.
func (s *startAfterOut) Flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

// pinnedSink publishes, before the relay writes a host line to the plugin
// (the relay hands a line to its sink first), the time the recorder stamps
// that line with to the pinned clock's now file, then passes everything on
// to s (nil: nothing recorded). A replay publishes the same time, read
// back from the frame, before it writes the line: the plugin's clock
// reads the same in both. Without a pinned clock it is s.
func pinnedSink(s proxy.Sink, pin io.Closer, origin time.Time) proxy.Sink {
	p, ok := pin.(*clock.Preload)
	if !ok || p == nil {
		return s
	}
	if s == nil {
		s = discard{}
	}
	fl, _ := s.(proxy.Flusher)
	b, _ := s.(proxy.Batcher)
	return &publishIn{Sink: s, fl: fl, b: b, pin: p, origin: origin}
}

type publishIn struct {
	proxy.Sink
	fl     proxy.Flusher
	b      proxy.Batcher
	pin    *clock.Preload
	origin time.Time
}

// publish publishes the time of a host line as the recorder stamps it.
func (s *publishIn) publish(at time.Time) {
	if at.IsZero() {
		at = time.Now()
	}
	_ = s.pin.Publish(s.origin.Add(at.Sub(s.origin)))
}

// Lines implements proxy.Batcher.
func (s *publishIn) Lines(st proxy.Stream, block []byte, n int, at time.Time) {
	if st == proxy.Stdin {
		s.publish(at)
	}
	if s.b != nil {
		s.b.Lines(st, block, n, at)
		return
	}
	l := proxy.Line{Stream: st, Done: true, EOL: true, Time: at}
	for len(block) > 0 {
		i := bytes.IndexByte(block, '\n')
		l.Bytes, block = block[:i], block[i+1:]
		s.Sink.Line(&l)
	}
}

func (s *publishIn) Line(l *proxy.Line) {
	if l.Stream == proxy.Stdin && l.Done {
		s.publish(l.Time)
	}
	s.Sink.Line(l)
}

// Flush implements proxy.Flusher for a sink that batches.
func (s *publishIn) Flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

type discard struct{}

func (discard) Line(*proxy.Line)  {}
func (discard) Event(proxy.Event) {}
