// Package message owns the JSON-RPC view of a frame: it classifies a line
// the way the real Agentty host does (trailing \r trimmed, invalid UTF-8
// replaced, blank lines and non-objects set aside as stray output) and
// exposes its method, id, params, result and error. It never changes the
// frame; everything here is derived on demand from the raw bytes.
package message

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Kind is what a line is, as the host sees it.
type Kind uint8

// Kinds of line.
const (
	Blank        Kind = iota + 1 // empty or white space only: ignored by the host
	Stray                        // not a JSON object, or an object with neither id nor method
	Request                      // id (non-null) and a string method
	Notification                 // method and no id (or "id": null)
	Response                     // id, no method, a result
	ErrorReply                   // id, no method, an error
)

var kindNames = [...]string{Blank: "blank", Stray: "stray", Request: "request", Notification: "notification", Response: "response", ErrorReply: "error"}

// String spells the kind as show and --kind do.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind is the inverse of String; ok is false for an unknown name.
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s && n != "" {
			return Kind(k), true
		}
	}
	return 0, false
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Message is a classified line.
type Message struct {
	Kind    Kind
	Method  string
	ID      json.RawMessage // the id exactly as written; nil when absent or null
	Params  json.RawMessage
	Result  json.RawMessage
	Error   *Error
	JSONRPC string // the "jsonrpc" member, "" when absent
	// HasJSONRPC reports whether the "jsonrpc" member was present at all.
	HasJSONRPC bool
	// Members is the number of members of the object (0 for stray lines).
	Members int
	// Problem says why a line is stray ("not JSON", "not an object", …).
	Problem string
}

// IsCall reports whether m is a request or a notification.
func (m *Message) IsCall() bool { return m.Kind == Request || m.Kind == Notification }

// IsReply reports whether m answers a request.
func (m *Message) IsReply() bool { return m.Kind == Response || m.Kind == ErrorReply }

// IDKey is the id in a canonical form for matching (numbers compared by
// value as the host's JSON parser would; strings by content).
func (m *Message) IDKey() string { return IDKey(m.ID) }

// IDKey canonicalises a raw JSON id; "" for none.
func IDKey(id json.RawMessage) string {
	if len(id) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return string(id)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(id)
	}
	return string(b)
}

// Parse classifies one line (without its "\n").
func Parse(raw []byte) Message {
	line := bytes.TrimSuffix(raw, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return Message{Kind: Blank}
	}
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] != '{' {
		if json.Valid(trimmed) {
			if trimmed[0] == '[' {
				return Message{Kind: Stray, Problem: "a JSON array (batches are not supported)"}
			}
			return Message{Kind: Stray, Problem: "not a JSON object"}
		}
		return Message{Kind: Stray, Problem: "not JSON"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return Message{Kind: Stray, Problem: "not JSON"}
	}
	m := Message{Members: len(obj)}
	if v, ok := obj["jsonrpc"]; ok {
		m.HasJSONRPC = true
		json.Unmarshal(v, &m.JSONRPC)
	}
	id, hasID := obj["id"]
	if hasID && string(bytes.TrimSpace(id)) == "null" {
		hasID = false
	}
	if hasID {
		m.ID = id
	}
	methodRaw, hasMethod := obj["method"]
	var method string
	isString := hasMethod && json.Unmarshal(methodRaw, &method) == nil
	m.Params = obj["params"]
	switch {
	case hasID && isString:
		m.Kind, m.Method = Request, method
	case hasMethod && isString && !hasID:
		m.Kind, m.Method = Notification, method
	case hasID && !hasMethod:
		m.Kind = Response
		m.Result = obj["result"]
		if e, ok := obj["error"]; ok && string(e) != "null" {
			m.Kind = ErrorReply
			m.Error = new(Error)
			if json.Unmarshal(e, m.Error) != nil {
				m.Error.Message = string(e)
			}
		}
	default:
		m.Kind = Stray
		m.Problem = "an object with neither id nor method"
		if hasMethod && !isString {
			m.Problem = "method is not a string"
		}
	}
	return m
}
