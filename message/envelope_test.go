package message

import (
	"bytes"
	"testing"
)

// FuzzReadEnvelope: what peek reads of a line (when it reads it) is what
// Parse reads: the kind, the method and the id; and ReadEnvelope, for
// every line, says what Parse says.
func FuzzReadEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{}}`,
		`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"hi"}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`,
		`{"id":2,"error":null}`, `{"id":null,"method":"m"}`, `{"method":null}`, `{"method":1,"id":1}`,
		`{"id":1,"id":null,"method":"m"}`, `{"\u0069d":1,"method":"m"}`, `{"method":"a\"b"}`, "{\"method\":\"m\"}\r",
		` {"method":"m"}`, `{}`, `[1]`, `{"a":1}`, "{\"method\":\"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m := Parse([]byte(in))
		e, ok := peek([]byte(in))
		if ok && (e.Kind != m.Kind || string(e.Method) != m.Method || !bytes.Equal(e.ID, m.ID) || !bytes.Equal(e.Params, m.Params)) {
			t.Fatalf("peek(%q) = %v %q %s %s, Parse %v %q %s %s", in, e.Kind, e.Method, e.ID, e.Params, m.Kind, m.Method, m.ID, m.Params)
		}
		if e := ReadEnvelope([]byte(in)); e.Kind != m.Kind || string(e.Method) != m.Method || !bytes.Equal(e.ID, m.ID) || !bytes.Equal(e.Params, m.Params) {
			t.Fatalf("ReadEnvelope(%q) = %v %q %s %s, Parse %v %q %s %s", in, e.Kind, e.Method, e.ID, e.Params, m.Kind, m.Method, m.ID, m.Params)
		}
	})
}

// TestReadEnvelopeAllocatesNothing: a plain notification is read without
// a copy of anything.
func TestReadEnvelopeAllocatesNothing(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"123"}}`)
	if n := testing.AllocsPerRun(100, func() { ReadEnvelope(line) }); n != 0 {
		t.Errorf("ReadEnvelope allocates %v times a line, want none (Parse copies the line)", n)
	}
}

// BenchmarkKinds reads a line of each kind (request, notification,
// response, error answer) with Parse and with ReadEnvelope.
func BenchmarkKinds(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"tick","params":{"n":4211,"text":"the plugin says the same thing back"}}`),
		[]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`),
		[]byte(`{"jsonrpc":"2.0","id":"a-1","error":{"code":-32601,"message":"no such method"}}`),
	}
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				Parse(l)
			}
		}
	})
	b.Run("ReadEnvelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				ReadEnvelope(l)
			}
		}
	})
}
