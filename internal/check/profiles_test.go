package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/wire"
)

// pb builds a session for a profile's rules: frames a millisecond apart,
// numbered from 1. Under headers, in and out frames get the plain header
// block of their body.
type pb struct {
	headers bool
	frames  []frame.Frame
}

func (b *pb) add(dir frame.Dir, raw string) *frame.Frame {
	n := len(b.frames) + 1
	b.frames = append(b.frames, frame.Frame{Seq: uint64(n), At: int64(n) * 1e6, Dir: dir, Raw: []byte(raw)})
	f := &b.frames[len(b.frames)-1]
	if b.headers && dir != frame.Err {
		f.SetHead(wire.HeadFor(len(raw)))
	}
	return f
}

// in and out add a frame from the host (the client) and from the peer.
func (b *pb) in(raw string) *frame.Frame  { return b.add(frame.In, raw) }
func (b *pb) out(raw string) *frame.Frame { return b.add(frame.Out, raw) }

// event adds an event.
func (b *pb) event(e frame.Event) {
	n := len(b.frames) + 1
	b.frames = append(b.frames, frame.Frame{Seq: uint64(n), At: int64(n) * 1e6, Event: e})
}

// mcpOpen is the legacy handshake: initialize (with the capabilities
// caps), its answer (the server's capabilities scaps) and initialized:
// frames 1 to 3.
func (b *pb) mcpOpen(caps, scaps string) *pb {
	b.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`)
	b.out(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":` + scaps + `,"serverInfo":{"name":"s","version":"1"}}}`)
	b.in(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return b
}

// lspOpen is initialize, its answer and initialized: frames 1 to 3.
func (b *pb) lspOpen() *pb {
	b.headers = true
	b.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file:///w","capabilities":{},"workDoneToken":"w1"}}`)
	b.out(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{},"serverInfo":{"name":"s"}}}`)
	b.in(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return b
}

// lspClose is shutdown, its answer, exit, and the streams' end.
func (b *pb) lspClose() {
	b.in(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
	b.out(`{"jsonrpc":"2.0","id":99,"result":null}`)
	b.in(`{"jsonrpc":"2.0","method":"exit"}`)
	b.event(frame.EventEOF)
}

// profileCase is a session for one profile's rules and the findings it
// must give, and no other.
type profileCase struct {
	name    string
	profile string
	b       *pb
	want    []want
}

func profileCases() []profileCase {
	var cs []profileCase
	add := func(name, prof string, b *pb, w ...want) {
		cs = append(cs, profileCase{name, prof, b, w})
	}
	mcpCaps := `{"sampling":{},"roots":{},"elicitation":{}}`
	mcpServer := `{"tools":{},"logging":{}}`

	// ---- MCP
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":"c1"}}`)
		b.in(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c1"}}`)
		b.out(`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object","properties":{}}}]}}`)
		b.in(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":7}}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2}}`)
		b.out(`{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`)
		b.in(`{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"yo"},"model":"m"}}`)
		b.out(`{"jsonrpc":"2.0","id":"r","method":"roots/list"}`)
		b.in(`{"jsonrpc":"2.0","id":"r","result":{"roots":[{"uri":"file:///w"}]}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"result":{"action":"accept","content":{"n":"x"}}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		b.out(`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"ok"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource_link","uri":"x:1","name":"one"},{"type":"resource","resource":{"uri":"x:2","text":"two"}}],"structuredContent":{"a":1}}}`)
		b.in(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
		b.out(`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"bad input"}],"isError":true}}`)
		b.in(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`)
		b.out(`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown tool: nope"}}`)
		b.in(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`)
		b.in(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		b.in(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		b.out(`{"jsonrpc":"2.0","id":8,"result":{}}`)
		b.out(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		b.event(frame.EventEOF)
		add("clean", profile.NameMCP, b)
	}
	{
		// A request cancelled by an id longer than the tables keep whole
		// (recent.Key hashes it) owes no answer: the cancel looked its id
		// up unhashed, and never found it.
		long := `"` + strings.Repeat("r", 100) + `"`
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":` + long + `,"method":"ping"}`)
		b.in(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + long + `}}`)
		b.event(frame.EventEOF)
		add("a long id cancelled", profile.NameMCP, b)
	}
	{
		b := &pb{}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		b.in(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"state",` + meta + `}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s1","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}}`)
		b.in(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","requestState":"s1",` + meta + `}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`)
		add("clean-2026-07-28", profile.NameMCP, b)
		b2 := &pb{}
		b2.frames = append(b2.frames, b.frames[:3]...)
		b2.out(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
		add("2026 result without resultType", profile.NameMCP, b2, want{Error, RuleResultInvalid, 4, "result"})
	}
	{
		b := &pb{}
		b.out(`mcp server v1 ready`)
		b.mcpOpen(mcpCaps, mcpServer)
		b.out(``)
		b.out(`[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}]`)
		b.out(`{"jsonrpc":"2.0","result":1}`)
		b.out("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"\xff\"}}")
		b.out(`{"method":"notifications/message","params":{"level":"info","data":1}}`)
		add("stray stdout", profile.NameMCP, b,
			want{Error, RuleNotJSON, 1, ""}, want{Error, RuleNotJSON, 5, ""}, want{Error, RuleNotObject, 6, ""},
			want{Error, RuleNotMessage, 7, ""}, want{Error, RuleInvalidUTF8, 8, ""}, want{Error, RuleJSONRPCVersion, 9, ""})
	}
	{
		b := &pb{}
		b.in(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
		add("request before initialize", profile.NameMCP, b, want{Error, RuleBeforeInitialize, 1, ""})
		b2 := &pb{}
		b2.out(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}`)
		b2.mcpOpen(mcpCaps, mcpServer)
		add("server speaks first", profile.NameMCP, b2, want{Error, RuleBeforeInitialize, 1, ""})
	}
	{
		b := &pb{}
		b.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
		b.in(`{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":8,"method":"roots/list"}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		b.in(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		b.in(`{"jsonrpc":"2.0","id":8,"result":{"roots":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
		add("before initialized", profile.NameMCP, b,
			want{Warning, RuleBeforeInitialized, 2, ""}, want{Warning, RuleBeforeInitialized, 3, ""},
			want{Warning, RuleBeforeInitialized, 6, ""}, want{Warning, RuleBeforeInitialized, 7, ""})
	}
	{
		b := (&pb{}).mcpOpen(`{}`, `{"tools":{}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
		b.in(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		add("capability undeclared", profile.NameMCP, b,
			want{Error, RuleCapabilityUndeclared, 4, ""}, want{Error, RuleCapabilityUndeclared, 6, ""})
		b2 := (&pb{}).mcpOpen(`{"elicitation":{},"sampling":{}}`, `{}`)
		b2.out(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url","message":"go","url":"https://x","elicitationId":"e"}}`)
		b2.in(`{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`)
		b2.out(`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[]}}`)
		b2.in(`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`)
		b2.out(`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`)
		b2.in(`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`)
		add("capability undeclared: modes and sub-capabilities", profile.NameMCP, b2,
			want{Error, RuleCapabilityUndeclared, 4, ""}, want{Error, RuleCapabilityUndeclared, 6, ""}, want{Error, RuleCapabilityUndeclared, 8, ""})
	}
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":1}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`)
		b.in(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task","task":{},"_meta":{"progressToken":"k"}}}`)
		b.out(`{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"x","status":"working"}}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"k","progress":1}}`)
		add("progress token unknown", profile.NameMCP, b,
			want{Error, RuleProgressTokenUnknown, 5, "params.progressToken"}, want{Error, RuleProgressTokenUnknown, 8, "params.progressToken"})
	}
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail"}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"the tool failed"}}`)
		b.in(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail"}}`)
		b.out(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad arguments"}}`)
		b.in(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}}`)
		b.in(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`)
		b.out(`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Tool nope not found"}],"isError":true}}`)
		b.in(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`)
		b.out(`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"no such tool"}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		b.in(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`)
		b.out(`{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}`)
		add("tool errors", profile.NameMCP, b,
			want{Warning, RuleToolErrorAsRPCError, 5, "error"}, want{Warning, RuleToolErrorAsResult, 11, "result.isError"})
	}
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text"}],"isError":"no"}}`)
		b.out(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud"}}`)
		b.in(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		b.out(`{"jsonrpc":"2.0","id":3,"result":[]}`)
		add("schemas", profile.NameMCP, b,
			want{Error, RuleParamsInvalid, 4, "params"}, want{Error, RuleParamsInvalid, 4, "params.arguments"},
			want{Error, RuleResultInvalid, 5, "result.content[0]"}, want{Error, RuleResultInvalid, 5, "result.isError"},
			want{Error, RuleParamsInvalid, 6, "params"}, want{Error, RuleParamsInvalid, 6, "params.level"},
			want{Error, RuleResultInvalid, 8, "result"})
	}
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.out(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		b.in(`{"jsonrpc":"2.0","id":5,"result":{}}`)
		b.out(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		b.out(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		b.in(`{"jsonrpc":"2.0","id":5,"result":{}}`)
		b.in(`{"jsonrpc":"2.0","id":5,"result":{}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]},"error":{"code":1,"message":"x"}}`)
		b.in(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":3}`)
		b.in(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		b.out(`{"jsonrpc":"2.0","id":4,"error":{"code":"x"}}`)
		b.in(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
		add("ids and responses", profile.NameMCP, b,
			want{Error, RuleIDReused, 6, "id"}, want{Error, RuleIDReused, 7, "id"}, want{Error, RuleAnswerUnknownID, 9, "id"},
			want{Error, RuleResultAndError, 11, ""}, want{Error, RuleResponseMalformed, 13, ""},
			want{Error, RuleResponseMalformed, 15, "error.code"}, want{Error, RuleResponseMalformed, 15, "error.message"},
			want{Error, RuleRequestUnanswered, 16, ""})
	}
	{
		b := (&pb{}).mcpOpen(mcpCaps, mcpServer)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		f := b.out(`{"jsonrpc":"2.0","id":2,"result":{"tools":[`)
		f.Cut = &frame.Cut{Len: 1 << 30}
		add("frame cut", profile.NameMCP, b, want{Info, RuleFrameCut, 5, ""})
	}

	// ---- LSP
	{
		b := (&pb{}).lspOpen()
		b.in(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"method":"window/workDoneProgress/create","params":{"token":"p"}}`)
		b.in(`{"jsonrpc":"2.0","id":1,"result":null}`)
		b.out(`{"jsonrpc":"2.0","method":"$/progress","params":{"token":"p","value":{"kind":"begin"}}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
		b.out(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/a","diagnostics":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":null}`)
		b.in(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
		b.out(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/a","diagnostics":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":99,"result":null}`)
		b.out(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"Shutdown session"}}`)
		b.in(`{"jsonrpc":"2.0","method":"exit"}`)
		b.event(frame.EventEOF)
		f := b.out(``)
		f.SetHead(wire.HeadFor(163))
		f.NoEOL = true
		add("clean", profile.NameLSP, b)
	}
	{
		b := &pb{headers: true}
		b.out(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"up"}}`)
		b.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"capabilities":{},"workDoneToken":"w1"}}`)
		b.in(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{}}`)
		b.out(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"starting"}}`)
		b.out(`{"jsonrpc":"2.0","method":"$/progress","params":{"token":"w1","value":{"kind":"begin"}}}`)
		b.out(`{"jsonrpc":"2.0","method":"$/progress","params":{"token":"other","value":{"kind":"begin"}}}`)
		b.out(`{"jsonrpc":"2.0","id":5,"method":"workspace/configuration","params":{"items":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`)
		add("before initialize", profile.NameLSP, b,
			want{Error, RuleBeforeInitialize, 1, ""}, want{Error, RuleBeforeInitialize, 3, ""},
			want{Error, RuleBeforeInitialize, 6, ""}, want{Error, RuleBeforeInitialize, 7, ""})
	}
	{
		b := (&pb{}).lspOpen()
		b.in(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
		b.in(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{}}`)
		b.out(`{"jsonrpc":"2.0","id":99,"result":null}`)
		b.in(`{"jsonrpc":"2.0","id":100,"method":"textDocument/hover","params":{}}`)
		b.out(`{"jsonrpc":"2.0","id":100,"error":{"code":-32600,"message":"shut down"}}`)
		b.out(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/a","diagnostics":[]}}`)
		b.out(`{"jsonrpc":"2.0","id":7,"method":"workspace/configuration","params":{"items":[]}}`)
		b.in(`{"jsonrpc":"2.0","method":"exit"}`)
		add("after shutdown", profile.NameLSP, b,
			want{Error, RuleAfterShutdown, 5, ""}, want{Error, RuleAfterShutdown, 7, ""},
			want{Warning, RuleAfterShutdownAnswer, 9, ""}, want{Warning, RuleAfterShutdownAnswer, 10, ""})
	}
	{
		b := (&pb{}).lspOpen()
		b.out(`{"jsonrpc":"2.0","id":4,"method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/a","diagnostics":[]}}`)
		b.in(`{"jsonrpc":"2.0","id":5,"method":"textDocument/didSave","params":{}}`)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"result":{"contents":""},"error":{"code":-32603,"message":"x"}}`)
		b.out("{\"jsonrpc\":\"2.0\",\"method\":\"window/logMessage\",\"params\":{\"type\":3,\"message\":\"\xff\"}}")
		b.lspClose()
		add("messages", profile.NameLSP, b,
			want{Error, RuleNotificationWithID, 4, "id"}, want{Error, RuleNotificationWithID, 5, "id"},
			want{Error, RuleResultAndError, 7, ""}, want{Error, RuleInvalidUTF8, 8, ""})
	}
	{
		b := (&pb{}).lspOpen()
		body := `{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"x"}}`
		f := b.out(body[:len(body)-1])
		f.SetHead(wire.HeadFor(len(body) - 1))
		b.out(`}Content-Length: 50`).SetHead(nil)
		b.in(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
		add("content length too short", profile.NameLSP, b, want{Error, RuleContentLength, 4, ""})

		b2 := (&pb{}).lspOpen()
		b2.out(body + `Content`)
		b2.out(`{"jsonrpc":"2.0","method":"window/logMessage"}`).SetHead([]byte("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"))
		add("content length too long, then none", profile.NameLSP, b2, want{Error, RuleContentLength, 4, ""}, want{Error, RuleContentLength, 5, ""})

		b3 := (&pb{}).lspOpen()
		b3.out(`gopls: starting`).SetHead(nil)
		b3.out(`more noise`).SetHead(nil)
		b3.in(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
		f3 := b3.out(`{"jsonrpc":"2.0","id":2,`)
		f3.SetHead(wire.HeadFor(60))
		f3.NoEOL = true
		add("unframed, and a body cut short", profile.NameLSP, b3, want{Error, RuleUnframed, 4, ""}, want{Error, RuleContentLength, 7, ""})
	}
	{
		b := (&pb{}).lspOpen()
		b.in(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{}}`)
		b.in(`Content-Type: x`)
		b.in(`[]`)
		b.in(`{"id":3,"method":"textDocument/hover"}`)
		b.out(`{"jsonrpc":"2.0","id":3,"result":null}`)
		b.in(`{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{}}`)
		b.in(`{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{}}`)
		b.out(`{"jsonrpc":"2.0","id":4}`)
		b.out(`{"jsonrpc":"2.0","result":null}`)
		b.out(`{"jsonrpc":"2.0","id":77,"result":null}`)
		f := b.in(`{"jsonrpc":"2.0","id":5,"method":`)
		f.Cut = &frame.Cut{Len: 1 << 30}
		add("JSON-RPC", profile.NameLSP, b,
			want{Error, RuleNotJSON, 5, ""}, want{Error, RuleNotObject, 6, ""}, want{Error, RuleJSONRPCVersion, 7, ""},
			want{Error, RuleIDReused, 10, "id"}, want{Error, RuleResponseMalformed, 11, ""}, want{Error, RuleNotMessage, 12, ""},
			want{Error, RuleAnswerUnknownID, 13, "id"}, want{Info, RuleFrameCut, 14, ""}, want{Error, RuleRequestUnanswered, 4, ""})
	}

	// ---- JSON-RPC
	{
		b := &pb{}
		b.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":1}}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":null}`)
		b.out(`{"jsonrpc":"2.0","method":"log","params":[1]}`)
		b.in(`[{"jsonrpc":"2.0","id":2,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`)
		b.out(`[{"jsonrpc":"2.0","id":2,"result":7}]`)
		b.in(`{"jsonrpc":"2.0","id":"x","method":"c"}`)
		b.out(`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`)
		b.out(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		b.err(`a log line that is not JSON`)
		b.in(``)
		for i := 0; i < 300; i++ {
			b.in(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i))
		}
		b.event(frame.EventEOF)
		b.event(frame.EventExit)
		add("clean", profile.NameJSONRPC, b)
	}
	{
		b := &pb{}
		b.in(`{"jsonrpc":"2.0","id":1,"method":"a"}`)
		b.in(`{"jsonrpc":"2.0","id":1,"method":"b"}`)
		b.out(`hello`)
		b.out(`[]`)
		b.out(`[1]`)
		b.out(`"x"`)
		b.out(`{"jsonrpc":"1.0","id":1,"result":1}`)
		b.out(`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`)
		b.out(`{"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"x"}}`)
		b.out("{\"jsonrpc\":\"2.0\",\"method\":\"\xfe\"}")
		f := b.out(`{"jsonrpc":"2.0"`)
		f.Cut = &frame.Cut{Len: 1 << 30}
		b.in(`{"jsonrpc":"2.0","id":5,"method":"c"}`)
		b.out(`{"jsonrpc":"2.0","id":6,"result":1}`)
		add("JSON-RPC", profile.NameJSONRPC, b,
			want{Error, RuleIDReused, 2, "id"}, want{Error, RuleNotJSON, 3, ""}, want{Error, RuleNotObject, 4, ""},
			want{Error, RuleNotMessage, 5, ""}, want{Error, RuleNotObject, 6, ""}, want{Error, RuleJSONRPCVersion, 7, "jsonrpc"},
			want{Error, RuleAnswerUnknownID, 8, "id"}, want{Error, RuleResultAndError, 8, ""},
			want{Error, RuleAnswerUnknownID, 9, "id"}, want{Error, RuleResponseMalformed, 9, "error.code"},
			want{Error, RuleInvalidUTF8, 10, ""}, want{Info, RuleFrameCut, 11, ""}, want{Error, RuleAnswerUnknownID, 13, "id"})
		b2 := &pb{}
		b2.in(`{"jsonrpc":"2.0","id":5,"method":"c"}`)
		b2.out(`{"jsonrpc":"2.0","id":6,"result":1}`)
		add("unanswered", profile.NameJSONRPC, b2, want{Error, RuleAnswerUnknownID, 2, "id"}, want{Error, RuleRequestUnanswered, 1, ""})
	}
	return cs
}

// err adds a line of the peer's stderr.
func (b *pb) err(text string) { b.add(frame.Err, text) }

// TestProfileRules runs every case of every profile's rules and checks
// that between them every rule of each profile is tripped.
func TestProfileRules(t *testing.T) {
	tripped := map[string]map[string]bool{}
	for _, pc := range profileCases() {
		if tripped[pc.profile] == nil {
			tripped[pc.profile] = map[string]bool{}
		}
		for _, w := range pc.want {
			tripped[pc.profile][w.Rule] = true
		}
		t.Run(pc.profile+"/"+pc.name, func(t *testing.T) {
			p, err := profile.Get(pc.profile)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Profile: p}
			if pc.b.headers {
				opts.Framing = "headers"
			}
			got := run(opts, pc.b.frames)
			compare(t, got, pc.want)
			for _, f := range got {
				if f.Spec == "" || !strings.Contains(f.Message, ": ") {
					t.Errorf("finding %s #%d has no citation or no consequence: %+v", f.Rule, f.Seq, f)
				}
			}
		})
	}
	for _, set := range Sets() {
		if set.Profile == profile.NameAgentty {
			continue // TestRules
		}
		for _, r := range set.Rules {
			if !tripped[set.Profile][r.ID] {
				t.Errorf("%s rule %s is tripped by no case", set.Profile, r.ID)
			}
		}
	}
}

// TestCheckerFindsProfile: with Detect, a Checker holds the frames until
// the handshake settles the profile, then gives the findings of that
// profile's rules for every frame held; without a settled handshake,
// Finish takes what the frames name.
func TestCheckerFindsProfile(t *testing.T) {
	stray := func(b *pb) {
		b.out(`server starting`)
	}
	mcpB := &pb{}
	stray(mcpB)
	mcpB.mcpOpen(`{}`, `{}`)
	lspB := &pb{}
	lspB.out(`server starting`)
	lspB.frames[0].SetHead(nil)
	lspB.lspOpen()
	agB := &pb{}
	agB.in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1}}`)
	agB.out(`not json`)
	none := &pb{}
	none.out(`not json`)
	for _, tc := range []struct {
		name    string
		b       *pb
		profile string
		want    []want
		held    int // frames fed before the first finding
	}{
		{"mcp", mcpB, profile.NameMCP, []want{{Error, RuleNotJSON, 1, ""}}, 2},
		{"lsp", lspB, profile.NameLSP, []want{{Error, RuleUnframed, 1, ""}}, 2},
		{"agentty", agB, profile.NameAgentty, []want{{Info, RuleManifestMissing, 0, ""}, {Warning, RuleLineNotJSON, 2, ""}, {Warning, RuleInitUnanswered, 1, ""}}, 1},
		{"no request at all", none, profile.NameAgentty, []want{{Info, RuleManifestMissing, 0, ""}, {Warning, RuleLineNotJSON, 1, ""}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{Detect: true})
			var got []Finding
			first := -1
			for i := range tc.b.frames {
				fs := c.Feed(&tc.b.frames[i])
				if len(fs) > 0 && first < 0 {
					first = i + 1
				}
				got = append(got, fs...)
			}
			got = append(got, c.Finish()...)
			if c.Profile() != tc.profile {
				t.Errorf("Profile() = %q, want %q", c.Profile(), tc.profile)
			}
			if first != tc.held {
				t.Errorf("first findings after frame %d, want %d", first, tc.held)
			}
			compare(t, got, tc.want)
		})
	}
	// A profile that never settles is taken once the frames held pass
	// the bound, not held for ever.
	c := New(Options{Detect: true})
	var found []Finding
	for i := 0; i < maxHeldFrames+10; i++ {
		f := frame.Frame{Seq: uint64(i + 1), Dir: frame.Out, Raw: []byte(`x`)}
		found = append(found, c.Feed(&f)...)
	}
	if c.Profile() != profile.NameAgentty || len(found) < maxHeldFrames {
		t.Errorf("after %d unsettled frames: profile %q, %d findings", maxHeldFrames+10, c.Profile(), len(found))
	}
}

// TestRuleSets: every profile has its rules, each with a level, a
// consequence and a citation, ids unique within a profile.
func TestRuleSets(t *testing.T) {
	sets := Sets()
	if len(sets) != len(profile.All()) {
		t.Fatalf("%d rule sets for %d profiles", len(sets), len(profile.All()))
	}
	for _, set := range sets {
		p, err := profile.Get(set.Profile)
		if err != nil {
			t.Fatal(err)
		}
		if len(RulesOf(p)) != len(set.Rules) {
			t.Errorf("%s: RulesOf and Sets disagree", set.Profile)
		}
		seen := map[string]bool{}
		for _, r := range set.Rules {
			if seen[r.ID] {
				t.Errorf("%s: rule %s twice", set.Profile, r.ID)
			}
			seen[r.ID] = true
			if r.Level != Error && r.Level != Warning && r.Level != Info || r.Host == "" || r.Spec == "" {
				t.Errorf("%s: rule %+v lacks a level, a consequence or a citation", set.Profile, r)
			}
		}
	}
	if len(RulesOf(nil)) != len(Rules()) {
		t.Errorf("RulesOf(nil) is not Agentty's rules")
	}
}

// TestMCPSchemas: the schema files compile, and name the main methods of
// both directions.
func TestMCPSchemas(t *testing.T) {
	s, err := loadMCPSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		from   string
		result bool
	}{
		{"initialize", "client", true}, {"ping", "both", true}, {"tools/list", "client", true}, {"tools/call", "client", true},
		{"resources/list", "client", true}, {"resources/read", "client", true}, {"resources/templates/list", "client", true},
		{"prompts/list", "client", true}, {"prompts/get", "client", true}, {"completion/complete", "client", true},
		{"logging/setLevel", "client", true}, {"tasks/get", "client", true}, {"server/discover", "client", true},
		{"sampling/createMessage", "server", true}, {"roots/list", "server", true}, {"elicitation/create", "server", true},
		{"notifications/progress", "both", false}, {"notifications/message", "server", false}, {"notifications/cancelled", "both", false},
	} {
		m := s.methods[tc.method]
		if m == nil {
			t.Errorf("no schema for %s", tc.method)
			continue
		}
		if m.from != tc.from || (m.result != nil) != tc.result || m.section == "" {
			t.Errorf("%s: from %q, result %v, section %q; want from %q, result %v", tc.method, m.from, m.result != nil, m.section, tc.from, tc.result)
		}
	}
}

// TestLengthMismatch: how a body that is not JSON shows its Content-Length
// wrong.
func TestLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // a word of the reason; "" for none
	}{
		{`{"a":1}`, ""},
		{`{"a":1`, "too short"},
		{` [1,2`, "too short"},
		{`{"a":1}Content-Le`, "runs into the next message"},
		{`{"a":1}  `, ""},
		{`hello`, ""},
		{`{"a":}`, ""},
		{``, ""},
	} {
		got := lengthMismatch([]byte(tc.body), int64(len(tc.body)))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("lengthMismatch(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// FuzzProfileRules feeds arbitrary frames to every profile's rules, found
// or named: they never panic, and every finding names a rule of its
// profile.
func FuzzProfileRules(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`), []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":1}]}}`), true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`), []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null,\"error\":{}}\xff"), false)
	f.Add([]byte(`[{"id":null}]`), []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[]}}`), true)
	agenttySchemas, err := loadSchemas()
	if err != nil {
		f.Fatal(err)
	}
	mcpSchemas, err := loadMCPSchemas()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in, out []byte, headed bool) {
		for _, p := range profile.All() {
			known := map[string]bool{}
			for _, r := range RulesOf(p) {
				known[r.ID] = true
			}
			// The schemas are compiled once: New would take most of the
			// time compiling them.
			var c ruleSet
			switch p.Name() {
			case profile.NameAgentty:
				c = newAgenttyWith(Options{}, agenttySchemas)
			case profile.NameMCP:
				c = newMCPWith(mcpSchemas)
			default:
				c = newRules(p, Options{})
			}
			var got []Finding
			for i, raw := range [][]byte{in, out, in, out} {
				fr := frame.Frame{Seq: uint64(i + 1), Dir: frame.In, Raw: raw}
				if i%2 == 1 {
					fr.Dir = frame.Out
				}
				if headed {
					fr.SetHead(wire.HeadFor(len(raw) + i))
				}
				got = append(got, c.Feed(&fr)...)
			}
			got = append(got, c.Finish()...)
			for _, f := range got {
				if !known[f.Rule] {
					t.Errorf("%s: finding of rule %s, which is not the profile's", p.Name(), f.Rule)
				}
			}
		}
	})
}
