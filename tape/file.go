package tape

import (
	"bytes"
	"io"

	"github.com/tapedeck/tapedeck/frame"
)

// File is a whole tape kept as its lines, so that a tool can rewrite some
// frames and leave every other line exactly as it was.
type File struct {
	Session *frame.Session
	Header  []byte // the header line as written, without its "\n"
	// Lines holds each frame's line as written (without "\n"), Seqs the
	// seq each line spells and Frames the frames read from them, all
	// three in tape order. Frames[i].Seq may be more than Seqs[i] (see
	// Reader.Next); Frames own their bytes.
	Lines  [][]byte
	Seqs   []uint64
	Frames []frame.Frame
}

// ReadFile reads a whole tape from data, with the errors of NewReader and
// Next. The File's lines point into data.
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
	for {
		fr, err := tr.Next()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		_, seq := tr.Line()
		c := *fr
		c.Raw = bytes.Clone(fr.Raw)
		if fr.Code != nil {
			code := *fr.Code
			c.Code = &code
		}
		if fr.Cut != nil {
			cut := *fr.Cut
			c.Cut = &cut
		}
		f.Frames = append(f.Frames, c)
		f.Seqs = append(f.Seqs, seq)
		f.Lines = append(f.Lines, next())
	}
}

// AppendLine appends the tape line of f (its "\n" included) to dst, as a
// Writer would write it, but without comparing its seq to any other line.
// It refuses a frame a tape cannot hold (see Writer.Write).
func AppendLine(dst []byte, f *frame.Frame) ([]byte, error) {
	if err := check(f, 0, false); err != nil {
		return dst, err
	}
	return appendLine(dst, f), nil
}
