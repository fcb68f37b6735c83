package profile

import (
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// TestFound: the profile a live reader takes from the frames so far, and
// when no later frame can change it.
func TestFound(t *testing.T) {
	in := func(raw string) frame.Frame { return frame.Frame{Dir: frame.In, Raw: []byte(raw)} }
	out := func(raw string) frame.Frame { return frame.Frame{Dir: frame.Out, Raw: []byte(raw)} }
	headed := in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	headed.SetHead(wire.HeadFor(len(headed.Raw)))
	for _, tc := range []struct {
		name    string
		frames  []frame.Frame
		want    string
		settled bool
	}{
		{"nothing yet", nil, NameAgentty, false},
		{"stray stdout first", []frame.Frame{out(`banner`)}, NameAgentty, false},
		{"a header block", []frame.Frame{headed}, NameLSP, true},
		{"MCP initialize", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)}, NameMCP, true},
		{"Agentty initialize", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1}}`)}, NameAgentty, true},
		{"another initialize", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":1}}`)}, NameJSONRPC, true},
		{"MCP 2026-07-28, unanswered", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)}, NameMCP, false},
		{"MCP server/discover, answered", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`), out(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, NameMCP, true},
		{"another request, answered", []frame.Frame{in(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), out(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, NameAgentty, true},
	} {
		var h Handshake
		for i := range tc.frames {
			h.See(&tc.frames[i])
		}
		p, settled := h.Found()
		if p.Name() != tc.want || settled != tc.settled {
			t.Errorf("%s: Found() = %s, %v; want %s, %v", tc.name, p.Name(), settled, tc.want, tc.settled)
		}
		var meta frame.Session
		h.Finish(&meta)
		if got := Of(&meta).Name(); got != p.Name() {
			t.Errorf("%s: Finish names %s, Found %s", tc.name, got, p.Name())
		}
	}
}
