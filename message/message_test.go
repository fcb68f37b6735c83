package message

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	cases := []struct {
		line   string
		kind   Kind
		method string
		id     string
	}{
		{``, Blank, "", ""},
		{" \t\r", Blank, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, Request, "initialize", "1"},
		{`{"jsonrpc":"2.0","id":"a","method":"x"}` + "\r", Request, "x", `"a"`},
		{`{"jsonrpc":"2.0","method":"panel/open"}`, Notification, "panel/open", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"n"}`, Notification, "n", ""},
		{`{"jsonrpc":"2.0","id":3,"result":null}`, Response, "", "3"},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`, ErrorReply, "", "3"},
		{`[{"id":1,"method":"a"}]`, Stray, "", ""},
		{`{"foo":1}`, Stray, "", ""},
		{`plugin ready`, Stray, "", ""},
		{`42`, Stray, "", ""},
		{`{"id":1,"method":7}`, Stray, "", "1"},
		{"{\"id\":1,\"method\":\"a\xffb\"}", Request, "a\uFFFDb", "1"},
	}
	for _, c := range cases {
		m := Parse([]byte(c.line))
		if m.Kind != c.kind || m.Method != c.method || string(m.ID) != c.id {
			t.Errorf("Parse(%q) = %v %q id %s; want %v %q id %s", c.line, m.Kind, m.Method, m.ID, c.kind, c.method, c.id)
		}
	}
}

func TestIDKey(t *testing.T) {
	if IDKey([]byte("1.0")) != IDKey([]byte("1")) || IDKey([]byte(`"1"`)) == IDKey([]byte("1")) {
		t.Error("ids compare by JSON value: 1.0 == 1, \"1\" != 1")
	}
}

// FuzzParse: whatever the line, Parse classifies it exactly as the
// reference (the map-based parse it replaced, which decodes the whole
// object with encoding/json) does, and IDKey's fast path agrees with the
// round trip through encoding/json.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","params":{}}`))
	f.Add([]byte(`{"id":1,"error":{"code":1}}`))
	f.Add([]byte("\xff{"))
	f.Add([]byte(`{"id":"x<y","result":[1,{"a":"}"}],"id":2, "\u0069d" : null ,"method":null}`))
	f.Add([]byte(` {"a":1,"a":2,"b":"\"\\","jsonrpc":2} `))
	f.Add([]byte(`{"id":12345678901234567,"method":"m"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Parse(b)
		if m.Kind < Blank || m.Kind > ErrorReply {
			t.Fatalf("kind %d", m.Kind)
		}
		if m.Kind == Request && len(m.ID) == 0 {
			t.Fatal("request without id")
		}
		if want := parseReference(b); !reflect.DeepEqual(m, want) {
			t.Fatalf("Parse(%q)\n got %+v\nwant %+v", b, m, want)
		}
		if got, want := IDKey(b), idKeyReference(b); got != want {
			t.Fatalf("IDKey(%q) = %q, want %q", b, got, want)
		}
	})
}

// parseReference is Parse as it was: every line decoded into a map by
// encoding/json. It is the oracle for the scanner that replaced it.
func parseReference(raw []byte) Message {
	line := bytes.TrimSuffix(raw, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return Message{Kind: Blank}
	}
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	trimmed := bytes.Trim(line, " \t\n\r")
	if len(trimmed) == 0 || trimmed[0] != '{' {
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

func idKeyReference(id json.RawMessage) string {
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

// BenchmarkParse is the cost of classifying a typical host notification,
// with the reference for comparison.
func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"tick","params":{"n":4211,"text":"the plugin says the same thing back"}}`)
	for _, c := range []struct {
		name string
		fn   func([]byte) Message
	}{{"scan", Parse}, {"reference", parseReference}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.fn(line)
			}
		})
	}
}
