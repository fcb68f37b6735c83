package message

import "testing"

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

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","params":{}}`))
	f.Add([]byte(`{"id":1,"error":{"code":1}}`))
	f.Add([]byte("\xff{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Parse(b)
		if m.Kind < Blank || m.Kind > ErrorReply {
			t.Fatalf("kind %d", m.Kind)
		}
		if m.Kind == Request && len(m.ID) == 0 {
			t.Fatal("request without id")
		}
	})
}
