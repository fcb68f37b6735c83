package check

// The MCP profile's rules: JSON-RPC's, with what the Model Context
// Protocol adds over stdio (modelcontextprotocol.io, revisions 2025-06-18,
// 2025-11-25 and 2026-07-28): nothing but messages on stdout, the
// initialize handshake (none in 2026-07-28, where every request names its
// revision in _meta), the shapes of the methods' params and results
// (schemas/mcp), the client's capabilities before the server asks for
// sampling, roots or elicitation, progress tokens, where a tool's failure
// belongs, and no request id used twice in a session. Each finding cites
// the section of the session's revision. The host is the client, the peer
// the server.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// The rule ids MCP adds to JSON-RPC's.
const (
	RuleBeforeInitialize     = "before-initialize"
	RuleBeforeInitialized    = "before-initialized"
	RuleResultInvalid        = "result-invalid"
	RuleCapabilityUndeclared = "capability-undeclared"
	RuleProgressTokenUnknown = "progress-token-unknown"
	RuleToolErrorAsRPCError  = "tool-error-as-rpc-error"
	RuleToolErrorAsResult    = "tool-error-as-result"
)

const (
	// mcpDefault is the revision a session that names none is cited by:
	// the latest with the initialize handshake.
	mcpDefault = "2025-11-25"
	// metaVersion is the _meta member a 2026-07-28 request names its
	// revision in.
	metaVersion = "io.modelcontextprotocol/protocolVersion"
	// maxSpentTokens bounds the answered requests' progress tokens kept
	// per side, to tell a late progress from an unknown one.
	maxSpentTokens = 1 << 16
	// maxListedTools bounds the tool names a tools/list followed page by
	// page gathers (pages that never stop sending nextCursor had grown the
	// listing to 795 MB). Past it the server's tools are unknown, as before
	// any listing: no finding depends on them.
	maxListedTools = 1 << 14
	// mcpSectionSchema is what the schema rules cite in the rule list; a
	// finding cites its method's section.
	mcpSectionSchema = "schema"
)

// mcpSections is the section of the specification each rule cites,
// under "MCP REVISION ".
var mcpSections = map[string]string{
	RuleNotJSON:              "basic/transports#stdio",
	RuleNotObject:            "basic/transports#stdio",
	RuleNotMessage:           "basic#messages",
	RuleInvalidUTF8:          "basic/transports#stdio",
	RuleJSONRPCVersion:       "basic#messages",
	RuleIDReused:             "basic#requests",
	RuleAnswerUnknownID:      "basic#responses",
	RuleResultAndError:       "basic#responses",
	RuleResponseMalformed:    "basic#responses",
	RuleRequestUnanswered:    "basic#responses",
	RuleBeforeInitialize:     "basic/lifecycle#initialization",
	RuleBeforeInitialized:    "basic/lifecycle#initialization",
	RuleParamsInvalid:        mcpSectionSchema,
	RuleResultInvalid:        mcpSectionSchema,
	RuleCapabilityUndeclared: "basic/lifecycle#capability-negotiation",
	RuleProgressTokenUnknown: "basic/utilities/progress",
	RuleToolErrorAsRPCError:  "server/tools#error-handling",
	RuleToolErrorAsResult:    "server/tools#error-handling",
}

// mcpRules is the MCP profile's rule table; a rule's Spec names its
// section for every revision, a finding's its session's revision.
func mcpRules() []Rule {
	rules := []Rule{
		{ID: RuleNotJSON, Level: Error, Host: "the server must write nothing but MCP messages to stdout; a client logs a parse error and drops the line (some close the connection)"},
		{ID: RuleNotObject, Level: Error, Host: "each line carries one JSON-RPC message object (MCP has had no batches since 2025-06-18); a client drops it"},
		{ID: RuleNotMessage, Level: Error, Host: "a line must be a request, a notification or a response; a client drops it"},
		{ID: RuleInvalidUTF8, Level: Error, Host: "MCP messages are UTF-8; a client drops the line or reads other text"},
		{ID: RuleJSONRPCVersion, Level: Error, Host: `MCP messages follow JSON-RPC 2.0 and say "jsonrpc": "2.0"; the SDKs refuse the message`},
		{ID: RuleIDReused, Level: Error, Host: "a request id is never used twice by its sender in a session (2026-07-28: never while the first is in flight); answers cannot be told apart"},
		{ID: RuleAnswerUnknownID, Level: Error, Host: "an answer carries the id of the request it answers; the peer drops it"},
		{ID: RuleResultAndError, Level: Error, Host: "a response carries a result or an error, never both"},
		{ID: RuleResponseMalformed, Level: Error, Host: "a response carries a result or an error; an error an integer code and a string message"},
		{ID: RuleRequestUnanswered, Level: Error, Host: "every request that was not cancelled gets a response; its sender waits until it times out"},
		{ID: RuleFrameCut, Level: Info, Host: "its contents were not checked", Spec: "tapedeck record --max-frame"},
		{ID: RuleBeforeInitialize, Level: Error, Host: "initialize must be the first interaction of a session (a 2026-07-28 request names its revision in _meta instead); a server refuses the request"},
		{ID: RuleBeforeInitialized, Level: Warning, Host: "until the handshake is done only pings (and the server's logging) should pass: the client waits for initialize's answer, the server for notifications/initialized"},
		{ID: RuleParamsInvalid, Level: Error, Host: "params must match the method's schema; the receiver answers -32602 (invalid params) or misreads them"},
		{ID: RuleResultInvalid, Level: Error, Host: "a result must match its method's schema (2026-07-28: and say its resultType); the SDKs refuse it"},
		{ID: RuleCapabilityUndeclared, Level: Error, Host: "a server asks only for what the client declared in its capabilities, and logs only if it declared logging; a client answers -32601 or drops it"},
		{ID: RuleProgressTokenUnknown, Level: Error, Host: "progress may only name the token of a request still in progress; a client drops it"},
		{ID: RuleToolErrorAsRPCError, Level: Warning, Host: "a tool's own failure belongs in a result with isError: true, where the model can read it and try again; JSON-RPC errors are for unknown tools, malformed requests and server faults"},
		{ID: RuleToolErrorAsResult, Level: Warning, Host: "a call of an unknown tool is a protocol error (-32602), not a tool's result with isError"},
	}
	for i := range rules {
		if section := mcpSections[rules[i].ID]; section != "" {
			rules[i].Spec = "MCP " + section
		}
	}
	return rules
}

// mcp applies the MCP profile's rules to one session.
type mcp struct {
	*rpc
	sch *mcpSchemas
	// rev is the revision the session speaks: the server's answer to
	// initialize, else the client's ask, else a 2026-07-28 request's.
	rev         string
	asked       bool   // the client has sent a request
	initSeq     uint64 // the client's initialize, 0 before
	answered    bool   // the server answered initialize
	initialized bool   // the client sent notifications/initialized
	stateless   bool   // the client speaks 2026-07-28, without initialize
	clientCaps  map[string]json.RawMessage
	serverCaps  map[string]json.RawMessage
	// tokens are the progress tokens of each side's requests still in
	// progress; spent, of those answered, with the answer's frame. Both
	// are keyed by recent.Key of the token's spelling, so that a long
	// token costs no more than a short one, and hold at most maxTracked
	// and maxSpentTokens tokens. untracked says a side's token was not
	// kept for lack of room: a progress naming a token unknown may name
	// that one, and is not reported.
	tokens    [2]map[string]*rpcCall
	spent     [2]map[string]uint64
	untracked [2]bool
	// tools is the server's tools once a tools/list was followed to its
	// last page (and no list_changed came since); listing, the pages so
	// far; both keyed by recent.Key of the name. overlong says the pages
	// so far named more than maxListedTools: the tools stay unknown until
	// a tools/list without a cursor starts over.
	tools    map[string]bool
	listing  map[string]bool
	overlong bool
}

// newMCP returns the MCP profile's rules for one session. It panics only
// if the embedded schemas are broken, which the package's tests rule out.
func newMCP(Options) *mcp {
	sch, err := loadMCPSchemas()
	if err != nil {
		panic("check: " + err.Error())
	}
	return newMCPWith(sch)
}

// newMCPWith returns the MCP profile's rules for one session, with its
// schemas compiled.
func newMCPWith(sch *mcpSchemas) *mcp {
	m := &mcp{sch: sch}
	m.rpc = newRPC(mcpRules(), m)
	m.who = [2]string{"client", "server"}
	m.blankStray = true
	m.cite = func(rule string) string { return m.spec(mcpSections[rule]) }
	for s := range m.tokens {
		m.tokens[s] = map[string]*rpcCall{}
		m.spent[s] = map[string]uint64{}
	}
	return m
}

// spec cites section for the session's revision.
func (m *mcp) spec(section string) string {
	if section == "" {
		return m.rules[RuleFrameCut].Spec
	}
	rev := m.rev
	if rev == "" {
		rev = mcpDefault
	}
	return "MCP " + rev + " " + section
}

// addAt records a finding that cites section rather than its rule's.
func (m *mcp) addAt(f *frame.Frame, rule, method, path, msg, section string) {
	m.add(at(f), rule, method, path, msg)
	m.out[len(m.out)-1].Spec = m.spec(section)
}

func (m *mcp) frame(side, *frame.Frame) bool { return true }
func (m *mcp) event(*frame.Frame)            {}

// lifetimeIDs implements extension: before 2026-07-28 an id is never used
// twice in a session; a stateless session only may not reuse one in
// flight.
func (m *mcp) lifetimeIDs(side) bool { return !m.stateless }

// object decodes a JSON object's members; nil when raw is no object.
func object(raw json.RawMessage) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// text decodes a JSON string; "" when raw is none.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// request implements extension.
func (m *mcp) request(s side, f *frame.Frame, msg *message.Message, c *rpcCall) {
	params := object(msg.Params)
	meta := object(params["_meta"])
	if tok, ok := meta["progressToken"]; ok {
		c.token = recent.Key(message.IDKey(tok))
		if _, ok := m.tokens[s][c.token]; ok || room(len(m.tokens[s])) {
			m.tokens[s][c.token] = c
		} else {
			m.untracked[s] = true
		}
	}
	name := msg.Method
	if s == hostSide {
		if v := text(meta[metaVersion]); v != "" {
			c.modern = true
			if m.initSeq == 0 {
				m.stateless = true
				if m.rev == "" {
					m.rev = v
				}
			}
		}
		switch {
		case name == "initialize":
			if m.initSeq == 0 {
				m.initSeq = f.Seq
				if m.rev == "" {
					m.rev = text(params["protocolVersion"])
				}
				m.clientCaps = object(params["capabilities"])
				if m.clientCaps == nil {
					m.clientCaps = map[string]json.RawMessage{}
				}
			}
		case c.modern, name == "ping", name == "server/discover":
		case m.initSeq == 0:
			m.add(at(f), RuleBeforeInitialize, name, "", fmt.Sprintf("the client sent %s before initialize", name))
		case !m.answered:
			m.add(at(f), RuleBeforeInitialized, name, "", fmt.Sprintf("the client sent %s before the server answered its initialize (#%d)", name, m.initSeq))
		}
		m.asked = true
		if name == "subscriptions/listen" {
			c.notOwed = true // a stream the server answers only when it ends it
		}
	} else {
		m.serverSends(f, name, "request")
		m.capability(f, name, params)
	}
	m.validateParams(s, f, name, msg.Params, params)
}

// serverSends checks that the handshake allows the server to send
// method (a request, or a notification other than logging and progress).
func (m *mcp) serverSends(f *frame.Frame, method, what string) {
	switch {
	case !m.asked:
		m.add(at(f), RuleBeforeInitialize, method, "", fmt.Sprintf("the server sent the %s %s before the client's first request", what, method))
	case m.stateless || m.initialized || method == "ping":
	case !m.answered:
		m.add(at(f), RuleBeforeInitialized, method, "", fmt.Sprintf("the server sent the %s %s before it answered initialize (#%d)", what, method, m.initSeq))
	default:
		m.add(at(f), RuleBeforeInitialized, method, "", fmt.Sprintf("the server sent the %s %s before notifications/initialized", what, method))
	}
}

// capability checks that the client declared what a server request asks
// of it.
func (m *mcp) capability(f *frame.Frame, method string, params map[string]json.RawMessage) {
	if m.clientCaps == nil {
		return // no initialize seen: the capabilities are unknown
	}
	need, sub, section := "", "", ""
	switch method {
	case "sampling/createMessage":
		need, section = "sampling", "client/sampling"
		if _, ok := params["tools"]; ok {
			sub = "tools"
		}
	case "roots/list":
		need, section = "roots", "client/roots"
	case "elicitation/create":
		need, section = "elicitation", "client/elicitation"
		mode := text(params["mode"])
		if mode == "" {
			mode = "form"
		}
		// elicitation: {} declares the form mode alone; naming modes
		// declares those.
		if decl := object(m.clientCaps["elicitation"]); len(decl) > 0 {
			sub = mode
		} else if mode == "url" {
			sub = "url"
		}
	default:
		return
	}
	decl, ok := m.clientCaps[need]
	if !ok {
		m.addAt(f, RuleCapabilityUndeclared, method, "", fmt.Sprintf("the server sent %s, but the client did not declare the %s capability", method, need), section+"#capabilities")
		return
	}
	if sub != "" {
		if _, ok := object(decl)[sub]; !ok {
			m.addAt(f, RuleCapabilityUndeclared, method, "", fmt.Sprintf("the server sent %s needing %s.%s, which the client did not declare", method, need, sub), section+"#capabilities")
		}
	}
}

// notification implements extension.
func (m *mcp) notification(s side, f *frame.Frame, msg *message.Message) {
	params := object(msg.Params)
	name := msg.Method
	switch {
	case s == hostSide && name == "notifications/initialized":
		m.initialized = true
	case name == "notifications/cancelled":
		// The sender cancels a request of its own: no answer is owed.
		if c := m.calls[s][recent.Key(message.IDKey(params["requestId"]))]; c != nil { // keyed as idKey keys them
			c.notOwed = true
		}
	case s == peerSide && name == "notifications/tools/list_changed":
		m.tools, m.listing = nil, nil
	}
	if s == peerSide {
		switch name {
		case "notifications/message":
			if !m.asked {
				m.serverSends(f, name, "notification")
			} else if m.serverCaps != nil && !m.stateless {
				if _, ok := m.serverCaps["logging"]; !ok {
					m.addAt(f, RuleCapabilityUndeclared, name, "", "the server sent notifications/message, but did not declare the logging capability", "server/utilities/logging#capabilities")
				}
			}
		case "notifications/progress", "notifications/cancelled":
			if !m.asked {
				m.serverSends(f, name, "notification")
			}
		default:
			m.serverSends(f, name, "notification")
		}
	}
	if name == "notifications/progress" {
		m.progress(s, f, params)
	}
	m.validateParams(s, f, name, msg.Params, params)
}

// progress checks that a progress notification of s names the token of a
// request of the other side still in progress.
func (m *mcp) progress(s side, f *frame.Frame, params map[string]json.RawMessage) {
	raw, ok := params["progressToken"]
	o := s.other()
	if !ok || m.blind[o] {
		return // no token: the schema says so
	}
	// A token as the tables key it, and as the finding names it: a long
	// one by its hash, as a long id is (a 100 kB token was printed whole).
	key := recent.Key(message.IDKey(raw))
	if m.tokens[o][key] != nil || m.untracked[o] {
		return
	}
	msg := fmt.Sprintf("the %s's progress names token %s, which no request of the %s's carried", m.who[s], key, m.who[o])
	if seq, ok := m.spent[o][key]; ok {
		msg = fmt.Sprintf("the %s's progress names token %s, whose request was answered at #%d", m.who[s], key, seq)
	}
	m.add(at(f), RuleProgressTokenUnknown, "notifications/progress", "params.progressToken", msg)
}

// answer implements extension.
func (m *mcp) answer(s side, f *frame.Frame, msg *message.Message, c *rpcCall) {
	o := s.other()
	result := object(msg.Result)
	if c.token != "" {
		// A task-augmented request's progress goes on while its task runs.
		if _, task := result["task"]; !task {
			delete(m.tokens[o], c.token)
			if len(m.spent[o]) < maxSpentTokens {
				m.spent[o][c.token] = f.Seq
			}
		}
	}
	if s == peerSide {
		switch c.method {
		case "initialize":
			m.answered = true
			if v := text(result["protocolVersion"]); v != "" {
				m.rev = v
			}
			m.serverCaps = object(result["capabilities"])
			if m.serverCaps == nil {
				m.serverCaps = map[string]json.RawMessage{}
			}
		case "tools/list":
			m.listed(c, result)
		case "tools/call":
			m.toolAnswer(f, msg, c, result)
		}
	}
	if msg.Error == nil && msg.Result != nil {
		m.validateResult(s, f, c, msg.Result, result)
	}
}

// listed follows the pages of tools/list.
func (m *mcp) listed(c *rpcCall, result map[string]json.RawMessage) {
	if result == nil {
		return
	}
	_, paged := object(c.params)["cursor"]
	if !paged {
		m.overlong = false
	}
	if m.overlong {
		return // the pages named too many tools to follow
	}
	if !paged || m.listing == nil {
		m.listing = map[string]bool{}
	}
	var tools []struct {
		Name string `json:"name"`
	}
	json.Unmarshal(result["tools"], &tools)
	for _, t := range tools {
		m.listing[recent.Key(t.Name)] = true
		if len(m.listing) > maxListedTools {
			m.tools, m.listing, m.overlong = nil, nil, true
			return
		}
	}
	if _, more := result["nextCursor"]; !more {
		m.tools, m.listing = m.listing, nil
	}
}

// protocolCode reports whether a JSON-RPC error code says the request
// itself failed rather than the tool: JSON-RPC's parse, request, method
// and params errors, and the codes MCP defines (-32002 resource not found
// and -32042 URL elicitation required before 2026-07-28; -32020 … -32099
// from it on).
func protocolCode(code int) bool {
	switch {
	case code == -32700, code == -32600, code == -32601, code == -32602, code == -32002, code == -32042:
		return true
	}
	return code <= -32020 && code >= -32099
}

// toolAnswer checks where the answer to a tools/call puts a failure.
func (m *mcp) toolAnswer(f *frame.Frame, msg *message.Message, c *rpcCall, result map[string]json.RawMessage) {
	name := text(object(c.params)["name"])
	unknown := m.tools != nil && !m.tools[recent.Key(name)]
	switch {
	case msg.Error != nil && !c.notOwed && !unknown && !protocolCode(msg.Error.Code):
		m.add(at(f), RuleToolErrorAsRPCError, c.method, "error", fmt.Sprintf("the call of tool %s is answered with JSON-RPC error %d %s", show(name), msg.Error.Code, show(msg.Error.Message)))
	case msg.Error == nil && unknown && bytes.Equal(bytes.TrimSpace(result["isError"]), []byte("true")):
		m.add(at(f), RuleToolErrorAsResult, c.method, "result.isError", fmt.Sprintf("tool %s is not among the tools the server listed, and its call is answered with isError", show(name)))
	}
}

// validateParams checks the params of a message of s against its
// method's schema (absent params read as {}).
func (m *mcp) validateParams(s side, f *frame.Frame, name string, raw json.RawMessage, params map[string]json.RawMessage) {
	meth := m.sch.methods[name]
	if meth == nil || meth.params == nil || !meth.sentBy(s) {
		return
	}
	v := any(map[string]any{})
	if p := bytes.TrimSpace(raw); len(p) > 0 && string(p) != "null" {
		var err error
		if v, err = parseDoc(p); err != nil {
			return // message.Parse read it as JSON: cannot happen
		}
	}
	m.report(f, RuleParamsInvalid, name, meth.section, meth.params.Validate(v), v, "params")
}

// validateResult checks a result of s to c against the method's schema:
// an object, with resultType in a 2026-07-28 answer (input_required
// results have their own shape), a task's shape for a task-augmented
// answer.
func (m *mcp) validateResult(s side, f *frame.Frame, c *rpcCall, raw json.RawMessage, result map[string]json.RawMessage) {
	meth := m.sch.methods[c.method]
	section := "basic#responses"
	if meth != nil {
		section = meth.section
	}
	if result == nil {
		m.addAt(f, RuleResultInvalid, c.method, "result", fmt.Sprintf("result is %s, not an object", show(raw)), "basic#responses")
		return
	}
	v, err := parseDoc(bytes.TrimSpace(raw))
	if err != nil {
		return
	}
	var sch *jsonschema.Schema
	if meth != nil && meth.result != nil && meth.sentBy(s.other()) {
		sch = meth.result
		if _, task := result["task"]; task && meth.task != nil {
			sch = meth.task
		}
	}
	if c.modern {
		switch rt, ok := result["resultType"]; {
		case !ok:
			m.addAt(f, RuleResultInvalid, c.method, "result", `missing "resultType" (a 2026-07-28 result says "complete" or "input_required")`, "basic#resulttype")
		case text(rt) == "input_required":
			sch = m.sch.inputRequired
			section = "basic/patterns/mrtr"
		}
	}
	if sch != nil {
		m.report(f, RuleResultInvalid, c.method, section, sch.Validate(v), v, "result")
	}
}

// report records a finding of rule for each broken constraint of err
// (nil: none), at most maxPerFrame.
func (m *mcp) report(f *frame.Frame, rule, method, section string, err error, v any, prefix string) {
	if err == nil {
		return
	}
	issues := schemaIssues(err, v, prefix)
	for i, is := range issues {
		switch {
		case i < maxPerFrame:
			m.addAt(f, rule, method, is.path, is.message, section)
		case i == maxPerFrame:
			m.addAt(f, rule, method, prefix, fmt.Sprintf("and %d more problems", len(issues)-i), section)
		}
	}
}
