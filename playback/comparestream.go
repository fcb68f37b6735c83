package playback

// Comparing two recordings as streams: neither is held, only a window of
// each (see diff.Stream).

import (
	"bytes"
	"errors"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/note"
)

// tailLines is how many of the last stderr lines of B a comparison of
// streams keeps for its report (see Outcome.Tail).
const tailLines = 10

// CompareStreams is Compare over two streams: a and b are read as they
// are compared, a window at a time, never held whole, so that two
// recordings of any length compare in bounded memory (and as many
// differences as they have). The Outcome's recordings hold no frames; its
// Tail holds the last lines of b's stderr.
func CompareStreams(a, b *Stream, opt *CompareOptions) (*Outcome, error) {
	o, filters, err := compareSetup(a.recording(), b.recording(), opt)
	if err != nil {
		return nil, err
	}
	o.streamed = true
	stderr := o.DiffOptions.CompareStderr
	var readErr error
	// read is s as a diff.Timeline: the filters applied to each frame (a
	// fresh applier each reading, counting on the first), b's stderr tail
	// kept on its first reading, and the first error of any reading in
	// readErr.
	read := func(s *Stream, keepTail bool) diff.Timeline {
		readings := 0
		return func(yield func(*frame.Frame) bool) {
			readings++
			first := readings == 1
			apply := filters.Each(stderr, first)
			stopped := errors.New("stopped")
			err := s.Each(func(f *frame.Frame) error {
				if keepTail && first {
					o.keepTail(f)
				}
				if !yield(apply(f)) {
					return stopped
				}
				return nil
			})
			if err != nil && !errors.Is(err, stopped) && readErr == nil {
				readErr = err
			}
		}
	}
	o.Diff = diff.Stream(read(a, false), read(b, true), o.DiffOptions)
	if readErr != nil {
		return nil, readErr
	}
	if n := filters.Note(); n != "" {
		o.Notes = append(o.Notes, note.Text(n))
	}
	return o, nil
}

// recording is s's Recording without its frames.
func (s *Stream) recording() *Recording {
	r := &Recording{Name: s.Meta.ID, TapePath: s.TapePath, Meta: s.Meta}
	if s.TapePath != "" {
		r.Name = s.TapePath
	}
	return r
}

// keepTail keeps f when it is one of the last tailLines stderr lines so
// far.
func (o *Outcome) keepTail(f *frame.Frame) {
	if f.IsEvent() || f.Dir != frame.Err {
		return
	}
	if len(o.tail) == tailLines {
		o.tail = append(o.tail[:0], o.tail[1:]...)
	}
	o.tail = append(o.tail, frame.Frame{Seq: f.Seq, At: f.At, Dir: frame.Err, Raw: bytes.Clone(f.Raw)})
}

// Tail is what the last lines of the plugin's stderr are read from: Live,
// or for a comparison of streams the last lines of B's stderr, kept as
// they went by.
func (o *Outcome) Tail() []frame.Frame {
	if o.streamed {
		return o.tail
	}
	return o.Live()
}
