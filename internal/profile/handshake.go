package profile

import (
	"bytes"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// Handshake reads a session's handshake as its frames go by, and says
// what it tells: how the session was framed, its profile, and the
// identity its profile reads there. Feed it every frame in order (See),
// then Finish. It keeps a copy of at most two frames.
type Handshake struct {
	headers bool // a frame of stdin or stdout came with a header block
	// req is the host's first request, or its initialize when that came
	// later; resp is the peer's answer to it.
	req, resp *message.Message
}

// maxHandshake bounds a frame the handshake keeps a copy of.
const maxHandshake = 1 << 20

// See looks at the next frame of the session.
func (h *Handshake) See(f *frame.Frame) {
	if f.IsEvent() {
		return
	}
	if f.Head() != nil && f.Dir != frame.Err {
		h.headers = true
	}
	if h.resp != nil || f.Cut != nil || len(f.Raw) > maxHandshake {
		return
	}
	switch {
	case f.Dir == frame.In && (h.req == nil || h.req.Method != "initialize" && bytes.Contains(f.Raw, []byte(`"initialize"`))):
		if m := message.Parse(f.Raw); m.Kind == message.Request && (h.req == nil || m.Method == "initialize") {
			h.req = &m
			h.req.Params = bytes.Clone(m.Params)
			h.req.ID = bytes.Clone(m.ID)
		}
	case f.Dir == frame.Out && h.req != nil:
		if m := message.Parse(f.Raw); (m.Kind == message.Response || m.Kind == message.ErrorReply) && bytes.Equal(m.ID, h.req.ID) {
			h.resp = &m
			h.resp.Result = bytes.Clone(m.Result)
		}
	}
}

// Found is the profile the frames seen so far name, as Finish would set
// it in a session that names none, and whether it is settled: no later
// frame can change it (a frame came with a header block, the host's
// initialize was seen, or the peer answered the host's first request).
// Unsettled, it is what Finish would say if the session ended now. A live
// reader (check's lint) uses it to choose its rules before the session
// is stored.
func (h *Handshake) Found() (p Profile, settled bool) {
	framing := wire.Lines
	if h.headers {
		framing = wire.Headers
	}
	settled = h.headers || h.resp != nil || h.req != nil && h.req.Method == "initialize"
	return Detect(framing, h.req), settled
}

// Finish sets in meta what the session's handshake tells: its framing
// (when frames came with header blocks), its profile (unless meta names
// one; a session with no request names none, and reads as Agentty's) and
// the identity the profile reads from the handshake.
func (h *Handshake) Finish(meta *frame.Session) {
	if h.headers && meta.Framing == "" {
		meta.Framing = wire.Headers.String()
	}
	p := Of(meta)
	if meta.Profile == "" {
		framing, _ := wire.Parse(meta.Framing)
		p = Detect(framing, h.req)
		if h.req != nil || framing == wire.Headers {
			meta.Profile = p.Name()
		}
	}
	p.Identify(meta, h.req, h.resp)
}
