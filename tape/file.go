package tape

import (
	"bytes"
	"io"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// File is a whole tape kept as its lines, so that a tool can rewrite some
// frames and leave every other line exactly as it was.
type File struct {
	Session *frame.Session
	Header  []byte // the header line as written, without its "\n"
	// Lines holds each frame's line as written (without "\n"), Seqs the
	// seq each line spells and Frames the frames read from them, all
	// three in tape order. Frames[i].Seq may be more than Seqs[i] (see
	// Reader.Next).
	Lines  [][]byte
	Seqs   []uint64
	Frames []frame.Frame
}

// ReadFile reads a whole tape from data, with the errors of NewReader and
// Next. The File's lines point into data, and so do the frames' bytes
// where the line holds them verbatim (a "json" line): a tape costs its
// bytes once, and data must not change while the File is in use. The
// slices are made to the tape's size at once, never grown.
// (ReadFramesFrom reads the frames only, without holding the tape.)
func ReadFile(data []byte) (*File, error) {
	tr, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	f := &File{Session: tr.Session()}
	rest := data
	next := func() []byte { // the next line of data
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		return line
	}
	f.Header = next()
	n := bytes.Count(rest, []byte("\n")) + 1 // lines left, at most
	f.Frames = make([]frame.Frame, 0, n)
	f.Lines, f.Seqs = make([][]byte, 0, n), make([]uint64, 0, n)
	err = tr.Each(func(fr *frame.Frame) error {
		read, seq := tr.Line()
		line := next()
		f.Frames = append(f.Frames, kept(fr, within(line, read, fr.Raw)))
		f.Seqs = append(f.Seqs, seq)
		f.Lines = append(f.Lines, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// kept is the frame the reader returned (whose Raw and Cut it reuses for
// the next line) as one that outlives that: with raw as its bytes, and a
// Cut of its own.
func kept(fr *frame.Frame, raw []byte) frame.Frame {
	c := *fr
	c.Raw = raw
	if fr.Cut != nil {
		cut := *fr.Cut
		c.Cut = &cut
	}
	return c
}

// ReadFramesFrom reads a tape's frames from r, as ReadFile does but for
// Header, Lines and Seqs (nil), without holding the tape: each frame's
// bytes are copied out of the line into slabs shared by the frames, so that a tape read
// whole costs its frames' bytes, not its lines'. lines is how many lines
// r holds at most (Frames is made to that size at once), or 0 when not
// known.
func ReadFramesFrom(r io.Reader, lines int) (*File, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	f := &File{Session: tr.Session(), Frames: make([]frame.Frame, 0, max(lines-1, 0))}
	var s slabs
	err = tr.Each(func(fr *frame.Frame) error {
		var raw []byte
		if fr.Raw != nil {
			raw = s.copy(fr.Raw)
		}
		f.Frames = append(f.Frames, kept(fr, raw))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// slabSize is how many bytes of frames one allocation of ReadFramesFrom
// holds.
const slabSize = 64 << 10

// slabs hands out copies of frames' bytes from shared allocations.
type slabs struct{ cur []byte }

// copy returns a copy of b whose capacity ends with it (an append never
// writes into the next frame's bytes); a long b gets a slice of its own.
func (s *slabs) copy(b []byte) []byte {
	if len(b) > slabSize/8 {
		return bytes.Clone(b)
	}
	if cap(s.cur)-len(s.cur) < len(b) {
		s.cur = make([]byte, 0, slabSize)
	}
	at := len(s.cur)
	s.cur = append(s.cur, b...)
	return s.cur[at:len(s.cur):len(s.cur)]
}

// within is raw, which the reader decoded from read (its copy of line),
// as the same bytes of line when line holds them where read does (raw is
// a piece of read: a "json" frame), else a copy. Its capacity ends with
// it, so that an append never writes into line.
func within(line, read, raw []byte) []byte {
	if raw == nil {
		return nil
	}
	at := cap(read) - cap(raw) // where raw starts in read, if it is a piece of it
	if at >= 0 && at+len(raw) <= len(line) && bytes.Equal(line[at:at+len(raw)], raw) {
		return line[at : at+len(raw) : at+len(raw)]
	}
	return bytes.Clone(raw)
}

// AppendLine appends the tape line of f (its "\n" included) to dst, as a
// Writer of a tape of session meta (nil: the zero Session) would write it,
// but without comparing its seq to any other line. It refuses a frame a
// tape cannot hold (see Writer.Write).
func AppendLine(dst []byte, meta *frame.Session, f *frame.Frame) ([]byte, error) {
	if err := check(f, 0, false); err != nil {
		return dst, err
	}
	return appendLine(dst, f, meta != nil && meta.Framing == wire.Headers.String()), nil
}
