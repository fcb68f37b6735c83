package child

import "os"

// Stdio is the three pipes of a child's standard streams. The parent's
// ends (In, Out, Err) are non-blocking files on the runtime's poller, so
// their deadlines work; the child's ends are plain blocking files, as a
// child's standard streams should be, that the poller never hears of.
type Stdio struct {
	In, Out, Err                *os.File // the parent writes In and reads Out and Err
	ChildIn, ChildOut, ChildErr *os.File // for exec.Cmd's Stdin, Stdout and Stderr
}

// Pipes makes the pipes of a child's standard streams. On failure none is
// left open.
func Pipes() (*Stdio, error) {
	var s Stdio
	var err error
	if s.In, s.ChildIn, err = pipe(false, "stdin"); err != nil {
		return nil, err
	}
	if s.Out, s.ChildOut, err = pipe(true, "stdout"); err != nil {
		s.Close()
		return nil, err
	}
	if s.Err, s.ChildErr, err = pipe(true, "stderr"); err != nil {
		s.Close()
		return nil, err
	}
	return &s, nil
}

// CloseChild closes the child's ends: once the child has started, it
// holds its own copies.
func (s *Stdio) CloseChild() { closeAll(s.ChildIn, s.ChildOut, s.ChildErr) }

// Close closes every end.
func (s *Stdio) Close() {
	s.CloseChild()
	closeAll(s.In, s.Out, s.Err)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
