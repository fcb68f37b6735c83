package check

// The rules of JSON-RPC 2.0 itself (www.jsonrpc.org/specification), which
// any peer must keep whatever its host: the JSONRPC profile's whole set,
// and the ground MCP's and LSP's stand on. They name no method and count
// no rate: a peer tapedeck knows nothing of gets no finding it could not
// stand behind.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// The rule ids of JSON-RPC 2.0, shared by the MCP and LSP profiles (and,
// where Agentty has the same rule, by its: id-reused, answer-unknown-id,
// response-malformed, request-unanswered).
const (
	RuleNotJSON        = "not-json"
	RuleNotObject      = "not-object"
	RuleNotMessage     = "not-a-message"
	RuleInvalidUTF8    = "invalid-utf8"
	RuleJSONRPCVersion = "jsonrpc-version"
	RuleResultAndError = "result-and-error"
	RuleFrameCut       = "frame-cut"
)

// side is who sent a frame: the host (the peer's stdin, frame.In) or the
// peer (its stdout, frame.Out).
type side uint8

const (
	hostSide side = iota
	peerSide
)

func sideOf(d frame.Dir) side {
	if d == frame.Out {
		return peerSide
	}
	return hostSide
}

func (s side) other() side { return 1 - s }

// rpcCall is a request waiting for its answer.
type rpcCall struct {
	seq    uint64
	at     int64
	method string
	id     string // its id as message.IDKey spells it
	params json.RawMessage
	// notOwed: no answer is owed (a notification sent with an id, a
	// cancelled request, one the profile's rules already blamed).
	notOwed bool
	token   string // recent.Key of its progress token (MCP), "" for none
	modern  bool   // MCP: a 2026-07-28 request, with its revision in _meta
}

// maxIDs bounds the ids a profile that forbids any reuse remembers per
// side (about 3 MiB); past it, only reuse while in flight is found.
const maxIDs = 1 << 16

// maxKeptParams bounds the params of a request in flight that check keeps
// for its answer's rules (the MCP profile reads a cursor and a tool's
// name there): larger ones are not kept.
const maxKeptParams = 64 << 10

// extension is what a profile adds to JSON-RPC's rules. Each hook runs
// after the engine's own rules for the message.
type extension interface {
	// frame looks at a frame of s before it is read as a message (LSP's
	// framing); false skips the message rules for it.
	frame(s side, f *frame.Frame) bool
	// request sees a request of s, registered as c.
	request(s side, f *frame.Frame, m *message.Message, c *rpcCall)
	// notification sees a notification of s.
	notification(s side, f *frame.Frame, m *message.Message)
	// answer sees s's answer to c, the other side's request.
	answer(s side, f *frame.Frame, m *message.Message, c *rpcCall)
	// event sees a lifecycle event (stdin closed, the peer exited).
	event(f *frame.Frame)
	// lifetimeIDs reports whether s may never use an id twice in the
	// session, not only while the first is in flight.
	lifetimeIDs(s side) bool
}

// rpc applies JSON-RPC 2.0's rules to one session, and a profile's
// extension on top. It is not safe for concurrent use.
type rpc struct {
	rules map[string]Rule
	// cite is the citation of a finding of rule, for the session as far
	// as it has gone.
	cite func(rule string) string
	ext  extension
	who  [2]string // each side's name in messages: "host", "client", …
	// batches: a JSON array is a JSON-RPC batch (plain JSON-RPC), not
	// stray output (MCP, LSP).
	batches bool
	// blankStray: a blank line is stray output (MCP's stdio), not nothing.
	blankStray bool

	calls [2]map[string]*rpcCall // each side's requests waiting for the other's answer
	used  [2]map[string]uint64   // each side's ids so far, with the frame that used it
	blind [2]bool                // a frame of this side could not be read: its ids are unknown
	out   []Finding
}

func newRPC(table []Rule, ext extension) *rpc {
	r := &rpc{rules: map[string]Rule{}, ext: ext}
	for _, rule := range table {
		r.rules[rule.ID] = rule
	}
	r.cite = func(rule string) string { return r.rules[rule].Spec }
	for s := range r.calls {
		r.calls[s] = map[string]*rpcCall{}
		r.used[s] = map[string]uint64{}
	}
	return r
}

// add records a finding of rule about the frame at s.
func (r *rpc) add(s stamp, rule, method, path, msg string) {
	def := r.rules[rule]
	r.out = append(r.out, Finding{
		Level: def.Level, Rule: rule, Seq: s.seq, At: s.at,
		Method: method, Message: msg + ": " + def.Host, Path: path, Spec: r.cite(rule),
	})
}

// Feed checks the next frame or event of the session.
func (r *rpc) Feed(f *frame.Frame) []Finding {
	r.out = nil
	switch {
	case f.IsEvent():
		r.ext.event(f)
	case f.Dir == frame.Err:
		// stderr is the peer's log: JSON-RPC says nothing of it.
	default:
		r.frame(f)
	}
	return r.out
}

// Finish reports the requests never answered, in the order they were made.
func (r *rpc) Finish() []Finding {
	r.out = nil
	for s := hostSide; s <= peerSide; s++ {
		if r.blind[s.other()] {
			continue // the answer may be in a frame that could not be read
		}
		var open []*rpcCall
		for _, c := range r.calls[s] {
			if !c.notOwed {
				open = append(open, c)
			}
		}
		sort.Slice(open, func(i, j int) bool { return open[i].seq < open[j].seq })
		for _, c := range open {
			r.add(stamp{c.seq, c.at, true}, RuleRequestUnanswered, c.method, "",
				fmt.Sprintf("the %s's %s request (id %s) was never answered", r.who[s], c.method, c.id))
		}
	}
	return r.out
}

// frame checks one frame of stdin or stdout.
func (r *rpc) frame(f *frame.Frame) {
	s := sideOf(f.Dir)
	if f.Cut != nil {
		r.blind[s] = true
		r.add(at(f), RuleFrameCut, "", "", fmt.Sprintf("the recording kept %d of its %d bytes", len(f.Raw), f.Cut.Len))
		return
	}
	if !r.ext.frame(s, f) {
		return
	}
	if !utf8.Valid(f.Raw) {
		i := invalidAt(f.Raw)
		r.add(at(f), RuleInvalidUTF8, "", "", fmt.Sprintf("the %s's message is not UTF-8 (byte %d is 0x%02x)", r.who[s], i, f.Raw[i]))
	}
	m := message.Parse(f.Raw)
	switch m.Kind {
	case message.Blank:
		if r.blankStray {
			r.add(at(f), RuleNotJSON, "", "", fmt.Sprintf("a blank line from the %s", r.who[s]))
		}
		return
	case message.Stray:
		r.stray(s, f, &m)
		return
	}
	r.message(s, f, &m)
}

// invalidAt is the index of the first byte of b that is not UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		c, n := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// stray names what is not a JSON-RPC message: text, a scalar, an object of
// neither kind. An array is a batch where the profile allows batches; an
// error response whose id could not be read (null or absent) is a message.
func (r *rpc) stray(s side, f *frame.Frame, m *message.Message) {
	text := bytes.TrimSpace(bytes.ToValidUTF8(bytes.TrimSuffix(f.Raw, []byte("\r")), []byte("\uFFFD")))
	switch {
	case !json.Valid(text):
		r.add(at(f), RuleNotJSON, "", "", fmt.Sprintf("stray output from the %s: %s", r.who[s], show(string(text))))
	case text[0] == '[':
		if r.batches {
			r.batch(s, f, text)
			return
		}
		r.add(at(f), RuleNotObject, "", "", fmt.Sprintf("a JSON array from the %s (a batch): %s", r.who[s], show(string(text))))
	case text[0] != '{':
		r.add(at(f), RuleNotObject, "", "", fmt.Sprintf("a JSON value that is not an object from the %s: %s", r.who[s], show(string(text))))
	default:
		if r.idlessError(s, f, text) {
			return
		}
		r.add(at(f), RuleNotMessage, "", "", fmt.Sprintf("%s, from the %s: %s", m.Problem, r.who[s], show(string(text))))
	}
}

// idlessError reports whether obj is an error response with a null or
// absent id (the answer to a request whose id could not be read), and
// checks its error object.
func (r *rpc) idlessError(s side, f *frame.Frame, obj []byte) bool {
	var o map[string]json.RawMessage
	if json.Unmarshal(obj, &o) != nil {
		return false
	}
	e, hasErr := o["error"]
	id, hasID := o["id"]
	_, hasMethod := o["method"]
	if !hasErr || hasMethod || string(e) == "null" || hasID && string(id) != "null" {
		return false
	}
	r.version(s, f, "", o)
	r.errorShape(f, "", e)
	return true
}

// version checks the jsonrpc member of an object read whole.
func (r *rpc) version(s side, f *frame.Frame, method string, o map[string]json.RawMessage) {
	v, ok := o["jsonrpc"]
	switch {
	case !ok:
		r.add(at(f), RuleJSONRPCVersion, method, "", fmt.Sprintf(`no "jsonrpc" member in the %s's message`, r.who[s]))
	case string(v) != `"2.0"`:
		r.add(at(f), RuleJSONRPCVersion, method, "jsonrpc", fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, show(json.RawMessage(v))))
	}
}

// batch checks each message of a JSON-RPC batch (plain JSON-RPC only).
func (r *rpc) batch(s side, f *frame.Frame, text []byte) {
	var items []json.RawMessage
	if json.Unmarshal(text, &items) != nil {
		return
	}
	if len(items) == 0 {
		r.add(at(f), RuleNotObject, "", "", fmt.Sprintf("an empty batch from the %s", r.who[s]))
		return
	}
	for _, item := range items {
		m := message.Parse(item)
		if m.Kind == message.Stray {
			if !(item[0] == '{' && r.idlessError(s, f, item)) {
				r.add(at(f), RuleNotMessage, "", "", fmt.Sprintf("a member of a batch from the %s is not a request, notification or response: %s", r.who[s], show(json.RawMessage(item))))
			}
			continue
		}
		r.message(s, f, &m)
	}
}

// message checks a request, notification or response of s.
func (r *rpc) message(s side, f *frame.Frame, m *message.Message) {
	method := m.Method
	if m.IsReply() {
		if c := r.calls[s.other()][idKey(m)]; c != nil {
			method = c.method
		}
	}
	switch {
	case !m.HasJSONRPC:
		r.add(at(f), RuleJSONRPCVersion, method, "", fmt.Sprintf(`no "jsonrpc" member in the %s's message`, r.who[s]))
	case m.JSONRPC != "2.0":
		r.add(at(f), RuleJSONRPCVersion, method, "jsonrpc", fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, show(m.JSONRPC)))
	}
	switch m.Kind {
	case message.Request:
		r.request(s, f, m)
	case message.Notification:
		r.ext.notification(s, f, m)
	default:
		r.answer(s, f, m)
	}
}

// request registers a request of s and checks its id.
func (r *rpc) request(s side, f *frame.Frame, m *message.Message) {
	key := idKey(m)
	if p := r.calls[s][key]; p != nil {
		r.add(at(f), RuleIDReused, m.Method, "id", fmt.Sprintf("the %s's id %s is still waiting for the answer to its %s (#%d)", r.who[s], key, p.method, p.seq))
	} else if first, ok := r.used[s][key]; ok && r.ext.lifetimeIDs(s) {
		r.add(at(f), RuleIDReused, m.Method, "id", fmt.Sprintf("the %s used id %s before, at #%d", r.who[s], key, first))
	}
	if _, ok := r.used[s][key]; !ok && len(r.used[s]) < maxIDs && r.ext.lifetimeIDs(s) {
		r.used[s][key] = f.Seq
	}
	c := &rpcCall{seq: f.Seq, at: f.At, method: recent.Name(m.Method), id: key}
	if _, waiting := r.calls[s][key]; waiting || room(len(r.calls[s])) {
		// A copy of the params only: m.Params is a slice of the whole line,
		// which the table would otherwise keep alive with whatever else the
		// line holds (1,000 requests beside 100 KB members had kept 121 MB).
		if len(m.Params) <= maxKeptParams {
			c.params = bytes.Clone(m.Params)
		}
		r.calls[s][key] = c
	}
	r.ext.request(s, f, m, c)
}

// answer matches a response of s to the other side's request and checks
// its shape.
func (r *rpc) answer(s side, f *frame.Frame, m *message.Message) {
	key := idKey(m)
	o := s.other()
	c := r.calls[o][key]
	if c == nil {
		if !r.blind[o] {
			r.add(at(f), RuleAnswerUnknownID, "", "id",
				fmt.Sprintf("the %s answers id %s, which the %s never asked or had already had answered", r.who[s], key, r.who[o]))
		}
	} else {
		delete(r.calls[o], key)
	}
	method := ""
	if c != nil {
		method = c.method
	}
	switch {
	case m.Error != nil && m.Result != nil:
		r.add(at(f), RuleResultAndError, method, "", fmt.Sprintf("the %s's answer to id %s has both result and error", r.who[s], key))
	case m.Kind == message.Response && m.Result == nil:
		r.add(at(f), RuleResponseMalformed, method, "", fmt.Sprintf("the %s's answer to id %s has neither result nor error", r.who[s], key))
	}
	if m.Error != nil {
		var o map[string]json.RawMessage
		if json.Unmarshal(bytes.TrimSpace(bytes.ToValidUTF8(f.Raw, []byte("\uFFFD"))), &o) == nil {
			r.errorShape(f, method, o["error"])
		}
	}
	if c != nil {
		r.ext.answer(s, f, m, c)
	}
}

// errorShape checks an error object: an integer code and a string message.
func (r *rpc) errorShape(f *frame.Frame, method string, raw json.RawMessage) {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil {
		r.add(at(f), RuleResponseMalformed, method, "error", fmt.Sprintf("error is %s, not an object", show(raw)))
		return
	}
	if code, ok := e["code"]; !ok || !isInteger(code) {
		r.add(at(f), RuleResponseMalformed, method, "error.code", fmt.Sprintf("error.code is %s, not an integer", showRaw(code, ok)))
	}
	if msg, ok := e["message"]; !ok || len(msg) == 0 || msg[0] != '"' {
		r.add(at(f), RuleResponseMalformed, method, "error.message", fmt.Sprintf("error.message is %s, not a string", showRaw(msg, ok)))
	}
}

// showRaw is a member's value for a message, or "missing".
func showRaw(v json.RawMessage, ok bool) string {
	if !ok {
		return "missing"
	}
	return show(v)
}

// isInteger reports whether the JSON value v is a number without fraction
// or exponent.
func isInteger(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	for i, c := range v {
		if c == '-' && i == 0 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plain is the extension of a peer tapedeck knows nothing of: JSON-RPC's
// rules alone.
type plain struct{}

func (plain) frame(side, *frame.Frame) bool                          { return true }
func (plain) request(side, *frame.Frame, *message.Message, *rpcCall) {}
func (plain) notification(side, *frame.Frame, *message.Message)      {}
func (plain) answer(side, *frame.Frame, *message.Message, *rpcCall)  {}
func (plain) event(*frame.Frame)                                     {}
func (plain) lifetimeIDs(side) bool                                  { return false }

// newJSONRPC returns the JSONRPC profile's rules for one session.
func newJSONRPC(Options) *rpc {
	r := newRPC(jsonrpcRules(), plain{})
	r.who = [2]string{"host", "peer"}
	r.batches = true
	return r
}

// jsonrpcRules is the JSONRPC profile's rule table.
func jsonrpcRules() []Rule {
	const spec = "JSON-RPC 2.0 "
	return []Rule{
		{ID: RuleNotJSON, Level: Error, Host: "a JSON-RPC peer answers it -32700 (parse error) or drops it", Spec: spec + "§5.1"},
		{ID: RuleNotObject, Level: Error, Host: "a message is one JSON object, a batch a non-empty array of them; a peer answers -32600 (invalid request)", Spec: spec + "§4, §6"},
		{ID: RuleNotMessage, Level: Error, Host: "a message is a request (method and id), a notification (method) or a response (id, with result or error); a peer answers -32600 (invalid request) or drops it", Spec: spec + "§4, §5"},
		{ID: RuleInvalidUTF8, Level: Error, Host: "JSON exchanged between systems must be UTF-8; a peer drops the message or reads other text", Spec: "RFC 8259 §8.1"},
		{ID: RuleJSONRPCVersion, Level: Error, Host: `every message must say "jsonrpc": "2.0"; a strict peer refuses it`, Spec: spec + "§4, §5"},
		{ID: RuleIDReused, Level: Error, Host: "the answers to the two requests cannot be told apart", Spec: spec + "§4 (id)"},
		{ID: RuleAnswerUnknownID, Level: Error, Host: "an answer must carry the id of a request it answers; the peer has nothing to match it to and drops it", Spec: spec + "§5 (id)"},
		{ID: RuleResultAndError, Level: Error, Host: "a response carries exactly one of result and error", Spec: spec + "§5"},
		{ID: RuleResponseMalformed, Level: Error, Host: "a response carries result or error, an error an integer code and a string message", Spec: spec + "§5, §5.1"},
		{ID: RuleRequestUnanswered, Level: Error, Host: "every request must be answered; its sender waits for nothing", Spec: spec + "§4"},
		{ID: RuleFrameCut, Level: Info, Host: "its contents were not checked", Spec: "tapedeck record --max-frame"},
	}
}
