package playback

import (
	"bufio"
	"fmt"
	"os"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/tape"
)

// Stream is a recording read one frame at a time and never held: a tape
// file or a stored session, for readers that look at each frame once
// (check, show). Each reads it from its start on every call.
type Stream struct {
	Meta     *frame.Session
	TapePath string // "" for a stored session
	each     func(fn func(*frame.Frame) error) error
}

// Each calls fn with every frame in order, until fn fails. The frame and
// its bytes are fn's only while it runs.
func (s *Stream) Each(fn func(*frame.Frame) error) error { return s.each(fn) }

// OpenStream opens ref as Load resolves it: a tape file, else a session in
// the store.
func OpenStream(ref string, opt *LoadOptions) (*Stream, error) {
	st, err := locate(ref, opt)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return TapeStream(ref)
	}
	return storeStream(st, ref)
}

// locate says where ref is: a tape file (st nil), else a session
// reference, for the store it returns. A reference that looks like a
// path and does not exist is a missing file.
func locate(ref string, opt *LoadOptions) (st *store.Store, err error) {
	if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		return nil, nil
	} else if err := MissingFile(ref, err); err != nil {
		return nil, err
	}
	if opt == nil || opt.Store == nil {
		return nil, fmt.Errorf("%s: no such tape file", ref)
	}
	return opt.Store()
}

// TapeStream reads the tape file at path: its header now, its frames on
// each call of Each.
func TapeStream(path string) (*Stream, error) {
	open := func() (*os.File, *tape.Reader, error) {
		f, err := smallfile.OpenRegular(path)
		if err != nil {
			return nil, nil, fmt.Errorf("open tape: %w", err)
		}
		tr, err := tape.NewReader(bufio.NewReaderSize(f, 64<<10))
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, tr, nil
	}
	f, tr, err := open()
	if err != nil {
		return nil, err
	}
	f.Close()
	return &Stream{Meta: tr.Session(), TapePath: path, each: func(fn func(*frame.Frame) error) error {
		f, tr, err := open()
		if err != nil {
			return err
		}
		defer f.Close()
		var fnErr error
		err = tr.Each(func(fr *frame.Frame) error { fnErr = fn(fr); return fnErr })
		if err != nil && err != fnErr {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	}}, nil
}

// storeStream reads the session ref names in st.
func storeStream(st *store.Store, ref string) (*Stream, error) {
	meta, err := st.Resolve(ref)
	if err != nil {
		return nil, fmt.Errorf("%v (a tape file or a session: id, prefix, name or last)", err)
	}
	return &Stream{Meta: meta, each: func(fn func(*frame.Frame) error) error {
		if err := st.Frames(meta.ID, fn); err != nil {
			return fmt.Errorf("read session %s: %w", meta.ID, err)
		}
		return nil
	}}, nil
}
