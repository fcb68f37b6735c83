package check

// The LSP profile's rules: JSON-RPC's, with what the Language Server
// Protocol 3.17 adds (microsoft.github.io/language-server-protocol,
// specifications/lsp/3.17): the base protocol's header part (a
// Content-Length that says how long the body is, the body UTF-8), the
// lifecycle (nothing before initialize is answered but what the server may
// say meanwhile, nothing from the client after shutdown but exit), and
// notifications that are not requests. The host is the client, the peer
// the server.
//
// After shutdown the specification binds the client only: the server may
// still log (gopls sends window/logMessage after answering), and a message
// it cuts short once exit arrived harms no one. What else the server sends
// once it has answered shutdown is a warning, not an error: the client may
// no longer be listening.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// The rule ids LSP adds to JSON-RPC's (and before-initialize, MCP's too).
const (
	RuleAfterShutdown       = "after-shutdown"
	RuleAfterShutdownAnswer = "after-shutdown-answer"
	RuleNotificationWithID  = "notification-with-id"
	RuleContentLength       = "content-length"
	RuleUnframed            = "unframed"
)

// lspNotifications is the notifications of LSP 3.17, by who sends them.
var lspNotifications = [2]map[string]bool{
	hostSide: setOf("initialized", "exit", "$/cancelRequest", "$/setTrace", "$/progress",
		"textDocument/didOpen", "textDocument/didChange", "textDocument/willSave", "textDocument/didSave", "textDocument/didClose",
		"workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders", "workspace/didChangeWatchedFiles",
		"workspace/didCreateFiles", "workspace/didRenameFiles", "workspace/didDeleteFiles", "window/workDoneProgress/cancel",
		"notebookDocument/didOpen", "notebookDocument/didChange", "notebookDocument/didSave", "notebookDocument/didClose"),
	peerSide: setOf("window/showMessage", "window/logMessage", "telemetry/event", "textDocument/publishDiagnostics",
		"$/progress", "$/logTrace", "$/cancelRequest"),
}

// lspBeforeInit is what the server may send while initialize is being
// answered (and $/progress of the token initialize's params gave it).
var lspBeforeInit = setOf("window/showMessage", "window/logMessage", "telemetry/event", "window/showMessageRequest")

// lspAfterShutdown is what a server may still say once it has answered
// shutdown without the client losing anything: its log.
var lspAfterShutdown = setOf("window/logMessage", "window/showMessage", "telemetry/event", "$/logTrace")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// lspRules is the LSP profile's rule table.
func lspRules() []Rule {
	const spec = "LSP 3.17 "
	return []Rule{
		{ID: RuleNotJSON, Level: Error, Host: "the content part is JSON-RPC; a client cannot read it", Spec: spec + "base protocol (content part)"},
		{ID: RuleNotObject, Level: Error, Host: "a message is one JSON-RPC request, response or notification object", Spec: spec + "base protocol (content part)"},
		{ID: RuleNotMessage, Level: Error, Host: "a message is a request (method and id), a notification (method) or a response (id, with result or error)", Spec: spec + "abstract message"},
		{ID: RuleInvalidUTF8, Level: Error, Host: "the content part is encoded in UTF-8 (the only charset the base protocol allows); a client reads other text or fails", Spec: spec + "base protocol (content part)"},
		{ID: RuleJSONRPCVersion, Level: Error, Host: `every message says "jsonrpc": "2.0"`, Spec: spec + "abstract message"},
		{ID: RuleIDReused, Level: Error, Host: "the answers to the two requests cannot be told apart", Spec: spec + "request message"},
		{ID: RuleAnswerUnknownID, Level: Error, Host: "a response carries the id of the request it answers; the receiver drops it", Spec: spec + "response message"},
		{ID: RuleResultAndError, Level: Error, Host: "a response carries a result or an error, never both", Spec: spec + "response message"},
		{ID: RuleResponseMalformed, Level: Error, Host: "a response carries a result (null if nothing) or an error with an integer code and a string message", Spec: spec + "response message"},
		{ID: RuleRequestUnanswered, Level: Error, Host: "every processed request gets a response, even a cancelled one; its sender waits", Spec: spec + "request message, $/cancelRequest"},
		{ID: RuleFrameCut, Level: Info, Host: "its contents were not checked", Spec: "tapedeck record --max-frame"},
		{ID: RuleContentLength, Level: Error, Host: "the header part's Content-Length (required) is the length of the content part in bytes; a reader that trusts it splits every later message wrongly", Spec: spec + "base protocol (header part)"},
		{ID: RuleUnframed, Level: Error, Host: "every message is a header part and a content part; bytes outside one are not a message, and a reader loses the stream there", Spec: spec + "base protocol"},
		{ID: RuleBeforeInitialize, Level: Error, Host: "until the server has answered initialize, the client sends nothing more and the server only window/showMessage, window/logMessage, telemetry/event, window/showMessageRequest and $/progress of initialize's token; a server answers -32002", Spec: spec + "initialize"},
		{ID: RuleAfterShutdown, Level: Error, Host: "after shutdown the client sends no request and no notification but exit; a server answers -32600", Spec: spec + "shutdown"},
		{ID: RuleAfterShutdownAnswer, Level: Warning, Host: "the specification binds only the client after shutdown, but a server that has answered it should only log: the client may have stopped listening and loses what it says", Spec: spec + "shutdown"},
		{ID: RuleNotificationWithID, Level: Error, Host: "the method is a notification, which carries no id; a client treats it as a request and answers -32601, or drops it", Spec: spec + "notification message"},
	}
}

// lsp applies the LSP profile's rules to one session.
type lsp struct {
	*rpc
	// headers: the session is header-framed (Options.Framing, or a frame
	// with a header block was seen), so a frame without one is stray.
	headers bool
	told    bool // Options.Framing said how the session is framed

	initSeq     uint64  // the client's initialize, 0 before
	initToken   string  // the workDoneToken of initialize's params
	answered    bool    // the server answered initialize
	shutdownSeq uint64  // the client's shutdown, 0 before
	shutDown    bool    // the server answered shutdown
	exited      bool    // the client sent exit
	lost        [2]bool // this side's stream lost its framing: quiet until a message reads again
}

// newLSP returns the LSP profile's rules for one session.
func newLSP(opts Options) *lsp {
	l := &lsp{}
	l.rpc = newRPC(lspRules(), l)
	l.who = [2]string{"client", "server"}
	if f, err := wire.Parse(opts.Framing); err == nil && opts.Framing != "" {
		l.headers, l.told = f == wire.Headers, true
	}
	return l
}

func (l *lsp) lifetimeIDs(side) bool { return false }

func (l *lsp) event(*frame.Frame) {}

// frame implements extension: the base protocol's header part.
func (l *lsp) frame(s side, f *frame.Frame) bool {
	head := f.Head()
	if head == nil {
		if !l.headers {
			return true // a line-framed session: JSON-RPC's rules alone
		}
		if !l.lost[s] && !l.exited {
			l.add(at(f), RuleUnframed, "", "", fmt.Sprintf("%d bytes from the %s outside any Content-Length message: %s", len(f.Raw), l.who[s], show(string(bytes.ToValidUTF8(f.Raw, []byte("\uFFFD"))))))
		}
		l.lose(s)
		return false
	}
	if !l.told {
		l.headers = true
	}
	n, ok := wire.ContentLength(head)
	switch {
	case !ok:
		if !l.exited {
			l.add(at(f), RuleContentLength, "", "", fmt.Sprintf("the %s's header part has no Content-Length: %s", l.who[s], show(string(head))))
		}
		l.lose(s)
		return false
	case f.NoEOL && int64(len(f.Raw)) < n:
		// The stream ended inside the body. After exit the server is
		// going, and nobody reads it (gopls cuts its last log line).
		if !l.exited {
			l.add(at(f), RuleContentLength, "", "", fmt.Sprintf("the %s's stream ended %d bytes into a body whose Content-Length is %d", l.who[s], len(f.Raw), n))
		}
		l.lose(s)
		return false
	}
	if why := lengthMismatch(f.Raw, n); why != "" {
		l.add(at(f), RuleContentLength, "", "", fmt.Sprintf("the %s's %s", l.who[s], why))
		l.lose(s)
		return false
	}
	l.lost[s] = false
	return true
}

// lose notes that s's stream lost its framing: its messages may be in
// bytes that could not be read, so its ids are unknown from here on.
func (l *lsp) lose(s side) {
	l.lost[s] = true
	l.blind[s] = true
}

// lengthMismatch says how a body of Content-Length n that is not JSON
// shows the length to be wrong: its JSON value ends before the body does
// (the length is too long, and the body runs into the next message), or
// the body ends inside the value (too short). "" when neither: the body is
// JSON, or simply not JSON.
func lengthMismatch(body []byte, n int64) string {
	if json.Valid(body) {
		return ""
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' && trimmed[0] != '[' {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var v json.RawMessage
	err := dec.Decode(&v)
	switch {
	case err == nil:
		end := int64(len(body)-len(trimmed)) + dec.InputOffset()
		return fmt.Sprintf("Content-Length is %d, but the JSON body ends after %d bytes: the rest runs into the next message (%s)", n, end, show(string(bytes.ToValidUTF8(body[end:], []byte("\uFFFD")))))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("Content-Length is %d, but the JSON body goes on past it: the length is too short", n)
	}
	return ""
}

// request implements extension.
func (l *lsp) request(s side, f *frame.Frame, m *message.Message, c *rpcCall) {
	if lspNotifications[s][m.Method] {
		c.notOwed = true
		l.add(at(f), RuleNotificationWithID, m.Method, "id", fmt.Sprintf("the %s sent the notification %s with id %s", l.who[s], m.Method, c.id))
	}
	if s == hostSide {
		if m.Method == "initialize" && l.initSeq == 0 {
			l.initSeq = f.Seq
			var p struct {
				Token json.RawMessage `json:"workDoneToken"`
			}
			if json.Unmarshal(m.Params, &p) == nil && len(p.Token) > 0 {
				l.initToken = message.IDKey(p.Token)
			}
			return
		}
		if m.Method == "shutdown" && l.shutdownSeq == 0 {
			l.client(f, m.Method, "request")
			l.shutdownSeq = f.Seq
			return
		}
		l.client(f, m.Method, "request")
		return
	}
	if l.server(f, m.Method, "request", nil) {
		c.notOwed = true // blamed already; the client need not answer it
	}
}

// notification implements extension.
func (l *lsp) notification(s side, f *frame.Frame, m *message.Message) {
	if s == hostSide {
		if m.Method == "exit" {
			l.exited = true
			return
		}
		l.client(f, m.Method, "notification")
		return
	}
	l.server(f, m.Method, "notification", m.Params)
}

// client checks that the lifecycle allows the client to send method.
func (l *lsp) client(f *frame.Frame, method, what string) {
	switch {
	case !l.answered:
		l.add(at(f), RuleBeforeInitialize, method, "", fmt.Sprintf("the client sent the %s %s before the server answered initialize", what, method))
	case l.shutdownSeq != 0:
		l.add(at(f), RuleAfterShutdown, method, "", fmt.Sprintf("the client sent the %s %s after shutdown (#%d)", what, method, l.shutdownSeq))
	}
}

// server checks that the lifecycle allows the server to send method, and
// reports whether it broke a rule.
func (l *lsp) server(f *frame.Frame, method, what string, params json.RawMessage) bool {
	switch {
	case l.exited:
	case l.initSeq == 0:
		l.add(at(f), RuleBeforeInitialize, method, "", fmt.Sprintf("the server sent the %s %s before the client's initialize", what, method))
		return true
	case !l.answered:
		if lspBeforeInit[method] || method == "$/progress" && l.initToken != "" && progressToken(params) == l.initToken {
			return false
		}
		l.add(at(f), RuleBeforeInitialize, method, "", fmt.Sprintf("the server sent the %s %s before it answered initialize (#%d)", what, method, l.initSeq))
		return true
	case l.shutDown && !lspAfterShutdown[method]:
		l.add(at(f), RuleAfterShutdownAnswer, method, "", fmt.Sprintf("the server sent the %s %s after it answered shutdown", what, method))
		return true
	}
	return false
}

// progressToken is the token of $/progress params.
func progressToken(params json.RawMessage) string {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return message.IDKey(p.Token)
}

// answer implements extension.
func (l *lsp) answer(s side, _ *frame.Frame, m *message.Message, c *rpcCall) {
	if s != peerSide {
		return
	}
	switch c.method {
	case "initialize":
		l.answered = true
	case "shutdown":
		l.shutDown = true
	}
}
