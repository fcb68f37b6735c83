// Package message owns the JSON-RPC view of a frame: it classifies a line
// the way the real Agentty host does (trailing \r trimmed, invalid UTF-8
// replaced, blank lines and non-objects set aside as stray output) and
// exposes its method, id, params, result and error. It never changes the
// frame; everything here is derived on demand from the raw bytes.
package message

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
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
func (m *Message) IsReply() bool { return m.Kind.IsReply() }

// IsReply reports whether a message of kind k answers a request.
func (k Kind) IsReply() bool { return k == Response || k == ErrorReply }

// IDKey is the id in a canonical form for matching (numbers compared by
// value as the host's JSON parser would; strings by content).
func (m *Message) IDKey() string { return IDKey(m.ID) }

// IDKey canonicalises a raw JSON id; "" for none.
func IDKey(id json.RawMessage) string {
	if len(id) == 0 {
		return ""
	}
	if plainID(id) {
		return string(id) // already what a round trip through any would give
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

// plainID reports whether id is spelled as encoding/json spells its value
// after a round trip: a small integer without sign, zeros, fraction or
// exponent, or a string of printable ASCII that json.Marshal does not
// escape. Those are almost all ids; the rest go the long way.
func plainID(id []byte) bool {
	switch c := id[0]; {
	case c >= '1' && c <= '9':
		if len(id) > 15 { // beyond that a float64 may not hold it exactly
			return false
		}
		for _, c := range id[1:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	case c == '0':
		return len(id) == 1
	case c == '"':
		if len(id) < 2 || id[len(id)-1] != '"' {
			return false
		}
		for _, c := range id[1 : len(id)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	return false
}

// Parse classifies one line (without its "\n"). The returned message does
// not alias raw.
func Parse(raw []byte) Message {
	line := bytes.TrimSuffix(raw, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return Message{Kind: Blank}
	}
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	// JSON's own white space only: the host's parser refuses a line that
	// ends in a form feed or a no-break space.
	trimmed := bytes.Trim(line, jsonSpace)
	if problem := notAnObject(trimmed); problem != "" {
		return Message{Kind: Stray, Problem: problem}
	}
	var o object
	o.scan(trimmed)
	m := Message{Members: o.members}
	if v := o.val[keyJSONRPC]; v != nil {
		m.HasJSONRPC = true
		m.JSONRPC, _ = stringValue(v)
	}
	m.classify(&o, &keeper{line: trimmed})
	return m
}

// notAnObject says why trimmed (a line without JSON's white space around
// it) is not a JSON object; "" when it is one.
func notAnObject(trimmed []byte) string {
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if json.Valid(trimmed) {
			if trimmed[0] == '[' {
				return "a JSON array (batches are not supported)"
			}
			return "not a JSON object"
		}
		return "not JSON"
	}
	if !json.Valid(trimmed) {
		return "not JSON"
	}
	return ""
}

// keeper copies what a message keeps of a line once, the first time it
// keeps something, so that the message does not alias the line.
type keeper struct {
	line, own []byte
}

// keep is v, a part of the line, in the copy; nil for nil.
func (k *keeper) keep(v []byte) json.RawMessage {
	if v == nil {
		return nil
	}
	if k.own == nil {
		k.own = bytes.Clone(k.line)
	}
	i := cap(k.line) - cap(v) // v's offset in the line
	return k.own[i : i+len(v) : i+len(v)]
}

// classify sets m's kind from the object's id and method, and what each
// kind keeps: the id, the method, the params, a reply's result or error.
func (m *Message) classify(o *object, k *keeper) {
	id := o.val[keyID]
	hasID := id != nil && string(id) != "null"
	if hasID {
		m.ID = k.keep(id)
	}
	methodRaw, hasMethod := o.val[keyMethod], o.val[keyMethod] != nil
	var method string
	isString := false
	if hasMethod {
		// A null method decodes into a string without error: it counts as
		// a string, an empty one.
		method, isString = stringValue(methodRaw)
	}
	m.Params = k.keep(o.val[keyParams])
	switch {
	case hasID && isString:
		m.Kind, m.Method = Request, method
	case hasMethod && isString && !hasID:
		m.Kind, m.Method = Notification, method
	case hasID && !hasMethod:
		m.reply(o, k)
	default:
		m.Kind = Stray
		m.Problem = "an object with neither id nor method"
		if hasMethod && !isString {
			m.Problem = "method is not a string"
		}
	}
}

// reply makes m a response, or an error answer when its error is not
// null.
func (m *Message) reply(o *object, k *keeper) {
	m.Kind = Response
	m.Result = k.keep(o.val[keyResult])
	if e := o.val[keyError]; e != nil && string(e) != "null" {
		m.Kind = ErrorReply
		m.Error = new(Error)
		if json.Unmarshal(e, m.Error) != nil {
			m.Error.Message = string(e)
		}
	}
}

// jsonSpace is JSON's white space (RFC 8259): space, tab, LF, CR.
const jsonSpace = " \t\n\r"

// The members Parse looks at.
const (
	keyJSONRPC = iota
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
	keyCount
)

var memberNames = [keyCount]string{keyJSONRPC: "jsonrpc", keyID: "id", keyMethod: "method", keyParams: "params", keyResult: "result", keyError: "error"}

// object is what Parse needs of a JSON object: the values of the members it
// looks at (the last one of a name, as encoding/json keeps) and how many
// distinct members it has.
type object struct {
	val     [keyCount][]byte
	members int
}

// scan reads the valid JSON object b (no white space around it).
func (o *object) scan(b []byte) {
	var few [16][]byte // the distinct names so far (unescaped), while few,
	seen := few[:0]
	var many map[string]bool // and once there are many
	i := jsonscan.SkipSpace(b, 1)
	if b[i] == '}' {
		return
	}
	for {
		end, _ := jsonscan.SkipString(b, i)
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, _ := stringValue(b[i:end])
			key = []byte(k)
		}
		i = jsonscan.SkipSpace(b, end)
		i = jsonscan.SkipSpace(b, i+1) // the colon
		vend, _ := jsonscan.SkipValue(b, i)
		for k, name := range memberNames {
			if string(key) == name {
				o.val[k] = b[i:vend]
				break
			}
		}
		switch {
		case many != nil:
			if !many[string(key)] {
				many[string(key)] = true
				o.members++
			}
		case !slices.ContainsFunc(seen, func(k []byte) bool { return bytes.Equal(k, key) }):
			if len(seen) == cap(seen) {
				many = make(map[string]bool, 2*len(seen))
				for _, k := range seen {
					many[string(k)] = true
				}
				many[string(key)] = true
			} else {
				seen = append(seen, key)
			}
			o.members++
		}
		i = jsonscan.SkipSpace(b, vend)
		if b[i] == '}' {
			return
		}
		i = jsonscan.SkipSpace(b, i+1) // the comma
	}
}

// stringValue decodes the JSON value v when it is a string (or null, which
// decodes into a string as ""); ok is false for anything else.
func stringValue(v []byte) (s string, ok bool) {
	switch {
	case string(v) == "null":
		return "", true
	case len(v) < 2 || v[0] != '"':
		return "", false
	case bytes.IndexByte(v, '\\') < 0:
		return string(v[1 : len(v)-1]), true
	}
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}
