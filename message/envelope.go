package message

// The envelope of a line read without copying it: one set of
// classification rules with Parse (see FuzzReadEnvelope).

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/internal/jsonscan"
)

// Envelope is a message's kind, method and id, as Parse reads them;
// Method and ID alias the line when ReadEnvelope could read them there.
type Envelope struct {
	Kind   Kind
	Method []byte // the method's text
	ID     []byte // the id as written, nil when none (or null)
	Params []byte // the params as written, nil when none
}

// ReadEnvelope classifies raw as Parse does, without the copies Parse
// makes (of the line, its method, its jsonrpc member): the common lines
// by a look at their members, any other (white space around the object,
// escapes in a member name or the method, stray output) by Parse itself.
// It is for readers of many lines that need only what kind each is (a
// comparison, a replay's plan): on a million frames Parse's copies were
// most of what a comparison allocated.
func ReadEnvelope(raw []byte) Envelope {
	if e, ok := peek(raw); ok {
		return e
	}
	m := Parse(raw)
	return Envelope{Kind: m.Kind, Method: []byte(m.Method), ID: m.ID, Params: m.Params}
}

// peek is ReadEnvelope's look: ok is false when the line is not one it
// reads alike with Parse (FuzzReadEnvelope holds the two to it).
func peek(raw []byte) (Envelope, bool) {
	line := bytes.TrimSuffix(raw, []byte("\r"))
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' || !utf8.Valid(line) || !json.Valid(line) {
		return Envelope{}, false
	}
	em, ok := peekMembers(line)
	if !ok {
		return Envelope{}, false
	}
	return em.envelope()
}

// envelopeMembers are the values of the members peek looks at, as
// written; nil for a member the line does not have.
type envelopeMembers struct {
	id, method, errv, params []byte
}

// peekMembers reads the members of line, a valid JSON object with no
// white space around it; ok is false for an empty object or a member
// name with an escape.
func peekMembers(line []byte) (em envelopeMembers, ok bool) {
	i := jsonscan.SkipSpace(line, 1)
	if line[i] == '}' {
		return em, false
	}
	for {
		end, _ := jsonscan.SkipString(line, i)
		key := line[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return em, false
		}
		i = jsonscan.SkipSpace(line, end)
		i = jsonscan.SkipSpace(line, i+1) // the colon
		vend, _ := jsonscan.SkipValue(line, i)
		switch string(key) { // of members of the same name the last counts
		case "id":
			em.id = line[i:vend]
		case "method":
			em.method = line[i:vend]
		case "error":
			em.errv = line[i:vend]
		case "params":
			em.params = line[i:vend]
		}
		i = jsonscan.SkipSpace(line, vend)
		if line[i] == '}' {
			return em, true
		}
		i = jsonscan.SkipSpace(line, i+1) // the comma
	}
}

// envelope classifies the members as Parse does; ok is false for a stray
// line (Parse says why) and a method with an escape.
func (em envelopeMembers) envelope() (Envelope, bool) {
	id, params := em.id, em.params
	hasID := id != nil && string(id) != "null"
	if !hasID {
		id = nil
	}
	name, isString, ok := methodName(em.method)
	if !ok {
		return Envelope{}, false
	}
	switch {
	case hasID && isString:
		return Envelope{Kind: Request, Method: name, ID: id, Params: params}, true
	case em.method != nil && isString && !hasID:
		return Envelope{Kind: Notification, Method: name, Params: params}, true
	case hasID && em.method == nil:
		if em.errv != nil && string(em.errv) != "null" {
			return Envelope{Kind: ErrorReply, ID: id, Params: params}, true
		}
		return Envelope{Kind: Response, ID: id, Params: params}, true
	}
	return Envelope{}, false // stray: Parse says why
}

// methodName is the text of the method member as written, without its
// quotes, and whether it is a string (null decodes into one: an empty
// one); ok is false for a string with an escape, which only Parse
// decodes.
func methodName(method []byte) (name []byte, isString, ok bool) {
	switch {
	case method == nil:
	case string(method) == "null":
		return []byte{}, true, true
	case method[0] == '"':
		if bytes.IndexByte(method, '\\') >= 0 {
			return nil, false, false
		}
		return method[1 : len(method)-1], true, true
	}
	return nil, false, true
}
