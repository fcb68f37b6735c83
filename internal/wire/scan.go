package wire

// Scanner cuts a stream into frames as its bytes arrive, without holding a
// frame's body: it reports the body bytes of the frame in progress as they
// come, and when the frame ends. Under Headers it holds the header block
// (at most MaxHead bytes) until the block is complete; Head then returns
// it. A line that cannot begin a header block (its first byte is not a
// header name's, or its name is not followed by ':') is a bare line: a
// frame without a head, ended by "\n", as under Lines. A block that grows
// past MaxHead is given back as the start of a bare line. A block without
// a Content-Length that parses ends at its blank line with an empty body.
//
// The zero Scanner cuts Lines. A Scanner is not safe for concurrent use.
type Scanner struct {
	framing Framing
	state   state
	head    []byte // the header block so far (Headers)
	headed  bool   // the frame in progress has a complete head
	need    int64  // body bytes still to come
	// spare is the head's buffer for the next frame: Head's result stays
	// valid until the Scan after the frame's end.
	spare []byte
}

type state uint8

const (
	sStart     state = iota // at a frame's start
	sName                   // in the first header line's name
	sField                  // in a header line, past its name
	sLineStart              // at the start of a header line after the first
	sCR                     // after a '\r' at a header line's start
	sBody                   // in the body
	sBare                   // in a bare line
)

// NewScanner returns a scanner for f.
func NewScanner(f Framing) *Scanner { return &Scanner{framing: f} }

// Framing is the scanner's framing.
func (s *Scanner) Framing() Framing { return s.framing }

// Head is the header block of the frame in progress once it is complete
// (from the Scan that returns the frame's first body byte or its end),
// until the Scan after the frame's end; nil for a bare line and under
// Lines.
func (s *Scanner) Head() []byte {
	if !s.headed {
		return nil
	}
	return s.head
}

// InFrame reports whether part of a frame has been taken and the frame has
// not ended.
func (s *Scanner) InFrame() bool { return s.state != sStart }

// Scan takes the next bytes of the stream from p. It returns how many it
// took (n), the body bytes it has for the frame in progress (body: a
// sub-slice of p, or bytes it held and gives back), and whether the frame
// ended with them (end). Call it again with p[n:] until p is taken whole;
// a call may take nothing and still return body. A frame that ends with
// no body byte returns an empty, non-nil body.
func (s *Scanner) Scan(p []byte) (n int, body []byte, end bool) {
	if s.framing == Lines {
		n, body, end = scanLine(p)
		s.state = sBare
		if end {
			s.state = sStart
		}
		return n, body, end
	}
	if s.state == sStart {
		s.begin()
		switch {
		case len(p) == 0:
			return 0, nil, false
		case isToken(p[0]):
			s.state = sName
		default:
			s.state = sBare
		}
	}
	switch s.state {
	case sName:
		return s.name(p)
	case sField:
		return s.field(p)
	case sLineStart, sCR:
		return s.lineStart(p)
	case sBody:
		return s.body(p)
	}
	n, body, end = scanLine(p) // sBare
	if end {
		s.state = sStart
	}
	return n, body, end
}

// name takes the first header line's name: up to its ':' (a header), or
// to the first byte no name holds (the start of a bare line).
func (s *Scanner) name(p []byte) (int, []byte, bool) {
	for i, c := range p {
		if isToken(c) {
			continue
		}
		if c == ':' {
			s.hold(p[:i+1])
			s.state = sField
			return i + 1, nil, false
		}
		s.hold(p[:i])
		return i, s.bare(), false
	}
	s.hold(p)
	if len(s.head) > MaxHead {
		return len(p), s.bare(), false
	}
	return len(p), nil, false
}

// field takes a header line up to its end.
func (s *Scanner) field(p []byte) (int, []byte, bool) {
	i := LineEnd(p)
	if i < 0 {
		s.hold(p)
		if len(s.head) > MaxHead {
			return len(p), s.bare(), false
		}
		return len(p), nil, false
	}
	s.hold(p[:i+1])
	s.state = sLineStart
	if len(s.head) > MaxHead {
		// The block's lines are bare lines; what was held ends one.
		body := s.bare()
		s.state = sStart
		return i + 1, body[:len(body)-1], true
	}
	return i + 1, nil, false
}

// lineStart looks at the start of a header line after the first: a blank
// line ("\n" or "\r\n") ends the block.
func (s *Scanner) lineStart(p []byte) (int, []byte, bool) {
	if len(p) == 0 {
		return 0, nil, false
	}
	switch c := p[0]; {
	case c == '\n':
		s.hold(p[:1])
		body := s.headEnd()
		return 1, body, s.state == sStart
	case c == '\r' && s.state == sLineStart:
		s.hold(p[:1])
		s.state = sCR
		return 1, nil, false
	}
	s.state = sField
	return s.field(p)
}

// body takes the body's bytes, up to its length.
func (s *Scanner) body(p []byte) (int, []byte, bool) {
	k := min(int64(len(p)), s.need)
	s.need -= k
	if s.need == 0 {
		s.state = sStart
		return int(k), p[:k], true
	}
	return int(k), p[:k], false
}

// scanLine is Scan under Lines.
func scanLine(p []byte) (n int, body []byte, end bool) {
	if i := LineEnd(p); i >= 0 {
		return i + 1, p[:i], true
	}
	return len(p), p, false
}

// begin starts a frame: the last frame's head is kept aside (a caller may
// still hold it) and its buffer taken for this one.
func (s *Scanner) begin() {
	if s.headed || len(s.head) > 0 {
		s.head, s.spare = s.spare[:0], s.head
	}
	s.headed = false
	s.need = 0
}

// hold adds b to the header block.
func (s *Scanner) hold(b []byte) { s.head = append(s.head, b...) }

// bare turns what was held into the start of a bare line and returns it
// (a copy: a rare case, and the caller may keep it while later frames
// are cut).
func (s *Scanner) bare() []byte {
	held := append([]byte(nil), s.head...)
	s.head = s.head[:0]
	s.state = sBare
	return held
}

// headEnd completes the header block: the body's length is its
// Content-Length, or 0 when it has none. It returns the empty body of a
// frame that ends here, or nil.
func (s *Scanner) headEnd() []byte {
	s.headed = true
	n, ok := ContentLength(s.head)
	if !ok || n == 0 {
		s.state = sStart
		return []byte{}
	}
	s.need = n
	s.state = sBody
	return nil
}

// End ends the stream. It returns the bytes it held of a frame in
// progress, to be given back as the rest of an unterminated frame (a
// header block that never completed), and whether a frame was in progress
// (an unterminated line, or a body cut short: the frame ends unterminated).
func (s *Scanner) End() (body []byte, inFrame bool) {
	inFrame = s.state != sStart
	switch s.state {
	case sName, sField, sLineStart, sCR:
		body = s.bare()
	}
	s.state = sStart
	return body, inFrame
}

// isToken reports whether c may be in a header field's name (RFC 9110's
// token characters).
func isToken(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
