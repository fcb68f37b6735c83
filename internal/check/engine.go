package check

import (
	"bytes"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// ruleSet is one profile's rules applied to one session: Feed it the
// session's frames in seq order, then Finish.
type ruleSet interface {
	Feed(f *frame.Frame) []Finding
	Finish() []Finding
}

// Checker applies the rules of a session's host profile to its frames,
// fed in order. It is not safe for concurrent use.
type Checker struct {
	opts  Options
	rules ruleSet // nil while the profile is being found (Options.Detect)
	name  string  // the profile whose rules apply

	hs        profile.Handshake
	held      []frame.Frame // copies of the frames seen while finding the profile
	heldBytes int
}

// A Checker finding its profile holds at most this many frames or bytes;
// past either it takes the profile the frames so far name.
const (
	maxHeldFrames = 4096
	maxHeldBytes  = 8 << 20
)

// New returns a Checker for the profile opts name (Agentty's when they
// name none and do not ask to Detect it). Agentty's rules compile their
// embedded schemas (about 15 ms on a small machine), MCP's theirs; New
// panics only if they are broken, which the package's tests rule out.
func New(opts Options) *Checker {
	c := &Checker{opts: opts}
	switch {
	case opts.Profile != nil:
		c.start(opts.Profile)
	case !opts.Detect:
		c.start(profile.Agentty{})
	}
	return c
}

// start sets the rules of p.
func (c *Checker) start(p profile.Profile) {
	c.name = p.Name()
	c.rules = newRules(p, c.opts)
}

// newRules returns the rules of profile p for one session.
func newRules(p profile.Profile, opts Options) ruleSet {
	switch p.Name() {
	case profile.NameMCP:
		return newMCP(opts)
	case profile.NameLSP:
		return newLSP(opts)
	case profile.NameJSONRPC:
		return newJSONRPC(opts)
	}
	return newAgentty(opts)
}

// Profile is the name of the profile whose rules apply, "" while the
// Checker is still finding it (Options.Detect).
func (c *Checker) Profile() string { return c.name }

// Feed checks the next frame or event of the session and returns what it
// finds (nil for nothing). f and its bytes are not kept. Frames must come
// in seq order. While the profile is being found, Feed holds a copy of f
// and returns nil; the frame that settles it returns the findings of every
// frame held.
func (c *Checker) Feed(f *frame.Frame) []Finding {
	if c.rules != nil {
		return c.rules.Feed(f)
	}
	c.hs.See(f)
	c.held = append(c.held, copyFrame(f))
	c.heldBytes += len(f.Raw) + len(f.Head()) + 64
	p, settled := c.hs.Found()
	if !settled && len(c.held) < maxHeldFrames && c.heldBytes < maxHeldBytes {
		return nil
	}
	return c.found(p)
}

// Finish reports what only the end of the session shows (requests never
// answered, among others). Call it once, after the last Feed.
func (c *Checker) Finish() []Finding {
	var out []Finding
	if c.rules == nil {
		p, _ := c.hs.Found()
		out = c.found(p)
	}
	return append(out, c.rules.Finish()...)
}

// found starts the rules of p and feeds them the frames held.
func (c *Checker) found(p profile.Profile) []Finding {
	if c.opts.Framing == "" {
		for i := range c.held {
			if c.held[i].Head() != nil && c.held[i].Dir != frame.Err {
				c.opts.Framing = wire.Headers.String()
				break
			}
		}
	}
	c.start(p)
	var out []Finding
	for i := range c.held {
		out = append(out, c.rules.Feed(&c.held[i])...)
	}
	c.held, c.heldBytes = nil, 0
	return out
}

// copyFrame is f with bytes of its own.
func copyFrame(f *frame.Frame) frame.Frame {
	cp := *f
	cp.Raw = bytes.Clone(f.Raw)
	if f.Cut != nil {
		cut := *f.Cut
		cp.Cut = &cut
	}
	if h := f.Head(); h != nil {
		cp.SetHead(bytes.Clone(h))
	}
	if code := f.Code(); code != nil {
		n := *code
		cp.SetEnd(f.Signal(), &n)
	}
	return cp
}

// Set is the rules of one profile.
type Set struct {
	Profile string `json:"profile"`
	Rules   []Rule `json:"rules"`
}

// Sets returns every profile's rules, in the order of profile.All. The
// slices are new on every call.
func Sets() []Set {
	var out []Set
	for _, p := range profile.All() {
		out = append(out, Set{Profile: p.Name(), Rules: RulesOf(p)})
	}
	return out
}

// RulesOf returns the rules of profile p (nil: Agentty's), in a fixed
// order. The slice is new on every call.
func RulesOf(p profile.Profile) []Rule {
	if p == nil {
		return Rules()
	}
	switch p.Name() {
	case profile.NameMCP:
		return mcpRules()
	case profile.NameLSP:
		return lspRules()
	case profile.NameJSONRPC:
		return jsonrpcRules()
	}
	return Rules()
}

// What check keeps of the ids it follows, so that a session of any size
// costs bounded memory: an id longer than recent.MaxName is kept as a hash
// of it, a method cut to it (recent.Key, recent.Name), and at most
// maxTracked ids are kept per table (80,000 requests with 4 KB ids had
// held 575 MB). Past maxTracked a table takes no new id: those requests
// are not followed (no finding is made for them).
const maxTracked = 100000

// idKey is the key an id is followed by: its canonical spelling
// (message.IDKey), or a hash of it when that is long.
func idKey(m *message.Message) string { return recent.Key(m.IDKey()) }

// room reports whether a table of n ids may take one more.
func room(n int) bool { return n < maxTracked }
