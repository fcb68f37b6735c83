// Package profile owns what tapedeck knows about a kind of host and the
// peers it runs: how the peer's streams are framed, who the peer and the
// host are (read from the handshake), which environment variables belong
// to a session, how the host opens and ends a session and how long it
// waits for the peer to go, and which of its methods carry a panel tree.
// Each kind is a Profile: Agentty (the host of Agentty plugins, the first
// and most complete), MCP (Model Context Protocol clients and servers), LSP
// (language clients and servers) and JSON-RPC (any other peer, about which
// it claims nothing). The generic rooms (the relay, spool, store, tape,
// frame, message, the engine that plays the host, diff, shrink, playback)
// name no host's method or variable: what they need to know of a host,
// they are told by a profile. The rules check applies for each profile
// are package check's; a profile names them (Name).
//
// A session's profile is found from its first host request (Detect) or
// named with a flag, and stored with the session and in the tape header.
// A profile also says which folder the host names to the peer as its own
// (DataFolder: Agentty's plugin data folder, a language server's
// workspace), which a replay gives each run a copy of.
// The package holds no state: profiles are values.
package profile

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// Profile is what tapedeck knows about one kind of host.
type Profile interface {
	// Name is the profile's name as flags, tapes and ls spell it.
	Name() string
	// Framing is how the peer's stdin and stdout are framed.
	Framing() wire.Framing
	// Identify fills in meta's identity of the peer and the host from the
	// handshake: the host's first request and the peer's answer to it
	// (either nil when the session has none). It keeps what meta has.
	Identify(meta *frame.Session, req, resp *message.Message)
	// SessionEnv reports whether an environment variable of the peer's
	// belongs to a session: recorded with it and applied on replay.
	SessionEnv(name string) bool
	// Grace is how long the host waits for the peer to exit once it has
	// asked it to (its closing message, or its stdin closed), and again
	// after SIGTERM before SIGKILL.
	Grace() time.Duration
	// Opening reports whether a host message of this method opens a
	// session (the handshake a shortened session must keep); Closing,
	// whether it ends one.
	Opening(method string) bool
	Closing(method string) bool
	// PanelMethod is the method of the peer's message whose params hold
	// the tree of a panel the host draws ("" when the host draws none).
	PanelMethod() string
	// Carried names, as METHOD:PATH rules (package jsonpath; a response
	// has the method of the request it answers), the places of the peer's
	// messages whose values the protocol lets the peer choose itself (a
	// task id, a progress token, a registration id): a replay puts the
	// live value where the host sends the recorded one back, and compares
	// the one as the other. A replay also finds such places in the
	// recording; these are the ones the protocol names.
	Carried() []string
	// Timing says which of the peer's traffic depends on timing rather
	// than on what it was asked.
	Timing() Timing
	// DataFolder is the folder the host names in its opening request (req,
	// nil when the session has none) as the peer's own place to keep
	// state or to work in; ok is false when it names none.
	DataFolder(req *message.Message) (f Folder, ok bool)
}

// Folder is a folder the host names to the peer as it opens a session
// (Profile.DataFolder): what a replay gives each run a copy of, the
// recorded path put where the host frames say it.
type Folder struct {
	// Path is the folder as the host named it, a path (a file: URI made a
	// path).
	Path string
	// Env is the variable the host names it in too ("": none).
	Env string
	// Own says the folder is the peer's own state, which the host gives
	// no one else: a replay never lets it be shared or written for real,
	// and without a copy carried beside the tape a run starts from a copy
	// of the folder as it is now. A folder that is not Own (a language
	// server's workspace, the user's project) is given as a copy only
	// when the tape carries one.
	Own bool
}

// Timing is what of a peer's traffic the protocol leaves to timing: a
// replay does not hold the peer to it.
type Timing struct {
	// Answers: an answer is compared with the answer to the same request,
	// whatever its place among the peer's other frames.
	Answers bool
	// Streams are METHOD:PATH rules naming notifications that belong to
	// independent streams, one for each value at PATH (a document's
	// diagnostics, a progress token's reports): their order within a
	// stream counts, their order across streams does not.
	Streams []string
	// Chatter are the methods of the peer's reports on its own work whose
	// number and place depend on how fast it works (progress, log lines):
	// a replay does not wait for them, and one more or one fewer than
	// recorded is a note, not a difference.
	Chatter []string
}

// The profiles' names.
const (
	NameAgentty = "agentty"
	NameMCP     = "mcp"
	NameLSP     = "lsp"
	NameJSONRPC = "jsonrpc"
)

// All returns every profile, Agentty first.
func All() []Profile {
	return []Profile{Agentty{}, MCP{}, LSP{}, JSONRPC{}}
}

// Names is the profiles' names, as All orders them.
func Names() []string {
	var out []string
	for _, p := range All() {
		out = append(out, p.Name())
	}
	return out
}

// Get returns the profile named name; "" is Agentty, the profile of every
// session recorded before profiles had names.
func Get(name string) (Profile, error) {
	if name == "" {
		return Agentty{}, nil
	}
	for _, p := range All() {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown profile %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Of returns the profile a session was recorded under: the one it names,
// or for a session that names none (recorded before profiles, or by a
// newer build with a profile this one lacks), the one its framing
// implies (LSP for header framing), else Agentty.
func Of(meta *frame.Session) Profile {
	if meta != nil {
		if p, err := Get(meta.Profile); err == nil && meta.Profile != "" {
			return p
		}
		if f, _ := wire.Parse(meta.Framing); f == wire.Headers {
			return LSP{}
		}
	}
	return Agentty{}
}

// Detect names the profile of a session from how it is framed and the
// host's first request (nil when the host has sent none): header framing
// is a language client's; an initialize whose params say protocolVersion
// is MCP's; one that names the plugin or the API version is Agentty's; one
// that says processId, rootUri or workspaceFolders is a language client's;
// any other initialize is a peer tapedeck knows nothing of (JSON-RPC). A
// first request that is MCP's server/discover, or names its MCP revision in
// params._meta (2026-07-28 has no initialize), is MCP's. Any other session
// with no initialize is Agentty's, as every session was before profiles.
func Detect(framing wire.Framing, first *message.Message) Profile {
	if framing == wire.Headers {
		return LSP{}
	}
	if first != nil && first.Method != "initialize" && mcpStateless(first) {
		return MCP{}
	}
	if first == nil || first.Method != "initialize" {
		return Agentty{}
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(first.Params, &params) != nil {
		return JSONRPC{}
	}
	has := func(k string) bool { _, ok := params[k]; return ok }
	switch {
	case has("protocolVersion"):
		return MCP{}
	case has("apiVersion"), has("plugin"), has("agentty"):
		return Agentty{}
	case has("processId"), has("rootUri"), has("workspaceFolders"):
		return LSP{}
	}
	return JSONRPC{}
}

// mcpStateless reports whether a request is MCP's without the initialize
// handshake: server/discover, or params._meta naming the revision.
func mcpStateless(m *message.Message) bool {
	if m.Method == "server/discover" {
		return true
	}
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &params) != nil {
		return false
	}
	_, ok := params.Meta["io.modelcontextprotocol/protocolVersion"]
	return ok
}

// SessionEnv reports whether some profile holds an environment variable
// to belong to a session: what a recording keeps of the environment before
// it can know its profile.
func SessionEnv(name string) bool {
	for _, p := range All() {
		if p.SessionEnv(name) {
			return true
		}
	}
	return false
}

// decode unmarshals a message's raw JSON into v, ignoring what does not
// fit.
func decode(raw json.RawMessage, v any) {
	if len(raw) > 0 {
		json.Unmarshal(raw, v)
	}
}

// base is what the profiles share: a JSON-RPC peer with an initialize
// handshake, newline framing and no variables of its own.
type base struct{}

func (base) Framing() wire.Framing      { return wire.Lines }
func (base) SessionEnv(string) bool     { return false }
func (base) Opening(method string) bool { return method == "initialize" }
func (base) Closing(string) bool        { return false }
func (base) PanelMethod() string        { return "" }
func (base) Grace() time.Duration       { return 1500 * time.Millisecond }
func (base) Carried() []string          { return nil }
func (base) Timing() Timing             { return Timing{} }

func (base) DataFolder(*message.Message) (Folder, bool) { return Folder{}, false }

// JSONRPC is a peer tapedeck knows nothing of beyond JSON-RPC 2.0: it
// claims no identity, no variable, no method.
type JSONRPC struct{ base }

// Name implements Profile.
func (JSONRPC) Name() string { return NameJSONRPC }

// Opening implements Profile: only the first request, when it is the
// common initialize.
func (JSONRPC) Opening(method string) bool { return method == "initialize" }

// Identify implements Profile: nothing is known.
func (JSONRPC) Identify(*frame.Session, *message.Message, *message.Message) {}
